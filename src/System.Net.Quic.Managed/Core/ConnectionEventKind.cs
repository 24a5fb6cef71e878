namespace System.Net.Quic.Managed.Core;

/// <summary>What happened on a connection that the layer above (the public API) must learn.</summary>
internal enum ConnectionEventKind : byte
{
    /// <summary>The handshake completed: streams may be used, negotiated parameters are known.</summary>
    HandshakeCompleted,

    /// <summary>The peer opened a stream (<see cref="ConnectionEvent.StreamId"/>): it can be accepted.</summary>
    StreamOpened,

    /// <summary>Data, FIN or a reset arrived on a stream.</summary>
    StreamReadable,

    /// <summary>A stream's send buffer or flow-control credit grew, or its write side ended (acked, reset, stop-sending).</summary>
    StreamWritable,

    /// <summary>The peer allows more streams to be opened (MAX_STREAMS grew).</summary>
    StreamsAvailable,

    /// <summary>Client: 0-RTT keys are ready and the remembered limits applied: streams opened now carry early data (RFC 9001 §4.6.1).</summary>
    EarlyDataReady,

    /// <summary>Client: the server sent a session ticket (<see cref="Connection.TryTakeSessionTicket"/>).</summary>
    SessionTicketReceived,

    /// <summary>DATAGRAM frames arrived (<see cref="Connection.TryDequeueReceivedDatagram"/>); raised again once the queue was emptied.</summary>
    DatagramReceived,

    /// <summary>Queued datagrams were acknowledged, lost or dropped (<see cref="Connection.TryDequeueDatagramOutcome"/>).</summary>
    DatagramOutcome,

    /// <summary>The connection is closed (or closing): <see cref="ConnectionEvent.Error"/> says why.</summary>
    Closed,
}
