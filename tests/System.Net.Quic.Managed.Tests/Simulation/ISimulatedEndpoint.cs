namespace System.Net.Quic.Managed.Tests.Simulation;

/// <summary>
/// A sans-IO endpoint driven by <see cref="SimulatedNetwork"/>: it never touches sockets or clocks, it is told the
/// time (microseconds) with every call, the same contract the QUIC core exposes.
/// </summary>
internal interface ISimulatedEndpoint
{
    /// <summary>One UDP datagram arrives. The span is only valid during the call: copy what must be kept.</summary>
    void Receive(ReadOnlySpan<byte> datagram, SimAddress from, long nowUs);

    /// <summary>
    /// Writes the next datagram to send into <paramref name="buffer"/>. The network calls this repeatedly until it
    /// returns false, after every event. <paramref name="written"/> must be in [0, buffer.Length].
    /// </summary>
    bool TrySend(Span<byte> buffer, long nowUs, out int written, out SimAddress to);

    /// <summary>Absolute time of the next timer in microseconds; <see cref="long.MaxValue"/> = none.</summary>
    long NextTimeoutUs { get; }

    /// <summary>Called when the virtual clock reaches <see cref="NextTimeoutUs"/> (or at once if it is already past).</summary>
    void OnTimeout(long nowUs);
}
