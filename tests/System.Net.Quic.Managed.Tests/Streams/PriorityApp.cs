using System.Net.Quic.Managed.Core;
using System.Net.Quic.Managed.Streams;

namespace System.Net.Quic.Managed.Tests.Streams;

/// <summary>
/// Drives several streams from the client to the server of a <see cref="QuicPair"/>: each flow writes a per-stream
/// byte pattern up to a target that the test raises over time (messages), the server reads every stream as data
/// arrives and checks every byte. Records, per flow, when data arrived and what the sender had sent.
/// </summary>
internal sealed class PriorityApp
{
    private readonly QuicPair _pair;
    private readonly byte[] _chunk = new byte[16 * 1024];
    private readonly byte[] _read = new byte[64 * 1024];
    private readonly HashSet<long> _opened = new();

    public PriorityApp(QuicPair pair)
    {
        _pair = pair;
        Sender = pair.ClientConnection!;
        Receiver = pair.ServerConnection!;
    }

    public Connection Sender { get; }
    public Connection Receiver { get; }
    public List<Flow> Flows { get; } = new();
    public long NowUs => _pair.Network.NowUs;

    /// <summary>Called once per step after writing and reading (the test's schedule: new messages, priority changes).</summary>
    public Action<PriorityApp>? OnStep { get; set; }

    public static byte Pattern(long streamId, long offset) => (byte)(offset * 7 + (offset >> 11) + streamId * 13);

    public Flow Open(long bytes, int urgency = StreamTable.DefaultUrgency, bool incremental = StreamTable.DefaultIncremental, bool fin = true)
    {
        Assert.True(Sender.TryOpenStream(unidirectional: false, out long id));
        Assert.True(Sender.SetStreamPriority(id, urgency, incremental));
        var flow = new Flow(id) { Target = bytes, FinRequested = fin };
        Flows.Add(flow);
        return flow;
    }

    /// <summary>Sender-side: the highest offset of new data sent on the flow's stream.</summary>
    public long SentOffset(Flow flow)
        => Sender.Streams.TryGetStream(flow.Id, out TransportStream? s) && s.Send is not null ? s.Send.Buffer.MaxSentOffset : flow.Target;

    public bool AllDone => Flows.TrueForAll(f => f.Done);

    public bool Step()
    {
        foreach (Flow f in Flows)
        {
            while (f.Written < f.Target || (f.FinRequested && !f.FinWritten))
            {
                int n = (int)Math.Min(_chunk.Length, f.Target - f.Written);
                for (int i = 0; i < n; i++) _chunk[i] = Pattern(f.Id, f.Written + i);
                bool fin = f.FinRequested && f.Written + n == f.Target;
                int accepted = Sender.WriteStream(f.Id, _chunk.AsSpan(0, n), fin);
                f.Written += accepted;
                if (fin && accepted == n) f.FinWritten = true;
                if (accepted < n || accepted == 0) break;
            }
        }
        while (Receiver.TryDequeueEvent(out ConnectionEvent e))
        {
            if (e.Kind == ConnectionEventKind.StreamOpened) _opened.Add(e.StreamId);
        }
        foreach (Flow f in Flows)
        {
            while (!f.Done && _opened.Contains(f.Id))
            {
                int n = Receiver.ReadStream(f.Id, _read, out bool fin, out bool reset, out _);
                for (int i = 0; i < n; i++)
                {
                    if (_read[i] != Pattern(f.Id, f.Received + i)) f.Corrupted = true;
                }
                if (n > 0 && f.FirstByteUs < 0) f.FirstByteUs = NowUs;
                f.Received += n;
                if (fin || reset)
                {
                    f.ReceivedFin = fin && !reset;
                    f.ResetReceived = reset;
                    f.Corrupted |= reset || f.Received != f.Target;
                    f.DoneUs = NowUs;
                }
                if (n == 0) break;
            }
        }
        OnStep?.Invoke(this);
        _pair.Network.PollAll();
        return AllDone;
    }

    internal sealed class Flow(long id)
    {
        public long Id { get; } = id;
        public long Target { get; set; }
        public bool FinRequested { get; set; }
        public long Written { get; set; }
        public bool FinWritten { get; set; }
        public long Received { get; set; }
        public bool ReceivedFin { get; set; }
        public bool Corrupted { get; set; }
        public bool ResetReceived { get; set; }
        public long FirstByteUs { get; set; } = -1;
        public long DoneUs { get; set; } = -1;
        public bool Done => ReceivedFin || Corrupted;
        public bool Intact => ReceivedFin && !Corrupted && Received == Target;
    }
}
