using System.Net.Quic.Managed.Crypto;

namespace System.Net.Quic.Managed.Ids;

/// <summary>
/// Chooses the connection IDs an endpoint issues (RFC 9000 §5.1: the server's IDs may encode routing information for
/// a load balancer or for the worker that owns the connection). Every ID of one generator has the same length, since
/// short headers carry no length (§17.3). Called on the thread that drives the endpoint only.
/// </summary>
internal abstract class ConnectionIdGenerator
{
    /// <summary>The length of every ID this generator issues (0 to 20).</summary>
    public abstract int Length { get; }

    /// <summary>A fresh ID; <paramref name="random"/> supplies the unpredictable part.</summary>
    public abstract ConnectionId Create(IRandomSource random);
}
