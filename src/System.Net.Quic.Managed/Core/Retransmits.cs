namespace System.Net.Quic.Managed.Core;

/// <summary>
/// The connection-level control frames a sent packet carried that are sent again, with current values, when it is lost
/// (RFC 9000 §13.3; the model is quinn-proto's <c>Retransmits</c>). The values are the ones sent: each owner's loss
/// handler compares them with its current state, so a lost frame already superseded is not repeated. The connection
/// merges them back into its pending frames in one place (<c>Connection.Requeue</c>). Per-stream control frames are in
/// <see cref="SentStreamFrames"/>, CRYPTO and STREAM data in <see cref="SentFrames"/>.
/// </summary>
internal struct Retransmits
{
    public bool HandshakeDone;

    /// <summary>PATH_CHALLENGE: if lost while the path is still being validated, a new challenge replaces it (RFC 9000 §8.2.1).</summary>
    public bool PathChallenge;

    /// <summary>NEW_TOKEN (the token in flight is kept by the connection).</summary>
    public bool NewToken;

    public long? MaxData;
    public long? MaxStreamsBidirectional;
    public long? MaxStreamsUnidirectional;
    public long? StreamsBlockedBidirectional;
    public long? StreamsBlockedUnidirectional;
    public long? DataBlocked;

    /// <summary>Sequence numbers of the NEW_CONNECTION_ID frames.</summary>
    public ReusableList<ulong> NewConnectionIds;

    /// <summary>Sequence numbers of the RETIRE_CONNECTION_ID frames.</summary>
    public ReusableList<ulong> RetireConnectionIds;

    public readonly bool IsEmpty => !HandshakeDone && !PathChallenge && !NewToken && MaxData is null
        && MaxStreamsBidirectional is null && MaxStreamsUnidirectional is null && StreamsBlockedBidirectional is null
        && StreamsBlockedUnidirectional is null && DataBlocked is null && NewConnectionIds.Count == 0 && RetireConnectionIds.Count == 0;

    public void Clear()
    {
        HandshakeDone = PathChallenge = NewToken = false;
        MaxData = MaxStreamsBidirectional = MaxStreamsUnidirectional = StreamsBlockedBidirectional = StreamsBlockedUnidirectional = DataBlocked = null;
        NewConnectionIds.Clear();
        RetireConnectionIds.Clear();
    }
}
