namespace System.Net.Quic.Managed.Core;

/// <summary>The life stages of a connection once it exists (RFC 9000 §10).</summary>
internal enum ConnectionPhase
{
    Open,
    Closing,
    Draining,
    Closed,
}
