using System.Net.Quic.Managed.Wire;
using System.Text;

namespace QuicManaged.Tools.DatagramDumper;

/// <summary>Describes the frames of one decrypted packet payload (RFC 9000 §19, RFC 9221 §4), feeding CRYPTO data to
/// the connection's reassembly so TLS messages are shown when complete, and learning connection IDs from
/// NEW_CONNECTION_ID. A frame that fails to parse ends the payload: frames carry no length of their own.</summary>
internal static class FrameFormatter
{
    private const string Indent = "    ";
    private const int PreviewBytes = 32;

    public static void Format(TextWriter output, ReadOnlySpan<byte> payload, PacketType packetType, KeyLevel level,
        Sender sender, DumpConnection connection, string? frameFilter)
    {
        if (payload.IsEmpty)
        {
            output.WriteLine($"{Indent}error: packet contains no frames (PROTOCOL_VIOLATION, RFC 9000 §12.4)");
            return;
        }

        var reader = new QuicReader(payload);
        while (!reader.IsEmpty)
        {
            int frameStart = reader.Position;
            TransportErrorCode typeResult = FrameTypes.TryRead(ref reader, out FrameType type);
            if (typeResult == TransportErrorCode.FrameEncodingError)
            {
                ReadOnlySpan<byte> rest = payload.Slice(frameStart);
                output.WriteLine($"{Indent}error: unknown or truncated frame type at payload offset {frameStart}: {HexText.Prefix(rest, 16)} ({rest.Length} bytes undecoded)");
                return;
            }

            bool shown = frameFilter == null || QuicNames.FrameFilterName(type) == frameFilter;
            TextWriter frameOutput = shown ? output : TextWriter.Null;
            string? error = FormatFrame(frameOutput, ref reader, type, level, sender, connection);
            if (typeResult == TransportErrorCode.ProtocolViolation)
            {
                frameOutput.WriteLine($"{Indent}  warning: frame type not minimally encoded (PROTOCOL_VIOLATION, RFC 9000 §12.4)");
            }

            if (!FrameTypes.IsAllowedIn(type, packetType))
            {
                frameOutput.WriteLine($"{Indent}  warning: {QuicNames.Frame(type)} is not allowed in {packetType} packets (PROTOCOL_VIOLATION, RFC 9000 §12.4 Table 3)");
            }

            if (error != null)
            {
                output.WriteLine($"{Indent}error: malformed {QuicNames.Frame(type)} frame at payload offset {frameStart}: {error}; {payload.Length - frameStart} bytes undecoded");
                return;
            }
        }
    }

    private static string? FormatFrame(TextWriter output, ref QuicReader reader, FrameType type, KeyLevel level, Sender sender, DumpConnection connection)
    {
        if (FrameTypes.IsStream(type))
        {
            if (StreamFrame.TryRead(ref reader, type, out StreamFrame stream) != TransportErrorCode.NoError) return "FRAME_ENCODING_ERROR";
            output.WriteLine($"{Indent}STREAM id={stream.StreamId} ({StreamKind(stream.StreamId)}) offset={stream.Offset} length={stream.Data.Length} fin={(stream.Fin ? 1 : 0)} data={HexText.Preview(stream.Data, PreviewBytes)}");
            return null;
        }

        switch (type)
        {
            case FrameType.Padding:
                output.WriteLine($"{Indent}PADDING length={PaddingFrame.SkipRun(ref reader)}");
                return null;
            case FrameType.Ping:
                output.WriteLine($"{Indent}PING");
                return null;
            case FrameType.HandshakeDone:
                output.WriteLine($"{Indent}HANDSHAKE_DONE");
                return null;
            case FrameType.Ack:
            case FrameType.AckEcn:
            {
                string? error = FormatAck(output, ref reader, type, out long largestAcknowledged);
                // The peer sent at least this packet number in this space: the base for decoding its next packet
                // numbers (RFC 9000 Appendix A.3) when the capture missed the packets in between.
                if (error == null) connection.RecordPacketNumber(level, sender == Sender.Client ? Sender.Server : Sender.Client, largestAcknowledged);
                return error;
            }
            case FrameType.ResetStream:
            {
                if (ResetStreamFrame.TryRead(ref reader, out ResetStreamFrame f) != TransportErrorCode.NoError) return "FRAME_ENCODING_ERROR";
                output.WriteLine($"{Indent}RESET_STREAM id={f.StreamId} error=0x{f.ApplicationErrorCode:x} final_size={f.FinalSize}");
                return null;
            }
            case FrameType.StopSending:
            {
                if (StopSendingFrame.TryRead(ref reader, out StopSendingFrame f) != TransportErrorCode.NoError) return "FRAME_ENCODING_ERROR";
                output.WriteLine($"{Indent}STOP_SENDING id={f.StreamId} error=0x{f.ApplicationErrorCode:x}");
                return null;
            }
            case FrameType.Crypto:
            {
                if (CryptoFrame.TryRead(ref reader, out CryptoFrame f) != TransportErrorCode.NoError) return "FRAME_ENCODING_ERROR";
                output.WriteLine($"{Indent}CRYPTO offset={f.Offset} length={f.Data.Length}");
                CryptoStreamBuffer stream = connection.CryptoStream(level, sender);
                stream.Add(f.Offset, f.Data);
                while (stream.TryTakeMessage(out byte[] message))
                {
                    TlsMessageFormatter.Format(output, Indent + "  ", message, connection);
                }

                if (stream.Broken)
                {
                    output.WriteLine($"{Indent}  error: TLS message longer than {CryptoStreamBuffer.MaxBufferedBytes} bytes; {level} CRYPTO stream no longer followed");
                }

                return null;
            }
            case FrameType.NewToken:
            {
                if (NewTokenFrame.TryRead(ref reader, out NewTokenFrame f) != TransportErrorCode.NoError) return "FRAME_ENCODING_ERROR";
                output.WriteLine($"{Indent}NEW_TOKEN length={f.Token.Length} token={HexText.Prefix(f.Token, 16)}");
                return null;
            }
            case FrameType.MaxData:
            {
                if (MaxDataFrame.TryRead(ref reader, out MaxDataFrame f) != TransportErrorCode.NoError) return "FRAME_ENCODING_ERROR";
                output.WriteLine($"{Indent}MAX_DATA max={f.MaximumData}");
                return null;
            }
            case FrameType.MaxStreamData:
            {
                if (MaxStreamDataFrame.TryRead(ref reader, out MaxStreamDataFrame f) != TransportErrorCode.NoError) return "FRAME_ENCODING_ERROR";
                output.WriteLine($"{Indent}MAX_STREAM_DATA id={f.StreamId} max={f.MaximumStreamData}");
                return null;
            }
            case FrameType.MaxStreamsBidirectional:
            case FrameType.MaxStreamsUnidirectional:
            {
                if (MaxStreamsFrame.TryRead(ref reader, type, out MaxStreamsFrame f) != TransportErrorCode.NoError) return "FRAME_ENCODING_ERROR";
                output.WriteLine($"{Indent}MAX_STREAMS {(f.Bidirectional ? "bidi" : "uni")} max={f.MaximumStreams}");
                return null;
            }
            case FrameType.DataBlocked:
            {
                if (DataBlockedFrame.TryRead(ref reader, out DataBlockedFrame f) != TransportErrorCode.NoError) return "FRAME_ENCODING_ERROR";
                output.WriteLine($"{Indent}DATA_BLOCKED limit={f.MaximumData}");
                return null;
            }
            case FrameType.StreamDataBlocked:
            {
                if (StreamDataBlockedFrame.TryRead(ref reader, out StreamDataBlockedFrame f) != TransportErrorCode.NoError) return "FRAME_ENCODING_ERROR";
                output.WriteLine($"{Indent}STREAM_DATA_BLOCKED id={f.StreamId} limit={f.MaximumStreamData}");
                return null;
            }
            case FrameType.StreamsBlockedBidirectional:
            case FrameType.StreamsBlockedUnidirectional:
            {
                if (StreamsBlockedFrame.TryRead(ref reader, type, out StreamsBlockedFrame f) != TransportErrorCode.NoError) return "FRAME_ENCODING_ERROR";
                output.WriteLine($"{Indent}STREAMS_BLOCKED {(f.Bidirectional ? "bidi" : "uni")} limit={f.MaximumStreams}");
                return null;
            }
            case FrameType.NewConnectionId:
            {
                if (NewConnectionIdFrame.TryRead(ref reader, out NewConnectionIdFrame f) != TransportErrorCode.NoError) return "FRAME_ENCODING_ERROR";
                output.WriteLine($"{Indent}NEW_CONNECTION_ID seq={f.SequenceNumber} retire_prior_to={f.RetirePriorTo} cid={HexText.Of(f.ConnectionId)} reset_token={HexText.Of(f.StatelessResetToken)}");
                // RFC 9000 §5.1.1: the issuer will receive packets addressed to this ID.
                connection.AddCid(sender, f.ConnectionId);
                connection.AddResetToken(sender, f.StatelessResetToken);
                return null;
            }
            case FrameType.RetireConnectionId:
            {
                if (RetireConnectionIdFrame.TryRead(ref reader, out RetireConnectionIdFrame f) != TransportErrorCode.NoError) return "FRAME_ENCODING_ERROR";
                output.WriteLine($"{Indent}RETIRE_CONNECTION_ID seq={f.SequenceNumber}");
                return null;
            }
            case FrameType.PathChallenge:
            {
                if (PathChallengeFrame.TryRead(ref reader, out PathChallengeFrame f) != TransportErrorCode.NoError) return "FRAME_ENCODING_ERROR";
                output.WriteLine($"{Indent}PATH_CHALLENGE data={f.Data:x16}");
                return null;
            }
            case FrameType.PathResponse:
            {
                if (PathResponseFrame.TryRead(ref reader, out PathResponseFrame f) != TransportErrorCode.NoError) return "FRAME_ENCODING_ERROR";
                output.WriteLine($"{Indent}PATH_RESPONSE data={f.Data:x16}");
                return null;
            }
            case FrameType.ConnectionClose:
            case FrameType.ConnectionCloseApplication:
            {
                if (ConnectionCloseFrame.TryRead(ref reader, type, out ConnectionCloseFrame f) != TransportErrorCode.NoError) return "FRAME_ENCODING_ERROR";
                string reason = HexText.Preview(f.ReasonPhrase, 128);
                if (f.IsApplicationError)
                {
                    output.WriteLine($"{Indent}CONNECTION_CLOSE (application) error=0x{f.ErrorCode:x} reason={reason}");
                }
                else
                {
                    output.WriteLine($"{Indent}CONNECTION_CLOSE (transport) error=0x{f.ErrorCode:x} {QuicNames.TransportError(f.ErrorCode)} frame_type=0x{f.TriggeringFrameType:x} reason={reason}");
                }

                return null;
            }
            case FrameType.Datagram:
            case FrameType.DatagramWithLength:
            {
                if (DatagramFrame.TryRead(ref reader, type, out DatagramFrame f) != TransportErrorCode.NoError) return "FRAME_ENCODING_ERROR";
                output.WriteLine($"{Indent}DATAGRAM length={f.Data.Length} data={HexText.Preview(f.Data, PreviewBytes)}");
                return null;
            }
            default:
                return "unsupported frame type";
        }
    }

    private static string? FormatAck(TextWriter output, ref QuicReader reader, FrameType type, out long largestAcknowledged)
    {
        largestAcknowledged = -1;
        if (AckFrame.TryRead(ref reader, type, out AckFrame ack) != TransportErrorCode.NoError) return "FRAME_ENCODING_ERROR";
        largestAcknowledged = (long)ack.LargestAcknowledged;
        var ranges = new StringBuilder();
        foreach (AckRange range in ack.Ranges)
        {
            if (ranges.Length > 0) ranges.Append(", ");
            ranges.Append(range.Smallest == range.Largest ? $"{range.Largest}" : $"{range.Smallest}-{range.Largest}");
        }

        output.WriteLine($"{Indent}{(type == FrameType.AckEcn ? "ACK_ECN" : "ACK")} largest={ack.LargestAcknowledged} delay={ack.AckDelay} range_count={ack.RangeCount} first_range={ack.FirstAckRange} ranges=[{ranges}]");
        if (ack.EcnCounts is EcnCounts ecn)
        {
            output.WriteLine($"{Indent}  ecn ect0={ecn.Ect0} ect1={ecn.Ect1} ce={ecn.EcnCe}");
        }

        return null;
    }

    // RFC 9000 §2.1: the two low bits of a stream ID give initiator and directionality.
    private static string StreamKind(ulong streamId) => (streamId & 3) switch
    {
        0 => "client bidi",
        1 => "server bidi",
        2 => "client uni",
        _ => "server uni",
    };
}
