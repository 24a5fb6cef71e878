using System.Net.Quic.Managed.Core;
using System.Net.Quic.Managed.Wire;
using System.Net.Sockets;
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
                // msquic reports its silent idle close with transport error code 1 (what System.Net.Quic surfaces).
                return new QuicException(QuicError.ConnectionIdle, null, IdleTimeoutTransportErrorCode, "The connection timed out from inactivity.", null);
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

    /// <summary>CRYPTO_ERROR carrying the TLS handshake_failure alert (40), RFC 9001 §4.8.</summary>
    private const ulong HandshakeFailureCryptoError = 0x100 + 40;

    /// <summary>ConnectAsync/accept failures: TLS failures surface as <see cref="AuthenticationException"/>, as in System.Net.Quic.</summary>
    public static Exception ForHandshake(ConnectionError? error)
    {
        Exception inner = ForConnection(error);
        if (!IsTlsFailure(error)) return inner;
        if (error!.Code == HandshakeFailureCryptoError)
        {
            // msquic reports a handshake_failure (e.g. no common cipher suite) as QUIC_STATUS_HANDSHAKE_FAILURE, which
            // System.Net.Quic surfaces as an internal error rather than an AuthenticationException.
            return new QuicException(QuicError.InternalError, null, null,
                $"An internal error has occurred. Status code: QUIC_STATUS_HANDSHAKE_FAILURE{(error.Reason is null ? "" : " (" + error.Reason + ")")}", inner);
        }
        string reason = error.Reason is null ? "" : " (" + error.Reason + ")";
        if (!error.ByPeer && error.Reason is string rejection && rejection.StartsWith(Tls.CertificateValidator.RejectionPrefix, StringComparison.Ordinal))
        {
            // This side rejected the peer's certificate: System.Net.Quic's message alone, as SslStream words it.
            return new AuthenticationException(rejection, inner);
        }
        if (error.ByPeer && error.Code != 0x178)
        {
            // SslStream's wording (System.Net.Quic's too): the alert by its name, e.g. 'UserCanceled'.
            return new AuthenticationException($"Authentication failed because the remote party sent a TLS alert: '{(Tls.TlsAlert)(byte)(error.Code - 0x100)}'{reason}.", inner);
        }
        string what = error.Code == 0x178 ? "no common application protocol (ALPN)" : $"TLS alert {error.Code - 0x100}";
        return new AuthenticationException($"Authentication failed: {what}{reason}.", inner);
    }

    /// <summary>What System.Net.Quic throws when an app callback (TLS validation, options) threw: the callback's exception inside.</summary>
    public static QuicException CallbackError(Exception inner) => new(QuicError.CallbackError, null, null, "User configured callback failed.", inner);

    public static QuicException OperationAborted(string message) => new(QuicError.OperationAborted, null, null, message, null);

    public static QuicException StreamAborted(ulong code, string what) => new(QuicError.StreamAborted, (long)code, null, $"The peer {what} (application code {code}).", null);

    /// <summary>The <see cref="QuicException.TransportErrorCode"/> of a <see cref="QuicError.ConnectionIdle"/> close, as msquic gives it.</summary>
    public const long IdleTimeoutTransportErrorCode = 1;

    /// <summary>
    /// ConnectAsync to a port where nothing listens (an ICMP port unreachable before the handshake): System.Net.Quic on
    /// msquic throws a bare <see cref="SocketException"/> with <see cref="SocketError.HostUnreachable"/> ("No route to host").
    /// </summary>
    public static SocketException PeerUnreachable() => new((int)SocketError.HostUnreachable);

    /// <summary>
    /// ConnectAsync to an endpoint with port 0: msquic's ConnectionStart fails with QUIC_STATUS_INVALID_PARAMETER at once,
    /// which System.Net.Quic surfaces as an internal error.
    /// </summary>
    public static QuicException InvalidRemotePort() => new(QuicError.InternalError, null, null,
        "An internal error has occurred. ConnectionStart failed: QUIC_STATUS_INVALID_PARAMETER (the remote port is 0).", null);
}
