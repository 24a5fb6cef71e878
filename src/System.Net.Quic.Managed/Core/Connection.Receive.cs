using System.Net.Quic.Managed.Crypto;
using System.Net.Quic.Managed.Diagnostics;
using System.Net.Quic.Managed.Ids;
using System.Net.Quic.Managed.Recovery;
using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Core;

internal sealed partial class Connection
{
    /// <summary>
    /// A datagram for this connection arrived (the endpoint routed it by connection ID). Each coalesced packet is
    /// opened and processed in turn (RFC 9000 §12.2); packets that cannot be opened are dropped, never fatal.
    /// </summary>
    public void Receive(Span<byte> datagram, in NetworkAddress remote, long nowUs)
    {
        if (_close.Phase is ConnectionPhase.Closed or ConnectionPhase.Draining) return;
        _trace.LastEventUs = nowUs;
        _receivingDatagramLength = datagram.Length;
        Statistics.DatagramsReceived++;
        Statistics.BytesReceived += datagram.Length;
        QuicTelemetryCounters.DatagramReceived(datagram.Length);
        if (!_path.Amplification.IsAddressValidated)
        {
            _path.Amplification.OnDatagramReceived(datagram.Length);
            _recovery.SetAmplificationLimited(false, nowUs);
        }

        bool anyProcessed = false;
        int offset = 0;
        while (offset < datagram.Length)
        {
            Span<byte> rest = datagram.Slice(offset);
            int consumed;
            if (PacketFirstByte.IsLongHeader(rest[0]))
            {
                if (!LongHeader.TryParse(rest, out LongHeader header, AcceptsGreasedFixedBit)) break; // RFC 9000 §12.2: drop the rest of a malformed datagram
                consumed = header.TotalLength;
                anyProcessed |= ProcessLongHeaderPacket(rest.Slice(0, consumed), header, remote, nowUs);
            }
            else
            {
                consumed = rest.Length;
                anyProcessed |= ProcessShortHeaderPacket(rest, remote, nowUs);
            }
            if (_close.Phase is ConnectionPhase.Closed or ConnectionPhase.Draining) return;
            offset += consumed;
        }

        if (!anyProcessed && TryAcceptStatelessReset(datagram, nowUs)) return;

        if (anyProcessed && _close.Phase == ConnectionPhase.Closing && _close.ShouldResendClose()) _closeFramePending = true;
    }

    /// <summary>
    /// RFC 9000 §10.3.1: a datagram that could not be opened and whose last 16 bytes are the reset token of one of the
    /// peer's connection IDs ends the connection (draining, nothing more is sent). The endpoint also offers datagrams it
    /// could not route: a reset carries a random DCID, as its sender lost the state that would tell it ours.
    /// </summary>
    public bool TryAcceptStatelessReset(ReadOnlySpan<byte> datagram, long nowUs)
    {
        if (_close.Phase is ConnectionPhase.Closed or ConnectionPhase.Draining) return false;
        if (datagram.IsEmpty || PacketFirstByte.IsLongHeader(datagram[0])) return false; // a reset looks like a short header
        if (!StatelessReset.TryGetTokenCandidate(datagram, out ReadOnlySpan<byte> tail) || !_peerIds.IsStatelessReset(tail)) return false;
        EnterDraining(new ConnectionError(ConnectionErrorSource.StatelessReset, 0, true, "stateless reset"), nowUs);
        return true;
    }

    private bool ProcessLongHeaderPacket(Span<byte> packet, LongHeader header, in NetworkAddress remote, long nowUs)
    {
        if (header.Version == QuicVersion.Negotiation)
        {
            ProcessVersionNegotiation(packet, nowUs);
            return false;
        }
        // RFC 9000 §5.2: another version's packet is not for this connection, except during compatible negotiation (RFC 9368).
        PacketProtectionKeys? otherVersionKeys = null;
        if (header.Version != Version && (otherVersionKeys = KeysForOtherVersion(header, nowUs)) is null) return false;
        PacketNumberSpace spaceId;
        switch (header.Type)
        {
            case PacketType.Initial: spaceId = PacketNumberSpace.Initial; break;
            case PacketType.Handshake: spaceId = PacketNumberSpace.Handshake; break;
            case PacketType.Retry: ProcessRetry(packet, nowUs); return false;
            case PacketType.ZeroRtt: return ProcessZeroRttPacket(packet, header, nowUs);
            default: return false;
        }
        PacketSpaceState space = Space(spaceId);
        PacketProtectionKeys? keys = otherVersionKeys ?? space.ReceiveKeys;
        if (keys is null || space.Discarded) return false;
        if (!keys.TryRemoveHeaderProtection(packet, header.PacketNumberOffset, out int pnLength, out uint truncated)) return false;
        long pn = PacketNumber.Decode(space.Received.LargestReceived, truncated, pnLength);
        int headerLength = header.PacketNumberOffset + pnLength;
        if (!keys.TryDecrypt(packet, headerLength, (ulong)pn, header.PayloadLength - pnLength, out int plaintextLength))
        {
            Statistics.PacketsDropped++;
            return false;
        }

        if (!IsServer && _handshake.OnServerPacket())
        {
            // RFC 9000 §7.2: the client switches to the server's chosen ID on its first packet.
            _peerInitialSourceId = new ConnectionId(header.SourceConnectionId);
            _peerIds.SetInitial(_peerInitialSourceId);
        }

        if (!PacketFirstByte.ReservedBitsAreZero(packet[0]))
        {
            CloseWithError(TransportErrorCode.ProtocolViolation, "reserved header bits set", nowUs);
            return true;
        }

        if (spaceId == PacketNumberSpace.Handshake && IsServer)
        {
            // RFC 9000 §8.1: a Handshake packet proves the client got our Initial: its address is validated.
            // RFC 9001 §4.9.1: a server discards Initial keys when it first processes a Handshake packet.
            _path.Amplification.OnAddressValidated();
            _recovery.SetAmplificationLimited(false, nowUs);
            DiscardSpace(PacketNumberSpace.Initial, nowUs);
        }

        PacketType packetType = header.Type;
        return ProcessPayload(space, packetType, pn, packet.Slice(headerLength, plaintextLength), nowUs);
    }

    private bool ProcessShortHeaderPacket(Span<byte> packet, in NetworkAddress remote, long nowUs)
    {
        if (!ShortHeader.TryParse(packet, _initialSourceId.Length, out ShortHeader header, AcceptsGreasedFixedBit)) return false;
        _currentPacketDestination = new ConnectionId(header.DestinationConnectionId);
        PacketSpaceState space = Space(PacketNumberSpace.ApplicationData);
        KeyPhaseKeys? phases = space.ReceivePhaseKeys;
        if (phases is null) return false; // 1-RTT before we have keys: dropped, the peer retransmits
        PacketProtectionKeys current = phases.Current;
        if (!current.TryRemoveHeaderProtection(packet, header.PacketNumberOffset, out int pnLength, out uint truncated)) return false;
        long pn = PacketNumber.Decode(space.Received.LargestReceived, truncated, pnLength);
        int headerLength = header.PacketNumberOffset + pnLength;
        int protectedLength = packet.Length - headerLength;
        int phaseBit = PacketFirstByte.GetKeyPhase(packet[0]) ? 1 : 0;

        // RFC 9001 §6.3: a packet in the other key phase is either older (previous keys) or the peer's key update (next keys).
        PacketProtectionKeys keys;
        bool isUpdate = false;
        if (phaseBit == phases.KeyPhase) keys = current;
        else if (pn < _currentReceivePhaseFirstPacket && phases.Previous is not null) keys = phases.Previous;
        else
        {
            keys = phases.Next;
            isUpdate = true;
        }

        if (!keys.TryDecrypt(packet, headerLength, (ulong)pn, protectedLength, out int plaintextLength))
        {
            Statistics.PacketsDropped++;
            return false;
        }

        if (!PacketFirstByte.ReservedBitsAreZero(packet[0]))
        {
            CloseWithError(TransportErrorCode.ProtocolViolation, "reserved header bits set", nowUs);
            return true;
        }

        if (isUpdate)
        {
            if (!_handshake.IsConfirmed)
            {
                // RFC 9001 §6.1: no key update before the handshake is confirmed.
                CloseWithError(TransportErrorCode.KeyUpdateError, "key update before handshake confirmation", nowUs);
                return true;
            }
            phases.Update();
            _currentReceivePhaseFirstPacket = pn;
            KeyPhaseKeys send = space.SendPhaseKeys!;
            if (send.KeyPhase != phases.KeyPhase)
            {
                // The peer initiated this update: answer it (§6.2) and count it. Otherwise this is the peer's answer to
                // our own update, already counted when we initiated it.
                send.Update();
                Statistics.KeyUpdates++;
            }
        }

        if (ArrivedOnOtherPath(remote)) OnPeerAddressChange(remote, pn, space, nowUs);
        return ProcessPayload(space, PacketType.OneRtt, pn, packet.Slice(headerLength, plaintextLength), nowUs);
    }

    private bool ProcessPayload(PacketSpaceState space, PacketType packetType, long pn, ReadOnlySpan<byte> payload, long nowUs)
    {
        if (payload.IsEmpty)
        {
            // RFC 9000 §12.4: a packet with no frames is a PROTOCOL_VIOLATION.
            CloseWithError(TransportErrorCode.ProtocolViolation, "packet without frames", nowUs);
            return true;
        }
        if (space.Received.LargestReceived >= 0 && IsDuplicate(space, pn)) return true;

        Statistics.PacketsReceived++;
        _idle.OnPacketReceived(nowUs);
        _trace.FrameTypes?.Clear();
        TransportErrorCode error = ProcessFrames(space, packetType, payload, nowUs, out bool ackEliciting, out ulong frameType, out string? reason);
        // Traced before a close its frames caused, so a trace shows the packet that ended the connection.
        if (_trace.Tracer is not null) TracePacketReceived(packetType, pn, payload.Length, nowUs);
        if (error != TransportErrorCode.NoError)
        {
            CloseWithError(error, reason, nowUs, frameType);
            return true;
        }
        space.Received.OnPacketReceived(pn, ackEliciting, nowUs, _path.ReceiveEcn, _recovery.Rtt.SmoothedRttUs);
        // The TLS engine moves only when fed CRYPTO data: once the handshake is confirmed, a packet without any (every
        // packet of a bulk transfer) leaves nothing to take from it.
        if (_tlsFed || !_handshake.IsConfirmed)
        {
            _tlsFed = false;
            DrainHandshake(nowUs);
        }
        ReportPathSample();
        return true;
    }

    private static bool IsDuplicate(PacketSpaceState space, long pn) => space.Received.IsDuplicate(pn);

    private void ProcessVersionNegotiation(ReadOnlySpan<byte> packet, long nowUs)
    {
        // RFC 9000 §6.2: a client that received any other packet, or sees its own version listed, ignores it.
        if (IsServer || _handshake.ReceivedServerPacket) return;
        if (!VersionNegotiationPacket.TryParse(packet, out VersionNegotiationPacket vn)) return;
        if (!vn.DestinationConnectionId.SequenceEqual(_initialSourceId.Span) || !vn.SourceConnectionId.SequenceEqual(_originalDestinationId.Span)) return;
        foreach (uint version in vn.Versions)
        {
            if (version == Version) return;
        }
        Error = new ConnectionError(ConnectionErrorSource.VersionNegotiation, 0, true, "the server does not support our QUIC version");
        _close.CloseSilently();
        Emit(ConnectionEventKind.Closed);
    }

    private void ProcessRetry(Span<byte> packet, long nowUs)
    {
        // RFC 9000 §17.2.5.2: a client accepts one Retry, before any other server packet, with a valid integrity tag.
        if (IsServer || _handshake.ReceivedServerPacket || _retrySourceId is not null) return;
        if (!RetryPacket.TryParse(packet, out RetryPacket retry)) return;
        if (retry.Token.IsEmpty || !RetryIntegrity.Verify(Version, _originalDestinationId.Span, packet)) return;
        if (!retry.DestinationConnectionId.SequenceEqual(_initialSourceId.Span)) return;

        var retrySource = new ConnectionId(retry.SourceConnectionId);
        _retrySourceId = retrySource;
        _retryToken = retry.Token.ToArray();
        _peerIds.SetInitial(retrySource);
        InstallInitialKeys(retrySource);
        // The server discarded our 0-RTT packets with the first Initial (§17.2.5.2): they go again, to the new ID.
        RejectZeroRttPackets(nowUs);
        // Everything sent in Initial packets must be sent again under the new keys with the token (§17.2.5.2).
        PacketSpaceState initial = Space(PacketNumberSpace.Initial);
        ReturnOutstandingFrames(PacketNumberSpace.Initial);
        long discarded = _recovery.GetTracker(PacketNumberSpace.Initial).DiscardAll();
        _recovery.CongestionController.OnPacketsDiscarded(discarded);
        initial.CryptoSend.OnLost(initial.CryptoSend.AckedOffset, initial.CryptoSend.MaxSentOffset - initial.CryptoSend.AckedOffset, fin: false);
        _recovery.SetLossDetectionTimer(nowUs);
    }

    private void OnPeerAddressChange(in NetworkAddress remote, long pn, PacketSpaceState space, long nowUs)
    {
        // RFC 9000 §9.3: only the largest packet number so far moves the path; older reordered packets do not.
        if (pn < space.Received.LargestReceived) return;
        if (!_handshake.IsConfirmed) return; // §9: no migration before the handshake is confirmed
        // §9: only clients migrate; a client keeps its path when the server's packets come from elsewhere (in flight from
        // the address it left, say) or reach a socket it left.
        if (!IsServer) return;
        // The address to go back to if the new one fails validation is the last validated one: the current address,
        // unless it is itself still being validated (the client moved again meanwhile).
        if (_path.Validator is not { State: PathValidationState.Pending }) _path.PreviousRemote = _path.Remote;
        _path.Remote = remote;
        _path.LocalPath = _path.ReceiveLocalPath;
        // §9.3 / §8: until the new address is validated, at most three times what arrived from it is sent there (this
        // datagram included); an attacker spoofing a victim's address cannot turn the connection into an amplifier.
        _path.Amplification = default;
        _path.Amplification.OnDatagramReceived(_receivingDatagramLength);
        OnPathChanged(nowUs);
    }
}
