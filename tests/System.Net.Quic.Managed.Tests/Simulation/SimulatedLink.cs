namespace System.Net.Quic.Managed.Tests.Simulation;

/// <summary>A bidirectional path between two hosts; each direction has its own conditions and statistics.</summary>
internal sealed class SimulatedLink
{
    internal SimulatedLink(SimulatedLinkDirection aToB, SimulatedLinkDirection bToA)
    {
        AToB = aToB;
        BToA = bToA;
    }

    public int HostA => AToB.FromHost;

    public int HostB => AToB.ToHost;

    public SimulatedLinkDirection AToB { get; }

    public SimulatedLinkDirection BToA { get; }
}
