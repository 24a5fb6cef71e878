namespace System.Net.Quic.Managed.Core;

/// <summary>How far the handshake has come (RFC 9001 §4.1.1 and §4.1.2), in order.</summary>
internal enum HandshakePhase
{
    /// <summary>TLS has not finished.</summary>
    InProgress,

    /// <summary>TLS reports the handshake complete (the client has sent its Finished; the server has received it).</summary>
    Completed,

    /// <summary>The handshake is confirmed: at completion for the server, on HANDSHAKE_DONE for the client.</summary>
    Confirmed,
}

/// <summary>
/// The connection's handshake progress in one place (the model is quinn-proto's explicit connection state): the phase,
/// which only moves forward, and the few one-shot facts the packet paths need until the handshake is over. Transitions
/// are methods, so a reader finds every way the state changes here rather than in assignments spread over the
/// connection's files. Like <see cref="CloseState"/>, a mutable struct held in one field of <see cref="Connection"/>.
/// </summary>
internal struct HandshakeState
{
    /// <summary>The current phase.</summary>
    public HandshakePhase Phase { get; private set; }

    /// <summary>RFC 9001 §4.1.1: TLS reported the handshake complete (also true once confirmed).</summary>
    public readonly bool IsCompleted => Phase >= HandshakePhase.Completed;

    /// <summary>RFC 9001 §4.1.2: the handshake is confirmed.</summary>
    public readonly bool IsConfirmed => Phase == HandshakePhase.Confirmed;

    /// <summary>Client: a first packet from the server was processed (Version Negotiation and Retry are then ignored,
    /// RFC 9000 §6.2 and §17.2.5.2, and the server's chosen connection ID is in use, §7.2).</summary>
    public bool ReceivedServerPacket { get; private set; }


    /// <summary>Server: HANDSHAKE_DONE is to be sent (again, when the packet carrying it was lost).</summary>
    public bool HandshakeDonePending { get; private set; }

    /// <summary>Client: the first Handshake packet was written, so the Initial keys go once the datagram is built
    /// (RFC 9001 §4.9.1).</summary>
    public bool DiscardInitialAfterSend { get; private set; }

    private bool _sentHandshakePacket;
    private bool _peerParametersApplied;

    /// <summary>TLS completed. False when it already had.</summary>
    public bool Complete()
    {
        if (IsCompleted) return false;
        Phase = HandshakePhase.Completed;
        return true;
    }

    /// <summary>The handshake is confirmed (the caller then discards the Handshake keys). False when it already was.</summary>
    public bool Confirm()
    {
        if (IsConfirmed) return false;
        Phase = HandshakePhase.Confirmed;
        return true;
    }

    /// <summary>Client: records the first packet from the server; true only for that first one.</summary>
    public bool OnServerPacket()
    {
        if (ReceivedServerPacket) return false;
        ReceivedServerPacket = true;
        return true;
    }

    /// <summary>The peer's transport parameters are applied once, when TLS first has them: true only the first time.</summary>
    public bool TakePeerParameters()
    {
        if (_peerParametersApplied) return false;
        _peerParametersApplied = true;
        return true;
    }

    /// <summary>Server: HANDSHAKE_DONE is queued (at confirmation, or again after its packet was lost).</summary>
    public void QueueHandshakeDone() => HandshakeDonePending = true;

    /// <summary>HANDSHAKE_DONE was written into a packet.</summary>
    public void OnHandshakeDoneSent() => HandshakeDonePending = false;

    /// <summary>Client: a Handshake packet was written into the datagram being built; the first one schedules the
    /// Initial keys' discard.</summary>
    public void OnHandshakePacketWritten()
    {
        if (_sentHandshakePacket) return;
        _sentHandshakePacket = true;
        DiscardInitialAfterSend = true;
    }

    /// <summary>Client: the Initial keys' discard is due now (after the datagram); true once.</summary>
    public bool TakeInitialDiscard()
    {
        if (!DiscardInitialAfterSend) return false;
        DiscardInitialAfterSend = false;
        return true;
    }
}
