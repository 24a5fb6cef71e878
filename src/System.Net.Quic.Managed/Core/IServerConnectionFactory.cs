namespace System.Net.Quic.Managed.Core;

/// <summary>
/// The owner of a server endpoint decides what happens to a client's first Initial, once the endpoint has checked that
/// it authenticates with the Initial keys (RFC 9001 §5.2): nothing is asked of the owner for noise or forgeries.
/// </summary>
internal interface IServerConnectionFactory
{
    /// <summary>Options and TLS engine for a new client, or false to drop its Initial silently.</summary>
    bool TryCreate(in IncomingConnectionRequest request, out ConnectionOptions options, out ICryptoHandshake handshake);

    /// <summary>
    /// Accept (with an owner object the endpoint hands back with the connection, as quinn's <c>Incoming</c> does), refuse
    /// with a CONNECTION_CLOSE, or drop. The default accepts or drops through <see cref="TryCreate"/>.
    /// </summary>
    IncomingDecision Decide(in IncomingConnectionRequest request)
        => TryCreate(request, out ConnectionOptions options, out ICryptoHandshake handshake)
            ? IncomingDecision.Accept(options, handshake, owner: null)
            : IncomingDecision.Drop;

    /// <summary>A connection accepted for <paramref name="owner"/> was discarded before the endpoint handed it over.</summary>
    void Abandon(object? owner)
    {
    }
}
