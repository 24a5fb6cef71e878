namespace System.Net.Quic.Managed.Tests.Simulation;

/// <summary>A buggy endpoint whose timer never moves past "now": the run loop must still terminate.</summary>
internal sealed class StuckTimerEndpoint : ISimulatedEndpoint
{
    public long Fired { get; private set; }

    public long NextTimeoutUs => 1_000;

    public void OnTimeout(long nowUs) => Fired++;

    public void Receive(ReadOnlySpan<byte> datagram, SimAddress from, long nowUs)
    {
    }

    public bool TrySend(Span<byte> buffer, long nowUs, out int written, out SimAddress to)
    {
        written = 0;
        to = default;
        return false;
    }
}
