using System;
using System.Net.Quic.Managed.Core;
using System.Net.Quic.Managed.Crypto;
using System.Net.Quic.Managed.Tls;
using System.Net.Quic.Managed.Wire;
using System.Net.Security;
using System.Security.Cryptography.X509Certificates;

namespace QuicManaged.Fuzz;

/// <summary>
/// Stateful targets for the real TLS 1.3 engine (<see cref="TlsCryptoHandshake"/>, as connections use it): a server
/// fed a client's CRYPTO data (ClientHello, then Certificate / CertificateVerify / Finished), and a client fed a
/// server's (ServerHello, EncryptedExtensions, Certificate, CertificateVerify, Finished, NewSessionTicket).
/// <para>Input: records <c>level(1) length(2, big-endian) data(length)</c>; level mod 3 = Initial, Handshake, 1-RTT.
/// Each record is handed to <see cref="ICryptoHandshake.Process"/>; the first error ends the run (as the connection
/// would close). Randomness is seeded and the certificate fixed, so the seeds replay the same handshake: the server
/// seed is a real client's flight and the client seed a real server's flight for the same seed.</para>
/// Only the returned TransportErrorCode may report a failure: any exception is a crash.
/// </summary>
internal static class TlsEngineTargets
{
    // A throw-away self-signed P-256 certificate for "fuzz.example" (test material, not a secret).
    private const string CertificatePem =
        "-----BEGIN CERTIFICATE-----\n" +
        "MIIBnjCCAUSgAwIBAgIUC9EpxWoOXKATdiQDAnPI9naIfvYwCgYIKoZIzj0EAwIw\n" +
        "FzEVMBMGA1UEAwwMZnV6ei5leGFtcGxlMCAXDTI2MTEyNTIyNTkwOVoYDzIxMjYx\n" +
        "MTAxMjI1OTA5WjAXMRUwEwYDVQQDDAxmdXp6LmV4YW1wbGUwWTATBgcqhkjOPQIB\n" +
        "BggqhkjOPQMBBwNCAAQXN0iRbm2qK+6hRy4+2TNglj4KIofJrAs/C5nZEM7pc22W\n" +
        "LK+7LvlfUUSoFZ8EFCq96yFPP3fED/CqxCyPxDP6o2wwajAdBgNVHQ4EFgQUJVhY\n" +
        "tTMo77OicF+zjgZ+1hfc2NAwHwYDVR0jBBgwFoAUJVhYtTMo77OicF+zjgZ+1hfc\n" +
        "2NAwDwYDVR0TAQH/BAUwAwEB/zAXBgNVHREEEDAOggxmdXp6LmV4YW1wbGUwCgYI\n" +
        "KoZIzj0EAwIDSAAwRQIgTMafk0XqX6T70+IJOMIUrJL6YUIBfmRik92RFkv5Na8C\n" +
        "IQCI9+MF31o6BQXUwrNDZefj+VjX+bL12faIkqoIW/DEbg==\n" +
        "-----END CERTIFICATE-----\n";

    private const string KeyPem =
        "-----BEGIN PRIVATE KEY-----\n" +
        "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgnbKR5kuADSUoCN4R\n" +
        "YSTJq4LUyBcbd9EJdtOeO7Rw0ImhRANCAAQXN0iRbm2qK+6hRy4+2TNglj4KIofJ\n" +
        "rAs/C5nZEM7pc22WLK+7LvlfUUSoFZ8EFCq96yFPP3fED/CqxCyPxDP6\n" +
        "-----END PRIVATE KEY-----\n";

    private static readonly Lazy<X509Certificate2> Certificate = new(() => X509Certificate2.CreateFromPem(CertificatePem, KeyPem));

    private static readonly byte[] SessionTicketKey = new byte[32];

    private static byte[] ClientParameters => new TransportParameters { InitialMaxData = 1 << 20, InitialSourceConnectionId = [1, 2, 3, 4] }.Encode()!;

    private static byte[] ServerParameters => new TransportParameters
    {
        InitialMaxData = 1 << 20, InitialSourceConnectionId = [5, 6, 7, 8], OriginalDestinationConnectionId = [1, 2, 3, 4, 5, 6, 7, 8],
    }.Encode()!;

    public static TlsCryptoHandshake CreateServer() => new(isServer: true, new TlsHandshakeOptions
    {
        Certificate = Certificate.Value,
        ApplicationProtocols = { new SslApplicationProtocol("h3"), new SslApplicationProtocol("alpn") },
        Random = new SeededRandomSource(11),
        SessionTicketKey = SessionTicketKey,
        EnableEarlyData = true,
        RequestClientCertificate = true,
        RemoteCertificateValidation = (_, _, _, _) => true,
    });

    public static TlsCryptoHandshake CreateClient() => new(isServer: false, new TlsHandshakeOptions
    {
        ServerName = "fuzz.example",
        ApplicationProtocols = { new SslApplicationProtocol("h3") },
        Random = new SeededRandomSource(12),
        RemoteCertificateValidation = (_, _, _, _) => true,
    });

    public static void Server(byte[] input)
    {
        using TlsCryptoHandshake server = CreateServer();
        server.Start(ServerParameters, 0);
        Feed(server, input);
    }

    public static void Client(byte[] input)
    {
        using TlsCryptoHandshake client = CreateClient();
        client.Start(ClientParameters, 0);
        Drain(client);
        Feed(client, input);
    }

    private static void Feed(TlsCryptoHandshake tls, ReadOnlySpan<byte> rest)
    {
        long now = 1_000_000;
        while (rest.Length >= 3)
        {
            EncryptionLevel level = (rest[0] % 3) switch { 0 => EncryptionLevel.Initial, 1 => EncryptionLevel.Handshake, _ => EncryptionLevel.OneRtt };
            int length = Math.Min((rest[1] << 8) | rest[2], rest.Length - 3);
            ReadOnlySpan<byte> data = rest.Slice(3, length);
            rest = rest.Slice(3 + length);
            now += 1_000;
            TransportErrorCode error = tls.Process(level, data, now, out string? reason);
            Drain(tls);
            if (Environment.GetEnvironmentVariable("FUZZ_DEBUG") is not null) Console.Error.WriteLine($"tls: {level} {length} bytes: {error} {reason} complete={tls.IsComplete}");
            if (error != TransportErrorCode.NoError) return;
        }

        _ = tls.IsComplete;
        _ = tls.NegotiatedApplicationProtocol;
        _ = tls.PeerTransportParameters.Length;
        _ = tls.TryTakeSessionTicket(out _);
    }

    private static void Drain(TlsCryptoHandshake tls)
    {
        while (tls.TryTakeOutgoing(out _, out _))
        {
        }

        while (tls.TryTakeSecret(out _))
        {
        }
    }

    /// <summary>Seeds: a real client and server handshake with each other; their flights become the records.</summary>
    public static (byte[] ServerSeed, byte[] ClientSeed) RecordHandshake()
    {
        using TlsCryptoHandshake client = CreateClient();
        using TlsCryptoHandshake server = CreateServer();
        client.Start(ClientParameters, 0);
        server.Start(ServerParameters, 0);
        var toServer = new List<byte>();
        var toClient = new List<byte>();
        for (int round = 0; round < 8 && !(client.IsComplete && server.IsComplete); round++)
        {
            Move(client, server, toServer);
            Move(server, client, toClient);
        }

        if (!client.IsComplete || !server.IsComplete) throw new InvalidOperationException("the seed handshake did not complete");
        return (toServer.ToArray(), toClient.ToArray());
    }

    private static void Move(TlsCryptoHandshake from, TlsCryptoHandshake to, List<byte> record)
    {
        while (from.TryTakeOutgoing(out EncryptionLevel level, out byte[] data))
        {
            byte levelByte = level switch { EncryptionLevel.Initial => 0, EncryptionLevel.Handshake => 1, _ => 2 };
            for (int offset = 0; offset < data.Length; offset += 0xffff)
            {
                int length = Math.Min(0xffff, data.Length - offset);
                record.Add(levelByte);
                record.Add((byte)(length >> 8));
                record.Add((byte)length);
                record.AddRange(data.AsSpan(offset, length).ToArray());
            }

            if (to.Process(level, data, 0, out string? reason) != TransportErrorCode.NoError) throw new InvalidOperationException(reason);
        }

        while (from.TryTakeSecret(out _))
        {
        }
    }
}
