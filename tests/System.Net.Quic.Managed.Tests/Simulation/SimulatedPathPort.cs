namespace System.Net.Quic.Managed.Tests.Simulation;

/// <summary>
/// A second address of a <see cref="SimulatedQuicEndpoint"/> (local path <see cref="Path"/>): what arrives here goes to the
/// owner tagged with the path; the owner sends for every path itself (see <see cref="IMultiPathSimulatedEndpoint"/>).
/// </summary>
internal sealed class SimulatedPathPort(SimulatedQuicEndpoint owner, byte path) : IEcnSimulatedEndpoint
{
    public byte Path => path;

    public byte LastSentEcn => 0;

    public void Receive(ReadOnlySpan<byte> datagram, SimAddress from, long nowUs) => owner.ReceiveOnPath(datagram, from, 0, path, nowUs);

    public void Receive(ReadOnlySpan<byte> datagram, SimAddress from, byte ecn, long nowUs) => owner.ReceiveOnPath(datagram, from, ecn, path, nowUs);

    public bool TrySend(Span<byte> buffer, long nowUs, out int written, out SimAddress to)
    {
        written = 0;
        to = default;
        return false;
    }

    public long NextTimeoutUs => long.MaxValue;

    public void OnTimeout(long nowUs)
    {
    }
}
