namespace System.Net.Quic.Managed.Ids;

/// <summary>Tells the endpoint to add or remove a local connection ID from its datagram routing table.</summary>
internal readonly record struct ConnectionIdRoutingChange(ConnectionId Id, bool Added);
