using QuicManaged.Http.Framing;
using QuicManaged.Http.Qpack;
using QuicManaged.Interop.Http3;

namespace System.Net.Quic.Managed.Tests.Http3;

public class Http3FrameTests
{
    private static HeaderField F(string name, string value) => new(name, value);

    private static byte[] Concat(params byte[][] parts) => parts.SelectMany(p => p).ToArray();

    private static byte[] HeadersFrame(params HeaderField[] fields) => Http3Message.EncodeHeadersFrame(fields.ToList());

    private static Task<Http3Response> ReadResponse(byte[] wire, Stream? body = null)
        => Http3Client.ReadResponseAsync(new Http3FrameReader(new MemoryStream(wire), 64), body ?? new MemoryStream(), CancellationToken.None);

    [Theory]
    [InlineData(0L, "00")]
    [InlineData(37L, "25")]
    [InlineData(15293L, "7bbd")]
    [InlineData(494878333L, "9d7f3e7d")]
    [InlineData(151288809941952652L, "c2197c5eff14e88c")]
    public void VariableLengthInteger_Rfc9000AppendixA1(long value, string hex)
    {
        // RFC 9000 Appendix A.1 examples.
        byte[] expected = Convert.FromHexString(hex);
        byte[] buffer = new byte[8];
        Assert.Equal(expected.Length, VariableLengthInteger.Write(buffer, value));
        Assert.Equal(expected, buffer.AsSpan(0, expected.Length).ToArray());
        Assert.True(VariableLengthInteger.TryRead(expected, out long decoded, out int consumed));
        Assert.Equal(value, decoded);
        Assert.Equal(expected.Length, consumed);
    }

    [Fact]
    public void FrameHeader_RoundTripAndTruncation()
    {
        byte[] buffer = new byte[16];
        int written = Http3FrameCodec.WriteFrameHeader(buffer, 0x21, 70000);
        Assert.True(Http3FrameCodec.TryReadFrameHeader(buffer.AsSpan(0, written), out Http3FrameHeader header, out int consumed));
        Assert.Equal(new Http3FrameHeader(0x21, 70000), header);
        Assert.Equal(written, consumed);
        for (int i = 0; i < written; i++)
        {
            Assert.False(Http3FrameCodec.TryReadFrameHeader(buffer.AsSpan(0, i), out _, out _));
        }
    }

    [Fact]
    public void Settings_RoundTrip()
    {
        Http3Settings local = new() { MaxFieldSectionSize = 16384 };
        byte[] frame = local.EncodeFrame();
        Assert.True(Http3FrameCodec.TryReadFrameHeader(frame, out Http3FrameHeader header, out int consumed));
        Assert.Equal(Http3FrameType.Settings, header.Type);
        Assert.Equal(frame.Length - consumed, header.Length);
        Assert.Equal(Http3ErrorCode.NoError, Http3Settings.TryParse(frame.AsSpan(consumed), out Http3Settings parsed));
        Assert.Equal(16384, parsed.MaxFieldSectionSize);
        Assert.Equal(0, parsed.QpackMaxTableCapacity);
        Assert.Equal(0, parsed.QpackBlockedStreams);
    }

    [Theory]
    [InlineData("06", (long)Http3ErrorCode.FrameError)]              // value missing
    [InlineData("0640", (long)Http3ErrorCode.FrameError)]            // value varint truncated
    [InlineData("0601", (long)Http3ErrorCode.NoError)]
    [InlineData("06010602", (long)Http3ErrorCode.SettingsError)]     // duplicate MAX_FIELD_SECTION_SIZE
    [InlineData("0201", (long)Http3ErrorCode.SettingsError)]         // HTTP/2 ENABLE_PUSH
    [InlineData("0001", (long)Http3ErrorCode.SettingsError)]         // reserved 0x00
    [InlineData("21052105", (long)Http3ErrorCode.SettingsError)]     // duplicate unknown (grease) id
    [InlineData("2105", (long)Http3ErrorCode.NoError)]               // unknown id ignored
    public void Settings_Malformed(string hex, long expected)
    {
        Assert.Equal((Http3ErrorCode)expected, Http3Settings.TryParse(Convert.FromHexString(hex), out _));
    }

    [Fact]
    public void SingleIntegerFrames_RoundTripAndRejectTrailingBytes()
    {
        byte[] goaway = Http3FrameCodec.EncodeSingleIntegerFrame(Http3FrameType.Goaway, 12);
        Assert.Equal(new byte[] { 0x07, 0x01, 0x0c }, goaway);
        Assert.Equal(Http3ErrorCode.NoError, Http3FrameCodec.TryReadSingleInteger([0x0c], out long id));
        Assert.Equal(12, id);
        Assert.Equal(Http3ErrorCode.FrameError, Http3FrameCodec.TryReadSingleInteger([0x0c, 0x00], out _));
        Assert.Equal(Http3ErrorCode.FrameError, Http3FrameCodec.TryReadSingleInteger([0x40], out _));
        Assert.Equal(Http3ErrorCode.FrameError, Http3FrameCodec.TryReadSingleInteger([], out _));
    }

    [Fact]
    public async Task Response_HeadersDataUnknownFramesAndTrailers()
    {
        byte[] wire = Concat(
            Http3FrameCodec.EncodeFrame(0x21, [1, 2, 3]),                        // grease frame before HEADERS: skipped
            HeadersFrame(F(":status", "103")),                                 // informational
            HeadersFrame(F(":status", "200"), F("content-length", "5")),
            Http3FrameCodec.EncodeFrame(Http3FrameType.Data, "he"u8),
            Http3FrameCodec.EncodeFrame(0x1f * 7 + 0x21, new byte[100]),         // unknown between DATA: skipped
            Http3FrameCodec.EncodeFrame(Http3FrameType.Data, "llo"u8),
            HeadersFrame(F("x-trailer", "t")));
        MemoryStream body = new();
        Http3Response response = await ReadResponse(wire, body);
        Assert.Equal(new Http3Response(200, 5), response);
        Assert.Equal("hello"u8.ToArray(), body.ToArray());
    }

    [Fact]
    public async Task Response_TruncatedFrame_IsFrameError()
    {
        byte[] data = Http3FrameCodec.EncodeFrame(Http3FrameType.Data, new byte[10]);
        byte[] wire = Concat(HeadersFrame(F(":status", "200")), data);
        for (int cut = 1; cut < wire.Length; cut++)
        {
            if (cut == data.Length)
            {
                continue; // HEADERS alone is a complete, empty response
            }

            Http3ProtocolException e = await Assert.ThrowsAsync<Http3ProtocolException>(() => ReadResponse(wire[..^cut]));
            Assert.Contains(e.ErrorCode, new[] { Http3ErrorCode.FrameError, Http3ErrorCode.RequestIncomplete, Http3ErrorCode.MessageError });
        }
    }

    [Fact]
    public async Task Response_OversizedHeaders_IsExcessiveLoad_WithoutAllocatingClaimedLength()
    {
        // HEADERS claiming 2^62-1 bytes.
        byte[] wire = [0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff];
        Http3ProtocolException e = await Assert.ThrowsAsync<Http3ProtocolException>(() => ReadResponse(wire));
        Assert.Equal(Http3ErrorCode.ExcessiveLoad, e.ErrorCode);
    }

    [Theory]
    [InlineData(Http3FrameType.Settings, (long)Http3ErrorCode.FrameUnexpected)]
    [InlineData(Http3FrameType.Goaway, (long)Http3ErrorCode.FrameUnexpected)]
    [InlineData(Http3FrameType.MaxPushId, (long)Http3ErrorCode.FrameUnexpected)]
    [InlineData(0x02L, (long)Http3ErrorCode.FrameUnexpected)]     // HTTP/2 PRIORITY
    [InlineData(0x09L, (long)Http3ErrorCode.FrameUnexpected)]     // HTTP/2 CONTINUATION
    [InlineData(Http3FrameType.PushPromise, (long)Http3ErrorCode.IdError)]
    public async Task Response_ForbiddenFrameOnRequestStream(long type, long expected)
    {
        byte[] wire = Concat(HeadersFrame(F(":status", "200")), Http3FrameCodec.EncodeFrame(type, [0x00]));
        Http3ProtocolException e = await Assert.ThrowsAsync<Http3ProtocolException>(() => ReadResponse(wire));
        Assert.Equal((Http3ErrorCode)expected, e.ErrorCode);
    }

    [Fact]
    public async Task Response_DataBeforeHeaders_IsFrameUnexpected()
    {
        Http3ProtocolException e = await Assert.ThrowsAsync<Http3ProtocolException>(() => ReadResponse(Http3FrameCodec.EncodeFrame(Http3FrameType.Data, [1])));
        Assert.Equal(Http3ErrorCode.FrameUnexpected, e.ErrorCode);
    }

    [Theory]
    [InlineData("content-length", "4")]     // mismatch with 5 bytes of DATA
    [InlineData("content-length", "x")]
    [InlineData("Content-Type", "a")]       // uppercase name
    [InlineData("transfer-encoding", "chunked")]  // connection-specific (RFC 9114 §4.2)
    [InlineData("te", "gzip")]
    public async Task Response_MalformedMessage_IsMessageError(string name, string value)
    {
        byte[] wire = Concat(HeadersFrame(F(":status", "200"), new(name, value)), Http3FrameCodec.EncodeFrame(Http3FrameType.Data, new byte[5]));
        Http3ProtocolException e = await Assert.ThrowsAsync<Http3ProtocolException>(() => ReadResponse(wire));
        Assert.Equal(Http3ErrorCode.MessageError, e.ErrorCode);
    }

    [Fact]
    public async Task Request_PseudoHeaderRules()
    {
        static Task<List<HeaderField>> Read(params HeaderField[] fields)
            => Http3Server.ReadRequestHeadersAsync(new Http3FrameReader(new MemoryStream(HeadersFrame(fields))), CancellationToken.None);

        List<HeaderField> ok = await Read(F(":method", "GET"), F(":scheme", "https"), F(":authority", "a"), F(":path", "/x"));
        Assert.Equal("/x", Http3Message.Find(ok, ":path"));

        Assert.Equal(Http3ErrorCode.MessageError, (await Assert.ThrowsAsync<Http3ProtocolException>(() => Read(F(":method", "GET"), F(":scheme", "https")))).ErrorCode);
        Assert.Equal(Http3ErrorCode.MessageError, (await Assert.ThrowsAsync<Http3ProtocolException>(() => Read(F("accept", "*/*"), F(":method", "GET"), F(":scheme", "https"), F(":path", "/")))).ErrorCode);
        Assert.Equal(Http3ErrorCode.MessageError, (await Assert.ThrowsAsync<Http3ProtocolException>(() => Read(F(":method", "GET"), F(":method", "GET"), F(":scheme", "https"), F(":path", "/")))).ErrorCode);
        Assert.Equal(Http3ErrorCode.MessageError, (await Assert.ThrowsAsync<Http3ProtocolException>(() => Read(F(":status", "200"), F(":method", "GET"), F(":scheme", "https"), F(":path", "/")))).ErrorCode);
    }
}
