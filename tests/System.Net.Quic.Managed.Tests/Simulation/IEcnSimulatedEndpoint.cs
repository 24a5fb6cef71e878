namespace System.Net.Quic.Managed.Tests.Simulation;

/// <summary>
/// An endpoint that sees the ECN bits of the IP header (RFC 3168): the network asks it for the codepoint of each datagram
/// it just sent and hands it the (possibly rewritten) codepoint of each one it receives.
/// </summary>
internal interface IEcnSimulatedEndpoint : ISimulatedEndpoint
{
    /// <summary>The ECN codepoint of the datagram the last successful TrySend wrote.</summary>
    byte LastSentEcn { get; }

    /// <summary>A datagram arrives with the ECN codepoint <paramref name="ecn"/>.</summary>
    void Receive(ReadOnlySpan<byte> datagram, SimAddress from, byte ecn, long nowUs);
}
