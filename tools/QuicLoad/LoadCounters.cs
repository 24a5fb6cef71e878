using System.Collections.Concurrent;
using System.Net.Quic.Managed;

namespace QuicManaged.Tools.QuicLoad;

/// <summary>What a run did so far (updated from many tasks, read by the sampler each second).</summary>
public sealed class LoadCounters
{
    private const int KeptMessages = 10;
    private readonly ConcurrentDictionary<string, int> _failureKinds = new();
    private readonly ConcurrentDictionary<(bool Server, string Operation, Type Type, QuicError? Error), string> _kindNames = new();
    private readonly ConcurrentQueue<string> _messages = new();
    private readonly ConcurrentBag<double> _handshakeMs = [];
    // Stream latencies: a bounded uniform sample (reservoir) so a soak of millions of streams keeps 64K doubles.
    private const int MaxStreamSamples = 1 << 16;
    private readonly double[] _streamMs = new double[MaxStreamSamples];
    private long _streamSamplesSeen;
    private bool _sampleStreams;
    private long _connections;
    private long _streams;
    private long _bytes;
    private long _failures;
    private long _serverFailures;

    /// <summary>Connections whose handshake completed on the client.</summary>
    public long Connections => Interlocked.Read(ref _connections);

    /// <summary>Streams whose response arrived complete and correct.</summary>
    public long Streams => Interlocked.Read(ref _streams);

    /// <summary>Payload bytes moved (requests and responses).</summary>
    public long Bytes => Interlocked.Read(ref _bytes);

    /// <summary>Client-side failures (a connect, stream or close that threw or timed out).</summary>
    public long Failures => Interlocked.Read(ref _failures);

    /// <summary>Server-side failures (a stream the server could not serve, a handshake it refused).</summary>
    public long ServerFailures => Interlocked.Read(ref _serverFailures);

    public IReadOnlyDictionary<string, int> FailureKinds => _failureKinds;

    /// <summary>The first failures' messages.</summary>
    public IReadOnlyCollection<string> FailureMessages => _messages;

    public IReadOnlyCollection<double> HandshakeMilliseconds => _handshakeMs;

    public void Connected(double handshakeMs)
    {
        Interlocked.Increment(ref _connections);
        _handshakeMs.Add(handshakeMs);
    }

    public void StreamDone(long bytes, double milliseconds)
    {
        Interlocked.Increment(ref _streams);
        Interlocked.Add(ref _bytes, bytes);
        if (!Volatile.Read(ref _sampleStreams)) return;
        lock (_streamMs)
        {
            long seen = _streamSamplesSeen++;
            if (seen < MaxStreamSamples) _streamMs[seen] = milliseconds;
            else if (Random.Shared.NextInt64(seen + 1) is var slot && slot < MaxStreamSamples) _streamMs[slot] = milliseconds;
        }
    }

    /// <summary>From now on (the timed window) stream latencies are sampled; earlier ones are forgotten.</summary>
    public void StartStreamSampling()
    {
        lock (_streamMs)
        {
            _streamSamplesSeen = 0;
        }
        Volatile.Write(ref _sampleStreams, true);
    }

    /// <summary>The sampled stream latencies (request written to response complete, ms), sorted.</summary>
    public double[] SortedStreamMilliseconds()
    {
        lock (_streamMs)
        {
            double[] copy = _streamMs.AsSpan(0, (int)Math.Min(_streamSamplesSeen, MaxStreamSamples)).ToArray();
            Array.Sort(copy);
            return copy;
        }
    }

    public void Failure(string operation, Exception e)
    {
        Interlocked.Increment(ref _failures);
        Record(server: false, operation, e);
    }

    public void ServerFailure(string operation, Exception e)
    {
        Interlocked.Increment(ref _serverFailures);
        Record(server: true, operation, e);
    }

    private void Record(bool server, string operation, Exception e)
    {
        // The kind's text is made once per kind: an attack run fails 10,000 streams at once, and the server's garbage
        // then is what the run measures.
        string kind = _kindNames.GetOrAdd((server, operation, e.GetType(), (e as QuicException)?.QuicError),
            static (key, e) => $"{(key.Server ? "server" : "client")} {key.Operation}: {Describe(e)}", e);
        _failureKinds.AddOrUpdate(kind, 1, (_, n) => n + 1);
        if (_messages.Count < KeptMessages) _messages.Enqueue($"{kind}: {e.Message}");
    }

    private static string Describe(Exception e) => e switch
    {
        QuicException q => $"QuicException({q.QuicError})",
        OperationCanceledException => "timeout",
        _ => e.GetType().Name,
    };
}
