using System.Collections.Concurrent;
using System.Net.Quic.Managed;

namespace QuicManaged.Tools.QuicLoad;

/// <summary>What a run did so far (updated from many tasks, read by the sampler each second).</summary>
public sealed class LoadCounters
{
    private const int KeptMessages = 10;
    private readonly ConcurrentDictionary<string, int> _failureKinds = new();
    private readonly ConcurrentQueue<string> _messages = new();
    private readonly ConcurrentBag<double> _handshakeMs = [];
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

    public void StreamDone(long bytes)
    {
        Interlocked.Increment(ref _streams);
        Interlocked.Add(ref _bytes, bytes);
    }

    public void Failure(string operation, Exception e)
    {
        Interlocked.Increment(ref _failures);
        Record("client " + operation, e);
    }

    public void ServerFailure(string operation, Exception e)
    {
        Interlocked.Increment(ref _serverFailures);
        Record("server " + operation, e);
    }

    private void Record(string operation, Exception e)
    {
        string kind = $"{operation}: {Describe(e)}";
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
