using System.Buffers;
using QuicManaged.Http.Framing;
using QuicManaged.Http.Qpack;

namespace QuicManaged.Http.Tests;

/// <summary>
/// The request HEADERS frame as the handler sends it (encoded straight into a pooled buffer) against the field list it
/// stands for: decoding the frame gives back exactly <see cref="Http3RequestHeaders.Build"/>'s fields, and the bytes are
/// those of encoding that list.
/// </summary>
public sealed class RequestHeadersEncodingTests
{
    public static TheoryData<string> Requests => new()
    {
        "get",
        "get-ipv6",
        "get-port-and-query",
        "host-header",
        "post-with-content-and-custom-headers",
        "long-header",
    };

    private static HttpRequestMessage Create(string kind)
    {
        switch (kind)
        {
            case "get":
                return new HttpRequestMessage(HttpMethod.Get, "https://example.com/");
            case "get-ipv6":
                return new HttpRequestMessage(HttpMethod.Get, "https://[::1]:8443/a");
            case "get-port-and-query":
                return new HttpRequestMessage(HttpMethod.Get, "https://127.0.0.1:5001/path/x?q=1&r=%20");
            case "host-header":
            {
                var request = new HttpRequestMessage(HttpMethod.Get, "https://127.0.0.1:5001/");
                request.Headers.Host = "other.example:99";
                return request;
            }
            case "post-with-content-and-custom-headers":
            {
                var request = new HttpRequestMessage(HttpMethod.Post, "https://example.com/upload")
                {
                    Content = new ByteArrayContent(new byte[123]),
                };
                request.Content.Headers.ContentType = new System.Net.Http.Headers.MediaTypeHeaderValue("application/grpc");
                request.Headers.TryAddWithoutValidation("TE", "trailers");
                request.Headers.TryAddWithoutValidation("X-Custom", ["one", "two"]);
                request.Headers.TryAddWithoutValidation("Connection", "close"); // connection-specific: left out
                return request;
            }
            case "long-header":
            {
                var request = new HttpRequestMessage(HttpMethod.Get, "https://example.com/");
                request.Headers.TryAddWithoutValidation("x-long", new string('v', 5000));
                return request;
            }
            default:
                throw new ArgumentOutOfRangeException(nameof(kind));
        }
    }

    [Theory]
    [MemberData(nameof(Requests))]
    public void TheRentedFrameIsTheEncodingOfTheFieldList(string kind)
    {
        using HttpRequestMessage request = Create(kind);
        List<HeaderField> expected = Http3RequestHeaders.Build(request);
        byte[] rented = Http3RequestHeaders.RentHeadersFrame(request, null, out int offset, out int length);
        try
        {
            ReadOnlySpan<byte> frame = rented.AsSpan(offset, length);
            Assert.Equal(Http3Message.EncodeHeadersFrame(expected), frame.ToArray());
            Assert.True(Http3FrameCodec.TryReadFrameHeader(frame, out Http3FrameHeader header, out int consumed));
            Assert.Equal(Http3FrameType.Headers, header.Type);
            Assert.Equal(length - consumed, header.Length);
            Assert.Equal(expected, Http3Message.DecodeFieldSection(frame[consumed..].ToArray(), 1 << 20));
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(rented);
        }

        Assert.Equal(":method", expected[0].Name);
        Assert.DoesNotContain(expected, static f => f.Name is "connection" or "host");
    }

    [Fact]
    public void AGivenAuthorityIsTheOneSent()
    {
        using var request = new HttpRequestMessage(HttpMethod.Get, "https://127.0.0.1:5001/");
        byte[] rented = Http3RequestHeaders.RentHeadersFrame(request, "cached.example:5001", out int offset, out int length);
        try
        {
            Assert.True(Http3FrameCodec.TryReadFrameHeader(rented.AsSpan(offset, length), out _, out int consumed));
            List<HeaderField> fields = Http3Message.DecodeFieldSection(rented.AsSpan(offset + consumed, length - consumed).ToArray(), 1 << 20);
            Assert.Equal("cached.example:5001", Http3Message.Find(fields, ":authority"));
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(rented);
        }
    }

    [Fact]
    public void TheStaticTableLookupFindsExactAndNameOnlyEntries()
    {
        QpackStaticTable.Find(":method", "GET", out int exact, out int name);
        Assert.Equal(17, exact);
        Assert.Equal(15, name);
        QpackStaticTable.Find(":status", "200", out exact, out _);
        Assert.Equal(25, exact);
        QpackStaticTable.Find(":status", "201", out exact, out name);
        Assert.Equal(-1, exact);
        Assert.Equal(24, name);
        QpackStaticTable.Find("x-not-in-the-table", "v", out exact, out name);
        Assert.Equal(-1, exact);
        Assert.Equal(-1, name);
    }
}
