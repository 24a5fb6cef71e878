using System.Net.Quic.Managed.Core;
using System.Net.Quic.Managed.Diagnostics;
using System.Net.Quic.Managed.Tests.Diagnostics;
using System.Text.Json;

namespace System.Net.Quic.Managed.Tests.Core;

public class ConnectionQlogTests
{
    [Fact]
    public void ConnectionWritesAValidQlogOfItsWholeLife()
    {
        var stream = new MemoryStream();
        using var pair = new QuicPair(seed: 40, new LinkConditions { DelayUs = 10_000, LossProbability = 0.02 });
        Connection client = pair.Connect();
        client.Tracer = new QlogTracer(new KeepOpenStream(stream), isServer: false, client.OriginalDestinationId.ToString(), pair.Network.NowUs);
        pair.RunUntil(() => client.IsHandshakeComplete && pair.ServerConnection is { IsHandshakeComplete: true });
        var transfer = new StreamTransfer(pair, client, pair.ServerConnection!, 300_000);
        transfer.Run(30_000_000);
        Assert.True(transfer.ReceivedFin);
        client.Close(7, "done", pair.Network.NowUs);
        pair.RunUntil(() => false, 1_000_000);
        client.Tracer = null;

        List<JsonDocument> records = QlogTracerTests.ParseJsonSeq(stream.ToArray());
        QlogTracerTests.AssertValidQlog(records, "client");
        string[] names = records.Skip(1).Select(r => r.RootElement.GetProperty("name").GetString()!).ToArray();
        Assert.Contains("transport:packet_sent", names);
        Assert.Contains("transport:packet_received", names);
        Assert.Contains("recovery:metrics_updated", names);
        Assert.Contains("connectivity:connection_closed", names);
        JsonElement firstSent = records.Skip(1).First(r => r.RootElement.GetProperty("name").GetString() == "transport:packet_sent").RootElement;
        Assert.Equal("initial", firstSent.GetProperty("data").GetProperty("header").GetProperty("packet_type").GetString());
        Assert.Contains(records.Skip(1), r => r.RootElement.GetProperty("name").GetString() == "transport:packet_received"
            && r.RootElement.GetProperty("data").GetProperty("frames").EnumerateArray().Any(f => f.GetProperty("frame_type").GetString() == "handshake_done"));
        Assert.Equal(client.Statistics.PacketsLost, names.Count(n => n == "recovery:packet_lost"));
    }

    private sealed class KeepOpenStream(Stream inner) : Stream
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
