using System.Collections.Concurrent;
using System.Diagnostics.Tracing;
using Microsoft.Diagnostics.NETCore.Client;
using Microsoft.Diagnostics.Tracing;

namespace QuicManaged.Tools.DatagramDumper;

/// <summary>
/// Datagrams from the library's EventSource (System.Net.Quic.Managed, keyword Datagrams: events DatagramSent and
/// DatagramReceived carrying the raw UDP payload), read from a .nettrace file or live from a process by PID through
/// EventPipe (Microsoft.Diagnostics.NETCore.Client). The traced process must have datagram events flowing: they are
/// emitted only while a listener such as this one is attached.
/// </summary>
internal sealed class EventPipeDatagramSource : IDatagramSource
{
    public const string ProviderName = "System.Net.Quic.Managed";
    private const long DatagramsKeyword = 0x1;

    private readonly Func<Stream> _open;
    private readonly Action? _stop;

    private EventPipeDatagramSource(Func<Stream> open, Action? stop)
    {
        _open = open;
        _stop = stop;
    }

    /// <summary>Reads a recorded trace (dotnet-trace collect --providers System.Net.Quic.Managed:0x1:5, or this tool's --record).</summary>
    public static EventPipeDatagramSource FromFile(string path) => new(() => File.OpenRead(path), null);

    /// <summary>Reads a trace held in memory (the fuzz target's entry point).</summary>
    public static EventPipeDatagramSource FromBytes(byte[] trace) => new(() => new MemoryStream(trace, writable: false), null);

    /// <summary>The EventPipe provider spec that turns datagram events on.</summary>
    public static EventPipeProvider Provider => new(ProviderName, EventLevel.Verbose, DatagramsKeyword);

    /// <summary>
    /// Attaches to a running process now (throws ServerNotAvailableException when it has no diagnostics port) and
    /// stops reading after <paramref name="duration"/>.
    /// </summary>
    public static EventPipeDatagramSource FromProcess(int pid, TimeSpan duration)
    {
        var client = new DiagnosticsClient(pid);
        EventPipeSession session = client.StartEventPipeSession(new[] { Provider }, requestRundown: false);
        return new EventPipeDatagramSource(
            () =>
            {
                var timer = new Timer(_ => StopQuietly(session), null, duration, Timeout.InfiniteTimeSpan);
                return new TimerOwningStream(session.EventStream, timer);
            },
            () =>
            {
                StopQuietly(session);
                session.Dispose();
            });
    }

    private static void StopQuietly(EventPipeSession session)
    {
        try
        {
            session.Stop();
        }
        catch (Exception e) when (e is ServerNotAvailableException or TimeoutException or IOException or ObjectDisposedException)
        {
            // The process went away or the session already ended: the trace simply ends.
        }
    }

    public IEnumerable<CapturedDatagram> Read()
    {
        var queue = new BlockingCollection<CapturedDatagram>(boundedCapacity: 10_000);
        Exception? failure = null;
        var reader = new Thread(() =>
        {
            try
            {
                using Stream stream = _open();
                using var source = new EventPipeEventSource(stream);
                source.Dynamic.All += e =>
                {
                    if (e.ProviderName != ProviderName || e.EventName is not ("DatagramSent" or "DatagramReceived")) return;
                    if (e.PayloadByName("data") is not byte[] data) return;
                    bool sent = e.EventName == "DatagramSent";
                    string local = e.PayloadByName("localEndPoint") as string ?? "?";
                    string remote = e.PayloadByName("remoteEndPoint") as string ?? "?";
                    long? timestamp = e.PayloadByName("timestampUs") is long t ? t : null;
                    string connection = e.PayloadByName("connectionId") as string ?? "";
                    queue.Add(new CapturedDatagram(timestamp, sent ? local : remote, sent ? remote : local, data,
                        $"{(sent ? "sent" : "received")} by {connection}"));
                };
                source.Process();
            }
            catch (Exception e) when (e is IOException or EndOfStreamException or InvalidOperationException or FormatException or ServerNotAvailableException)
            {
                failure = e;
            }
            finally
            {
                queue.CompleteAdding();
            }
        })
        { IsBackground = true, Name = "DatagramDumper EventPipe reader" };
        reader.Start();
        foreach (CapturedDatagram datagram in queue.GetConsumingEnumerable()) yield return datagram;
        _stop?.Invoke();
        if (failure is not null) yield return new CapturedDatagram(null, null, null, Array.Empty<byte>(), $"trace ended: {failure.Message}");
    }

    /// <summary>Keeps the session's stop timer alive as long as the stream is read.</summary>
    private sealed class TimerOwningStream(Stream inner, Timer timer) : Stream
    {
        public override bool CanRead => true;
        public override bool CanSeek => false;
        public override bool CanWrite => false;
        public override long Length => throw new NotSupportedException();
        public override long Position { get => throw new NotSupportedException(); set => throw new NotSupportedException(); }
        public override int Read(byte[] buffer, int offset, int count) => inner.Read(buffer, offset, count);
        public override void Flush() { }
        public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();
        public override void SetLength(long value) => throw new NotSupportedException();
        public override void Write(byte[] buffer, int offset, int count) => throw new NotSupportedException();

        protected override void Dispose(bool disposing)
        {
            if (disposing)
            {
                timer.Dispose();
                inner.Dispose();
            }
            base.Dispose(disposing);
        }
    }
}
