using System.Net.Quic.Managed.Diagnostics;
using System.Net.Quic.Managed.Recovery;
using System.Net.Quic.Managed.Tls;
using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Core;

internal sealed partial class Connection
{
    /// <summary>
    /// The connection ID that names this connection in EventSource events: our initial Source Connection ID in hex, the
    /// same text the endpoint's datagram events carry, so a listener can join them. Made only once someone listens.
    /// </summary>
    internal string EventConnectionId => _trace.EventConnectionId ??= _initialSourceId.ToString();

    /// <summary>The endpoint created this connection: ConnectionStarted with both addresses (when someone listens).</summary>
    internal void TraceStarted(string localEndPoint)
    {
        if (!QuicEventSource.Log.InformationalEnabled) return;
        QuicEventSource.Log.ConnectionStarted(EventConnectionId, IsServer, localEndPoint, _path.Remote.ToString());
    }

    /// <summary>
    /// The handshake ended without completing (error, peer close, idle or handshake timeout): counts it for the
    /// handshake-failures counter and raises HandshakeFailed. Call after <see cref="Error"/> is set.
    /// </summary>
    private void OnHandshakeFailed()
    {
        QuicTelemetryCounters.HandshakeFailed();
        if (!QuicEventSource.Log.WarningsEnabled) return;
        QuicEventSource.Log.HandshakeFailed(EventConnectionId, Error is null ? 0 : (long)Error.Code, Error?.Reason ?? Error?.Source.ToString() ?? "");
    }

    private void TraceStreamOpened(long streamId, bool locallyInitiated)
    {
        if (QuicEventSource.Log.InformationalEnabled) QuicEventSource.Log.StreamOpened(EventConnectionId, streamId, locallyInitiated);
    }

    private void TraceStreamClosed(long streamId)
    {
        if (QuicEventSource.Log.InformationalEnabled) QuicEventSource.Log.StreamClosed(EventConnectionId, streamId);
    }

    /// <summary>
    /// A traffic secret became known: the Secret event, only when a listener asked for secrets AND the application opted
    /// in to key logging (the handshake then exposes its client random, which keys NSS key log lines).
    /// </summary>
    private void TraceSecret(in HandshakeSecret secret)
    {
        if (!QuicEventSource.Log.SecretsEnabled || _tls.KeyLogClientRandom is not { } clientRandom) return;
        // HandshakeSecret says send/receive; NSS labels say client/server (RFC 8446 §7.1 names).
        bool clientSecret = secret.ForSending != IsServer;
        // Copies: an in-process EventListener receives the arrays themselves, and installing the keys wipes the secret.
        QuicEventSource.Log.Secret(EventConnectionId, NssKeyLog.Label(secret.Level, clientSecret), clientRandom.AsSpan().ToArray(), secret.Secret.AsSpan().ToArray());
    }

    private static string QlogPacketType(PacketNumberSpace space) => space switch
    {
        PacketNumberSpace.Initial => "initial",
        PacketNumberSpace.Handshake => "handshake",
        _ => "1RTT",
    };

    private static string QlogPacketType(PacketType type) => type switch
    {
        PacketType.Initial => "initial",
        PacketType.Handshake => "handshake",
        PacketType.ZeroRtt => "0RTT",
        _ => "1RTT",
    };

    private void TracePacketSent(string packetType, long pn, int length, SentFrames frames, long nowUs)
    {
        _trace.LastEventUs = nowUs;
        Span<ulong> types = stackalloc ulong[64];
        int count = frames.GetFrameTypes(types);
        _trace.Tracer!.PacketSent(nowUs, packetType, pn, length, types.Slice(0, count));
        ICongestionController cc = _recovery.CongestionController;
        _trace.Tracer.MetricsUpdated(nowUs, _recovery.Rtt.SmoothedRttUs, _recovery.Rtt.LatestRttUs, cc.CongestionWindow, cc.BytesInFlight);
    }

    private void TracePacketReceived(PacketType type, long pn, int length, long nowUs)
    {
        _trace.LastEventUs = nowUs;
        _trace.Tracer!.PacketReceived(nowUs, QlogPacketType(type), pn, length, System.Runtime.InteropServices.CollectionsMarshal.AsSpan(_trace.FrameTypes));
    }
}
