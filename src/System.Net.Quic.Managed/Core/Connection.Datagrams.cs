using System.Net.Quic.Managed.Crypto;
using System.Net.Quic.Managed.Ids;
using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Core;

/// <summary>
/// Unreliable datagrams (RFC 9221). Outgoing datagrams wait in a bounded queue (the oldest is dropped when it is full)
/// and go out in 1-RTT packets, which are congestion controlled and paced like any other; a DATAGRAM frame is never
/// retransmitted (§5.2): the packet carrying it being acknowledged or declared lost is reported back
/// (<see cref="TryDequeueDatagramOutcome"/>). Packets alternate which goes first, datagrams or stream data, so neither
/// starves the other. Incoming datagrams wait in a bounded queue too (the oldest is dropped and counted).
/// </summary>
internal sealed partial class Connection
{
    /// <summary>Most datagrams waiting to be sent; beyond it the oldest is dropped (reported as <see cref="DatagramSendOutcome.Dropped"/>).</summary>
    public const int MaxQueuedOutgoingDatagrams = 256;

    /// <summary>
    /// Largest datagram payload <see cref="QueueDatagram"/> accepts now: 0 until the handshake completed or when the
    /// peer did not advertise max_datagram_frame_size (RFC 9221 §3); otherwise what fits in one DATAGRAM frame within the
    /// peer's limit and in one 1-RTT packet of the current datagram size (worst-case header: 20-byte connection ID,
    /// 4-byte packet number), so the value does not change with the connection ID in use.
    /// </summary>
    public int MaxDatagramPayloadSize
    {
        get
        {
            if (!_handshake.IsCompleted || PeerParameters?.MaxDatagramFrameSize is not ulong peerMax || peerMax == 0) return 0;
            int packetRoom = _path.MaxDatagramSize - 1 - ConnectionId.MaxLength - 4 - PacketProtectionKeys.TagLength;
            int frameRoom = (int)Math.Min(peerMax, (ulong)packetRoom);
            int payload = frameRoom - 1 - VariableLengthInteger.GetEncodedLength((ulong)frameRoom);
            return Math.Max(0, payload);
        }
    }

    /// <summary>True when we advertised max_datagram_frame_size: the peer may send DATAGRAM frames.</summary>
    public bool AcceptsDatagrams => _options.MaxDatagramFrameSize > 0;

    /// <summary>
    /// Queues one datagram (the array is kept, not copied). On <see cref="DatagramQueueResult.Queued"/>,
    /// <paramref name="id"/> names it in the outcome reported later.
    /// </summary>
    public DatagramQueueResult QueueDatagram(byte[] data, out long id)
    {
        RequestService();
        id = -1;
        if (_close.Phase != ConnectionPhase.Open) return DatagramQueueResult.Closed;
        int max = MaxDatagramPayloadSize;
        if (max == 0) return DatagramQueueResult.NotNegotiated;
        if (data.Length > max) return DatagramQueueResult.TooLarge;
        if (_datagrams.ToSend.Count >= MaxQueuedOutgoingDatagrams)
        {
            (long oldest, _) = _datagrams.ToSend.Dequeue();
            ReportDatagramOutcome(oldest, DatagramSendOutcome.Dropped);
        }
        id = _datagrams.NextId++;
        _datagrams.ToSend.Enqueue((id, data));
        return DatagramQueueResult.Queued;
    }

    /// <summary>Takes the oldest received datagram. The DatagramReceived event is raised again once the queue was emptied.</summary>
    public bool TryDequeueReceivedDatagram(out byte[] data)
    {
        if (_datagrams.Received.TryDequeue(out data!)) return true;
        _datagrams.ReceivedEventPending = false;
        return false;
    }

    /// <summary>Takes the next known fate of a queued datagram (acknowledged, lost, or dropped unsent).</summary>
    public bool TryDequeueDatagramOutcome(out DatagramOutcome outcome)
    {
        if (_datagrams.Outcomes.TryDequeue(out outcome)) return true;
        _datagrams.OutcomeEventPending = false;
        return false;
    }

    /// <summary>Datagrams waiting to be sent.</summary>
    internal int QueuedDatagramCount => _datagrams.ToSend.Count;

    private bool HasDatagramsToSend => _datagrams.ToSend.Count > 0 && _handshake.IsCompleted;

    /// <summary>A received DATAGRAM frame; the frame handler has already refused one sent without our max_datagram_frame_size.</summary>
    private TransportErrorCode ProcessDatagramFrame(in DatagramFrame frame, out string? reason)
    {
        reason = null;
        // RFC 9221 §3: a frame larger than we advertised (type, length and payload) is a PROTOCOL_VIOLATION.
        if ((ulong)frame.EncodedLength > _options.MaxDatagramFrameSize) return Violation("DATAGRAM frame larger than max_datagram_frame_size", out reason);
        if (_datagrams.Received.Count >= _options.DatagramReceiveQueueCapacity)
        {
            _datagrams.Received.Dequeue();
            Statistics.DatagramFramesReceiveDropped++;
        }
        _datagrams.Received.Enqueue(frame.Data.ToArray());
        Statistics.DatagramFramesReceived++;
        if (!_datagrams.ReceivedEventPending)
        {
            _datagrams.ReceivedEventPending = true;
            Emit(ConnectionEventKind.DatagramReceived);
        }
        return TransportErrorCode.NoError;
    }

    /// <summary>
    /// Stream and datagram data of one 1-RTT packet. With both waiting, packets alternate which is written first, so a
    /// bulk stream cannot starve datagrams and a datagram flood cannot starve streams; the second fills what is left.
    /// </summary>
    private bool WriteApplicationData(ref QuicWriter writer, SentFrames frames, bool zeroRtt, long nowUs)
    {
        if (zeroRtt || !HasDatagramsToSend) return WriteStreamFrames(ref writer, frames, nowUs);
        bool datagramsFirst = _datagrams.First;
        _datagrams.First = !datagramsFirst;
        bool wrote = datagramsFirst ? WriteDatagramFrames(ref writer, frames) : WriteStreamFrames(ref writer, frames, nowUs);
        wrote |= datagramsFirst ? WriteStreamFrames(ref writer, frames, nowUs) : WriteDatagramFrames(ref writer, frames);
        return wrote;
    }

    private bool WriteDatagramFrames(ref QuicWriter writer, SentFrames frames)
    {
        bool wrote = false;
        while (_datagrams.ToSend.TryPeek(out (long Id, byte[] Data) next))
        {
            int length = DatagramFrame.GetEncodedLength(next.Data.Length, hasLength: true);
            if (length > writer.Remaining)
            {
                // The packet is full; unless it can never fit (the datagram size shrank), it waits for the next one.
                if (next.Data.Length <= MaxDatagramPayloadSize) break;
                _datagrams.ToSend.Dequeue();
                ReportDatagramOutcome(next.Id, DatagramSendOutcome.Dropped);
                continue;
            }
            new DatagramFrame(next.Data, hasLength: true).TryWrite(ref writer);
            _datagrams.ToSend.Dequeue();
            frames.AddDatagram(next.Id);
            Statistics.DatagramFramesSent++;
            wrote = true;
        }
        return wrote;
    }

    private void OnDatagramsAcked(ReadOnlySpan<long> ids)
    {
        foreach (long id in ids)
        {
            Statistics.DatagramFramesAcknowledged++;
            ReportDatagramOutcome(id, DatagramSendOutcome.Acknowledged);
        }
    }

    /// <summary>RFC 9221 §5.2: a lost DATAGRAM frame is not retransmitted; the loss is only reported.</summary>
    private void OnDatagramsLost(ReadOnlySpan<long> ids)
    {
        foreach (long id in ids)
        {
            Statistics.DatagramFramesLost++;
            ReportDatagramOutcome(id, DatagramSendOutcome.Lost);
        }
    }

    private void ReportDatagramOutcome(long id, DatagramSendOutcome outcome)
    {
        if (outcome == DatagramSendOutcome.Dropped) Statistics.DatagramFramesSendDropped++;
        _datagrams.Outcomes.Enqueue(new DatagramOutcome(id, outcome));
        if (!_datagrams.OutcomeEventPending)
        {
            _datagrams.OutcomeEventPending = true;
            Emit(ConnectionEventKind.DatagramOutcome);
        }
    }
}

/// <summary>What <see cref="Connection.QueueDatagram"/> did.</summary>
internal enum DatagramQueueResult : byte
{
    Queued,

    /// <summary>The handshake has not completed, or the peer did not advertise max_datagram_frame_size.</summary>
    NotNegotiated,

    /// <summary>Larger than <see cref="Connection.MaxDatagramPayloadSize"/>.</summary>
    TooLarge,

    /// <summary>The connection is closing or closed.</summary>
    Closed,
}

/// <summary>The fate of a queued datagram.</summary>
internal enum DatagramSendOutcome : byte
{
    Acknowledged,
    Lost,
    Dropped,
}

/// <summary>The fate of the datagram <see cref="Id"/> (from <see cref="Connection.QueueDatagram"/>).</summary>
internal readonly record struct DatagramOutcome(long Id, DatagramSendOutcome Outcome);
