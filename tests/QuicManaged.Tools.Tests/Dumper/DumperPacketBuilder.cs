using System.Net.Quic.Managed.Crypto;
using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Tests.Dumper;

/// <summary>Builds protected QUIC packets with the library's own header writers and packet protection, so dumper tests
/// can feed Handshake and 1-RTT packets whose keys come from a test key log.</summary>
internal static class DumperPacketBuilder
{
    public static byte[] Long(PacketType type, ReadOnlySpan<byte> dcid, ReadOnlySpan<byte> scid, PacketProtectionKeys keys, ulong packetNumber, ReadOnlySpan<byte> payload)
    {
        const int pnLength = 2;
        var buffer = new byte[64 + dcid.Length + scid.Length + payload.Length + PacketProtectionKeys.TagLength];
        var writer = new QuicWriter(buffer);
        Assert.True(LongHeader.TryWrite(ref writer, type, QuicVersion.V1, dcid, scid, default, pnLength, out int lengthOffset));
        int pnOffset = writer.Position;
        Assert.True(writer.TryFill(0, pnLength));
        Assert.True(writer.TryWriteBytes(payload));
        Assert.True(LongHeader.TryPatchLength(buffer, lengthOffset, pnLength + payload.Length + PacketProtectionKeys.TagLength));
        int total = keys.Protect(buffer, pnOffset, pnLength, packetNumber, payload.Length);
        return buffer.AsSpan(0, total).ToArray();
    }

    public static byte[] Short(ReadOnlySpan<byte> dcid, PacketProtectionKeys keys, ulong packetNumber, ReadOnlySpan<byte> payload, bool keyPhase = false)
    {
        const int pnLength = 2;
        var buffer = new byte[32 + dcid.Length + payload.Length + PacketProtectionKeys.TagLength];
        var writer = new QuicWriter(buffer);
        Assert.True(ShortHeader.TryWrite(ref writer, dcid, spinBit: true, keyPhase, pnLength));
        int pnOffset = writer.Position;
        Assert.True(writer.TryFill(0, pnLength));
        Assert.True(writer.TryWriteBytes(payload));
        int total = keys.Protect(buffer, pnOffset, pnLength, packetNumber, payload.Length);
        return buffer.AsSpan(0, total).ToArray();
    }

    public static byte[] CryptoFrameBytes(ulong offset, ReadOnlySpan<byte> data)
    {
        var buffer = new byte[16 + data.Length];
        var writer = new QuicWriter(buffer);
        Assert.True(new CryptoFrame(offset, data).TryWrite(ref writer));
        return writer.Written.ToArray();
    }
}
