namespace System.Net.Quic.Managed.Tests.Simulation;

/// <summary>
/// An endpoint with more than one address (a server's preferred address, a migrating client's new socket): the network
/// sends its last datagram from <see cref="LastSentFrom"/> instead of the address it was attached at (null: that one).
/// </summary>
internal interface IMultiPathSimulatedEndpoint : ISimulatedEndpoint
{
    SimAddress? LastSentFrom { get; }
}
