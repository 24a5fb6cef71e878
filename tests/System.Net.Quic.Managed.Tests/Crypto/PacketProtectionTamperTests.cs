using System.Net.Quic.Managed.Crypto;
using System.Net.Quic.Managed.Wire;
using System.Net.Security;
using static QuicManaged.Tools.DatagramDumper.Rfc9001Vectors;

namespace System.Net.Quic.Managed.Tests.Crypto;

/// <summary>Any single flipped bit in a protected packet must make opening it fail (RFC 9001 §5.3, §5.4).</summary>
public class PacketProtectionTamperTests
{
    // Header protection removal then decryption, with lengths taken from the (possibly tampered) unmasked header,
    // as the receive path would. Returns true only if the packet authenticated.
    private static bool TryOpen(PacketProtectionKeys keys, byte[] packet, int pnOffset, ulong expectedPn)
    {
        if (!keys.TryRemoveHeaderProtection(packet, pnOffset, out int pnLength, out uint truncated)) return false;
        // Tests use small packet numbers: the full number equals the truncated one, unless the PN bytes were tampered.
        ulong full = pnLength >= 3 && expectedPn > 0xffff ? (expectedPn & ~((1UL << (8 * pnLength)) - 1)) | truncated : truncated;
        int headerLength = pnOffset + pnLength;
        return keys.TryDecrypt(packet, headerLength, full, packet.Length - headerLength, out _);
    }

    [Theory]
    [InlineData(QuicVersion.V1, V1ClientProtected)]
    [InlineData(QuicVersion.V2, V2ClientProtected)]
    public void ClientInitial_AnyFlippedBit_Fails(uint version, string protectedHex)
    {
        byte[] original = Hex(protectedHex);
        using InitialKeys keys = InitialKeys.Create(version, Hex(ClientDcid));
        Assert.True(TryOpen(keys.Client, (byte[])original.Clone(), 18, 2));

        byte[] copy = new byte[original.Length];
        for (int bit = 0; bit < original.Length * 8; bit++)
        {
            original.CopyTo(copy, 0);
            copy[bit / 8] ^= (byte)(1 << (bit % 8));
            Assert.False(TryOpen(keys.Client, copy, 18, 2), $"bit {bit} flipped but packet opened");
        }
        Assert.True(keys.Client.FailedDecryptionCount > 0);
    }

    [Theory]
    [InlineData(QuicVersion.V1, V1ServerProtected)]
    [InlineData(QuicVersion.V2, V2ServerProtected)]
    public void ServerInitial_AnyFlippedBit_Fails(uint version, string protectedHex)
    {
        byte[] original = Hex(protectedHex);
        using InitialKeys keys = InitialKeys.Create(version, Hex(ClientDcid));
        Assert.True(TryOpen(keys.Server, (byte[])original.Clone(), 18, 1));
        for (int bit = 0; bit < original.Length * 8; bit++)
        {
            byte[] copy = (byte[])original.Clone();
            copy[bit / 8] ^= (byte)(1 << (bit % 8));
            Assert.False(TryOpen(keys.Server, copy, 18, 1), $"bit {bit}");
        }
    }

    [Theory]
    [InlineData(QuicVersion.V1, V1ChaChaPacket)]
    [InlineData(QuicVersion.V2, V2ChaChaPacket)]
    public void ChaCha20ShortHeader_AnyFlippedBit_Fails(uint version, string protectedHex)
    {
        byte[] original = Hex(protectedHex);
        using PacketProtectionKeys keys = PacketProtectionKeys.Create(Hex(ChaChaSecret), TlsCipherSuite.TLS_CHACHA20_POLY1305_SHA256, version);
        Assert.True(TryOpen(keys, (byte[])original.Clone(), 1, ChaChaPacketNumber));
        for (int bit = 0; bit < original.Length * 8; bit++)
        {
            byte[] copy = (byte[])original.Clone();
            copy[bit / 8] ^= (byte)(1 << (bit % 8));
            Assert.False(TryOpen(keys, copy, 1, ChaChaPacketNumber), $"bit {bit}");
        }
    }

    [Theory]
    [InlineData(TlsCipherSuite.TLS_AES_128_GCM_SHA256, 32)]
    [InlineData(TlsCipherSuite.TLS_AES_256_GCM_SHA384, 48)]
    [InlineData(TlsCipherSuite.TLS_CHACHA20_POLY1305_SHA256, 32)]
    public void RandomShortHeaderPackets_RoundTrip_AndRejectTampering(TlsCipherSuite suite, int secretLength)
    {
        var rng = new Random(unchecked((int)0x9001) + (int)suite);
        byte[] secret = new byte[secretLength];
        rng.NextBytes(secret);
        using PacketProtectionKeys sender = PacketProtectionKeys.Create(secret, suite, QuicVersion.V1);
        using PacketProtectionKeys receiver = PacketProtectionKeys.Create(secret, suite, QuicVersion.V1);

        for (int iteration = 0; iteration < 500; iteration++)
        {
            int dcidLength = rng.Next(0, 21);
            int pnLength = rng.Next(1, 5);
            int payloadLength = Math.Max(4 - pnLength, rng.Next(0, 1300));
            int pnOffset = 1 + dcidLength;
            byte[] packet = new byte[pnOffset + pnLength + payloadLength + 16];
            rng.NextBytes(packet);
            packet[0] = (byte)(0x40 | (rng.Next(0, 8) << 2) | (pnLength - 1)); // short header, random spin/reserved/key phase
            ulong pn = (ulong)rng.NextInt64(0, 1L << (8 * pnLength));
            byte[] plain = (byte[])packet.Clone();
            for (int i = 0; i < pnLength; i++) plain[pnOffset + i] = (byte)(pn >> (8 * (pnLength - 1 - i)));

            Assert.Equal(packet.Length, sender.Protect(packet, pnOffset, pnLength, pn, payloadLength));
            byte[] protectedCopy = (byte[])packet.Clone();

            Assert.True(receiver.TryRemoveHeaderProtection(packet, pnOffset, out int gotPnLength, out uint gotPn));
            Assert.Equal(pnLength, gotPnLength);
            Assert.Equal(pn, gotPn);
            Assert.True(receiver.TryDecrypt(packet, pnOffset + pnLength, pn, payloadLength + 16, out int plaintextLength));
            Assert.Equal(payloadLength, plaintextLength);
            Assert.True(plain.AsSpan(0, pnOffset + pnLength + payloadLength).SequenceEqual(packet.AsSpan(0, pnOffset + pnLength + payloadLength)));

            int flip = rng.Next(0, protectedCopy.Length * 8);
            protectedCopy[flip / 8] ^= (byte)(1 << (flip % 8));
            bool opened = receiver.TryRemoveHeaderProtection(protectedCopy, pnOffset, out int tPnLength, out uint tPn)
                && receiver.TryDecrypt(protectedCopy, pnOffset + tPnLength, tPn, protectedCopy.Length - pnOffset - tPnLength, out _);
            Assert.False(opened, $"iteration {iteration} bit {flip}");
        }
        Assert.Equal(500, sender.ProtectedPacketCount);
    }

    [Fact]
    public void TryRemoveHeaderProtection_RejectsPacketsWithoutRoomForSample()
    {
        using PacketProtectionKeys keys = PacketProtectionKeys.Create(new byte[32], TlsCipherSuite.TLS_AES_128_GCM_SHA256, QuicVersion.V1);
        // pnOffset + 4 + 16 bytes are required.
        for (int length = 0; length < 1 + 20; length++)
        {
            byte[] packet = new byte[length];
            Array.Fill(packet, (byte)0xa5);
            Assert.False(keys.TryRemoveHeaderProtection(packet, 1, out int pnLength, out uint pn));
            Assert.Equal(0, pnLength);
            Assert.Equal(0u, pn);
            Assert.All(packet, b => Assert.Equal(0xa5, b)); // untouched
        }
        Assert.True(keys.TryRemoveHeaderProtection(new byte[21], 1, out _, out _));
        Assert.False(keys.TryRemoveHeaderProtection(new byte[100], 0, out _, out _));
        Assert.False(keys.TryRemoveHeaderProtection(new byte[100], -1, out _, out _));
        Assert.False(keys.TryRemoveHeaderProtection(new byte[100], 81, out _, out _));
        Assert.False(keys.TryRemoveHeaderProtection(new byte[100], int.MaxValue, out _, out _));
    }

    [Fact]
    public void TryDecrypt_RejectsImpossibleLengths_WithoutCountingFailures()
    {
        using PacketProtectionKeys keys = PacketProtectionKeys.Create(new byte[32], TlsCipherSuite.TLS_AES_128_GCM_SHA256, QuicVersion.V1);
        byte[] packet = new byte[64];
        Assert.False(keys.TryDecrypt(packet, 10, 0, 15, out _));        // shorter than the tag
        Assert.False(keys.TryDecrypt(packet, 10, 0, 55, out _));        // runs past the span
        Assert.False(keys.TryDecrypt(packet, 0, 0, 20, out _));         // no header
        Assert.False(keys.TryDecrypt(packet, -5, 0, 20, out _));
        Assert.False(keys.TryDecrypt(packet, int.MaxValue, 0, int.MaxValue, out _));
        Assert.False(keys.TryDecrypt(packet, 10, 0, -1, out _));
        Assert.Equal(0, keys.FailedDecryptionCount);
        Assert.False(keys.TryDecrypt(packet, 10, 0, 54, out _));        // well-formed but forged
        Assert.Equal(1, keys.FailedDecryptionCount);
    }

    [Fact]
    public void Protect_RejectsCallerErrors()
    {
        using PacketProtectionKeys keys = PacketProtectionKeys.Create(new byte[32], TlsCipherSuite.TLS_AES_128_GCM_SHA256, QuicVersion.V1);
        byte[] packet = new byte[64];
        packet[0] = 0x40; // short header, 1-byte packet number
        Assert.Throws<ArgumentException>(() => keys.Protect(packet, 1, 1, 0, 2));            // pn + payload < 4: no sample
        Assert.Throws<ArgumentException>(() => keys.Protect(packet, 1, 1, 0, 47));           // no room for the tag
        Assert.Throws<ArgumentException>(() => keys.Protect(packet, 1, 2, 0, 10));           // first byte says 1-byte PN
        Assert.Throws<ArgumentOutOfRangeException>(() => keys.Protect(packet, 1, 5, 0, 10));
        Assert.Throws<ArgumentOutOfRangeException>(() => keys.Protect(packet, 0, 1, 0, 10));
        Assert.Throws<ArgumentException>(() => keys.Protect(Span<byte>.Empty, 1, 1, 0, 10));
        Assert.Equal(0, keys.ProtectedPacketCount);
        Assert.Equal(1 + 1 + 46 + 16, keys.Protect(packet, 1, 1, 0, 46));
    }

    [Fact]
    public void Create_RejectsWrongSecretLengthAndSuite()
    {
        Assert.Throws<ArgumentException>(() => PacketProtectionKeys.Create(new byte[32], TlsCipherSuite.TLS_AES_256_GCM_SHA384, QuicVersion.V1));
        Assert.Throws<ArgumentException>(() => PacketProtectionKeys.Create(new byte[48], TlsCipherSuite.TLS_AES_128_GCM_SHA256, QuicVersion.V1));
        Assert.Throws<ArgumentOutOfRangeException>(() => PacketProtectionKeys.Create(new byte[32], TlsCipherSuite.TLS_AES_128_CCM_SHA256, QuicVersion.V1));
        Assert.Throws<ArgumentOutOfRangeException>(() => PacketProtectionKeys.Create(new byte[32], TlsCipherSuite.TLS_AES_128_GCM_SHA256, 0xff00001d));
    }

    [Fact]
    public void Limits_MatchRfc9001Section6_6()
    {
        Assert.Equal(1L << 23, QuicCipherSuite.GetConfidentialityLimit(TlsCipherSuite.TLS_AES_128_GCM_SHA256));
        Assert.Equal(1L << 23, QuicCipherSuite.GetConfidentialityLimit(TlsCipherSuite.TLS_AES_256_GCM_SHA384));
        Assert.Equal(1L << 52, QuicCipherSuite.GetIntegrityLimit(TlsCipherSuite.TLS_AES_128_GCM_SHA256));
        Assert.Equal(1L << 52, QuicCipherSuite.GetIntegrityLimit(TlsCipherSuite.TLS_AES_256_GCM_SHA384));
        Assert.Equal(1L << 36, QuicCipherSuite.GetIntegrityLimit(TlsCipherSuite.TLS_CHACHA20_POLY1305_SHA256));
        Assert.True(QuicCipherSuite.GetConfidentialityLimit(TlsCipherSuite.TLS_CHACHA20_POLY1305_SHA256) > (1L << 62));
    }
}
