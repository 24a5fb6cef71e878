using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Tests.Wire;

public class AllocationTests
{
    // The per-packet receive path must not allocate: header parsing, coalesced splitting, frame decoding, lazy ACK
    // range enumeration and Version Negotiation iteration.
    [Fact]
    public void PacketPathDecodersDoNotAllocate()
    {
        byte[] datagram = BuildDatagram();
        byte[] frames = Convert.FromHexString(
            "03240502030102000a0b0c0d" + "0f044010030a0b0c" + "060a03616263" + "18050304a1a2a3a400112233445566778899aabbccddeeff" +
            "1c0a060568656c6c6f" + "3103010203" + "1a0102030405060708" + "000000");
        byte[] vn = Convert.FromHexString("ff00000000030102030204056b3343cf000000011a2a3a4a");

        ulong checksum = Walk(datagram, frames, vn); // warm up (JIT, statics)
        long before = GC.GetAllocatedBytesForCurrentThread();
        for (int i = 0; i < 100; i++)
        {
            checksum += Walk(datagram, frames, vn);
        }

        long allocated = GC.GetAllocatedBytesForCurrentThread() - before;
        Assert.Equal(0, allocated);
        Assert.NotEqual(0UL, checksum);
    }

    private static ulong Walk(byte[] datagram, byte[] frames, byte[] vn)
    {
        ulong sum = 0;
        var packets = new CoalescedPacketEnumerator(datagram);
        while (packets.MoveNext())
        {
            if (LongHeader.TryParse(packets.Current, out LongHeader header))
            {
                sum += (ulong)header.PayloadLength;
            }
            else if (ShortHeader.TryParse(packets.Current, 4, out ShortHeader shortHeader))
            {
                sum += (ulong)shortHeader.PacketNumberOffset;
            }
        }

        var reader = new QuicReader(frames);
        while (!reader.IsEmpty)
        {
            if (FrameTypes.TryRead(ref reader, out FrameType type) != TransportErrorCode.NoError)
            {
                return 0;
            }

            TransportErrorCode error = TransportErrorCode.NoError;
            switch (type)
            {
                case FrameType.Padding:
                    sum += (ulong)PaddingFrame.SkipRun(ref reader);
                    break;
                case FrameType.AckEcn:
                    error = AckFrame.TryRead(ref reader, type, out AckFrame ack);
                    foreach (AckRange range in ack.Ranges)
                    {
                        sum += range.Largest - range.Smallest;
                    }

                    break;
                case >= FrameType.Stream and <= FrameType.StreamMax:
                    error = StreamFrame.TryRead(ref reader, type, out StreamFrame stream);
                    sum += (ulong)stream.Data.Length;
                    break;
                case FrameType.Crypto:
                    error = CryptoFrame.TryRead(ref reader, out CryptoFrame crypto);
                    sum += (ulong)crypto.Data.Length;
                    break;
                case FrameType.NewConnectionId:
                    error = NewConnectionIdFrame.TryRead(ref reader, out NewConnectionIdFrame ncid);
                    sum += ncid.SequenceNumber;
                    break;
                case FrameType.ConnectionClose:
                    error = ConnectionCloseFrame.TryRead(ref reader, type, out ConnectionCloseFrame close);
                    sum += (ulong)close.ReasonPhrase.Length;
                    break;
                case FrameType.DatagramWithLength:
                    error = DatagramFrame.TryRead(ref reader, type, out DatagramFrame datagramFrame);
                    sum += (ulong)datagramFrame.Data.Length;
                    break;
                case FrameType.PathChallenge:
                    error = PathChallengeFrame.TryRead(ref reader, out PathChallengeFrame challenge);
                    sum += challenge.Data;
                    break;
                default:
                    return 0;
            }

            if (error != TransportErrorCode.NoError)
            {
                return 0;
            }
        }

        if (VersionNegotiationPacket.TryParse(vn, out VersionNegotiationPacket negotiation))
        {
            foreach (uint version in negotiation.Versions)
            {
                sum += version;
            }
        }

        return sum;
    }

    private static byte[] BuildDatagram()
    {
        byte[] buffer = new byte[300];
        var writer = new QuicWriter(buffer);
        Assert.True(LongHeader.TryWrite(ref writer, PacketType.Handshake, QuicVersion.V1, [1, 2, 3, 4], [5], default, 1, out int lengthOffset));
        Assert.True(writer.TryFill(9, 40));
        Assert.True(LongHeader.TryPatchLength(buffer, lengthOffset, writer.Position - lengthOffset - 2));
        Assert.True(ShortHeader.TryWrite(ref writer, [1, 2, 3, 4], false, false, 2));
        Assert.True(writer.TryFill(9, 40));
        return writer.Written.ToArray();
    }
}
