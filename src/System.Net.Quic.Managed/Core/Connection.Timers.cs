using System.Net.Quic.Managed.Recovery;
using System.Net.Quic.Managed.Streams;

namespace System.Net.Quic.Managed.Core;

internal sealed partial class Connection
{
    /// <summary>The earliest time <see cref="OnTimeout"/> must run (long.MaxValue: none). ngtcp2's single expiry, quinn's poll_timeout.</summary>
    public long NextTimeoutUs
    {
        get
        {
            switch (_close.Phase)
            {
                case ConnectionPhase.Closed: return long.MaxValue;
                case ConnectionPhase.Closing:
                case ConnectionPhase.Draining: return Math.Min(_close.DeadlineUs, _close.NextResendUs);
            }
            long t = Math.Min(_idle.DeadlineUs(_recovery.PtoDurationUs), _handshakeDeadlineUs);
            t = Math.Min(t, _recovery.LossDetectionTimerUs);
            bool amplificationBlocked = !_amplification.IsAddressValidated && _amplification.Remaining < MinInitialDatagramSize;
            if (!amplificationBlocked)
            {
                foreach (PacketSpaceState space in _spaces)
                {
                    if (!space.Discarded && space.CanSend && space.Received.HasNewPacketsToAck) t = Math.Min(t, space.Received.AckDeadlineUs);
                }
            }
            t = Math.Min(t, _pacingBlockedUntilUs);
            if (_firstFlightHoldUntilUs != 0) t = Math.Min(t, _firstFlightHoldUntilUs);
            if (_pathValidator is not null) t = Math.Min(t, _pathValidator.DeadlineUs);
            if (_options.KeepAliveIntervalUs > 0 && _handshake.IsCompleted && !_keepAlivePending)
            {
                t = Math.Min(t, _idle.LastActivityUs + _options.KeepAliveIntervalUs);
            }
            return t;
        }
    }

    /// <summary>Runs whatever timers are due at <paramref name="nowUs"/>; then call TrySend.</summary>
    public void OnTimeout(long nowUs)
    {
        _lastEventUs = nowUs;
        switch (_close.Phase)
        {
            case ConnectionPhase.Closed:
                return;
            case ConnectionPhase.Closing:
            case ConnectionPhase.Draining:
                if (!_close.OnTimeout(nowUs) && _close.OnResendTimer(nowUs)) _closeFramePending = true;
                return;
        }

        if (nowUs >= _idle.DeadlineUs(_recovery.PtoDurationUs))
        {
            // RFC 9000 §10.1: the connection is silently closed and its state discarded.
            Error ??= new ConnectionError(ConnectionErrorSource.IdleTimeout, 0, false, "idle timeout");
            _close.CloseSilently();
            if (!_handshake.IsCompleted) OnHandshakeFailed();
            Emit(ConnectionEventKind.Closed);
            return;
        }
        if (nowUs >= _handshakeDeadlineUs)
        {
            Error ??= new ConnectionError(ConnectionErrorSource.HandshakeTimeout, 0, false, "handshake timeout");
            _close.CloseSilently();
            OnHandshakeFailed();
            Emit(ConnectionEventKind.Closed);
            return;
        }
        if (nowUs >= _pacingBlockedUntilUs) _pacingBlockedUntilUs = long.MaxValue;
        if (_pathValidator is not null && nowUs >= _pathValidator.DeadlineUs) OnPathValidationTimeout(nowUs);
        if (_options.KeepAliveIntervalUs > 0 && _handshake.IsCompleted && nowUs >= _idle.LastActivityUs + _options.KeepAliveIntervalUs)
        {
            _keepAlivePending = true;
        }

        if (nowUs >= _recovery.LossDetectionTimerUs)
        {
            var sink = new ConnectionSentPacketSink(this);
            LossTimeoutAction action = _recovery.OnLossDetectionTimeout(nowUs, ref sink);
            switch (action.Kind)
            {
                case LossTimeoutKind.Probe:
                    if (action.Space == PacketNumberSpace.ApplicationData && _pmtu.OnProbeTimeout(_recovery.PtoCount)) _maxDatagramSize = _pmtu.Current;
                    SchedulePtoProbe(action.Space, action.ProbePackets);
                    break;
                case LossTimeoutKind.AntiDeadlockProbe:
                    // RFC 9002 §6.2.2.1: the client sends a Handshake packet if it can, else a padded Initial.
                    SchedulePtoProbe(Space(PacketNumberSpace.Handshake).CanSend ? PacketNumberSpace.Handshake : PacketNumberSpace.Initial, 1);
                    break;
            }
        }
    }

    private void SchedulePtoProbe(PacketNumberSpace spaceId, int packets)
    {
        PacketSpaceState space = Space(spaceId);
        if (space.Discarded || !space.CanSend) return;
        space.ProbesPending = Math.Max(space.ProbesPending, packets);
        // RFC 9002 §6.2.4: a probe should carry data the peer may be missing; for the handshake spaces that is all
        // unacknowledged CRYPTO data (a PING alone would not unblock a peer that lost our whole flight).
        if (spaceId == PacketNumberSpace.ApplicationData) return;
        RequeueUnackedCrypto(space);
        // §6.2.4: "the sender SHOULD send ack-eliciting packets from other packet number spaces with in-flight data,
        // coalescing packets if possible". A server whose Initial (ServerHello) and Handshake flights were both lost
        // otherwise resends them on alternate, backed-off timers, and under heavy loss the peer gives up first.
        PacketSpaceState other = Space(spaceId == PacketNumberSpace.Initial ? PacketNumberSpace.Handshake : PacketNumberSpace.Initial);
        if (!other.Discarded && other.CanSend && RequeueUnackedCrypto(other)) other.ProbesPending = Math.Max(other.ProbesPending, 1);
    }

    /// <summary>Marks every unacknowledged CRYPTO byte of a handshake space for retransmission; false when there is none.</summary>
    private static bool RequeueUnackedCrypto(PacketSpaceState space)
    {
        SendBuffer crypto = space.CryptoSend;
        long unacked = crypto.MaxSentOffset - crypto.AckedOffset;
        if (unacked <= 0) return false;
        crypto.OnLost(crypto.AckedOffset, unacked, fin: false);
        return true;
    }
}
