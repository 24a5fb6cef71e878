namespace System.Net.Quic.Managed;

/// <summary>
/// Counters of one connection (an extension beyond System.Net.Quic): a snapshot taken on the connection's I/O thread
/// after its latest step, so it lags by at most one step.
/// </summary>
public sealed class QuicConnectionStatistics
{
    internal QuicConnectionStatistics()
    {
    }

    /// <summary>UDP datagrams sent.</summary>
    public long DatagramsSent { get; internal set; }

    /// <summary>UDP datagrams received.</summary>
    public long DatagramsReceived { get; internal set; }

    /// <summary>UDP payload bytes sent.</summary>
    public long BytesSent { get; internal set; }

    /// <summary>UDP payload bytes received.</summary>
    public long BytesReceived { get; internal set; }

    /// <summary>QUIC packets sent.</summary>
    public long PacketsSent { get; internal set; }

    /// <summary>QUIC packets received and processed.</summary>
    public long PacketsReceived { get; internal set; }

    /// <summary>Packets declared lost (RFC 9002 §6).</summary>
    public long PacketsLost { get; internal set; }

    /// <summary>Stream bytes sent again after a loss.</summary>
    public long StreamBytesRetransmitted { get; internal set; }

    /// <summary>The smoothed round-trip time (RFC 9002 §5.3); zero before the first sample.</summary>
    public TimeSpan SmoothedRtt { get; internal set; }

    /// <summary>The congestion window in bytes (RFC 9002 §7).</summary>
    public long CongestionWindow { get; internal set; }

    /// <summary>
    /// Key updates (RFC 9001 §6) on this connection: those this side started (<see cref="QuicConnection.UpdateKeysAsync"/>)
    /// and those the peer started, which this side answered.
    /// </summary>
    public int KeyUpdates { get; internal set; }

    /// <summary>
    /// True when the handshake went through a Retry (RFC 9000 §8.1.2): on a client, the server sent one; on a server,
    /// the listener required one (<see cref="QuicListenerOptions.RequireRetry"/>) and the client came back with its token.
    /// </summary>
    public bool Retried { get; internal set; }

    /// <summary>DATAGRAM frames (RFC 9221) sent: <see cref="QuicConnection.SendDatagramAsync"/> payloads written into packets.</summary>
    public long DatagramFramesSent { get; internal set; }

    /// <summary>Sent DATAGRAM frames whose packet the peer acknowledged.</summary>
    public long DatagramFramesAcknowledged { get; internal set; }

    /// <summary>Sent DATAGRAM frames whose packet was declared lost (never retransmitted).</summary>
    public long DatagramFramesLost { get; internal set; }

    /// <summary>Datagrams dropped before being sent (the send queue was full).</summary>
    public long DatagramsSendDropped { get; internal set; }

    /// <summary>DATAGRAM frames received from the peer.</summary>
    public long DatagramFramesReceived { get; internal set; }

    /// <summary>1-RTT packets received in datagrams marked ECT(0) (RFC 9000 §13.4.1): reported to the peer in ACK_ECN frames.</summary>
    public long EcnEct0PacketsReceived { get; internal set; }

    /// <summary>1-RTT packets received in datagrams marked CE (congestion experienced).</summary>
    public long EcnCePacketsReceived { get; internal set; }

    /// <summary>The peer's latest ECT(0) count for our 1-RTT packets (its ACK_ECN frames): our marks it saw.</summary>
    public long EcnEct0PacketsReportedByPeer { get; internal set; }

    /// <summary>The peer's latest CE count for our 1-RTT packets; each increase is a congestion signal (RFC 9002 §7.1).</summary>
    public long EcnCePacketsReportedByPeer { get; internal set; }

    /// <summary>True when ECN validation (RFC 9000 §13.4.2) succeeded on the current path: datagrams are sent ECT(0).</summary>
    public bool EcnValidated { get; internal set; }

    /// <summary>The largest UDP payload the connection sends now: raised by path MTU discovery (RFC 8899), 1,200 after a black hole.</summary>
    public int PathMaxDatagramSize { get; internal set; }

    /// <summary>Received datagrams dropped because <see cref="QuicConnectionOptions.DatagramReceiveQueueCapacity"/> were already waiting.</summary>
    public long DatagramsReceiveDropped { get; internal set; }
}
