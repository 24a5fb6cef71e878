namespace System.Net.Quic.Managed.Ids;

/// <summary>A connection ID with its sequence number and stateless reset token (the content of NEW_CONNECTION_ID, RFC 9000 §19.15).</summary>
internal readonly record struct IssuedConnectionId(ulong SequenceNumber, ConnectionId Id, StatelessResetToken ResetToken);
