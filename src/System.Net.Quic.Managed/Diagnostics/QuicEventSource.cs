using System.Diagnostics.CodeAnalysis;
using System.Diagnostics.Tracing;

namespace System.Net.Quic.Managed.Diagnostics;

/// <summary>
/// The library's EventSource: informational connection and stream events, verbose per-datagram events with the raw
/// bytes (keyword <see cref="Keywords.Datagrams"/>), secrets only for apps that opted in to key logging
/// (keyword <see cref="Keywords.Secrets"/>), and EventCounters readable by <c>dotnet-counters monitor
/// --counters System.Net.Quic.Managed</c>. Every hot-path call checks <see cref="EventSource.IsEnabled()"/> first,
/// so nothing is formatted or allocated when nobody listens.
/// </summary>
[EventSource(Name = SourceName)]
internal sealed class QuicEventSource : EventSource
{
    public const string SourceName = "System.Net.Quic.Managed";

    public static readonly QuicEventSource Log = new();

    /// <summary>Event keywords.</summary>
    public static class Keywords
    {
        public const EventKeywords Datagrams = (EventKeywords)0x1;
        public const EventKeywords Secrets = (EventKeywords)0x2;
    }

    private const int ConnectionStartedId = 1;
    private const int HandshakeCompletedId = 2;
    private const int ConnectionClosedId = 3;
    private const int StreamOpenedId = 4;
    private const int StreamClosedId = 5;
    private const int HandshakeFailedId = 6;
    private const int ProviderValueIgnoredId = 7;
    private const int DatagramSentId = 10;
    private const int DatagramReceivedId = 11;
    private const int SecretId = 12;

    private DiagnosticCounter[]? _counters;

    private QuicEventSource()
        : base(EventSourceSettings.EtwSelfDescribingEventFormat)
    {
    }

    /// <summary>True when someone listens to datagram events.</summary>
    public bool DatagramsEnabled => IsEnabled(EventLevel.Verbose, Keywords.Datagrams);

    /// <summary>True when someone listens to the informational connection and stream events.</summary>
    public bool InformationalEnabled => IsEnabled(EventLevel.Informational, EventKeywords.None);

    /// <summary>True when someone listens at Warning level or above (HandshakeFailed is a warning).</summary>
    public bool WarningsEnabled => IsEnabled(EventLevel.Warning, EventKeywords.None);

    /// <summary>
    /// True when someone asked for <see cref="Keywords.Secrets"/>. The caller still raises <see cref="Secret"/> only
    /// for connections whose application opted in to key logging: a listener alone never exports secrets.
    /// </summary>
    public bool SecretsEnabled => IsEnabled(EventLevel.Verbose, Keywords.Secrets);

    [Event(ConnectionStartedId, Level = EventLevel.Informational)]
    public void ConnectionStarted(string connectionId, bool isServer, string localEndPoint, string remoteEndPoint)
        => WriteEvent(ConnectionStartedId, connectionId, isServer, localEndPoint, remoteEndPoint);

    [Event(HandshakeCompletedId, Level = EventLevel.Informational)]
    public void HandshakeCompleted(string connectionId, long version, string applicationProtocol, string cipherSuite, double durationMs)
        => WriteEvent(HandshakeCompletedId, connectionId, version, applicationProtocol, cipherSuite, durationMs);

    [Event(HandshakeFailedId, Level = EventLevel.Warning)]
    public void HandshakeFailed(string connectionId, long errorCode, string reason)
        => WriteEvent(HandshakeFailedId, connectionId, errorCode, reason);

    /// <summary>DOTNET_SYSTEM_NET_QUIC_PROVIDER or the AppContext switch holds a value that names no provider.</summary>
    [Event(ProviderValueIgnoredId, Level = EventLevel.Warning)]
    public void ProviderValueIgnored(string source, string value, string providerUsed)
        => WriteEvent(ProviderValueIgnoredId, source, value, providerUsed);

    [Event(ConnectionClosedId, Level = EventLevel.Informational)]
    public void ConnectionClosed(string connectionId, long errorCode, bool isApplicationError, bool byPeer, string reason)
        => WriteEvent(ConnectionClosedId, connectionId, errorCode, isApplicationError, byPeer, reason);

    [Event(StreamOpenedId, Level = EventLevel.Informational)]
    public void StreamOpened(string connectionId, long streamId, bool locallyInitiated)
        => WriteEvent(StreamOpenedId, connectionId, streamId, locallyInitiated);

    [Event(StreamClosedId, Level = EventLevel.Informational)]
    public void StreamClosed(string connectionId, long streamId)
        => WriteEvent(StreamClosedId, connectionId, streamId);

    /// <summary>A datagram left. <paramref name="data"/> is the whole UDP payload as sent (protected).</summary>
    [Event(DatagramSentId, Level = EventLevel.Verbose, Keywords = Keywords.Datagrams)]
    public void DatagramSent(string connectionId, string localEndPoint, string remoteEndPoint, long timestampUs, byte[] data)
        => WriteEvent(DatagramSentId, connectionId, localEndPoint, remoteEndPoint, timestampUs, data);

    /// <summary>A datagram arrived. <paramref name="data"/> is the whole UDP payload as received.</summary>
    [Event(DatagramReceivedId, Level = EventLevel.Verbose, Keywords = Keywords.Datagrams)]
    public void DatagramReceived(string connectionId, string localEndPoint, string remoteEndPoint, long timestampUs, byte[] data)
        => WriteEvent(DatagramReceivedId, connectionId, localEndPoint, remoteEndPoint, timestampUs, data);

    /// <summary>
    /// A TLS secret in NSS key log terms (label, client random, secret). Emitted only for connections whose app opted
    /// in to key logging, and only to listeners that asked for <see cref="Keywords.Secrets"/>.
    /// </summary>
    [Event(SecretId, Level = EventLevel.Verbose, Keywords = Keywords.Secrets)]
    public void Secret(string connectionId, string label, byte[] clientRandom, byte[] secret)
        => WriteEvent(SecretId, connectionId, label, clientRandom, secret);

    /// <summary>Hot-path helper: emits a datagram event only when enabled; the caller's span is copied only then.</summary>
    [NonEvent]
    public void OnDatagram(bool sent, string connectionId, ReadOnlySpan<byte> datagram, long timestampUs, string localEndPoint, string remoteEndPoint)
    {
        if (!DatagramsEnabled) return;
        byte[] copy = datagram.ToArray();
        if (sent) DatagramSent(connectionId, localEndPoint, remoteEndPoint, timestampUs, copy);
        else DatagramReceived(connectionId, localEndPoint, remoteEndPoint, timestampUs, copy);
    }

    [UnconditionalSuppressMessage("ReflectionAnalysis", "IL2026", Justification = "Counter payloads are primitives.")]
    protected override void OnEventCommand(EventCommandEventArgs command)
    {
        if (command.Command != EventCommand.Enable || _counters is not null) return;
        _counters = new DiagnosticCounter[]
        {
            new PollingCounter("active-connections", this, () => QuicTelemetryCounters.ActiveConnections) { DisplayName = "Active Connections" },
            new IncrementingPollingCounter("handshakes-per-second", this, () => QuicTelemetryCounters.HandshakesCompleted) { DisplayName = "Handshakes Rate", DisplayRateTimeScale = TimeSpan.FromSeconds(1) },
            new PollingCounter("handshakes-completed", this, () => QuicTelemetryCounters.HandshakesCompleted) { DisplayName = "Handshakes Completed" },
            new PollingCounter("handshake-failures", this, () => QuicTelemetryCounters.HandshakeFailures) { DisplayName = "Handshake Failures" },
            new IncrementingPollingCounter("datagrams-sent-per-second", this, () => QuicTelemetryCounters.DatagramsSent) { DisplayName = "Datagrams Sent Rate", DisplayRateTimeScale = TimeSpan.FromSeconds(1) },
            new IncrementingPollingCounter("datagrams-received-per-second", this, () => QuicTelemetryCounters.DatagramsReceived) { DisplayName = "Datagrams Received Rate", DisplayRateTimeScale = TimeSpan.FromSeconds(1) },
            new IncrementingPollingCounter("bytes-sent-per-second", this, () => QuicTelemetryCounters.BytesSent) { DisplayName = "Bytes Sent Rate", DisplayUnits = "B", DisplayRateTimeScale = TimeSpan.FromSeconds(1) },
            new IncrementingPollingCounter("bytes-received-per-second", this, () => QuicTelemetryCounters.BytesReceived) { DisplayName = "Bytes Received Rate", DisplayUnits = "B", DisplayRateTimeScale = TimeSpan.FromSeconds(1) },
            new PollingCounter("datagrams-sent", this, () => QuicTelemetryCounters.DatagramsSent) { DisplayName = "Datagrams Sent" },
            new PollingCounter("datagrams-received", this, () => QuicTelemetryCounters.DatagramsReceived) { DisplayName = "Datagrams Received" },
            new PollingCounter("packets-lost", this, () => QuicTelemetryCounters.PacketsLost) { DisplayName = "Packets Lost" },
            new PollingCounter("bytes-retransmitted", this, () => QuicTelemetryCounters.BytesRetransmitted) { DisplayName = "Bytes Retransmitted", DisplayUnits = "B" },
            new PollingCounter("smoothed-rtt", this, () => QuicTelemetryCounters.MeanSmoothedRttMs) { DisplayName = "Smoothed RTT (mean of open connections)", DisplayUnits = "ms" },
            new PollingCounter("congestion-window", this, () => QuicTelemetryCounters.MeanCongestionWindow) { DisplayName = "Congestion Window (mean of open connections)", DisplayUnits = "B" },
        };
    }
}
