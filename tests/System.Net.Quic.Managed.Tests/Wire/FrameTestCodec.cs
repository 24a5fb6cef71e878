using System.Net.Quic.Managed.Wire;
using System.Text;

namespace System.Net.Quic.Managed.Tests.Wire;

/// <summary>Test-side dispatcher: decodes one frame with the library's codecs, describes every decoded field, and
/// re-encodes it with the library's writers, so round trips and fuzzing compare decode(encode(decode(x))) with decode(x).</summary>
internal static class FrameTestCodec
{
    public static TransportErrorCode DecodeOne(ref QuicReader reader, ref QuicWriter writer, out FrameType type, out string description)
    {
        description = string.Empty;
        TransportErrorCode error = FrameTypes.TryRead(ref reader, out type);
        if (error != TransportErrorCode.NoError)
        {
            return error;
        }

        bool written;
        switch (type)
        {
            case FrameType.Padding:
                int padding = PaddingFrame.SkipRun(ref reader);
                description = $"PADDING {padding}";
                written = PaddingFrame.TryWrite(ref writer, padding);
                break;
            case FrameType.Ping:
                description = "PING";
                written = PingFrame.TryWrite(ref writer);
                break;
            case FrameType.HandshakeDone:
                description = "HANDSHAKE_DONE";
                written = HandshakeDoneFrame.TryWrite(ref writer);
                break;
            case FrameType.Ack:
            case FrameType.AckEcn:
            {
                error = AckFrame.TryRead(ref reader, type, out AckFrame ack);
                if (error != TransportErrorCode.NoError)
                {
                    return error;
                }

                var text = new StringBuilder($"ACK delay={ack.AckDelay} ecn={ack.EcnCounts}");
                int count = 0;
                foreach (AckRange range in ack.Ranges)
                {
                    text.Append($" [{range.Smallest}..{range.Largest}]");
                    count++;
                }

                Assert.Equal(ack.RangeCount, count);
                description = text.ToString();

                // Re-encode through the range-list writer, which the connection uses to build ACKs.
                AckRange[] ranges = CollectRanges(ack);
                Assert.True(AckFrame.GetEncodedLength(ranges, ack.AckDelay, ack.EcnCounts) <= ack.EncodedLength);
                written = AckFrame.TryWrite(ref writer, ranges, ack.AckDelay, ack.EcnCounts);
                break;
            }

            case FrameType.ResetStream:
            {
                error = ResetStreamFrame.TryRead(ref reader, out ResetStreamFrame frame);
                description = frame.ToString();
                written = error != TransportErrorCode.NoError || frame.TryWrite(ref writer);
                break;
            }

            case FrameType.StopSending:
            {
                error = StopSendingFrame.TryRead(ref reader, out StopSendingFrame frame);
                description = frame.ToString();
                written = error != TransportErrorCode.NoError || frame.TryWrite(ref writer);
                break;
            }

            case FrameType.Crypto:
            {
                error = CryptoFrame.TryRead(ref reader, out CryptoFrame frame);
                description = $"CRYPTO {frame.Offset} {Convert.ToHexString(frame.Data)}";
                written = error != TransportErrorCode.NoError || frame.TryWrite(ref writer);
                break;
            }

            case FrameType.NewToken:
            {
                error = NewTokenFrame.TryRead(ref reader, out NewTokenFrame frame);
                description = $"NEW_TOKEN {Convert.ToHexString(frame.Token)}";
                written = error != TransportErrorCode.NoError || frame.TryWrite(ref writer);
                break;
            }

            case >= FrameType.Stream and <= FrameType.StreamMax:
            {
                error = StreamFrame.TryRead(ref reader, type, out StreamFrame frame);
                description = $"STREAM {frame.StreamId} {frame.Offset} fin={frame.Fin} len={frame.HasLength} {Convert.ToHexString(frame.Data)}";
                written = error != TransportErrorCode.NoError || frame.TryWrite(ref writer);
                break;
            }

            case FrameType.MaxData:
            {
                error = MaxDataFrame.TryRead(ref reader, out MaxDataFrame frame);
                description = frame.ToString();
                written = error != TransportErrorCode.NoError || frame.TryWrite(ref writer);
                break;
            }

            case FrameType.MaxStreamData:
            {
                error = MaxStreamDataFrame.TryRead(ref reader, out MaxStreamDataFrame frame);
                description = frame.ToString();
                written = error != TransportErrorCode.NoError || frame.TryWrite(ref writer);
                break;
            }

            case FrameType.MaxStreamsBidirectional:
            case FrameType.MaxStreamsUnidirectional:
            {
                error = MaxStreamsFrame.TryRead(ref reader, type, out MaxStreamsFrame frame);
                description = frame.ToString();
                written = error != TransportErrorCode.NoError || frame.TryWrite(ref writer);
                break;
            }

            case FrameType.DataBlocked:
            {
                error = DataBlockedFrame.TryRead(ref reader, out DataBlockedFrame frame);
                description = frame.ToString();
                written = error != TransportErrorCode.NoError || frame.TryWrite(ref writer);
                break;
            }

            case FrameType.StreamDataBlocked:
            {
                error = StreamDataBlockedFrame.TryRead(ref reader, out StreamDataBlockedFrame frame);
                description = frame.ToString();
                written = error != TransportErrorCode.NoError || frame.TryWrite(ref writer);
                break;
            }

            case FrameType.StreamsBlockedBidirectional:
            case FrameType.StreamsBlockedUnidirectional:
            {
                error = StreamsBlockedFrame.TryRead(ref reader, type, out StreamsBlockedFrame frame);
                description = frame.ToString();
                written = error != TransportErrorCode.NoError || frame.TryWrite(ref writer);
                break;
            }

            case FrameType.NewConnectionId:
            {
                error = NewConnectionIdFrame.TryRead(ref reader, out NewConnectionIdFrame frame);
                description = $"NEW_CONNECTION_ID {frame.SequenceNumber} {frame.RetirePriorTo} {Convert.ToHexString(frame.ConnectionId)} {Convert.ToHexString(frame.StatelessResetToken)}";
                written = error != TransportErrorCode.NoError || frame.TryWrite(ref writer);
                break;
            }

            case FrameType.RetireConnectionId:
            {
                error = RetireConnectionIdFrame.TryRead(ref reader, out RetireConnectionIdFrame frame);
                description = frame.ToString();
                written = error != TransportErrorCode.NoError || frame.TryWrite(ref writer);
                break;
            }

            case FrameType.PathChallenge:
            {
                error = PathChallengeFrame.TryRead(ref reader, out PathChallengeFrame frame);
                description = frame.ToString();
                written = error != TransportErrorCode.NoError || frame.TryWrite(ref writer);
                break;
            }

            case FrameType.PathResponse:
            {
                error = PathResponseFrame.TryRead(ref reader, out PathResponseFrame frame);
                description = frame.ToString();
                written = error != TransportErrorCode.NoError || frame.TryWrite(ref writer);
                break;
            }

            case FrameType.ConnectionClose:
            case FrameType.ConnectionCloseApplication:
            {
                error = ConnectionCloseFrame.TryRead(ref reader, type, out ConnectionCloseFrame frame);
                description = $"CONNECTION_CLOSE app={frame.IsApplicationError} {frame.ErrorCode} {frame.TriggeringFrameType} {Convert.ToHexString(frame.ReasonPhrase)}";
                written = error != TransportErrorCode.NoError || frame.TryWrite(ref writer);
                break;
            }

            case FrameType.Datagram:
            case FrameType.DatagramWithLength:
            {
                error = DatagramFrame.TryRead(ref reader, type, out DatagramFrame frame);
                description = $"DATAGRAM len={frame.HasLength} {Convert.ToHexString(frame.Data)}";
                written = error != TransportErrorCode.NoError || frame.TryWrite(ref writer);
                break;
            }

            default:
                throw new InvalidOperationException($"FrameTypes.TryRead accepted unknown type {type}");
        }

        Assert.True(written, $"re-encoding {type} failed");
        return error;
    }

    /// <summary>Decodes every frame in a payload; returns the descriptions and the error that stopped it.</summary>
    public static TransportErrorCode DecodeAll(ReadOnlySpan<byte> payload, Span<byte> reencoded, out int reencodedLength, List<string> descriptions)
    {
        var reader = new QuicReader(payload);
        var writer = new QuicWriter(reencoded);
        TransportErrorCode error = TransportErrorCode.NoError;
        while (!reader.IsEmpty)
        {
            int before = reader.Position;
            error = DecodeOne(ref reader, ref writer, out _, out string description);
            if (error != TransportErrorCode.NoError)
            {
                break;
            }

            Assert.True(reader.Position > before, "a frame must consume input");
            descriptions.Add(description);
        }

        reencodedLength = writer.Position;
        return error;
    }

    private static AckRange[] CollectRanges(AckFrame ack)
    {
        var ranges = new AckRange[ack.RangeCount];
        Assert.Equal(ranges.Length, ack.CopyRangesTo(ranges));
        return ranges;
    }
}
