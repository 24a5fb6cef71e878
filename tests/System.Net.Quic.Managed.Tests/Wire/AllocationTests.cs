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

        // The frames go through the typed reader as the connection's do, with a struct handler.
        var summer = new FrameSummer();
        if (FrameReader.Read(frames, ref summer, out _, out _) != TransportErrorCode.NoError)
        {
            return 0;
        }

        sum += summer.Sum;
        if (VersionNegotiationPacket.TryParse(vn, out VersionNegotiationPacket negotiation))
        {
            foreach (uint version in negotiation.Versions)
            {
                sum += version;
            }
        }

        return sum;
    }

    /// <summary>Adds up a field of each frame in the test payload; refuses the frame types the payload does not hold.</summary>
    private struct FrameSummer : IFrameHandler
    {
        public ulong Sum;

        public readonly TransportErrorCode OnFrameType(FrameType type, TransportErrorCode typeError, int offset) => typeError;

        public TransportErrorCode OnPadding(int length) => Add((ulong)length);

        public TransportErrorCode OnAck(in AckFrame frame)
        {
            foreach (AckRange range in frame.Ranges)
            {
                Sum += (ulong)(range.Largest - range.Smallest);
            }

            return frame.EcnCounts.HasValue ? TransportErrorCode.NoError : TransportErrorCode.ProtocolViolation;
        }

        public TransportErrorCode OnStream(in StreamFrame frame) => Add((ulong)frame.Data.Length);

        public TransportErrorCode OnCrypto(in CryptoFrame frame) => Add((ulong)frame.Data.Length);

        public TransportErrorCode OnNewConnectionId(in NewConnectionIdFrame frame) => Add(frame.SequenceNumber);

        public TransportErrorCode OnConnectionClose(in ConnectionCloseFrame frame) =>
            frame.IsApplicationError ? TransportErrorCode.ProtocolViolation : Add((ulong)frame.ReasonPhrase.Length);

        public TransportErrorCode OnDatagram(in DatagramFrame frame) => frame.HasLength ? Add((ulong)frame.Data.Length) : TransportErrorCode.ProtocolViolation;

        public TransportErrorCode OnPathChallenge(in PathChallengeFrame frame) => Add(frame.Data);

        public readonly TransportErrorCode OnPing() => TransportErrorCode.ProtocolViolation;

        public readonly TransportErrorCode OnResetStream(in ResetStreamFrame frame) => TransportErrorCode.ProtocolViolation;

        public readonly TransportErrorCode OnStopSending(in StopSendingFrame frame) => TransportErrorCode.ProtocolViolation;

        public readonly TransportErrorCode OnNewToken(in NewTokenFrame frame) => TransportErrorCode.ProtocolViolation;

        public readonly TransportErrorCode OnMaxData(in MaxDataFrame frame) => TransportErrorCode.ProtocolViolation;

        public readonly TransportErrorCode OnMaxStreamData(in MaxStreamDataFrame frame) => TransportErrorCode.ProtocolViolation;

        public readonly TransportErrorCode OnMaxStreams(in MaxStreamsFrame frame) => TransportErrorCode.ProtocolViolation;

        public readonly TransportErrorCode OnDataBlocked(in DataBlockedFrame frame) => TransportErrorCode.ProtocolViolation;

        public readonly TransportErrorCode OnStreamDataBlocked(in StreamDataBlockedFrame frame) => TransportErrorCode.ProtocolViolation;

        public readonly TransportErrorCode OnStreamsBlocked(in StreamsBlockedFrame frame) => TransportErrorCode.ProtocolViolation;

        public readonly TransportErrorCode OnRetireConnectionId(in RetireConnectionIdFrame frame) => TransportErrorCode.ProtocolViolation;

        public readonly TransportErrorCode OnPathResponse(in PathResponseFrame frame) => TransportErrorCode.ProtocolViolation;

        public readonly TransportErrorCode OnHandshakeDone() => TransportErrorCode.ProtocolViolation;

        private TransportErrorCode Add(ulong value)
        {
            Sum += value;
            return TransportErrorCode.NoError;
        }
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
