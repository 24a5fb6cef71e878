using System.Net.Quic.Managed.Recovery;
using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Core;

internal sealed partial class Connection
{
    /// <summary>
    /// TEST ONLY: how long the connection waits without activity before its idle timeout ends it (RFC 9000 §10.1: the
    /// negotiated timeout, never below three PTOs at the current RTT estimate; long.MaxValue without one). Any thread: a
    /// racy read, for bounds in tests.
    /// </summary>
    internal long IdlePeriodUsForTesting => _idle.EffectiveTimeoutUs <= 0 ? long.MaxValue : Math.Max(_idle.EffectiveTimeoutUs, 3 * _recovery.PtoDurationUs);

    /// <summary>
    /// TEST ONLY: puts <paramref name="frames"/> verbatim (unchecked, possibly malformed) at the start of the next 1-RTT
    /// packet, protected with this connection's current keys. Lets tests deliver crafted frames that the peer must
    /// reject with the right transport error code (RFC 9000 §11). Never retransmitted.
    /// </summary>
    internal void SendRawFramesForTesting(ReadOnlySpan<byte> frames)
    {
        _rawFramesForTesting = frames.ToArray();
        RequestService();
    }

    private bool WriteRawFramesForTesting(ref QuicWriter writer, SentFrames frames)
    {
        if (_rawFramesForTesting is not { } raw || writer.Remaining < raw.Length) return false;
        _rawFramesForTesting = null;
        writer.TryReserve(raw.Length, out Span<byte> destination);
        raw.CopyTo(destination);
        frames.RawForTesting = true;
        return true;
    }

    /// <summary>
    /// TEST ONLY: switches to the next send key phase now, skipping the RFC 9001 §6.1 preconditions that
    /// <see cref="InitiateKeyUpdate"/> enforces, so tests can check that the peer rejects a premature update.
    /// </summary>
    internal void ForceKeyUpdateForTesting()
    {
        PacketSpaceState app = Space(System.Net.Quic.Managed.Recovery.PacketNumberSpace.ApplicationData);
        if (app.SendPhaseKeys is null) throw new InvalidOperationException("No 1-RTT keys yet.");
        app.SendPhaseKeys.Update();
        _currentSendPhaseFirstPacket = app.NextPacketNumber;
        Statistics.KeyUpdates++;
        RequestService();
    }

    /// <summary>One packet number space's state (tests).</summary>
    internal PacketSpaceState SpaceForTesting(PacketNumberSpace space) => Space(space);
}
