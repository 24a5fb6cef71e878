namespace System.Net.Quic.Managed.Core;

/// <summary>
/// Where an endpoint that is one of several workers on the same port sends a datagram addressed to a connection ID of
/// another worker (the kernel steered it by address, say after the client moved, or the steering program is missing):
/// the datagram goes to its owner instead of being answered with a stateless reset. Called on the endpoint's thread.
/// </summary>
internal interface IDatagramHandoff
{
    /// <summary>Takes a copy of <paramref name="datagram"/> (with its IP header's ECN bits <paramref name="ecn"/>) for
    /// <paramref name="worker"/>; false when that worker is gone.</summary>
    bool TryHandOff(int worker, ReadOnlySpan<byte> datagram, in NetworkAddress remote, byte ecn);
}
