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

        var formatter = new Handler(output, packetType, level, sender, connection, frameFilter);
        TransportErrorCode error = FrameReader.Read(payload, ref formatter, out FrameType type, out int frameStart);
        formatter.FlushWarnings();
        if (error == TransportErrorCode.NoError)
        {
            return;
        }

        ReadOnlySpan<byte> rest = payload.Slice(frameStart);
        if (formatter.TypeUnreadable)
        {
            output.WriteLine($"{Indent}error: unknown or truncated frame type at payload offset {frameStart}: {HexText.Prefix(rest, 16)} ({rest.Length} bytes undecoded)");
        }
        else
        {
            output.WriteLine($"{Indent}error: malformed {QuicNames.Frame(type)} frame at payload offset {frameStart}: FRAME_ENCODING_ERROR; {rest.Length} bytes undecoded");
        }
    }

    /// <summary>Writes a line a frame (to <see cref="TextWriter.Null"/> for frames the filter hides), then that frame's
    /// warnings: a type not minimally encoded, a frame the packet type does not allow. Never refuses a frame: a dump
    /// shows what a broken peer sent.</summary>
    private struct Handler : IFrameHandler
    {
        private readonly TextWriter _all;
        private readonly PacketType _packetType;
        private readonly KeyLevel _level;
        private readonly Sender _sender;
        private readonly DumpConnection _connection;
        private readonly string? _frameFilter;
        private TextWriter _output;
        private FrameType _type;
        private bool _notMinimal;
        private bool _warningsDue;

        public Handler(TextWriter output, PacketType packetType, KeyLevel level, Sender sender, DumpConnection connection, string? frameFilter)
        {
            _all = output;
            _output = output;
            _packetType = packetType;
            _level = level;
            _sender = sender;
            _connection = connection;
            _frameFilter = frameFilter;
        }

        /// <summary>Whether reading stopped at a frame type that could not be read (unknown or truncated).</summary>
        public bool TypeUnreadable { get; private set; }

        public TransportErrorCode OnFrameType(FrameType type, TransportErrorCode typeError, int offset)
        {
            FlushWarnings();
            if (typeError == TransportErrorCode.FrameEncodingError)
            {
                TypeUnreadable = true;
                return typeError;
            }

            _type = type;
            _notMinimal = typeError == TransportErrorCode.ProtocolViolation;
            _warningsDue = true;
            _output = _frameFilter == null || QuicNames.FrameFilterName(type) == _frameFilter ? _all : TextWriter.Null;
            return TransportErrorCode.NoError;
        }

        /// <summary>Writes the warnings of the frame last read, once its line (or its error) is written.</summary>
        public void FlushWarnings()
        {
            if (!_warningsDue)
            {
                return;
            }

            _warningsDue = false;
            if (_notMinimal)
            {
                _output.WriteLine($"{Indent}  warning: frame type not minimally encoded (PROTOCOL_VIOLATION, RFC 9000 §12.4)");
            }

            if (!FrameTypes.IsAllowedIn(_type, _packetType))
            {
                _output.WriteLine($"{Indent}  warning: {QuicNames.Frame(_type)} is not allowed in {_packetType} packets (PROTOCOL_VIOLATION, RFC 9000 §12.4 Table 3)");
            }
        }

        public TransportErrorCode OnStream(in StreamFrame f) =>
            Line($"STREAM id={f.StreamId} ({StreamKind(f.StreamId)}) offset={f.Offset} length={f.Data.Length} fin={(f.Fin ? 1 : 0)} data={HexText.Preview(f.Data, PreviewBytes)}");

        public TransportErrorCode OnPadding(int length) => Line($"PADDING length={length}");

        public TransportErrorCode OnPing() => Line("PING");

        public TransportErrorCode OnHandshakeDone() => Line("HANDSHAKE_DONE");

        public TransportErrorCode OnAck(in AckFrame ack)
        {
            var ranges = new StringBuilder();
            foreach (AckRange range in ack.Ranges)
            {
                if (ranges.Length > 0) ranges.Append(", ");
                ranges.Append(range.Smallest == range.Largest ? $"{range.Largest}" : $"{range.Smallest}-{range.Largest}");
            }

            Line($"{(ack.EcnCounts.HasValue ? "ACK_ECN" : "ACK")} largest={ack.LargestAcknowledged} delay={ack.AckDelay} range_count={ack.RangeCount} first_range={ack.FirstAckRange} ranges=[{ranges}]");
            if (ack.EcnCounts is EcnCounts ecn)
            {
                _output.WriteLine($"{Indent}  ecn ect0={ecn.Ect0} ect1={ecn.Ect1} ce={ecn.Ce}");
            }

            // The peer sent at least this packet number in this space: the base for decoding its next packet
            // numbers (RFC 9000 Appendix A.3) when the capture missed the packets in between.
            _connection.RecordPacketNumber(_level, _sender == Sender.Client ? Sender.Server : Sender.Client, (long)ack.LargestAcknowledged);
            return TransportErrorCode.NoError;
        }

        public TransportErrorCode OnResetStream(in ResetStreamFrame f) =>
            Line($"RESET_STREAM id={f.StreamId} error=0x{f.ApplicationErrorCode:x} final_size={f.FinalSize}");

        public TransportErrorCode OnStopSending(in StopSendingFrame f) => Line($"STOP_SENDING id={f.StreamId} error=0x{f.ApplicationErrorCode:x}");

        public TransportErrorCode OnCrypto(in CryptoFrame f)
        {
            Line($"CRYPTO offset={f.Offset} length={f.Data.Length}");
            CryptoStreamBuffer stream = _connection.CryptoStream(_level, _sender);
            stream.Add(f.Offset, f.Data);
            while (stream.TryTakeMessage(out byte[] message))
            {
                TlsMessageFormatter.Format(_output, Indent + "  ", message, _connection);
            }

            if (stream.Broken)
            {
                _output.WriteLine($"{Indent}  error: TLS message longer than {CryptoStreamBuffer.MaxBufferedBytes} bytes; {_level} CRYPTO stream no longer followed");
            }

            return TransportErrorCode.NoError;
        }

        public TransportErrorCode OnNewToken(in NewTokenFrame f) => Line($"NEW_TOKEN length={f.Token.Length} token={HexText.Prefix(f.Token, 16)}");

        public TransportErrorCode OnMaxData(in MaxDataFrame f) => Line($"MAX_DATA max={f.MaximumData}");

        public TransportErrorCode OnMaxStreamData(in MaxStreamDataFrame f) => Line($"MAX_STREAM_DATA id={f.StreamId} max={f.MaximumStreamData}");

        public TransportErrorCode OnMaxStreams(in MaxStreamsFrame f) => Line($"MAX_STREAMS {(f.Bidirectional ? "bidi" : "uni")} max={f.MaximumStreams}");

        public TransportErrorCode OnDataBlocked(in DataBlockedFrame f) => Line($"DATA_BLOCKED limit={f.MaximumData}");

        public TransportErrorCode OnStreamDataBlocked(in StreamDataBlockedFrame f) => Line($"STREAM_DATA_BLOCKED id={f.StreamId} limit={f.MaximumStreamData}");

        public TransportErrorCode OnStreamsBlocked(in StreamsBlockedFrame f) => Line($"STREAMS_BLOCKED {(f.Bidirectional ? "bidi" : "uni")} limit={f.MaximumStreams}");

        public TransportErrorCode OnNewConnectionId(in NewConnectionIdFrame f)
        {
            Line($"NEW_CONNECTION_ID seq={f.SequenceNumber} retire_prior_to={f.RetirePriorTo} cid={HexText.Of(f.ConnectionId)} reset_token={HexText.Of(f.StatelessResetToken)}");
            // RFC 9000 §5.1.1: the issuer will receive packets addressed to this ID.
            _connection.AddCid(_sender, f.ConnectionId);
            _connection.AddResetToken(_sender, f.StatelessResetToken);
            return TransportErrorCode.NoError;
        }

        public TransportErrorCode OnRetireConnectionId(in RetireConnectionIdFrame f) => Line($"RETIRE_CONNECTION_ID seq={f.SequenceNumber}");

        public TransportErrorCode OnPathChallenge(in PathChallengeFrame f) => Line($"PATH_CHALLENGE data={f.Data:x16}");

        public TransportErrorCode OnPathResponse(in PathResponseFrame f) => Line($"PATH_RESPONSE data={f.Data:x16}");

        public TransportErrorCode OnConnectionClose(in ConnectionCloseFrame f)
        {
            string reason = HexText.Preview(f.ReasonPhrase, 128);
            return f.IsApplicationError
                ? Line($"CONNECTION_CLOSE (application) error=0x{f.ErrorCode:x} reason={reason}")
                : Line($"CONNECTION_CLOSE (transport) error=0x{f.ErrorCode:x} {QuicNames.TransportError(f.ErrorCode)} frame_type=0x{f.TriggeringFrameType:x} reason={reason}");
        }

        public TransportErrorCode OnDatagram(in DatagramFrame f) => Line($"DATAGRAM length={f.Data.Length} data={HexText.Preview(f.Data, PreviewBytes)}");

        private readonly TransportErrorCode Line(string text)
        {
            _output.WriteLine($"{Indent}{text}");
            return TransportErrorCode.NoError;
        }
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
