using System.Net.Quic.Managed.Recovery;
using System.Net.Quic.Managed.Streams;

namespace System.Net.Quic.Managed.Core;

internal sealed partial class Connection
{
    /// <summary>The earliest time <see cref="OnTimeout"/> must run (long.MaxValue: none): the smallest entry of the timer table.</summary>
    public long NextTimeoutUs
    {
        get
        {
            long t = long.MaxValue;
            for (TimerKind kind = 0; kind < TimerKind.Count; kind++) t = Math.Min(t, Deadline(kind));
            return t;
        }
    }

    /// <summary>
    /// The connection's timer table (after quinn's <c>connection/timer.rs</c>): one deadline per kind, read from the state
    /// that owns it (the idle timer, recovery, the ACK trackers, the pacer, the path validator, the close state), so no copy
    /// can go stale; long.MaxValue where the kind is not armed. <see cref="OnTimeout"/> handles each expired kind.
    /// </summary>
    internal long Deadline(TimerKind kind)
    {
        ConnectionPhase phase = _close.Phase;
        if (phase == ConnectionPhase.Closed) return long.MaxValue;
        if (phase != ConnectionPhase.Open)
        {
            return kind switch
            {
                TimerKind.Close => _close.DeadlineUs,
                TimerKind.CloseResend => _close.NextResendUs,
                _ => long.MaxValue,
            };
        }
        switch (kind)
        {
            case TimerKind.Idle: return _idle.DeadlineUs(_recovery.PtoDurationUs);
            case TimerKind.Handshake: return _handshakeDeadlineUs;
            case TimerKind.LossDetection: return _recovery.LossDetectionTimerUs;
            case TimerKind.AckInitial:
            case TimerKind.AckHandshake:
            case TimerKind.AckApplication:
            {
                // An ACK due on a path the anti-amplification limit blocks cannot leave: no timer for it (RFC 9000 §8.1).
                if (!_path.Amplification.IsAddressValidated && _path.Amplification.Remaining < MinInitialDatagramSize) return long.MaxValue;
                PacketSpaceState space = _spaces[kind - TimerKind.AckInitial];
                return !space.Discarded && space.CanSend && space.Received.HasNewPacketsToAck ? space.Received.AckDeadlineUs : long.MaxValue;
            }
            case TimerKind.Pacing: return _path.PacingBlockedUntilUs;
            case TimerKind.FirstFlightHold: return _earlyData.FirstFlightHoldUntilUs != 0 ? _earlyData.FirstFlightHoldUntilUs : long.MaxValue;
            case TimerKind.PathValidation: return _path.Validator?.DeadlineUs ?? long.MaxValue;
            case TimerKind.MaxStreamsHold:
                return MaxStreamsDue ? _maxStreamsHoldUntilUs : long.MaxValue;
            case TimerKind.KeepAlive:
                return _options.KeepAliveIntervalUs > 0 && _handshake.IsCompleted && !_keepAlivePending
                    ? _idle.LastActivityUs + _options.KeepAliveIntervalUs
                    : long.MaxValue;
            default: return long.MaxValue;
        }
    }

    /// <summary>Runs every timer of the table that is due at <paramref name="nowUs"/>; then call TrySend.</summary>
    public void OnTimeout(long nowUs)
    {
        _trace.LastEventUs = nowUs;
        for (TimerKind kind = 0; kind < TimerKind.Count && _close.Phase != ConnectionPhase.Closed; kind++)
        {
            if (Deadline(kind) > nowUs) continue;
            if (!OnTimerExpired(kind, nowUs)) return;
        }
    }

    /// <summary>One expired timer; false when the connection ended and the rest of the table no longer matters.</summary>
    private bool OnTimerExpired(TimerKind kind, long nowUs)
    {
        switch (kind)
        {
            case TimerKind.Close:
                _close.OnTimeout(nowUs);
                return false;
            case TimerKind.CloseResend:
                if (_close.OnResendTimer(nowUs)) _closeFramePending = true;
                return true;
            case TimerKind.Idle:
                // RFC 9000 §10.1: the connection is silently closed and its state discarded.
                Error ??= new ConnectionError(ConnectionErrorSource.IdleTimeout, 0, false, "idle timeout");
                _close.CloseSilently();
                if (!_handshake.IsCompleted) OnHandshakeFailed();
                Emit(ConnectionEventKind.Closed);
                return false;
            case TimerKind.Handshake:
                Error ??= new ConnectionError(ConnectionErrorSource.HandshakeTimeout, 0, false, "handshake timeout");
                _close.CloseSilently();
                OnHandshakeFailed();
                Emit(ConnectionEventKind.Closed);
                return false;
            case TimerKind.AckInitial:
            case TimerKind.AckHandshake:
            case TimerKind.AckApplication:
            case TimerKind.FirstFlightHold:
            case TimerKind.MaxStreamsHold:
                // Acted on by the TrySend that follows every timeout: the ACK is due, the hold is over.
                return true;
            case TimerKind.Pacing:
                _path.PacingBlockedUntilUs = long.MaxValue;
                return true;
            case TimerKind.PathValidation:
                OnPathValidationTimeout(nowUs);
                return true;
            case TimerKind.KeepAlive:
                _keepAlivePending = true;
                return true;
            case TimerKind.LossDetection:
                OnLossDetectionTimeout(nowUs);
                return true;
            default:
                return true;
        }
    }

    private void OnLossDetectionTimeout(long nowUs)
    {
        var sink = new ConnectionSentPacketSink(this);
        LossTimeoutAction action = _recovery.OnLossDetectionTimeout(nowUs, ref sink);
        switch (action.Kind)
        {
            case LossTimeoutKind.Probe:
                if (action.Space == PacketNumberSpace.ApplicationData && _path.Pmtu.OnProbeTimeout(_recovery.PtoCount)) _path.MaxDatagramSize = _path.Pmtu.Current;
                SchedulePtoProbe(action.Space, action.ProbePackets);
                break;
            case LossTimeoutKind.AntiDeadlockProbe:
                // RFC 9002 §6.2.2.1: the client sends a Handshake packet if it can, else a padded Initial.
                SchedulePtoProbe(Space(PacketNumberSpace.Handshake).CanSend ? PacketNumberSpace.Handshake : PacketNumberSpace.Initial, 1);
                break;
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
