using System.Net.Quic.Managed.Core;
using System.Net.Quic.Managed.Wire;
using System.Security.Authentication;

namespace System.Net.Quic.Managed;

/// <summary>Turns the core's error values into the exceptions System.Net.Quic throws for the same situations.</summary>
internal static class QuicExceptionFactory
{
    /// <summary>The exception for operations on a connection that ended with <paramref name="error"/>.</summary>
    public static Exception ForConnection(ConnectionError? error)
    {
        if (error is null) return OperationAborted("The connection was closed.");
        string detail = error.Reason is null ? "" : ": " + error.Reason;
        switch (error.Source)
        {
            case ConnectionErrorSource.Application:
                return error.ByPeer
                    ? new QuicException(QuicError.ConnectionAborted, (long)error.Code, null, $"Connection aborted by peer ({error.Code}){detail}.", null)
                    : OperationAborted($"The connection was closed locally with application code {error.Code}.");
            case ConnectionErrorSource.IdleTimeout:
                return new QuicException(QuicError.ConnectionIdle, null, null, "The connection timed out from inactivity.", null);
            case ConnectionErrorSource.HandshakeTimeout:
                return new QuicException(QuicError.ConnectionTimeout, null, null, "The connection handshake timed out.", null);
            case ConnectionErrorSource.VersionNegotiation:
                return new QuicException(QuicError.VersionNegotiationError, null, null, "The peer does not support a common QUIC version.", null);
            case ConnectionErrorSource.StatelessReset:
                return new QuicException(QuicError.ConnectionAborted, null, null, "The peer reset the connection (stateless reset).", null);
            case ConnectionErrorSource.Transport when error.ByPeer && error.Code == (ulong)TransportErrorCode.ConnectionRefused:
                // RFC 9000 §20.1: the server refused (e.g. its listener's backlog is full); msquic reports ConnectionRefused.
                return new QuicException(QuicError.ConnectionRefused, null, (long)error.Code, $"The server refused the connection{detail}.", null);
            default:
                string who = error.ByPeer ? "peer" : "local endpoint";
                return new QuicException(QuicError.TransportError, null, (long)error.Code,
                    $"QUIC transport error 0x{error.Code:x} ({(TransportErrorCode)error.Code}) from the {who}{detail}.", null);
        }
    }

    /// <summary>True for a TLS failure (CRYPTO_ERROR range 0x100-0x1ff, RFC 9001 §4.8).</summary>
    public static bool IsTlsFailure(ConnectionError? error)
        => error is { Source: ConnectionErrorSource.Transport, Code: >= 0x100 and <= 0x1ff };

    /// <summary>ConnectAsync/accept failures: TLS failures surface as <see cref="AuthenticationException"/>, as in System.Net.Quic.</summary>
    public static Exception ForHandshake(ConnectionError? error)
    {
        Exception inner = ForConnection(error);
        if (!IsTlsFailure(error)) return inner;
        string what = error!.Code == 0x178 ? "no common application protocol (ALPN)" : $"TLS alert {error.Code - 0x100}";
        return new AuthenticationException($"Authentication failed: {what}{(error.Reason is null ? "" : " (" + error.Reason + ")")}.", inner);
    }

    /// <summary>What System.Net.Quic throws when an app callback (TLS validation, options) threw: the callback's exception inside.</summary>
    public static QuicException CallbackError(Exception inner) => new(QuicError.CallbackError, null, null, "User configured callback failed.", inner);

    public static QuicException OperationAborted(string message) => new(QuicError.OperationAborted, null, null, message, null);

    public static QuicException StreamAborted(ulong code, string what) => new(QuicError.StreamAborted, (long)code, null, $"The peer {what} (application code {code}).", null);

    public static QuicException ConnectionRefused() => new(QuicError.ConnectionRefused, null, null, "The server refused the connection (ICMP port unreachable).", null);
}
