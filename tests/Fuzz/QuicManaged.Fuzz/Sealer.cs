using System;
using System.Net.Quic.Managed.Crypto;
using System.Net.Quic.Managed.Wire;
using System.Net.Security;
using System.Security.Cryptography;
using System.Text;

namespace QuicManaged.Fuzz;

/// <summary>
/// Builds protected packets around fuzzed frame payloads, so targets reach the code behind packet protection (AEAD
/// would reject almost every mutated ciphertext). Never throws for any payload: too long a payload yields 0.
/// </summary>
internal static class Sealer
{
    /// <summary>The RFC 9001 Appendix A client Destination Connection ID.</summary>
    public static readonly byte[] Rfc9001Dcid = Convert.FromHexString("8394c8f03e515708");

    private const int PacketNumberLength = 4;

    /// <summary>The 1-RTT / Handshake keys <see cref="FakeCryptoHandshake"/> installs for a label ("c hs", "c ap", ...).</summary>
    public static PacketProtectionKeys FakeKeys(string label, uint version)
        => PacketProtectionKeys.Create(SHA256.HashData(Encoding.ASCII.GetBytes(label)), TlsCipherSuite.TLS_AES_128_GCM_SHA256, version);

    /// <summary>
    /// Writes one protected Initial, 0-RTT or Handshake packet carrying <paramref name="frames"/> (zero-padded to at
    /// least <paramref name="minPayload"/> bytes) into <paramref name="destination"/>. Returns its length, 0 when it
    /// does not fit.
    /// </summary>
    public static int Long(Span<byte> destination, PacketType type, uint version, ReadOnlySpan<byte> dcid, ReadOnlySpan<byte> scid,
        ReadOnlySpan<byte> token, PacketProtectionKeys keys, long packetNumber, ReadOnlySpan<byte> frames, int minPayload)
    {
        var writer = new QuicWriter(destination);
        if (!LongHeader.TryWrite(ref writer, type, version, dcid, scid, token, PacketNumberLength, out int lengthOffset)) return 0;
        int pnOffset = writer.Position;
        int payload = Math.Max(Math.Max(frames.Length, minPayload), PacketNumberLength);
        if ((long)pnOffset + PacketNumberLength + payload + PacketProtectionKeys.TagLength > destination.Length) return 0;
        if (!LongHeader.TryPatchLength(destination, lengthOffset, PacketNumberLength + payload + PacketProtectionKeys.TagLength)) return 0;
        Span<byte> body = destination.Slice(pnOffset + PacketNumberLength, payload);
        body.Clear();
        frames.CopyTo(body);
        return keys.Protect(destination, pnOffset, PacketNumberLength, (ulong)packetNumber, payload);
    }

    /// <summary>Writes one protected 1-RTT packet carrying <paramref name="frames"/>; returns its length, 0 when it does not fit.</summary>
    public static int Short(Span<byte> destination, ReadOnlySpan<byte> dcid, PacketProtectionKeys keys, long packetNumber, ReadOnlySpan<byte> frames)
    {
        var writer = new QuicWriter(destination);
        if (!ShortHeader.TryWrite(ref writer, dcid, spinBit: false, keyPhase: false, PacketNumberLength)) return 0;
        int pnOffset = writer.Position;
        int payload = Math.Max(frames.Length, PacketNumberLength);
        if ((long)pnOffset + PacketNumberLength + payload + PacketProtectionKeys.TagLength > destination.Length) return 0;
        Span<byte> body = destination.Slice(pnOffset + PacketNumberLength, payload);
        body.Clear();
        frames.CopyTo(body);
        return keys.Protect(destination, pnOffset, PacketNumberLength, (ulong)packetNumber, payload);
    }
}
