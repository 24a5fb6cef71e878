namespace System.Net.Quic.Managed.Core;

/// <summary>What a server knows when a client's first Initial arrives; the endpoint asks its owner for options and a TLS engine.</summary>
internal readonly record struct IncomingConnectionRequest(NetworkAddress Remote, uint Version);
