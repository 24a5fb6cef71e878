namespace System.Net.Quic.Managed;

/// <summary>Carries how many more streams the peer allows us to open (a MAX_STREAMS increase, RFC 9000 §19.11).</summary>
public readonly struct QuicStreamCapacityChangedArgs
{
    /// <summary>The increment in the number of bidirectional streams that may be opened.</summary>
    public int BidirectionalIncrement { get; init; }

    /// <summary>The increment in the number of unidirectional streams that may be opened.</summary>
    public int UnidirectionalIncrement { get; init; }
}
