using System.Buffers;
using System.Globalization;
using QuicManaged.Http.Framing;
using QuicManaged.Http.Qpack;

namespace QuicManaged.Http;

/// <summary>The request's field section (RFC 9114 §4.3.1): pseudo-headers first, then lowercase fields, minus connection-specific ones.</summary>
internal static class Http3RequestHeaders
{
    /// <summary>Room kept before the encoded section for the HEADERS frame header (type and length varints).</summary>
    private const int FrameHeaderRoom = 9;

    /// <summary>The field lines as a list (tests, and anything that wants to look at them before encoding).</summary>
    public static List<HeaderField> Build(HttpRequestMessage request)
    {
        var sink = new ListSink(new List<HeaderField>(8));
        Visit(request, Authority(request), ref sink);
        return sink.Fields;
    }

    /// <summary>
    /// The request's HEADERS frame (RFC 9114 §7.2.2) in a buffer rented from <see cref="ArrayPool{T}.Shared"/>, which the
    /// caller returns once the frame is written: <c>buffer[offset..(offset + length)]</c>. No field list and no
    /// intermediate section array are made; <paramref name="authority"/> (null: from the request) is the :authority value.
    /// </summary>
    public static byte[] RentHeadersFrame(HttpRequestMessage request, string? authority, out int offset, out int length)
    {
        authority ??= Authority(request);
        var bound = new LengthSink { Length = 2 }; // the section prefix
        Visit(request, authority, ref bound);
        byte[] buffer = ArrayPool<byte>.Shared.Rent(FrameHeaderRoom + bound.Length);
        var encoder = new EncodeSink(buffer, FrameHeaderRoom);
        Visit(request, authority, ref encoder);
        if (encoder.Failed)
        {
            // GetMaxEncodedLength bounds every line; the buffer cannot be too small.
            ArrayPool<byte>.Shared.Return(buffer);
            throw new InvalidOperationException("The request's field section did not fit its computed bound.");
        }

        int sectionLength = encoder.Offset - FrameHeaderRoom;
        int headerLength = VariableLengthInteger.GetLength(Http3FrameType.Headers) + VariableLengthInteger.GetLength(sectionLength);
        offset = FrameHeaderRoom - headerLength;
        Http3FrameCodec.WriteFrameHeader(buffer.AsSpan(offset, headerLength), Http3FrameType.Headers, sectionLength);
        length = headerLength + sectionLength;
        return buffer;
    }

    /// <summary>The :authority of <paramref name="request"/>: its Host header, else the URI's host and non-default port.</summary>
    public static string Authority(HttpRequestMessage request)
    {
        Uri uri = request.RequestUri!;
        return request.Headers.Host ?? Authority(uri.IdnHost, uri.Port, uri.IsDefaultPort, uri.HostNameType == UriHostNameType.IPv6);
    }

    public static string Authority(string idnHost, int port, bool isDefaultPort, bool ipv6)
    {
        string host = ipv6 ? "[" + idnHost + "]" : idnHost;
        return isDefaultPort ? host : host + ":" + port.ToString(CultureInfo.InvariantCulture);
    }

    private static void Visit<TSink>(HttpRequestMessage request, string authority, ref TSink sink) where TSink : struct, IFieldSink
    {
        Uri uri = request.RequestUri!;
        string path = uri.PathAndQuery;
        sink.Add(":method", request.Method.Method);
        sink.Add(":scheme", "https");
        sink.Add(":authority", authority);
        sink.Add(":path", path.Length == 0 ? "/" : path);
        Add(request.Headers, ref sink);
        if (request.Content is not null)
        {
            // Reading ContentLength computes it when the content knows its length (content-length then goes out).
            _ = request.Content.Headers.ContentLength;
            Add(request.Content.Headers, ref sink);
        }
    }

    private static void Add<TSink>(System.Net.Http.Headers.HttpHeaders headers, ref TSink sink) where TSink : struct, IFieldSink
    {
        foreach (KeyValuePair<string, System.Net.Http.Headers.HeaderStringValues> header in headers.NonValidated)
        {
            // Known header names come back as their own (already lowercase) instance: no new string.
            string name = header.Key.ToLowerInvariant();
            if (name is "host" or "connection" or "keep-alive" or "proxy-connection" or "transfer-encoding" or "upgrade")
            {
                continue; // RFC 9114 §4.2: connection-specific; :authority carries the host
            }

            foreach (string value in header.Value)
            {
                if (name == "te" && !string.Equals(value, "trailers", StringComparison.OrdinalIgnoreCase))
                {
                    continue;
                }

                sink.Add(name, value);
            }
        }
    }

    private interface IFieldSink
    {
        void Add(string name, string value);
    }

    private struct ListSink(List<HeaderField> fields) : IFieldSink
    {
        public readonly List<HeaderField> Fields = fields;

        public readonly void Add(string name, string value) => Fields.Add(new HeaderField(name, value));
    }

    private struct LengthSink : IFieldSink
    {
        public int Length;

        public void Add(string name, string value) => Length = checked(Length + QpackEncoder.GetMaxEncodedLength(name, value));
    }

    private struct EncodeSink(byte[] buffer, int start) : IFieldSink
    {
        private readonly byte[] _buffer = buffer;
        private readonly int _start = start;
        public int Offset = start;
        public bool Failed;

        public void Add(string name, string value)
        {
            if (Failed)
            {
                return;
            }

            if (Offset == _start)
            {
                // RFC 9204 §4.5.1: Required Insert Count 0 and Delta Base 0 (our encoder never uses the dynamic table).
                _buffer[Offset++] = 0;
                _buffer[Offset++] = 0;
            }

            int n = QpackEncoder.EncodeLine(new HeaderField(name, value), _buffer.AsSpan(Offset));
            if (n < 0)
            {
                Failed = true;
                return;
            }

            Offset += n;
        }
    }
}
