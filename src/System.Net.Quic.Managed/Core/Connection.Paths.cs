using System.Buffers.Binary;
using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Core;

internal sealed partial class Connection
{
    /// <summary>
    /// The peer's address changed (RFC 9000 §9.3): NAT rebinding or migration. We move to the new address at once and
    /// validate it with PATH_CHALLENGE; if validation fails we go back to the old one.
    /// </summary>
    private void OnPathChanged(long nowUs)
    {
        // A port-only change is probably NAT rebinding (§9.3, §9.4): the congestion state still fits; otherwise start over.
        StartPathValidation(nowUs, newPathModel: !_previousRemote.SameHost(_remote));
    }

    /// <summary>
    /// The connection now sends on a path to be validated (§8.2): a PATH_CHALLENGE goes out, ECN and the path MTU start
    /// over, and with <paramref name="newPathModel"/> the RTT and congestion state too (§9.4).
    /// </summary>
    private void StartPathValidation(long nowUs, bool newPathModel)
    {
        _pathValidator ??= new PathValidator(_random);
        _pathValidator.Start(nowUs, _recovery.PtoDurationUs);
        _pathChallengePending = true;
        if (newPathModel) RestartPathEstimates();
        RestartPathSignals();
    }

    /// <summary>RFC 9000 §9.4: a new path has its own RTT and congestion state.</summary>
    private void RestartPathEstimates()
    {
        _recovery.Rtt.Reset();
        _recovery.CongestionController.OnNewPath();
    }

    /// <summary>ECN validation and the path MTU are properties of the path: they start over on a new one.</summary>
    private void RestartPathSignals()
    {
        _ecn.OnPathChanged();
        _pmtu.OnPathChanged();
        _maxDatagramSize = _pmtu.Current;
    }

    /// <summary>
    /// The client moved to a new local address (the I/O layer rebound its socket): it switches to an unused peer
    /// connection ID (§9.5) and validates the new path. Returns false when the peer gave no spare ID or migration is
    /// not allowed yet (before the handshake is confirmed, or the peer disabled active migration).
    /// </summary>
    public bool MigrateLocalAddress(long nowUs)
    {
        RequestService();
        if (IsServer || !_handshake.IsConfirmed || PeerParameters?.DisableActiveMigration == true) return false;
        if (!_peerIds.TryRotate()) return false;
        _previousRemote = _remote;
        _pathValidator ??= new PathValidator(_random);
        _pathValidator.Start(nowUs, _recovery.PtoDurationUs);
        _pathChallengePending = true;
        return true;
    }

    private bool WritePathChallenge(ref QuicWriter writer, SentFrameList frames, long nowUs)
    {
        if (!_pathChallengePending || _pathValidator is null || writer.Remaining < PathChallengeFrame.EncodedLength) return false;
        _pathChallengePending = false;
        // The validation ended (validated, or timed out while an amplification-limited path could not send yet).
        if (_pathValidator.State != PathValidationState.Pending) return false;
        _pathFrameInPacket = true;
        Span<byte> data = stackalloc byte[8];
        _pathValidator.CreateChallenge(data);
        RequireWritten(new PathChallengeFrame(BinaryPrimitives.ReadUInt64BigEndian(data)).TryWrite(ref writer), FrameType.PathChallenge);
        frames.Add(SentFrame.PathChallenge());
        return true;
    }

    /// <summary>
    /// A packet with a PATH_CHALLENGE was lost: while the validation is still pending, send a new challenge (with new
    /// data; the old one stays acceptable), as a path whose first probe was lost is not a failed path (RFC 9000 §8.2.1).
    /// </summary>
    private void OnPathChallengeLost()
    {
        if (_pathValidator is { State: PathValidationState.Pending }) _pathChallengePending = true;
    }

    private void OnPathResponse(ulong data, long nowUs)
    {
        if (_pathValidator is null) return;
        Span<byte> bytes = stackalloc byte[8];
        BinaryPrimitives.WriteUInt64BigEndian(bytes, data);
        if (!_pathValidator.OnResponse(bytes)) return;
        PathValidations++;
        if (IsServer) _amplification.OnAddressValidated(); // §8.2: the peer's new address is validated
        OnClientMigrationValidated();
    }

    private void OnPathValidationTimeout(long nowUs)
    {
        if (_pathValidator is null || !_pathValidator.OnTimeout(nowUs)) return;
        OnClientMigrationFailed();
        // §9.3.2: validation of the new path failed: go back to the last validated one.
        if (IsServer && !_previousRemote.IsDefault)
        {
            _remote = _previousRemote;
            _amplification.OnAddressValidated(); // that address was validated before
        }
    }

    /// <summary>Paths validated so far (for tests and statistics).</summary>
    public int PathValidations { get; private set; }

    /// <summary>Number of peer IDs held (spares for migration).</summary>
    public int PeerConnectionIdCount => _peerIds.Count;

    /// <summary>Peer IDs we retired whose RETIRE_CONNECTION_ID frames are not acknowledged yet (RFC 9000 §5.1.2).</summary>
    internal int UnacknowledgedPeerIdRetirements => _peerIds.UnacknowledgedRetirements;
}
