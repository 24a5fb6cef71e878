using System.Net.Quic.Managed.Crypto;
using System.Net.Quic.Managed.Recovery;
using System.Net.Quic.Managed.Tls;
using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Core;

/// <summary>Session tickets and 0-RTT (RFC 9001 §4.6, RFC 9000 §7.4.1).</summary>
internal sealed partial class Connection
{
    /// <summary>Tickets kept for the application at once; a server sending more only replaces what was not taken.</summary>
    private const int MaxPendingSessionTickets = 4;

    /// <summary>True while the first flight waits for the application's first request (see <see cref="ConnectionOptions.EarlyDataFirstFlightHoldUs"/>).</summary>
    private bool HoldsFirstFlight(long nowUs)
    {
        if (_earlyData.FirstFlightHoldUntilUs == 0) return false;
        if (nowUs < _earlyData.FirstFlightHoldUntilUs && !_streams.HasSendableLocalBidirectionalStream && _close.Phase == ConnectionPhase.Open) return true;
        _earlyData.FirstFlightHoldUntilUs = 0;
        return false;
    }

    /// <summary>Client: application data written now leaves in 0-RTT packets (keys ready, handshake not complete).</summary>
    public bool CanSendEarlyData => Space(PacketNumberSpace.ApplicationData).SendsZeroRtt;

    /// <summary>Client: the next session ticket received from the server, to resume a later connection.</summary>
    public bool TryTakeSessionTicket(out TlsSessionTicket ticket) => _earlyData.SessionTickets.TryDequeue(out ticket!);

    private void InstallEarlySecret(in HandshakeSecret secret)
    {
        PacketSpaceState app = Space(PacketNumberSpace.ApplicationData);
        if (secret.ForSending)
        {
            // Client: 0-RTT needs the limits the server gave last time; without them nothing could be sent anyway.
            if (IsServer || app.SendPhaseKeys is not null || app.ZeroRttSendKeys is not null || !TryApplyRememberedParameters()) return;
            app.ZeroRttSendKeys = PacketProtectionKeys.Create(secret.Secret, secret.CipherSuite, Version);
            if (_options.EarlyDataFirstFlightHoldUs > 0 && Statistics.DatagramsSent == 0) _earlyData.FirstFlightHoldUntilUs = _startTimeUs + _options.EarlyDataFirstFlightHoldUs;
            Emit(ConnectionEventKind.StreamsAvailable);
            Emit(ConnectionEventKind.EarlyDataReady);
        }
        else
        {
            if (!IsServer || app.ZeroRttReceiveKeys is not null || _handshake.IsConfirmed) return;
            app.ZeroRttReceiveKeys = PacketProtectionKeys.Create(secret.Secret, secret.CipherSuite, Version);
        }
    }

    /// <summary>RFC 9000 §7.4.1: until the handshake gives the real values, 0-RTT is bounded by the remembered ones.</summary>
    private bool TryApplyRememberedParameters()
    {
        if (_options.EarlyDataTransportParameters is not { Length: > 0 } encoded) return false;
        if (TransportParameters.TryDecode(encoded, sentByServer: true, out TransportParameters? remembered, out _) != TransportErrorCode.NoError) return false;
        TransportErrorCode error = _streams.ApplyPeerTransportParameters(ToLong(remembered!.InitialMaxData), ToLong(remembered.InitialMaxStreamDataBidiLocal),
            ToLong(remembered.InitialMaxStreamDataBidiRemote), ToLong(remembered.InitialMaxStreamDataUni),
            ToLong(remembered.InitialMaxStreamsBidi), ToLong(remembered.InitialMaxStreamsUni), out _);
        if (error != TransportErrorCode.NoError) return false;
        _earlyData.RememberedParameters = remembered;
        return true;
    }

    /// <summary>
    /// Client, when the server's transport parameters arrive (its EncryptedExtensions told whether 0-RTT was accepted).
    /// Accepted: RFC 9000 §7.4.1 forbids the server to lower any limit the 0-RTT data may have used. Rejected: RFC 9001
    /// §4.6.2, every 0-RTT packet is treated as lost so its frames go again in 1-RTT packets.
    /// </summary>
    private TransportErrorCode ResolveEarlyData(TransportParameters peer, long nowUs, out string? reason)
    {
        reason = null;
        if (IsServer || _earlyData.RememberedParameters is not { } remembered) return TransportErrorCode.NoError;
        _earlyData.RememberedParameters = null;
        if (_tls.EarlyDataAccepted)
        {
            if (peer.ActiveConnectionIdLimit < remembered.ActiveConnectionIdLimit || peer.InitialMaxData < remembered.InitialMaxData
                || peer.InitialMaxStreamDataBidiLocal < remembered.InitialMaxStreamDataBidiLocal
                || peer.InitialMaxStreamDataBidiRemote < remembered.InitialMaxStreamDataBidiRemote
                || peer.InitialMaxStreamDataUni < remembered.InitialMaxStreamDataUni
                || peer.InitialMaxStreamsBidi < remembered.InitialMaxStreamsBidi || peer.InitialMaxStreamsUni < remembered.InitialMaxStreamsUni)
            {
                reason = "0-RTT accepted with transport parameters below the remembered ones";
                return TransportErrorCode.ProtocolViolation;
            }
            return TransportErrorCode.NoError;
        }
        RejectZeroRttPackets(nowUs);
        Statistics.ZeroRttRejected = _earlyData.LargestZeroRttPacket >= 0;
        Space(PacketNumberSpace.ApplicationData).DiscardZeroRttKeys();
        return TransportErrorCode.NoError;
    }

    /// <summary>The server will never process our 0-RTT packets (0-RTT rejected, or a Retry): their data is resent.</summary>
    private void RejectZeroRttPackets(long nowUs)
    {
        if (_earlyData.LargestZeroRttPacket < 0) return;
        var filter = new ZeroRttPacketFilter(_earlyData.LargestZeroRttPacket);
        var sink = new ConnectionSentPacketSink(this);
        _recovery.RemoveFromFlight(PacketNumberSpace.ApplicationData, ref filter, ref sink, nowUs);
    }

    private void TakeSessionTickets()
    {
        while (_tls.TryTakeSessionTicket(out TlsSessionTicket ticket))
        {
            if (_earlyData.SessionTickets.Count == MaxPendingSessionTickets) _earlyData.SessionTickets.Dequeue();
            _earlyData.SessionTickets.Enqueue(ticket);
            Emit(ConnectionEventKind.SessionTicketReceived);
        }
    }

    /// <summary>Server: a 0-RTT packet (RFC 9001 §4.6.1), opened with the early keys and numbered in the application space.</summary>
    private bool ProcessZeroRttPacket(Span<byte> packet, in LongHeader header, long nowUs)
    {
        if (!IsServer) return false; // RFC 9000 §17.2.3: a client never receives 0-RTT
        PacketSpaceState space = Space(PacketNumberSpace.ApplicationData);
        PacketProtectionKeys? keys = space.ZeroRttReceiveKeys;
        if (keys is null || space.Discarded) return false; // rejected or too late: dropped, the client resends in 1-RTT
        if (!keys.TryRemoveHeaderProtection(packet, header.PacketNumberOffset, out int pnLength, out uint truncated)) return false;
        long pn = PacketNumber.Decode(space.Received.LargestReceived, truncated, pnLength);
        int headerLength = header.PacketNumberOffset + pnLength;
        if (!keys.TryDecrypt(packet, headerLength, (ulong)pn, header.PayloadLength - pnLength, out int plaintextLength))
        {
            Statistics.PacketsDropped++;
            return false;
        }
        if (!PacketFirstByte.ReservedBitsAreZero(packet[0]))
        {
            CloseWithError(TransportErrorCode.ProtocolViolation, "reserved header bits set", nowUs);
            return true;
        }
        Statistics.ZeroRttPacketsReceived++;
        return ProcessPayload(space, PacketType.ZeroRtt, pn, packet.Slice(headerLength, plaintextLength), nowUs);
    }

    /// <summary>Selects the application-space packets sent with 0-RTT keys (all numbered up to the last one).</summary>
    private readonly struct ZeroRttPacketFilter : ISentPacketFilter<SentPacketMeta>
    {
        private readonly long _largest;

        public ZeroRttPacketFilter(long largest) => _largest = largest;

        public bool Matches(in SentPacket<SentPacketMeta> packet) => packet.PacketNumber <= _largest;
    }
}
