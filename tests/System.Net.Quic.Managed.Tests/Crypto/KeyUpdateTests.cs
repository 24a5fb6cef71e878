using System.Net.Quic.Managed.Crypto;
using System.Net.Quic.Managed.Wire;
using System.Net.Security;
using System.Security.Cryptography;
using static QuicManaged.Tools.DatagramDumper.Rfc9001Vectors;

namespace System.Net.Quic.Managed.Tests.Crypto;

/// <summary>Key update (RFC 9001 §6; RFC 9369 §3.3.2 "quicv2 ku").</summary>
public class KeyUpdateTests
{
    // RFC 9001 A.5 and RFC 9369 A.5 list ku = HKDF-Expand-Label(secret, "quic ku"/"quicv2 ku", "", 32).
    [Theory]
    [InlineData(QuicVersion.V1, V1ChaChaKu)]
    [InlineData(QuicVersion.V2, V2ChaChaKu)]
    public void A5_NextSecret(uint version, string ku)
    {
        Span<byte> next = stackalloc byte[32];
        QuicKeyDerivation.DeriveNextSecret(Hex(ChaChaSecret), TlsCipherSuite.TLS_CHACHA20_POLY1305_SHA256, version, next);
        Assert.Equal(ku, Convert.ToHexStringLower(next));
    }

    [Theory]
    [InlineData(QuicVersion.V1, "quic ku", TlsCipherSuite.TLS_AES_128_GCM_SHA256, 32)]
    [InlineData(QuicVersion.V2, "quicv2 ku", TlsCipherSuite.TLS_AES_128_GCM_SHA256, 32)]
    [InlineData(QuicVersion.V1, "quic ku", TlsCipherSuite.TLS_AES_256_GCM_SHA384, 48)]
    [InlineData(QuicVersion.V2, "quicv2 ku", TlsCipherSuite.TLS_AES_256_GCM_SHA384, 48)]
    public void NextSecret_MatchesLabelFormula_IsDeterministicAndDistinct(uint version, string label, TlsCipherSuite suite, int length)
    {
        byte[] secret = new byte[length];
        new Random(6001).NextBytes(secret);
        HashAlgorithmName hash = length == 48 ? HashAlgorithmName.SHA384 : HashAlgorithmName.SHA256;

        byte[] next1 = new byte[length];
        byte[] next1Again = new byte[length];
        QuicKeyDerivation.DeriveNextSecret(secret, suite, version, next1);
        QuicKeyDerivation.DeriveNextSecret(secret, suite, version, next1Again);
        Assert.Equal(next1, next1Again);
        Assert.NotEqual(secret, next1);

        byte[] byFormula = new byte[length];
        HkdfLabel.Expand(hash, secret, System.Text.Encoding.ASCII.GetBytes(label), default, byFormula);
        Assert.Equal(byFormula, next1);

        byte[] next2 = new byte[length];
        QuicKeyDerivation.DeriveNextSecret(next1, suite, version, next2);
        Assert.NotEqual(next1, next2);
        Assert.NotEqual(secret, next2);

        // The other version's label gives a different secret.
        byte[] otherVersion = new byte[length];
        QuicKeyDerivation.DeriveNextSecret(secret, suite, version == QuicVersion.V1 ? QuicVersion.V2 : QuicVersion.V1, otherVersion);
        Assert.NotEqual(next1, otherVersion);
    }

    [Theory]
    [InlineData(QuicVersion.V1, V1ChaChaKu)]
    [InlineData(QuicVersion.V2, V2ChaChaKu)]
    public void NextGeneration_UsesKuSecretForAead_AndKeepsHeaderProtection(uint version, string ku)
    {
        const TlsCipherSuite suite = TlsCipherSuite.TLS_CHACHA20_POLY1305_SHA256;
        using PacketProtectionKeys generation0 = PacketProtectionKeys.Create(Hex(ChaChaSecret), suite, version);
        using PacketProtectionKeys generation1 = generation0.CreateNextGeneration();
        Assert.Equal(1, generation1.Generation);

        byte[] packet = BuildShortPacket(out int pnOffset, out int pnLength, out int payloadLength, keyPhase: 1);
        byte[] plain = (byte[])packet.Clone();
        plain[pnOffset + pnLength - 1] = 7; // Protect writes the truncated packet number into the header
        generation1.Protect(packet, pnOffset, pnLength, 7, payloadLength);

        // An independent instance built from the RFC's "ku" value opens it: the AEAD key/iv come from ku...
        using PacketProtectionKeys fromKu = PacketProtectionKeys.Create(Hex(ku), suite, version);
        byte[] copy = (byte[])packet.Clone();
        Assert.True(generation0.TryRemoveHeaderProtection(copy, pnOffset, out int gotPnLength, out uint gotPn)); // ...and hp is generation 0's.
        Assert.Equal(pnLength, gotPnLength);
        Assert.Equal(7u, gotPn);
        Assert.Equal(0x04, copy[0] & 0x04);
        byte[] beforeDecrypt = (byte[])copy.Clone();
        Assert.True(fromKu.TryDecrypt(copy, pnOffset + pnLength, 7, payloadLength + 16, out _));
        Assert.True(plain.AsSpan(0, pnOffset + pnLength + payloadLength).SequenceEqual(copy.AsSpan(0, pnOffset + pnLength + payloadLength)));

        // Generation 0's AEAD key must not open a generation 1 packet.
        Assert.False(generation0.TryDecrypt(beforeDecrypt, pnOffset + pnLength, 7, payloadLength + 16, out _));
    }

    [Fact]
    public void KeyPhaseKeys_TrialDecryptWithNext_ThenUpdate()
    {
        byte[] secret = new byte[32];
        new Random(1234).NextBytes(secret);
        const TlsCipherSuite suite = TlsCipherSuite.TLS_AES_128_GCM_SHA256;
        using var sender = new KeyPhaseKeys(PacketProtectionKeys.Create(secret, suite, QuicVersion.V1));
        using var receiver = new KeyPhaseKeys(PacketProtectionKeys.Create(secret, suite, QuicVersion.V1));
        Assert.Equal(0, sender.KeyPhase);
        Assert.Null(sender.Previous);

        // Sender updates (RFC 9001 §6.1) and sends with phase 1.
        PacketProtectionKeys oldSenderCurrent = sender.Current;
        sender.Update();
        Assert.Equal(1, sender.KeyPhase);
        Assert.Same(oldSenderCurrent, sender.Previous);
        byte[] packet = BuildShortPacket(out int pnOffset, out int pnLength, out int payloadLength, keyPhase: sender.KeyPhase);
        byte[] plain = (byte[])packet.Clone();
        plain[pnOffset + pnLength - 1] = 100;
        sender.Current.Protect(packet, pnOffset, pnLength, 100, payloadLength);

        // Receiver: header protection is phase-independent, the Key Phase bit differs, so it tries Next (RFC 9001 §6.2).
        Assert.True(receiver.Current.TryRemoveHeaderProtection(packet, pnOffset, out int gotPnLength, out uint pn));
        int bit = (packet[0] >> 2) & 1;
        Assert.NotEqual(receiver.KeyPhase, bit);
        byte[] copy = (byte[])packet.Clone();
        Assert.False(receiver.Current.TryDecrypt(copy, pnOffset + gotPnLength, pn, payloadLength + 16, out _));
        Assert.True(receiver.Next.TryDecrypt(packet, pnOffset + gotPnLength, pn, payloadLength + 16, out int plaintextLength));
        Assert.Equal(payloadLength, plaintextLength);
        Assert.True(plain.AsSpan(0, pnOffset + pnLength + payloadLength).SequenceEqual(packet.AsSpan(0, pnOffset + pnLength + payloadLength)));
        receiver.Update();
        Assert.Equal(1, receiver.KeyPhase);

        // Two more updates stay in lockstep; Previous is replaced and the old one disposed.
        for (int i = 0; i < 2; i++)
        {
            sender.Update();
            receiver.Update();
            Assert.Equal(sender.KeyPhase, receiver.KeyPhase);
            Assert.Equal(sender.Current.Generation, receiver.Current.Generation);
            byte[] p = BuildShortPacket(out pnOffset, out pnLength, out payloadLength, keyPhase: sender.KeyPhase);
            sender.Current.Protect(p, pnOffset, pnLength, (ulong)(200 + i), payloadLength);
            Assert.True(receiver.Current.TryRemoveHeaderProtection(p, pnOffset, out gotPnLength, out pn));
            Assert.True(receiver.Current.TryDecrypt(p, pnOffset + gotPnLength, pn, payloadLength + 16, out _));
        }
        Assert.Equal(3, receiver.Current.Generation);
        receiver.DiscardPrevious();
        Assert.Null(receiver.Previous);
    }

    [Fact]
    public void SharedHeaderProtectionKey_SurvivesDisposalOfOlderGenerations()
    {
        byte[] secret = new byte[32];
        using PacketProtectionKeys g0 = PacketProtectionKeys.Create(secret, TlsCipherSuite.TLS_AES_128_GCM_SHA256, QuicVersion.V1);
        PacketProtectionKeys g1 = g0.CreateNextGeneration();
        g0.Dispose();
        byte[] packet = BuildShortPacket(out int pnOffset, out int pnLength, out int payloadLength, keyPhase: 1);
        g1.Protect(packet, pnOffset, pnLength, 1, payloadLength);
        Assert.True(g1.TryRemoveHeaderProtection(packet, pnOffset, out _, out uint pn));
        Assert.Equal(1u, pn);
        g1.Dispose();
        Assert.Throws<ObjectDisposedException>(() => g1.TryRemoveHeaderProtection(packet, pnOffset, out _, out _));
    }

    private static byte[] BuildShortPacket(out int pnOffset, out int pnLength, out int payloadLength, int keyPhase)
    {
        pnOffset = 1 + 8;
        pnLength = 2;
        payloadLength = 40;
        byte[] packet = new byte[pnOffset + pnLength + payloadLength + 16];
        packet[0] = (byte)(0x40 | (keyPhase << 2) | (pnLength - 1));
        for (int i = 1; i < pnOffset; i++) packet[i] = (byte)(0xc0 + i);
        for (int i = 0; i < payloadLength; i++) packet[pnOffset + pnLength + i] = (byte)i;
        return packet;
    }
}
