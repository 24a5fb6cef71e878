using System.Globalization;
using QuicManaged.Interop.Transport;

namespace QuicManaged.Interop.Http3;

/// <summary>HTTP/3 client over one connection: GET requests, one bidirectional stream each (RFC 9114 §4.1).</summary>
internal sealed class Http3Client : IAsyncDisposable
{
    /// <summary>Our SETTINGS_MAX_FIELD_SECTION_SIZE: responses with bigger header sections are refused.</summary>
    public const int MaxFieldSectionSize = 64 * 1024;

    private readonly Http3Session _session;
    private readonly CancellationTokenSource _acceptLoopCancellation = new();
    private Task? _acceptLoop;

    public Http3Client(IMultiplexedConnection connection)
    {
        _session = new Http3Session(connection, isServer: false, new Http3Settings { MaxFieldSectionSize = MaxFieldSectionSize });
    }

    public Http3Session Session => _session;

    public async Task StartAsync(CancellationToken cancellationToken)
    {
        await _session.StartAsync(cancellationToken).ConfigureAwait(false);
        _acceptLoop = _session.RunAcceptLoopAsync(null, _acceptLoopCancellation.Token);
    }

    /// <summary>Sends GET <paramref name="path"/> and copies the response body into <paramref name="body"/>.</summary>
    public async Task<Http3Response> GetAsync(string authority, string path, Stream body, CancellationToken cancellationToken)
    {
        IMultiplexedStream stream = await _session.Connection.OpenStreamAsync(true, cancellationToken).ConfigureAwait(false);
        await using (stream.ConfigureAwait(false))
        {
            try
            {
                List<HeaderField> request =
                [
                    new(":method", "GET"),
                    new(":scheme", "https"),
                    new(":authority", authority),
                    new(":path", path),
                    new("user-agent", "quicmanaged-interop"),
                ];
                await stream.Stream.WriteAsync(Http3Message.EncodeHeadersFrame(request), cancellationToken).ConfigureAwait(false);
                stream.CompleteWrites();
                return await ReadResponseAsync(new Http3FrameReader(stream.Stream, 64 * 1024), body, cancellationToken).ConfigureAwait(false);
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

                throw;
            }
        }
    }

    internal static async Task<Http3Response> ReadResponseAsync(Http3FrameReader reader, Stream body, CancellationToken cancellationToken)
    {
        int status = -1;
        long? contentLength = null;
        long received = 0;
        bool trailersSeen = false;
        byte[] chunk = new byte[64 * 1024];
        while (true)
        {
            Http3FrameHeader? maybeHeader = await reader.ReadFrameHeaderAsync(cancellationToken).ConfigureAwait(false);
            if (maybeHeader is not Http3FrameHeader header)
            {
                break;
            }

            switch (header.Type)
            {
                case Http3FrameType.Headers:
                    if (trailersSeen)
                    {
                        throw new Http3ProtocolException(Http3ErrorCode.FrameUnexpected, "HEADERS after trailers");
                    }

                    byte[] payload = await reader.ReadWholePayloadAsync(MaxFieldSectionSize, Http3ErrorCode.ExcessiveLoad, cancellationToken).ConfigureAwait(false);
                    List<HeaderField> fields = Http3Message.DecodeFieldSection(payload, MaxFieldSectionSize);
                    if (status >= 200)
                    {
                        // RFC 9114 §4.1: a HEADERS frame after the final response is the trailer section.
                        trailersSeen = true;
                        break;
                    }

                    Http3Message.Validate(fields, isRequest: false);
                    string? statusText = Http3Message.Find(fields, ":status");
                    if (statusText is null || statusText.Length != 3
                        || !int.TryParse(statusText, NumberStyles.None, CultureInfo.InvariantCulture, out status) || status < 100)
                    {
                        throw new Http3ProtocolException(Http3ErrorCode.MessageError, "missing or invalid :status");
                    }

                    string? lengthText = Http3Message.Find(fields, "content-length");
                    if (lengthText is not null)
                    {
                        if (!long.TryParse(lengthText, NumberStyles.None, CultureInfo.InvariantCulture, out long length))
                        {
                            throw new Http3ProtocolException(Http3ErrorCode.MessageError, "invalid content-length");
                        }

                        contentLength = length;
                    }

                    if (status < 200)
                    {
                        // Informational (1xx) responses precede the final one.
                        status = -1;
                        contentLength = null;
                    }

                    break;
                case Http3FrameType.Data:
                    if (status < 200 || trailersSeen)
                    {
                        throw new Http3ProtocolException(Http3ErrorCode.FrameUnexpected, "DATA before the response HEADERS or after trailers");
                    }

                    while (true)
                    {
                        int n = await reader.ReadPayloadAsync(chunk, cancellationToken).ConfigureAwait(false);
                        if (n == 0)
                        {
                            break;
                        }

                        received += n;
                        if (contentLength is long limit && received > limit)
                        {
                            throw new Http3ProtocolException(Http3ErrorCode.MessageError, "more DATA than content-length");
                        }

                        await body.WriteAsync(chunk.AsMemory(0, n), cancellationToken).ConfigureAwait(false);
                    }

                    break;
                default:
                    Http3FrameType.RejectOnRequestStream(header.Type);
                    // RFC 9114 §9: unknown frame types are ignored.
                    await reader.SkipPayloadAsync(cancellationToken).ConfigureAwait(false);
                    break;
            }
        }

        if (status < 200)
        {
            throw new Http3ProtocolException(Http3ErrorCode.RequestIncomplete, "stream ended without a final response");
        }

        if (contentLength is long expected && expected != received)
        {
            // RFC 9114 §4.1.2: a content-length that disagrees with the DATA received makes the response malformed.
            throw new Http3ProtocolException(Http3ErrorCode.MessageError, $"content-length {expected} but {received} bytes received");
        }

        return new Http3Response(status, received);
    }

    public async ValueTask DisposeAsync()
    {
        _acceptLoopCancellation.Cancel();
        try
        {
            await _session.CloseAsync(CancellationToken.None).ConfigureAwait(false);
        }
        catch (Exception)
        {
            // Best effort during teardown.
        }

        if (_acceptLoop is not null)
        {
            try
            {
                await _acceptLoop.ConfigureAwait(false);
            }
            catch (Exception)
            {
            }
        }

        _acceptLoopCancellation.Dispose();
    }
}
