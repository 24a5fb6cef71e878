using System.Net.Quic.Managed.Crypto;
using System.Net.Quic.Managed.Wire;
using System.Net.Security;
using System.Security.Cryptography;
using static QuicManaged.Tools.DatagramDumper.Rfc9001Vectors;

namespace System.Net.Quic.Managed.Tests.Crypto;

/// <summary>RFC 9001 Appendix A and RFC 9369 Appendix A, byte for byte.</summary>
public class PacketProtectionVectorTests
{
    private static string Lower(ReadOnlySpan<byte> bytes) => Convert.ToHexStringLower(bytes);

    // ---- A.1 Keys ----

    [Theory]
    [InlineData(QuicVersion.V1, V1ClientInitialSecret, V1ServerInitialSecret)]
    [InlineData(QuicVersion.V2, V2ClientInitialSecret, V2ServerInitialSecret)]
    public void A1_InitialSecrets(uint version, string clientSecret, string serverSecret)
    {
        Span<byte> client = stackalloc byte[32];
        Span<byte> server = stackalloc byte[32];
        QuicKeyDerivation.DeriveInitialSecrets(version, Hex(ClientDcid), client, server);
        Assert.Equal(clientSecret, Lower(client));
        Assert.Equal(serverSecret, Lower(server));
    }

    [Fact]
    public void A1_V2_InitialSecret_FromSalt()
    {
        // RFC 9369 A.1 initial_secret = HKDF-Extract(initial_salt, cid) with the v2 salt.
        Span<byte> prk = stackalloc byte[32];
        HkdfLabel.Extract(HashAlgorithmName.SHA256, Hex(ClientDcid), VersionCryptoParameters.GetInitialSalt(QuicVersion.V2), prk);
        Assert.Equal(V2InitialSecret, Lower(prk));
        HkdfLabel.Extract(HashAlgorithmName.SHA256, Hex(ClientDcid), VersionCryptoParameters.GetInitialSalt(QuicVersion.V1), prk);
        Assert.Equal(V1InitialSecret, Lower(prk));
    }

    [Theory]
    [InlineData(QuicVersion.V1, V1ClientInitialSecret, V1ClientKey, V1ClientIv, V1ClientHp)]
    [InlineData(QuicVersion.V1, V1ServerInitialSecret, V1ServerKey, V1ServerIv, V1ServerHp)]
    [InlineData(QuicVersion.V2, V2ClientInitialSecret, V2ClientKey, V2ClientIv, V2ClientHp)]
    [InlineData(QuicVersion.V2, V2ServerInitialSecret, V2ServerKey, V2ServerIv, V2ServerHp)]
    public void A1_PacketKeys(uint version, string secret, string key, string iv, string hp)
    {
        Span<byte> k = stackalloc byte[16];
        Span<byte> i = stackalloc byte[12];
        Span<byte> h = stackalloc byte[16];
        QuicKeyDerivation.DerivePacketKeys(Hex(secret), TlsCipherSuite.TLS_AES_128_GCM_SHA256, version, k, i, h);
        Assert.Equal(key, Lower(k));
        Assert.Equal(iv, Lower(i));
        Assert.Equal(hp, Lower(h));
    }

    [Theory]
    [InlineData(QuicVersion.V1, V1ChaChaKey, V1ChaChaIv, V1ChaChaHp)]
    [InlineData(QuicVersion.V2, V2ChaChaKey, V2ChaChaIv, V2ChaChaHp)]
    public void A5_PacketKeys(uint version, string key, string iv, string hp)
    {
        Span<byte> k = stackalloc byte[32];
        Span<byte> i = stackalloc byte[12];
        Span<byte> h = stackalloc byte[32];
        QuicKeyDerivation.DerivePacketKeys(Hex(ChaChaSecret), TlsCipherSuite.TLS_CHACHA20_POLY1305_SHA256, version, k, i, h);
        Assert.Equal(key, Lower(k));
        Assert.Equal(iv, Lower(i));
        Assert.Equal(hp, Lower(h));
    }

    // ---- Header protection masks (A.2, A.3, A.5) ----

    [Theory]
    [InlineData(V1ClientHp, V1ClientSample, V1ClientMask)]
    [InlineData(V1ServerHp, V1ServerSample, V1ServerMask)]
    [InlineData(V2ClientHp, V2ClientSample, V2ClientMask)]
    [InlineData(V2ServerHp, V2ServerSample, V2ServerMask)]
    public void AesHeaderProtectionMask(string hp, string sample, string mask)
    {
        HeaderProtectionKey key = HeaderProtectionKey.Create(TlsCipherSuite.TLS_AES_128_GCM_SHA256, Hex(hp));
        Span<byte> m = stackalloc byte[5];
        key.ComputeMask(Hex(sample), m);
        Assert.Equal(mask, Lower(m));
        // A second call must give the same answer: the cached ECB transform carries no state between blocks.
        m.Clear();
        key.ComputeMask(Hex(sample), m);
        Assert.Equal(mask, Lower(m));
        key.Release();
        Assert.True(key.IsReleased);
    }

    [Theory]
    [InlineData(V1ChaChaHp, V1ChaChaSample, V1ChaChaMask)]
    [InlineData(V2ChaChaHp, V2ChaChaSample, V2ChaChaMask)]
    public void ChaCha20HeaderProtectionMask(string hp, string sample, string mask)
    {
        HeaderProtectionKey key = HeaderProtectionKey.Create(TlsCipherSuite.TLS_CHACHA20_POLY1305_SHA256, Hex(hp));
        Span<byte> m = stackalloc byte[5];
        key.ComputeMask(Hex(sample), m);
        Assert.Equal(mask, Lower(m));
        key.Release();
    }

    // ---- A.2 Client Initial ----

    internal static byte[] BuildClientInitial(string header)
    {
        byte[] h = Hex(header);
        byte[] frame = Hex(ClientCryptoFrame);
        // RFC 9001 A.2: CRYPTO frame plus PADDING (zeros) to a 1162-byte payload, plus room for the tag.
        byte[] packet = new byte[h.Length + 1162 + PacketProtectionKeys.TagLength];
        h.CopyTo(packet, 0);
        frame.CopyTo(packet, h.Length);
        return packet;
    }

    [Theory]
    [InlineData(QuicVersion.V1, V1ClientHeader, V1ClientProtected)]
    [InlineData(QuicVersion.V2, V2ClientHeader, V2ClientProtected)]
    public void A2_ClientInitial_ProtectAndUnprotect(uint version, string header, string expectedProtected)
    {
        byte[] plain = BuildClientInitial(header);
        byte[] expected = Hex(expectedProtected);
        Assert.Equal(1200, expected.Length);
        Assert.Equal(1200, plain.Length);

        using InitialKeys keys = InitialKeys.Create(version, Hex(ClientDcid));
        byte[] packet = (byte[])plain.Clone();
        int written = keys.Client.Protect(packet, pnOffset: 18, pnLength: 4, packetNumber: 2, payloadLength: 1162);
        Assert.Equal(1200, written);
        Assert.Equal(Lower(expected), Lower(packet));
        Assert.Equal(1, keys.Client.ProtectedPacketCount);

        // The server opens it with the same (client) keys.
        using InitialKeys serverSide = InitialKeys.Create(version, Hex(ClientDcid));
        PacketProtectionKeys receive = serverSide.ReceiveKeys(isServer: true);
        Assert.True(receive.TryRemoveHeaderProtection(packet, 18, out int pnLength, out uint truncatedPn));
        Assert.Equal(4, pnLength);
        Assert.Equal(2u, truncatedPn);
        Assert.Equal(Lower(Hex(header)), Lower(packet.AsSpan(0, 22)));
        Assert.True(receive.TryDecrypt(packet, 22, truncatedPn, 1162 + 16, out int plaintextLength));
        Assert.Equal(1162, plaintextLength);
        Assert.Equal(Lower(plain.AsSpan(0, 22 + 1162)), Lower(packet.AsSpan(0, 22 + 1162)));
    }

    // ---- A.3 Server Initial ----

    [Theory]
    [InlineData(QuicVersion.V1, V1ServerHeader, V1ServerProtected)]
    [InlineData(QuicVersion.V2, V2ServerHeader, V2ServerProtected)]
    public void A3_ServerInitial_ProtectAndUnprotect(uint version, string header, string expectedProtected)
    {
        byte[] h = Hex(header);
        byte[] payload = Hex(ServerPayload);
        byte[] expected = Hex(expectedProtected);
        Assert.Equal(h.Length + payload.Length + 16, expected.Length);
        byte[] packet = new byte[expected.Length];
        h.CopyTo(packet, 0);
        payload.CopyTo(packet, h.Length);

        using InitialKeys keys = InitialKeys.Create(version, Hex(ClientDcid));
        int written = keys.SendKeys(isServer: true).Protect(packet, pnOffset: 18, pnLength: 2, packetNumber: 1, payloadLength: payload.Length);
        Assert.Equal(expected.Length, written);
        Assert.Equal(Lower(expected), Lower(packet));

        PacketProtectionKeys receive = keys.ReceiveKeys(isServer: false);
        Assert.Same(keys.Server, receive);
        Assert.True(receive.TryRemoveHeaderProtection(packet, 18, out int pnLength, out uint truncatedPn));
        Assert.Equal(2, pnLength);
        Assert.Equal(1u, truncatedPn);
        Assert.Equal(Lower(h), Lower(packet.AsSpan(0, h.Length)));
        Assert.True(receive.TryDecrypt(packet, h.Length, truncatedPn, payload.Length + 16, out int plaintextLength));
        Assert.Equal(payload.Length, plaintextLength);
        Assert.Equal(Lower(payload), Lower(packet.AsSpan(h.Length, plaintextLength)));
    }

    // ---- A.5 ChaCha20-Poly1305 short header ----

    [Theory]
    [InlineData(QuicVersion.V1, V1ChaChaCiphertext, V1ChaChaPacket)]
    [InlineData(QuicVersion.V2, V2ChaChaCiphertext, V2ChaChaPacket)]
    public void A5_ChaCha20ShortHeader_ProtectAndUnprotect(uint version, string ciphertext, string expectedPacket)
    {
        byte[] packet = new byte[21];
        Hex(ChaChaUnprotectedHeader).CopyTo(packet, 0);
        packet[4] = 0x01; // PING

        using PacketProtectionKeys keys = PacketProtectionKeys.Create(Hex(ChaChaSecret), TlsCipherSuite.TLS_CHACHA20_POLY1305_SHA256, version);
        int written = keys.Protect(packet, pnOffset: 1, pnLength: 3, packetNumber: ChaChaPacketNumber, payloadLength: 1);
        Assert.Equal(21, written);
        Assert.Equal(ciphertext, Lower(packet.AsSpan(4)));
        Assert.Equal(expectedPacket, Lower(packet));

        using PacketProtectionKeys receive = PacketProtectionKeys.Create(Hex(ChaChaSecret), TlsCipherSuite.TLS_CHACHA20_POLY1305_SHA256, version);
        Assert.True(receive.TryRemoveHeaderProtection(packet, 1, out int pnLength, out uint truncatedPn));
        Assert.Equal(3, pnLength);
        Assert.Equal(49140u, truncatedPn); // RFC 9001 A.5: "49140 is encoded"
        Assert.Equal(ChaChaUnprotectedHeader, Lower(packet.AsSpan(0, 4)));
        // Packet number decoding (RFC 9000 A.3) belongs to the Wire layer; the vector states the full value.
        Assert.True(receive.TryDecrypt(packet, 4, ChaChaPacketNumber, 17, out int plaintextLength));
        Assert.Equal(1, plaintextLength);
        Assert.Equal(0x01, packet[4]);
    }

    [Theory]
    [InlineData(QuicVersion.V1, V1ChaChaPacket)]
    [InlineData(QuicVersion.V2, V2ChaChaPacket)]
    public void A5_WrongFullPacketNumber_FailsAuthentication(uint version, string protectedPacket)
    {
        byte[] packet = Hex(protectedPacket);
        using PacketProtectionKeys receive = PacketProtectionKeys.Create(Hex(ChaChaSecret), TlsCipherSuite.TLS_CHACHA20_POLY1305_SHA256, version);
        Assert.True(receive.TryRemoveHeaderProtection(packet, 1, out _, out uint truncatedPn));
        // Using the truncated value as if it were the full number gives the wrong nonce.
        Assert.False(receive.TryDecrypt(packet, 4, truncatedPn, 17, out _));
        Assert.Equal(1, receive.FailedDecryptionCount);
    }

    [Fact]
    public void Versions_DoNotInteroperate()
    {
        byte[] packet = BuildClientInitial(V1ClientHeader);
        using InitialKeys v1 = InitialKeys.Create(QuicVersion.V1, Hex(ClientDcid));
        using InitialKeys v2 = InitialKeys.Create(QuicVersion.V2, Hex(ClientDcid));
        v1.Client.Protect(packet, 18, 4, 2, 1162);
        Assert.True(v2.Client.TryRemoveHeaderProtection(packet, 18, out int pnLength, out uint pn));
        Assert.False(v2.Client.TryDecrypt(packet, 18 + pnLength, pn, packet.Length - 18 - pnLength, out _));
    }
}
