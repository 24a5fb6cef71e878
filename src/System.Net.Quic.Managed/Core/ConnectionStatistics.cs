namespace System.Net.Quic.Managed.Core;

/// <summary>Per-connection counters (single-threaded, updated by the connection).</summary>
internal sealed class ConnectionStatistics
{
    public long DatagramsSent { get; set; }
    public long DatagramsReceived { get; set; }
    public long BytesSent { get; set; }
    public long BytesReceived { get; set; }
    public long PacketsSent { get; set; }
    public long PacketsReceived { get; set; }
    public long PacketsLost { get; set; }
    public long PacketsDropped { get; set; }
    public long StreamBytesRetransmitted { get; set; }
    public int KeyUpdates { get; set; }
    public long ZeroRttPacketsSent { get; set; }
    public long ZeroRttPacketsReceived { get; set; }

    /// <summary>Client: the server refused our 0-RTT packets; their data went again in 1-RTT (RFC 9001 §4.6.2).</summary>
    public bool ZeroRttRejected { get; set; }

    /// <summary>DATAGRAM frames (RFC 9221) written into packets.</summary>
    public long DatagramFramesSent { get; set; }

    public long DatagramFramesAcknowledged { get; set; }

    public long DatagramFramesLost { get; set; }

    /// <summary>Queued datagrams dropped unsent (send queue full, or they no longer fit).</summary>
    public long DatagramFramesSendDropped { get; set; }

    public long DatagramFramesReceived { get; set; }

    /// <summary>Received datagrams dropped because the receive queue was full.</summary>
    public long DatagramFramesReceiveDropped { get; set; }
}
