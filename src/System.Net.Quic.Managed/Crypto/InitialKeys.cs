using System.Net.Security;
using System.Security.Cryptography;

namespace System.Net.Quic.Managed.Crypto;

/// <summary>
/// Initial packet protection for both directions (RFC 9001 §5.2; RFC 9369 §3.3.1): always AEAD_AES_128_GCM with
/// secrets derived from the Destination Connection ID of the client's first Initial packet (or the Retry's SCID).
/// </summary>
internal sealed class InitialKeys : IDisposable
{
    private InitialKeys(PacketProtectionKeys client, PacketProtectionKeys server)
    {
        Client = client;
        Server = server;
    }

    /// <summary>Protects packets the client sends (client_initial_secret).</summary>
    public PacketProtectionKeys Client { get; }

    /// <summary>Protects packets the server sends (server_initial_secret).</summary>
    public PacketProtectionKeys Server { get; }

    /// <summary>The keys this endpoint seals with.</summary>
    public PacketProtectionKeys SendKeys(bool isServer) => isServer ? Server : Client;

    /// <summary>The keys this endpoint opens with.</summary>
    public PacketProtectionKeys ReceiveKeys(bool isServer) => isServer ? Client : Server;

    /// <summary>
    /// Derives both directions' Initial keys. <paramref name="version"/> must satisfy QuicVersion.IsSupported.
    /// </summary>
    public static InitialKeys Create(uint version, ReadOnlySpan<byte> clientDestinationConnectionId)
    {
        Span<byte> clientSecret = stackalloc byte[QuicKeyDerivation.InitialSecretLength];
        Span<byte> serverSecret = stackalloc byte[QuicKeyDerivation.InitialSecretLength];
        try
        {
            QuicKeyDerivation.DeriveInitialSecrets(version, clientDestinationConnectionId, clientSecret, serverSecret);
            PacketProtectionKeys client = PacketProtectionKeys.Create(clientSecret, TlsCipherSuite.TLS_AES_128_GCM_SHA256, version);
            PacketProtectionKeys server = PacketProtectionKeys.Create(serverSecret, TlsCipherSuite.TLS_AES_128_GCM_SHA256, version);
            return new InitialKeys(client, server);
        }
        finally
        {
            CryptographicOperations.ZeroMemory(clientSecret);
            CryptographicOperations.ZeroMemory(serverSecret);
        }
    }

    public void Dispose()
    {
        Client.Dispose();
        Server.Dispose();
    }
}
