using System.Globalization;
using QuicManaged.Interop.Serving;
using QuicManaged.Interop.Transport;

namespace QuicManaged.Interop.Http3;

/// <summary>HTTP/3 file server for one connection: GET /path -> 200 with the file, 404 otherwise (RFC 9114 §4.1).</summary>
internal sealed class Http3Server
{
    public const int MaxFieldSectionSize = 16 * 1024;
    public const int QpackMaxTableCapacity = 4096;
    public const int QpackBlockedStreams = 16;
    private const int DataChunk = 64 * 1024;

    private readonly Http3Session _session;
    private readonly FileRoot _root;

    public Http3Server(IMultiplexedConnection connection, FileRoot root)
    {
        _root = root;
        // The server decodes requests with a QPACK dynamic table (RFC 9204): 4096 bytes, 16 blocked streams.
        _session = new Http3Session(connection, isServer: true, new Http3Settings
        {
            MaxFieldSectionSize = MaxFieldSectionSize,
            QpackMaxTableCapacity = QpackMaxTableCapacity,
            QpackBlockedStreams = QpackBlockedStreams,
        });
    }

    public Http3Session Session => _session;

    /// <summary>Serves requests until the peer closes the connection or <paramref name="cancellationToken"/> fires.</summary>
    public async Task RunAsync(CancellationToken cancellationToken)
    {
        await _session.StartAsync(cancellationToken).ConfigureAwait(false);
        await _session.RunAcceptLoopAsync(stream => HandleRequestAsync(stream, cancellationToken), cancellationToken).ConfigureAwait(false);
    }

    internal async Task HandleRequestAsync(IMultiplexedStream stream, CancellationToken cancellationToken)
    {
        await Task.Yield();
        await using (stream.ConfigureAwait(false))
        {
            try
            {
                List<HeaderField> request = await ReadRequestHeadersAsync(new Http3FrameReader(stream.Stream), cancellationToken, _session.Qpack, stream.Id).ConfigureAwait(false);
                string method = Http3Message.Find(request, ":method") ?? string.Empty;
                string path = Http3Message.Find(request, ":path") ?? string.Empty;
                if (method != "GET" && method != "HEAD")
                {
                    await WriteStatusOnlyAsync(stream, "405", cancellationToken).ConfigureAwait(false);
                    return;
                }

                if (!_root.TryResolve(path, out string file))
                {
                    await WriteStatusOnlyAsync(stream, "404", cancellationToken).ConfigureAwait(false);
                    return;
                }

                await WriteFileAsync(stream, file, includeBody: method == "GET", cancellationToken).ConfigureAwait(false);
            }
            catch (Http3ProtocolException e)
            {
                if (Http3Message.IsConnectionError(e.ErrorCode))
                {
                    await _session.FailAsync(e).ConfigureAwait(false);
                }
                else
                {
                    stream.Abort((long)e.ErrorCode);
                }
            }
            catch (IOException)
            {
                // The client reset the stream or the connection went away.
            }
            catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
            {
            }
        }
    }

    /// <summary>Reads frames up to the request HEADERS (RFC 9114 §4.1: HEADERS first; unknown frames ignored).</summary>
    internal static async Task<List<HeaderField>> ReadRequestHeadersAsync(Http3FrameReader reader, CancellationToken cancellationToken,
        QpackDecoderSession? qpack = null, long streamId = 0)
    {
        while (true)
        {
            Http3FrameHeader? maybeHeader = await reader.ReadFrameHeaderAsync(cancellationToken).ConfigureAwait(false);
            if (maybeHeader is not Http3FrameHeader header)
            {
                throw new Http3ProtocolException(Http3ErrorCode.RequestIncomplete, "request stream ended before HEADERS");
            }

            switch (header.Type)
            {
                case Http3FrameType.Headers:
                    byte[] payload = await reader.ReadWholePayloadAsync(MaxFieldSectionSize, Http3ErrorCode.ExcessiveLoad, cancellationToken).ConfigureAwait(false);
                    List<HeaderField> fields = await Http3Message.DecodeFieldSectionAsync(payload, MaxFieldSectionSize, qpack, streamId, cancellationToken).ConfigureAwait(false);
                    Http3Message.Validate(fields, isRequest: true);
                    string? method = Http3Message.Find(fields, ":method");
                    if (method is null || method != "CONNECT" && (Http3Message.Find(fields, ":scheme") is null || string.IsNullOrEmpty(Http3Message.Find(fields, ":path"))))
                    {
                        // RFC 9114 §4.3.1: :method, :scheme and a non-empty :path are mandatory.
                        throw new Http3ProtocolException(Http3ErrorCode.MessageError, "missing mandatory request pseudo-header");
                    }

                    return fields;
                case Http3FrameType.Data:
                    throw new Http3ProtocolException(Http3ErrorCode.FrameUnexpected, "DATA before HEADERS");
                case Http3FrameType.PushPromise:
                case Http3FrameType.Settings:
                case Http3FrameType.Goaway:
                case Http3FrameType.MaxPushId:
                case Http3FrameType.CancelPush:
                    throw new Http3ProtocolException(Http3ErrorCode.FrameUnexpected, $"frame type 0x{header.Type:x} on a request stream");
                default:
                    if (Http3FrameType.IsReservedHttp2Type(header.Type))
                    {
                        throw new Http3ProtocolException(Http3ErrorCode.FrameUnexpected, $"reserved HTTP/2 frame type 0x{header.Type:x}");
                    }

                    await reader.SkipPayloadAsync(cancellationToken).ConfigureAwait(false);
                    break;
            }
        }
    }

    private static async Task WriteStatusOnlyAsync(IMultiplexedStream stream, string status, CancellationToken cancellationToken)
    {
        List<HeaderField> response = [new(":status", status), new("content-length", "0")];
        await stream.Stream.WriteAsync(Http3Message.EncodeHeadersFrame(response), cancellationToken).ConfigureAwait(false);
        stream.CompleteWrites();
    }

    private static async Task WriteFileAsync(IMultiplexedStream stream, string file, bool includeBody, CancellationToken cancellationToken)
    {
        FileStream source = new(file, FileMode.Open, FileAccess.Read, FileShare.Read, 1, useAsync: true);
        await using (source.ConfigureAwait(false))
        {
            long length = source.Length;
            List<HeaderField> response = [new(":status", "200"), new("content-length", length.ToString(CultureInfo.InvariantCulture))];
            await stream.Stream.WriteAsync(Http3Message.EncodeHeadersFrame(response), cancellationToken).ConfigureAwait(false);
            if (includeBody)
            {
                byte[] buffer = new byte[Http3FrameCodec.MaxFrameHeaderLength + DataChunk];
                byte[] header = new byte[Http3FrameCodec.MaxFrameHeaderLength];
                while (true)
                {
                    int n = await source.ReadAsync(buffer.AsMemory(Http3FrameCodec.MaxFrameHeaderLength, DataChunk), cancellationToken).ConfigureAwait(false);
                    if (n == 0)
                    {
                        break;
                    }

                    // Frame header written just before the payload so each DATA frame goes out in one write.
                    int headerLength = Http3FrameCodec.WriteFrameHeader(header, Http3FrameType.Data, n);
                    int start = Http3FrameCodec.MaxFrameHeaderLength - headerLength;
                    header.AsSpan(0, headerLength).CopyTo(buffer.AsSpan(start));
                    await stream.Stream.WriteAsync(buffer.AsMemory(start, headerLength + n), cancellationToken).ConfigureAwait(false);
                }
            }

            stream.CompleteWrites();
        }
    }
}
