namespace System.Net.Quic.Managed.Core;

/// <summary>One notification from a connection to the API layer.</summary>
internal readonly record struct ConnectionEvent(ConnectionEventKind Kind, long StreamId = -1, ConnectionError? Error = null);
