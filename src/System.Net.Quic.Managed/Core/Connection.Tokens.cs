using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Core;

/// <summary>Address-validation tokens carried in NEW_TOKEN (RFC 9000 §8.1.3, §19.7).</summary>
internal sealed partial class Connection
{
    /// <summary>Server: a NEW_TOKEN token was queued for this connection (one per connection).</summary>
    public bool NewTokenIssued { get; private set; }

    /// <summary>Server: send <paramref name="token"/> in a NEW_TOKEN frame (repeated if lost).</summary>
    public void QueueNewToken(byte[] token)
    {
        RequestService();
        if (!IsServer) throw new InvalidOperationException("Only a server sends NEW_TOKEN (RFC 9000 §19.7).");
        NewTokenIssued = true;
        _newTokenToSend = token;
    }

    /// <summary>Server: the client's Initial carried a valid token from an earlier connection: its address is validated (§8.1.3).</summary>
    public void OnAddressValidatedByToken()
    {
        RequestService();
        _path.Amplification.OnAddressValidated();
    }

    private bool WriteNewToken(ref QuicWriter writer, SentFrames frames)
    {
        if (_newTokenToSend is null) return false;
        var frame = new NewTokenFrame(_newTokenToSend);
        if (writer.Remaining < frame.EncodedLength) return false;
        RequireWritten(frame.TryWrite(ref writer), FrameType.NewToken);
        frames.Retransmits.NewToken = true;
        _pendingNewTokenInFlight = _newTokenToSend;
        _newTokenToSend = null;
        return true;
    }

    private void OnNewTokenLost()
    {
        if (_pendingNewTokenInFlight is not null) _newTokenToSend ??= _pendingNewTokenInFlight;
    }
}
