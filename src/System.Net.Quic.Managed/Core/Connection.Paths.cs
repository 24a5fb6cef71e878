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
        StartPathValidation(nowUs, newPathModel: !_path.PreviousRemote.SameHost(_path.Remote));
    }

    /// <summary>
    /// The connection now sends on a path to be validated (§8.2): a PATH_CHALLENGE goes out, ECN and the path MTU start
    /// over, and with <paramref name="newPathModel"/> the RTT and congestion state too (§9.4).
    /// </summary>
    private void StartPathValidation(long nowUs, bool newPathModel)
    {
        _path.Validator ??= new PathValidator(_random);
        _path.Validator.Start(nowUs, _recovery.PtoDurationUs);
        _path.ChallengePending = true;
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
        _path.Ecn.OnPathChanged();
        _path.Pmtu.OnPathChanged();
        _path.MaxDatagramSize = _path.Pmtu.Current;
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
        _path.PreviousRemote = _path.Remote;
        _path.Validator ??= new PathValidator(_random);
        _path.Validator.Start(nowUs, _recovery.PtoDurationUs);
        _path.ChallengePending = true;
        return true;
    }

    private bool WritePathChallenge(ref QuicWriter writer, SentFrames frames, long nowUs)
    {
        if (!_path.ChallengePending || _path.Validator is null || writer.Remaining < PathChallengeFrame.EncodedLength) return false;
        _path.ChallengePending = false;
        // The validation ended (validated, or timed out while an amplification-limited path could not send yet).
        if (_path.Validator.State != PathValidationState.Pending) return false;
        _pathFrameInPacket = true;
        Span<byte> data = stackalloc byte[8];
        _path.Validator.CreateChallenge(data);
        RequireWritten(new PathChallengeFrame(BinaryPrimitives.ReadUInt64BigEndian(data)).TryWrite(ref writer), FrameType.PathChallenge);
        frames.Retransmits.PathChallenge = true;
        return true;
    }

    /// <summary>
    /// A packet with a PATH_CHALLENGE was lost: while the validation is still pending, send a new challenge (with new
    /// data; the old one stays acceptable), as a path whose first probe was lost is not a failed path (RFC 9000 §8.2.1).
    /// </summary>
    private void OnPathChallengeLost()
    {
        if (_path.Validator is { State: PathValidationState.Pending }) _path.ChallengePending = true;
    }

    private void OnPathResponse(ulong data, long nowUs)
    {
        if (_path.Validator is null) return;
        Span<byte> bytes = stackalloc byte[8];
        BinaryPrimitives.WriteUInt64BigEndian(bytes, data);
        if (!_path.Validator.OnResponse(bytes)) return;
        PathValidations++;
        if (IsServer) _path.Amplification.OnAddressValidated(); // §8.2: the peer's new address is validated
        OnClientMigrationValidated();
    }

    private void OnPathValidationTimeout(long nowUs)
    {
        if (_path.Validator is null || !_path.Validator.OnTimeout(nowUs)) return;
        OnClientMigrationFailed();
        // §9.3.2: validation of the new path failed: go back to the last validated one.
        if (IsServer && !_path.PreviousRemote.IsDefault)
        {
            _path.Remote = _path.PreviousRemote;
            _path.Amplification.OnAddressValidated(); // that address was validated before
        }
    }

    /// <summary>Paths validated so far (for tests and statistics).</summary>
    public int PathValidations { get; private set; }

    /// <summary>Number of peer IDs held (spares for migration).</summary>
    public int PeerConnectionIdCount => _peerIds.Count;

    /// <summary>Peer IDs we retired whose RETIRE_CONNECTION_ID frames are not acknowledged yet (RFC 9000 §5.1.2).</summary>
    internal int UnacknowledgedPeerIdRetirements => _peerIds.UnacknowledgedRetirements;
}
