namespace System.Net.Quic.Managed;

/// <summary>Type of a QUIC stream. Values match System.Net.Quic.QuicStreamType.</summary>
public enum QuicStreamType
{
    /// <summary>Data flows only in one direction, from the initiator.</summary>
    Unidirectional = 0,

    /// <summary>Data flows in both directions.</summary>
    Bidirectional = 1,
}
