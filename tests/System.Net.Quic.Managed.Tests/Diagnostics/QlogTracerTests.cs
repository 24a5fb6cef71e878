using System.Net.Quic.Managed.Diagnostics;
using System.Text;
using System.Text.Json;

namespace System.Net.Quic.Managed.Tests.Diagnostics;

public class QlogTracerTests
{
    /// <summary>Splits JSON-SEQ (RFC 7464): every record starts with 0x1E and ends with LF; each must parse as JSON.</summary>
    internal static List<JsonDocument> ParseJsonSeq(byte[] bytes)
    {
        var records = new List<JsonDocument>();
        string text = Encoding.UTF8.GetString(bytes);
        Assert.StartsWith("\u001e", text);
        foreach (string record in text.Split('\u001e', StringSplitOptions.RemoveEmptyEntries))
        {
            Assert.EndsWith("\n", record);
            records.Add(JsonDocument.Parse(record));
        }
        return records;
    }

    /// <summary>The qlog schema's required fields: a header record, then events with time, name and data.</summary>
    internal static void AssertValidQlog(List<JsonDocument> records, string vantage)
    {
        JsonElement header = records[0].RootElement;
        Assert.Equal("0.3", header.GetProperty("qlog_version").GetString());
        Assert.Equal("JSON-SEQ", header.GetProperty("qlog_format").GetString());
        JsonElement trace = header.GetProperty("trace");
        Assert.Equal(vantage, trace.GetProperty("vantage_point").GetProperty("type").GetString());
        Assert.Equal("relative", trace.GetProperty("common_fields").GetProperty("time_format").GetString());
        double last = 0;
        foreach (JsonDocument record in records.Skip(1))
        {
            JsonElement e = record.RootElement;
            double time = e.GetProperty("time").GetDouble();
            Assert.True(time >= last, "event times must not go backwards");
            last = time;
            Assert.Contains(":", e.GetProperty("name").GetString());
            Assert.Equal(JsonValueKind.Object, e.GetProperty("data").ValueKind);
        }
    }

    [Fact]
    public void WritesAValidJsonSeqTrace()
    {
        var stream = new MemoryStream();
        using (var tracer = new QlogTracer(new NonClosingStream(stream), isServer: false, "8394c8f03e515708", startUs: 1_000_000))
        {
            tracer.PacketSent(1_000_000, "initial", 0, 1200, new ulong[] { 0x06, 0x00 });
            tracer.PacketReceived(1_020_500, "initial", 0, 1200, new ulong[] { 0x02, 0x06 });
            tracer.MetricsUpdated(1_020_500, 20_500, 20_500, 14_720, 0);
            tracer.PacketLost(1_500_000, "1RTT", 7);
            tracer.KeyUpdated(2_000_000, 1);
            tracer.ConnectionClosed(3_000_000, byPeer: true, application: true, 0x101, "bye");
        }
        List<JsonDocument> records = ParseJsonSeq(stream.ToArray());
        Assert.Equal(7, records.Count);
        AssertValidQlog(records, "client");
        JsonElement sent = records[1].RootElement;
        Assert.Equal("transport:packet_sent", sent.GetProperty("name").GetString());
        Assert.Equal(0.0, sent.GetProperty("time").GetDouble());
        Assert.Equal("initial", sent.GetProperty("data").GetProperty("header").GetProperty("packet_type").GetString());
        Assert.Equal("crypto", sent.GetProperty("data").GetProperty("frames")[0].GetProperty("frame_type").GetString());
        Assert.Equal(20.5, records[2].RootElement.GetProperty("time").GetDouble());
        Assert.Equal(257, records[6].RootElement.GetProperty("data").GetProperty("application_code").GetInt32());
    }

    [Theory]
    [InlineData(0x08UL, "stream")]
    [InlineData(0x0fUL, "stream")]
    [InlineData(0x1dUL, "connection_close")]
    [InlineData(0x31UL, "datagram")]
    [InlineData(0x99UL, "unknown")]
    public void FrameTypeNamesFollowTheQlogSchema(ulong type, string name) => Assert.Equal(name, QlogTracer.FrameTypeName(type));

    [Fact]
    public void CreateUsesTheQlogDirConvention()
    {
        string dir = Path.Combine(Path.GetTempPath(), "qlog-" + Guid.NewGuid().ToString("N"));
        try
        {
            using (QlogTracer tracer = QlogTracer.Create(dir, isServer: true, "abcd", 0)) tracer.PacketSent(5, "handshake", 1, 100, new ulong[] { 6 });
            string file = Assert.Single(Directory.GetFiles(dir));
            Assert.EndsWith("abcd_server.sqlog", file);
            AssertValidQlog(ParseJsonSeq(File.ReadAllBytes(file)), "server");
        }
        finally
        {
            Directory.Delete(dir, recursive: true);
        }
    }

    private sealed class NonClosingStream(Stream inner) : Stream
    {
        public override bool CanRead => false;
        public override bool CanSeek => false;
        public override bool CanWrite => true;
        public override long Length => inner.Length;
        public override long Position { get => inner.Position; set => inner.Position = value; }
        public override void Flush() => inner.Flush();
        public override int Read(byte[] buffer, int offset, int count) => throw new NotSupportedException();
        public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();
        public override void SetLength(long value) => throw new NotSupportedException();
        public override void Write(byte[] buffer, int offset, int count) => inner.Write(buffer, offset, count);
        public override void Write(ReadOnlySpan<byte> buffer) => inner.Write(buffer);
        public override void WriteByte(byte value) => inner.WriteByte(value);
    }
}
