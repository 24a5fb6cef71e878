namespace System.Net.Quic.Managed.Core;

/// <summary>
/// What a server knows when a client's first Initial arrives; the endpoint asks its owner for options and a TLS engine.
/// <paramref name="ServerName"/> is the ClientHello's SNI when the first datagram holds the whole ClientHello
/// (<see cref="ClientHelloPeek"/>), else null.
/// </summary>
internal readonly record struct IncomingConnectionRequest(NetworkAddress Remote, uint Version, string? ServerName = null);
