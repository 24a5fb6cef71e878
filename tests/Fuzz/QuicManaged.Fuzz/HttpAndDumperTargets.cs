using System;
using System.IO;
using System.Threading;
using System.Threading.Tasks;
using QuicManaged.Http.Framing;
using QuicManaged.Http.Qpack;
using QuicManaged.Tools.DatagramDumper;

namespace QuicManaged.Fuzz;

/// <summary>
/// Targets for the inputs outside the transport: HTTP/3 streams and QPACK field sections (QuicManaged.Http, shared by
/// the HttpClient handler, the Kestrel-facing code and InteropEndpoint), and the captures DatagramDumper reads
/// (pcap, pcapng, nettrace, raw datagrams) through its whole decoding pipeline.
/// </summary>
internal static class HttpAndDumperTargets
{
    private static void Check(bool condition, string what)
    {
        if (!condition) throw new InvariantViolationException(what);
    }

    // ---------------- http3: a peer's unidirectional stream, or a request stream ----------------

    /// <summary>
    /// Byte 0 selects the stream (mod 3): a peer's unidirectional stream as the client sees it (0) or as the server
    /// sees it (1), read by <see cref="Http3PeerStreams"/> after its stream type (control: SETTINGS, GOAWAY, MAX_PUSH_ID,
    /// CANCEL_PUSH; QPACK encoder and decoder streams; unknown types ignored); or a request stream (2): frames read one
    /// by one, HEADERS decoded by QPACK and validated as request headers, DATA skipped, control frames rejected. The
    /// only outcome besides success is an <see cref="Http3ProtocolException"/> with a defined error code.
    /// </summary>
    public static void Http3(byte[] input)
    {
        if (input.Length == 0) return;
        int mode = input[0] % 3;
        using var stream = new MemoryStream(input, 1, input.Length - 1, writable: false);
        var reader = new Http3FrameReader(stream, bufferSize: 256);
        try
        {
            if (mode < 2)
            {
                long? type = Sync(reader.ReadStreamTypeAsync(CancellationToken.None));
                if (type is null) return;
                var peer = new Http3PeerStreams(isServer: mode == 1, _ => { }, id => Check(id >= 0, "GOAWAY id is a varint"));
                _ = peer.ReadAsync(reader, type.Value, CancellationToken.None).GetAwaiter().GetResult();
            }
            else
            {
                RequestStream(reader);
            }
        }
        catch (Http3ProtocolException e)
        {
            Check(Enum.IsDefined(e.ErrorCode), $"undefined HTTP/3 error code 0x{(long)e.ErrorCode:x}");
        }
    }

    private static void RequestStream(Http3FrameReader reader)
    {
        for (int frames = 0; frames < 64; frames++)
        {
            Http3FrameHeader? header = Sync(reader.ReadFrameHeaderAsync(CancellationToken.None));
            if (header is null) return;
            Http3FrameType.RejectOnRequestStream(header.Value.Type);
            if (header.Value.Type == Http3FrameType.Headers)
            {
                byte[] payload = Sync(reader.ReadWholePayloadAsync(16 * 1024, Http3ErrorCode.ExcessiveLoad, CancellationToken.None));
                List<HeaderField> fields = Http3Message.DecodeFieldSection(payload, 64 * 1024);
                Http3Message.Validate(fields, isRequest: true);
            }
            else
            {
                Sync(reader.SkipPayloadAsync(CancellationToken.None));
            }
        }
    }

    private static T Sync<T>(ValueTask<T> task) => task.AsTask().GetAwaiter().GetResult();

    private static void Sync(ValueTask task) => task.AsTask().GetAwaiter().GetResult();

    // ---------------- qpack: one field section ----------------

    /// <summary>
    /// The input is a field section (RFC 9204 §4.5). The decoder answers with an error code, never an exception; what
    /// decodes must re-encode (static table and literals) and decode to the same fields.
    /// </summary>
    public static void Qpack(byte[] input)
    {
        var fields = new List<HeaderField>();
        Http3ErrorCode error = QpackDecoder.Decode(input, 64 * 1024, fields, out string? reason);
        if (error != Http3ErrorCode.NoError)
        {
            Check(reason is not null, "a QPACK error has a reason");
            Check(Enum.IsDefined(error), $"undefined QPACK error code 0x{(long)error:x}");
            return;
        }

        byte[] again = QpackEncoder.Encode(fields);
        var decoded = new List<HeaderField>();
        Http3ErrorCode againError = QpackDecoder.Decode(again, long.MaxValue, decoded, out string? againReason);
        Check(againError == Http3ErrorCode.NoError, $"re-encoded section decodes ({againError}: {againReason}; {Convert.ToHexString(again)})");
        Check(decoded.Count == fields.Count, "re-encoded section has the same field count");
        for (int i = 0; i < fields.Count; i++) Check(decoded[i] == fields[i], "re-encoded section has the same fields");
    }

    // ---------------- qpack-session: the dynamic table through a connection's decoder session ----------------

    /// <summary>
    /// Records <c>kind(1) length(2) body</c> played into one <see cref="QpackDecoderSession"/> (a 4,096-byte table,
    /// 4 blocked streams), as a connection's peer drives it: kind 0 (mod 4) encoder-stream bytes; 1 a field section on
    /// stream <c>4 * body[0]</c> (the rest of the body), which may block until later inserts; 2 the stream's reset
    /// (Stream Cancellation); 3 the decoder-stream bytes we would send. Only <see cref="Http3ProtocolException"/> with
    /// a defined code (or a cancelled wait) may come out; the table never exceeds its capacity or its entry bound.
    /// </summary>
    public static void QpackSession(byte[] input)
    {
        var session = new QpackDecoderSession(maxTableCapacity: 4096, maxBlockedStreams: 4);
        var pending = new List<(Task Task, CancellationTokenSource Cancel)>();
        try
        {
            for (int offset = 0; offset + 3 <= input.Length;)
            {
                int kind = input[offset] % 4;
                int length = Math.Min((input[offset + 1] << 8) | input[offset + 2], input.Length - offset - 3);
                byte[] body = input.AsSpan(offset + 3, length).ToArray();
                offset += 3 + length;
                switch (kind)
                {
                    case 0:
                        session.OnEncoderStreamData(body);
                        break;
                    case 1 when body.Length > 0:
                        var cancel = new CancellationTokenSource();
                        Task<List<HeaderField>> decode = session.DecodeAsync(body[1..], 4L * body[0], 64 * 1024, cancel.Token).AsTask();
                        if (decode.IsCompleted) decode.GetAwaiter().GetResult();
                        else pending.Add((decode, cancel));
                        break;
                    case 2 when body.Length > 0:
                        session.CancelStream(4L * body[0]);
                        break;
                    case 3:
                        _ = session.TakeDecoderInstructions();
                        break;
                }

                QpackDynamicTable table = session.Table;
                Check(table.Size <= table.Capacity && table.Capacity <= table.MaxCapacity, "table within its capacity");
                Check(table.Count <= table.MaxEntries, "table within its entry bound");
                Check(session.BlockedStreams <= session.MaxBlockedStreams, "blocked streams within the limit");
            }
        }
        catch (Http3ProtocolException e)
        {
            Check(Enum.IsDefined(e.ErrorCode), $"undefined QPACK error code 0x{(long)e.ErrorCode:x}");
        }
        finally
        {
            foreach ((Task task, CancellationTokenSource cancel) in pending)
            {
                cancel.Cancel();
                try
                {
                    Check(task.Wait(TimeSpan.FromSeconds(5)), "a blocked decode ends when cancelled");
                }
                catch (AggregateException e) when (e.InnerException is OperationCanceledException or Http3ProtocolException)
                {
                }

                cancel.Dispose();
            }
        }
    }

    // ---------------- capture: DatagramDumper's readers and decoders ----------------

    /// <summary>
    /// Byte 0 selects the reader (mod 3): a pcap or pcapng file (0), a .nettrace file (1), or one raw datagram (2).
    /// Every datagram read goes through the dumper's formatter (headers, Initial decryption, frames, TLS messages);
    /// the formatter catches its own exceptions and counts them as internal errors, which this target turns into
    /// crashes, as it does any exception out of the readers.
    /// </summary>
    public static void Capture(byte[] input)
    {
        if (input.Length == 0) return;
        byte[] body = input[1..];
        IDatagramSource source = (input[0] % 3) switch
        {
            0 => new PcapDatagramSource(body, port: null),
            1 => EventPipeDatagramSource.FromBytes(body),
            _ => new BinaryDatagramSource(body),
        };

        using var formatter = new DatagramFormatter(TextWriter.Null);
        int count = 0;
        foreach (CapturedDatagram datagram in source.Read())
        {
            formatter.Format(datagram);
            Check(++count <= input.Length + 1, "a capture yields at most one datagram per byte");
        }

        Check(formatter.InternalErrorCount == 0, "the dumper hit an internal error (an exception while decoding)");
    }
}
