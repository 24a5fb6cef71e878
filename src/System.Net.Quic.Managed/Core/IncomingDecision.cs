using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Core;

/// <summary>What a server endpoint does with an authenticated client Initial that belongs to no connection.</summary>
internal enum IncomingAction
{
    /// <summary>Ignore the datagram: the client retransmits or times out.</summary>
    Drop,

    /// <summary>Create the connection and hand it to the owner with <see cref="Endpoint.TryAccept(out Connection, out object?)"/>.</summary>
    Accept,

    /// <summary>Answer with CONNECTION_CLOSE in an Initial packet (RFC 9000 §10.2.3), so the client fails at once.</summary>
    Refuse,
}

/// <summary>The owner's answer to <see cref="IServerConnectionFactory.Decide"/>.</summary>
internal readonly struct IncomingDecision
{
    private IncomingDecision(IncomingAction action, ConnectionOptions? options, ICryptoHandshake? handshake, object? owner, TransportErrorCode refusal, string? reason)
    {
        Action = action;
        Options = options;
        Handshake = handshake;
        Owner = owner;
        Refusal = refusal;
        Reason = reason;
    }

    public IncomingAction Action { get; }

    public ConnectionOptions? Options { get; }

    public ICryptoHandshake? Handshake { get; }

    /// <summary>Handed back with the connection (the listener's public connection object), never read by the core.</summary>
    public object? Owner { get; }

    /// <summary>The transport error code a refusal closes with (CONNECTION_REFUSED, or CRYPTO_ERROR + a TLS alert).</summary>
    public TransportErrorCode Refusal { get; }

    public string? Reason { get; }

    public static IncomingDecision Drop => default;

    public static IncomingDecision Accept(ConnectionOptions options, ICryptoHandshake handshake, object? owner)
        => new(IncomingAction.Accept, options, handshake, owner, TransportErrorCode.NoError, null);

    public static IncomingDecision Refuse(TransportErrorCode code, string reason)
        => new(IncomingAction.Refuse, null, null, null, code, reason);
}
