namespace System.Net.Quic.Managed.Core;

/// <summary>The kinds of connection end (RFC 9000 §10).</summary>
internal enum ConnectionErrorSource : byte
{
    /// <summary>CONNECTION_CLOSE type 0x1c with a transport error code (§20.1), including CRYPTO_ERROR.</summary>
    Transport,

    /// <summary>CONNECTION_CLOSE type 0x1d with the application's code.</summary>
    Application,

    /// <summary>The idle timeout expired (§10.1); nothing was sent.</summary>
    IdleTimeout,

    /// <summary>The handshake did not finish within the configured handshake timeout.</summary>
    HandshakeTimeout,

    /// <summary>A stateless reset arrived (§10.3).</summary>
    StatelessReset,

    /// <summary>The server does not speak our version (Version Negotiation, §6).</summary>
    VersionNegotiation,
}
