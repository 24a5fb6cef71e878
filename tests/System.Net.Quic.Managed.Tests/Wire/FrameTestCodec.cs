using System.Net.Quic.Managed.Wire;
using System.Text;

namespace System.Net.Quic.Managed.Tests.Wire;

/// <summary>Test-side frame handler: reads a payload with the library's <see cref="FrameReader"/>, describes every
/// decoded field, and re-encodes each frame with the library's writers, so round trips and fuzzing compare
/// decode(encode(decode(x))) with decode(x).</summary>
internal static class FrameTestCodec
{
    /// <summary>Decodes every frame in a payload; returns the descriptions and the error that stopped it.</summary>
    public static TransportErrorCode DecodeAll(ReadOnlySpan<byte> payload, Span<byte> reencoded, out int reencodedLength, List<string> descriptions)
    {
        var codec = new Codec(new QuicWriter(reencoded), descriptions);
        TransportErrorCode error = FrameReader.Read(payload, ref codec, out _, out _);
        reencodedLength = codec.Writer.Position;
        return error;
    }

    private ref struct Codec : IFrameHandler
    {
        public QuicWriter Writer;
        private readonly List<string> _descriptions;
        private int _lastOffset;

        public Codec(QuicWriter writer, List<string> descriptions)
        {
            Writer = writer;
            _descriptions = descriptions;
            _lastOffset = -1;
        }

        public TransportErrorCode OnFrameType(FrameType type, TransportErrorCode typeError, int offset)
        {
            Assert.True(offset > _lastOffset, "a frame must consume input");
            _lastOffset = offset;
            if (typeError == TransportErrorCode.NoError)
            {
                Assert.True(FrameTypes.IsKnown(type), $"FrameTypes.TryRead accepted unknown type {type}");
            }

            return typeError;
        }

        public TransportErrorCode OnPadding(int length) => Add($"PADDING {length}", PaddingFrame.TryWrite(ref Writer, length), FrameType.Padding);

        public TransportErrorCode OnPing() => Add("PING", PingFrame.TryWrite(ref Writer), FrameType.Ping);

        public TransportErrorCode OnHandshakeDone() => Add("HANDSHAKE_DONE", HandshakeDoneFrame.TryWrite(ref Writer), FrameType.HandshakeDone);

        public TransportErrorCode OnAck(in AckFrame ack)
        {
            var text = new StringBuilder($"ACK delay={ack.AckDelay} ecn={ack.EcnCounts}");
            int count = 0;
            foreach (AckRange range in ack.Ranges)
            {
                text.Append($" [{range.Smallest}..{range.Largest}]");
                count++;
            }

            Assert.Equal(ack.RangeCount, count);

            // Re-encode through the range-list writer, which the connection uses to build ACKs.
            var ranges = new AckRange[ack.RangeCount];
            Assert.Equal(ranges.Length, ack.CopyRangesTo(ranges));
            Assert.True(AckFrame.GetEncodedLength(ranges, ack.AckDelay, ack.EcnCounts) <= ack.EncodedLength);
            return Add(text.ToString(), AckFrame.TryWrite(ref Writer, ranges, ack.AckDelay, ack.EcnCounts), FrameType.Ack);
        }

        public TransportErrorCode OnResetStream(in ResetStreamFrame f) => Add(f.ToString(), f.TryWrite(ref Writer), FrameType.ResetStream);

        public TransportErrorCode OnStopSending(in StopSendingFrame f) => Add(f.ToString(), f.TryWrite(ref Writer), FrameType.StopSending);

        public TransportErrorCode OnCrypto(in CryptoFrame f) =>
            Add($"CRYPTO {f.Offset} {Convert.ToHexString(f.Data)}", f.TryWrite(ref Writer), FrameType.Crypto);

        public TransportErrorCode OnNewToken(in NewTokenFrame f) =>
            Add($"NEW_TOKEN {Convert.ToHexString(f.Token)}", f.TryWrite(ref Writer), FrameType.NewToken);

        public TransportErrorCode OnStream(in StreamFrame f) =>
            Add($"STREAM {f.StreamId} {f.Offset} fin={f.Fin} len={f.HasLength} {Convert.ToHexString(f.Data)}", f.TryWrite(ref Writer), FrameType.Stream);

        public TransportErrorCode OnMaxData(in MaxDataFrame f) => Add(f.ToString(), f.TryWrite(ref Writer), FrameType.MaxData);

        public TransportErrorCode OnMaxStreamData(in MaxStreamDataFrame f) => Add(f.ToString(), f.TryWrite(ref Writer), FrameType.MaxStreamData);

        public TransportErrorCode OnMaxStreams(in MaxStreamsFrame f) => Add(f.ToString(), f.TryWrite(ref Writer), FrameType.MaxStreamsBidirectional);

        public TransportErrorCode OnDataBlocked(in DataBlockedFrame f) => Add(f.ToString(), f.TryWrite(ref Writer), FrameType.DataBlocked);

        public TransportErrorCode OnStreamDataBlocked(in StreamDataBlockedFrame f) => Add(f.ToString(), f.TryWrite(ref Writer), FrameType.StreamDataBlocked);

        public TransportErrorCode OnStreamsBlocked(in StreamsBlockedFrame f) => Add(f.ToString(), f.TryWrite(ref Writer), FrameType.StreamsBlockedBidirectional);

        public TransportErrorCode OnNewConnectionId(in NewConnectionIdFrame f) =>
            Add($"NEW_CONNECTION_ID {f.SequenceNumber} {f.RetirePriorTo} {Convert.ToHexString(f.ConnectionId)} {Convert.ToHexString(f.StatelessResetToken)}",
                f.TryWrite(ref Writer), FrameType.NewConnectionId);

        public TransportErrorCode OnRetireConnectionId(in RetireConnectionIdFrame f) => Add(f.ToString(), f.TryWrite(ref Writer), FrameType.RetireConnectionId);

        public TransportErrorCode OnPathChallenge(in PathChallengeFrame f) => Add(f.ToString(), f.TryWrite(ref Writer), FrameType.PathChallenge);

        public TransportErrorCode OnPathResponse(in PathResponseFrame f) => Add(f.ToString(), f.TryWrite(ref Writer), FrameType.PathResponse);

        public TransportErrorCode OnConnectionClose(in ConnectionCloseFrame f) =>
            Add($"CONNECTION_CLOSE app={f.IsApplicationError} {f.ErrorCode} {f.TriggeringFrameType} {Convert.ToHexString(f.ReasonPhrase)}",
                f.TryWrite(ref Writer), FrameType.ConnectionClose);

        public TransportErrorCode OnDatagram(in DatagramFrame f) =>
            Add($"DATAGRAM len={f.HasLength} {Convert.ToHexString(f.Data)}", f.TryWrite(ref Writer), FrameType.Datagram);

        private readonly TransportErrorCode Add(string description, bool written, FrameType type)
        {
            Assert.True(written, $"re-encoding {type} failed");
            _descriptions.Add(description);
            return TransportErrorCode.NoError;
        }
    }
}
