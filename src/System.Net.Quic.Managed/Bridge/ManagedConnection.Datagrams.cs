using System.Collections.Generic;
using System.Net.Quic.Managed.Core;
using System.Threading;
using System.Threading.Channels;
using System.Threading.Tasks;

namespace System.Net.Quic.Managed.Bridge;

/// <summary>
/// DATAGRAM (RFC 9221) on the managed provider. Sends are copied on the app thread and queued on the driver thread; the
/// core reports each one's fate (acknowledged, lost, dropped), which completes its task. Received datagrams move from the
/// core's bounded queue into a bounded channel (drop-oldest, counted) that <see cref="ReceiveDatagramAsync"/> reads.
/// </summary>
internal sealed partial class ManagedConnection
{
    // Driver thread only.
    private readonly Dictionary<long, TaskCompletionSource<QuicDatagramSendResult>> _datagramSends = new();

    private Channel<ReadOnlyMemory<byte>>? _datagramInbound;
    private volatile int _maxDatagramSize;
    private long _datagramsDroppedByChannel;

    private Channel<ReadOnlyMemory<byte>> DatagramInbound
    {
        get
        {
            if (Volatile.Read(ref _datagramInbound) is { } existing) return existing;
            var created = Channel.CreateBounded<ReadOnlyMemory<byte>>(
                new BoundedChannelOptions(_options.DatagramReceiveQueueCapacity) { FullMode = BoundedChannelFullMode.DropOldest, SingleWriter = true },
                _ => Interlocked.Increment(ref _datagramsDroppedByChannel));
            return Interlocked.CompareExchange(ref _datagramInbound, created, null) ?? created;
        }
    }

    public override int MaxDatagramSize => _maxDatagramSize;

    public override ValueTask<QuicDatagramSendResult> SendDatagramAsync(ReadOnlyMemory<byte> datagram, CancellationToken cancellationToken)
    {
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, Owner);
        if (_endException is { } ended) return ValueTask.FromException<QuicDatagramSendResult>(Rethrowable(ended));
        int max = _maxDatagramSize;
        if (max == 0) throw NotNegotiated();
        if (datagram.Length > max)
        {
            throw new ArgumentException($"The datagram is {datagram.Length} bytes; at most {max} (MaxDatagramSize) can be sent on this connection.", nameof(datagram));
        }
        if (cancellationToken.IsCancellationRequested) return ValueTask.FromCanceled<QuicDatagramSendResult>(cancellationToken);
        var request = new DatagramSendRequest(this, datagram.ToArray());
        _host.Post(new DriverCall(static (state, _) => ((DatagramSendRequest)state).Run(), request,
            static state => ((DatagramSendRequest)state).Done.TrySetException(QuicExceptionFactory.OperationAborted("The connection was closed."))));
        Task<QuicDatagramSendResult> task = request.Done.Task;
        return new ValueTask<QuicDatagramSendResult>(cancellationToken.CanBeCanceled ? task.WaitAsync(cancellationToken) : task);
    }

    private static InvalidOperationException NotNegotiated() => new(
        "DATAGRAM is not negotiated on this connection: the peer did not advertise max_datagram_frame_size (RFC 9221), or the handshake has not completed. MaxDatagramSize is 0.");

    public override async ValueTask<ReadOnlyMemory<byte>> ReceiveDatagramAsync(CancellationToken cancellationToken)
    {
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, Owner);
        if (_options.MaxDatagramFrameSize == 0)
        {
            throw new InvalidOperationException("Receiving datagrams needs QuicConnectionOptions.MaxDatagramFrameSize above zero (it advertises max_datagram_frame_size).");
        }
        try
        {
            return await DatagramInbound.Reader.ReadAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (ChannelClosedException)
        {
            ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, Owner);
            throw Rethrowable(_endException);
        }
    }

    /// <summary>Driver thread: queues a datagram in the core, or fails its task at once.</summary>
    private void SendDatagramOnDriver(byte[] data, TaskCompletionSource<QuicDatagramSendResult> done)
    {
        if (IsEnded || _core is null)
        {
            done.TrySetException(Rethrowable(_endException));
            return;
        }
        switch (_core.QueueDatagram(data, out long id))
        {
            case DatagramQueueResult.Queued:
                _datagramSends[id] = done;
                break;
            case DatagramQueueResult.TooLarge:
                done.TrySetException(new ArgumentException($"The datagram is {data.Length} bytes; at most {_core.MaxDatagramPayloadSize} (MaxDatagramSize) can be sent on this connection.", "datagram"));
                break;
            case DatagramQueueResult.NotNegotiated:
                done.TrySetException(NotNegotiated());
                break;
            default:
                done.TrySetException(QuicExceptionFactory.OperationAborted("The connection was closed."));
                break;
        }
    }

    private volatile int _negotiatedVersion = (int)QuicProtocolVersion.Version1;

    public override QuicProtocolVersion NegotiatedProtocolVersion => (QuicProtocolVersion)_negotiatedVersion;

    /// <summary>Driver thread, at the handshake: what the app may send from now on, and the version in use.</summary>
    private void OnDatagramsNegotiated(Connection core)
    {
        _maxDatagramSize = core.MaxDatagramPayloadSize;
        _negotiatedVersion = unchecked((int)core.Version);
    }

    /// <summary>Driver thread: received datagrams go to the app's channel.</summary>
    private void OnDatagramsReceived(Connection core)
    {
        Channel<ReadOnlyMemory<byte>> inbound = DatagramInbound;
        while (core.TryDequeueReceivedDatagram(out byte[] data)) inbound.Writer.TryWrite(data);
    }

    /// <summary>Driver thread: completes the sends whose fate the core learnt.</summary>
    private void OnDatagramOutcomes(Connection core)
    {
        while (core.TryDequeueDatagramOutcome(out DatagramOutcome outcome))
        {
            if (!_datagramSends.Remove(outcome.Id, out TaskCompletionSource<QuicDatagramSendResult>? done)) continue;
            done.TrySetResult(outcome.Outcome switch
            {
                DatagramSendOutcome.Acknowledged => QuicDatagramSendResult.Acknowledged,
                DatagramSendOutcome.Lost => QuicDatagramSendResult.Lost,
                _ => QuicDatagramSendResult.Dropped,
            });
        }
    }

    /// <summary>Driver thread, when the connection ends: sends still waiting fail with its exception; receivers see the end after the queued datagrams.</summary>
    private void EndDatagrams(Exception exception)
    {
        _maxDatagramSize = 0;
        foreach (TaskCompletionSource<QuicDatagramSendResult> done in _datagramSends.Values) done.TrySetException(Rethrowable(exception));
        _datagramSends.Clear();
        DatagramInbound.Writer.TryComplete(exception);
    }

    /// <summary>Driver thread: the datagram counters of the statistics snapshot.</summary>
    private void AddDatagramStatistics(QuicConnectionStatistics statistics, ConnectionStatistics c)
    {
        statistics.DatagramFramesSent = c.DatagramFramesSent;
        statistics.DatagramFramesAcknowledged = c.DatagramFramesAcknowledged;
        statistics.DatagramFramesLost = c.DatagramFramesLost;
        statistics.DatagramsSendDropped = c.DatagramFramesSendDropped;
        statistics.DatagramFramesReceived = c.DatagramFramesReceived;
        statistics.DatagramsReceiveDropped = c.DatagramFramesReceiveDropped + Interlocked.Read(ref _datagramsDroppedByChannel);
    }

    /// <summary>A SendDatagramAsync posted to the driver.</summary>
    private sealed class DatagramSendRequest
    {
        private readonly ManagedConnection _connection;
        private readonly byte[] _data;

        public DatagramSendRequest(ManagedConnection connection, byte[] data)
        {
            _connection = connection;
            _data = data;
        }

        public TaskCompletionSource<QuicDatagramSendResult> Done { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public void Run() => _connection.SendDatagramOnDriver(_data, Done);
    }
}
