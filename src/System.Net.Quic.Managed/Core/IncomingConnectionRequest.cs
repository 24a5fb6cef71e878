using System.Collections.Generic;

namespace System.Net.Quic.Managed.Core;

/// <summary>
/// What a server knows when a client's first Initial arrives (already authenticated with the Initial keys); the
/// endpoint asks its owner for options and a TLS engine. <paramref name="ServerName"/> and
/// <paramref name="ApplicationProtocols"/> are the ClientHello's SNI and ALPN list when the first datagram holds the
/// whole ClientHello (<see cref="ClientHelloPeek"/>), else null.
/// </summary>
internal readonly record struct IncomingConnectionRequest(NetworkAddress Remote, uint Version, string? ServerName = null, List<byte[]>? ApplicationProtocols = null);
