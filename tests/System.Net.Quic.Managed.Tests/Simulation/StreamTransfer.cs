using System.Net.Quic.Managed.Core;

namespace System.Net.Quic.Managed.Tests.Simulation;

/// <summary>
/// Drives an application on both connections of a <see cref="QuicPair"/>: the sender writes a deterministic byte pattern
/// on one stream as fast as the stream accepts it; the receiver reads everything and checks every byte.
/// </summary>
internal sealed class StreamTransfer
{
    private readonly QuicPair _pair;
    private readonly Connection _sender;
    private readonly Connection _receiver;
    private readonly long _total;
    private readonly byte[] _chunk = new byte[16 * 1024];
    private readonly byte[] _read = new byte[64 * 1024];
    private long _streamId = -1;
    private long _peerStreamId = -1;
    private long _written;
    private bool _finWritten;

    public StreamTransfer(QuicPair pair, Connection sender, Connection receiver, long totalBytes, int readLimitPerStep = int.MaxValue)
    {
        _pair = pair;
        _sender = sender;
        _receiver = receiver;
        _total = totalBytes;
        ReadLimitPerStep = readLimitPerStep;
    }

    public long Received { get; private set; }
    public bool ReceivedFin { get; private set; }
    public bool Corrupted { get; private set; }
    public long StartUs { get; private set; } = -1;
    public long EndUs { get; private set; }
    public int ReadLimitPerStep { get; set; }
    public bool Done => ReceivedFin || Corrupted;

    public static byte Pattern(long offset) => (byte)(offset * 7 + (offset >> 11));

    /// <summary>One application step: write what fits, read what arrived. Returns true when the transfer finished.</summary>
    public bool Step()
    {
        if (_streamId < 0)
        {
            if (!_sender.TryOpenStream(unidirectional: false, out _streamId)) return false;
            StartUs = _pair.Network.NowUs;
        }
        while (!_finWritten)
        {
            int n = (int)Math.Min(_chunk.Length, _total - _written);
            for (int i = 0; i < n; i++) _chunk[i] = Pattern(_written + i);
            bool fin = _written + n == _total;
            int accepted = _sender.WriteStream(_streamId, _chunk.AsSpan(0, n), fin);
            _written += accepted;
            if (fin && accepted == n) _finWritten = true;
            if (accepted < n || accepted == 0) break;
        }
        while (_receiver.TryDequeueEvent(out ConnectionEvent e))
        {
            if (e.Kind == ConnectionEventKind.StreamOpened && _peerStreamId < 0) _peerStreamId = e.StreamId;
        }
        int budget = ReadLimitPerStep;
        while (_peerStreamId >= 0 && budget > 0 && !ReceivedFin)
        {
            int n = _receiver.ReadStream(_peerStreamId, _read.AsSpan(0, Math.Min(_read.Length, budget)), out bool fin, out bool reset, out _);
            for (int i = 0; i < n; i++)
            {
                if (_read[i] != Pattern(Received + i)) Corrupted = true;
            }
            Received += n;
            budget -= n;
            if (fin || reset)
            {
                ReceivedFin = fin && Received == _total;
                Corrupted |= reset || Received != _total;
                EndUs = _pair.Network.NowUs;
            }
            if (n == 0) break;
        }
        _pair.Network.PollAll();
        return Done;
    }

    public SimRunResult Run(long maxDurationUs) => _pair.RunUntil(Step, maxDurationUs);

    /// <summary>Application goodput over the transfer, bits per second of virtual time.</summary>
    public double GoodputBitsPerSecond => EndUs > StartUs ? _total * 8.0 / ((EndUs - StartUs) / 1e6) : 0;
}
