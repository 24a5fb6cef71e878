using System.Net.Quic.Managed.Crypto;
using System.Net.Quic.Managed.Recovery;
using System.Net.Quic.Managed.Streams;

namespace System.Net.Quic.Managed.Core;

/// <summary>
/// One packet number space (RFC 9000 §12.3) of a connection: its keys, packet numbers, what was received
/// (for ACKs) and its CRYPTO stream in both directions. Sent-packet tracking lives in recovery.
/// </summary>
internal sealed class PacketSpaceState : IDisposable
{
    /// <summary>Bound on buffered out-of-order CRYPTO data per level (RFC 9000 §7.5 asks for at least 4096 bytes).</summary>
    public const long CryptoBufferLimit = 64 * 1024;

    public PacketSpaceState(PacketNumberSpace space, long maxAckDelayUs, bool ackDecimation = false)
    {
        Space = space;
        Received = new ReceivedPacketTracker(space, space == PacketNumberSpace.ApplicationData ? maxAckDelayUs : 0, decimate: ackDecimation);
        CryptoSend = new SendBuffer(long.MaxValue);
        CryptoReceive = new ReceiveBuffer(CryptoBufferLimit);
    }

    public PacketNumberSpace Space { get; }

    /// <summary>Keys for Initial and Handshake packets; null until known or after discard.</summary>
    public PacketProtectionKeys? SendKeys { get; set; }

    public PacketProtectionKeys? ReceiveKeys { get; set; }

    /// <summary>1-RTT keys with key update (RFC 9001 §6), one chain per direction; only in the application space.</summary>
    public KeyPhaseKeys? SendPhaseKeys { get; set; }

    public KeyPhaseKeys? ReceivePhaseKeys { get; set; }

    /// <summary>
    /// 0-RTT keys (RFC 9001 §4.6), application space only: the client's for sending until it has 1-RTT keys, the
    /// server's for receiving until the handshake is confirmed. 0-RTT and 1-RTT share this space's packet numbers (RFC 9000 §12.3).
    /// </summary>
    public PacketProtectionKeys? ZeroRttSendKeys { get; set; }

    public PacketProtectionKeys? ZeroRttReceiveKeys { get; set; }

    public bool CanSend => SendKeys is not null || SendPhaseKeys is not null || ZeroRttSendKeys is not null;

    /// <summary>True when the next application packet can only be a 0-RTT packet (client with 0-RTT keys, no 1-RTT keys yet).</summary>
    public bool SendsZeroRtt => SendPhaseKeys is null && ZeroRttSendKeys is not null;

    /// <summary>Drops the 0-RTT keys of one direction (RFC 9001 §4.9.3).</summary>
    public void DiscardZeroRttKeys()
    {
        ZeroRttSendKeys?.Dispose();
        ZeroRttReceiveKeys?.Dispose();
        ZeroRttSendKeys = null;
        ZeroRttReceiveKeys = null;
    }

    public bool CanReceive => ReceiveKeys is not null || ReceivePhaseKeys is not null;

    public long NextPacketNumber { get; set; }

    public ReceivedPacketTracker Received { get; }

    /// <summary>Our handshake bytes at this level (retransmitted by range when lost).</summary>
    public SendBuffer CryptoSend { get; }

    /// <summary>The peer's handshake bytes at this level, reassembled.</summary>
    public ReceiveBuffer CryptoReceive { get; }

    /// <summary>Probe packets owed after a PTO (RFC 9002 §6.2.4).</summary>
    public int ProbesPending { get; set; }

    /// <summary>Keys dropped for good (RFC 9001 §4.9); nothing is sent or accepted in this space any more.</summary>
    public bool Discarded { get; private set; }

    public void Discard()
    {
        Discarded = true;
        Received.Discard();
        ProbesPending = 0;
        DisposeKeys();
        // The CRYPTO bytes of a discarded level are never sent, acknowledged or read again: their chunks go back to the
        // pool instead of staying with the connection for its lifetime.
        CryptoSend.Reset();
        CryptoReceive.Discard();
    }

    private void DisposeKeys()
    {
        SendKeys?.Dispose();
        ReceiveKeys?.Dispose();
        SendPhaseKeys?.Dispose();
        ReceivePhaseKeys?.Dispose();
        DiscardZeroRttKeys();
        SendKeys = null;
        ReceiveKeys = null;
        SendPhaseKeys = null;
        ReceivePhaseKeys = null;
    }

    public void Dispose() => DisposeKeys();
}
