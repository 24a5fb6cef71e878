using System.Collections.Generic;
using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Ids;

/// <summary>
/// The connection IDs the peer issued to us (RFC 9000 §5.1): the one we send to now, spares for
/// migration, the retire_prior_to floor, and the RETIRE_CONNECTION_ID frames we owe. Also answers
/// whether a datagram's tail is one of the peer's stateless reset tokens (§10.3.1).
/// </summary>
internal sealed class PeerConnectionIdSet
{
    private struct Entry
    {
        public ulong Sequence;
        public ConnectionId Id;
        public StatelessResetToken Token;
        public bool HasToken;
    }

    private readonly int _localLimit;
    private readonly List<Entry> _entries = new();
    private readonly Queue<ulong> _toRetire = new();
    private readonly HashSet<ulong> _retired = new();
    private ulong _retirePriorTo;
    private int _activeIndex;
    private int _retirementsInFlight;

    /// <param name="localActiveLimit">Our active_connection_id_limit transport parameter (at least 2).</param>
    public PeerConnectionIdSet(ulong localActiveLimit)
    {
        if (localActiveLimit < 2) throw new ArgumentOutOfRangeException(nameof(localActiveLimit), "active_connection_id_limit is at least 2 (RFC 9000 §18.2).");
        _localLimit = (int)Math.Min(localActiveLimit, 64);
    }

    /// <summary>The ID we put in the Destination Connection ID of packets we send.</summary>
    public ConnectionId Active => _entries.Count == 0 ? default : _entries[_activeIndex].Id;

    public ulong ActiveSequence => _entries.Count == 0 ? 0 : _entries[_activeIndex].Sequence;

    /// <summary>Number of IDs held and not retired.</summary>
    public int Count => _entries.Count;

    /// <summary>Changes whenever the IDs held (and so their reset tokens) may have changed: the endpoint re-indexes the tokens then.</summary>
    public int Version { get; private set; }

    /// <summary>The reset tokens of the IDs held (a new array: called only when <see cref="Version"/> changed).</summary>
    public StatelessResetToken[] ResetTokens()
    {
        int n = 0;
        foreach (Entry e in _entries) n += e.HasToken ? 1 : 0;
        if (n == 0) return [];
        var tokens = new StatelessResetToken[n];
        n = 0;
        foreach (Entry e in _entries)
        {
            if (e.HasToken) tokens[n++] = e.Token;
        }
        return tokens;
    }

    /// <summary>
    /// Sets sequence 0: the Source Connection ID of the peer's first packet (§7.2). A client calls this
    /// again when the server's first Initial replaces the random DCID it started with.
    /// </summary>
    public void SetInitial(in ConnectionId id)
    {
        Version++;
        _entries.Clear();
        _entries.Add(new Entry { Sequence = 0, Id = id });
        _activeIndex = 0;
    }

    /// <summary>The server's stateless_reset_token transport parameter belongs to sequence 0 (§18.2).</summary>
    public void SetInitialResetToken(in StatelessResetToken token)
    {
        Version++;
        for (int i = 0; i < _entries.Count; i++)
        {
            if (_entries[i].Sequence != 0) continue;
            Entry e = _entries[i];
            e.Token = token;
            e.HasToken = true;
            _entries[i] = e;
        }
    }

    /// <summary>NEW_CONNECTION_ID (§19.15), already checked for encoding (length 1..20, retire_prior_to ≤ sequence).</summary>
    public TransportErrorCode OnNewConnectionId(ulong sequence, ulong retirePriorTo, in ConnectionId id, in StatelessResetToken token, out string? reason)
    {
        reason = null;
        Version++;
        if (_entries.Count > 0 && _entries[_activeIndex].Id.Length == 0)
        {
            reason = "NEW_CONNECTION_ID sent to an endpoint using a zero-length connection ID";
            return TransportErrorCode.ProtocolViolation;
        }

        foreach (Entry e in _entries)
        {
            bool sameSequence = e.Sequence == sequence;
            bool sameId = e.Id == id;
            if (sameSequence && sameId && (!e.HasToken || e.Token.Equals(token))) return TransportErrorCode.NoError; // a repeat
            if (sameSequence || sameId)
            {
                reason = "NEW_CONNECTION_ID reuses a sequence number or connection ID with different content";
                return TransportErrorCode.ProtocolViolation;
            }
        }

        if (sequence < _retirePriorTo || _retired.Contains(sequence))
        {
            // §5.1.2: a sequence number below the floor is retired at once, unless we already did.
            if (_retired.Add(sequence)) _toRetire.Enqueue(sequence);
        }
        else
        {
            _entries.Add(new Entry { Sequence = sequence, Id = id, Token = token, HasToken = true });
        }

        if (retirePriorTo > _retirePriorTo)
        {
            _retirePriorTo = retirePriorTo;
            ConnectionId current = Active;
            for (int i = _entries.Count - 1; i >= 0; i--)
            {
                if (_entries[i].Sequence >= retirePriorTo) continue;
                Retire(_entries[i].Sequence);
                _entries.RemoveAt(i);
            }
            _retired.RemoveWhere(s => s < retirePriorTo); // the floor now covers them
            _activeIndex = IndexOf(current);
            if (_activeIndex < 0)
            {
                if (_entries.Count == 0)
                {
                    reason = "retire_prior_to retired every connection ID";
                    return TransportErrorCode.ProtocolViolation;
                }
                _activeIndex = LowestSequenceIndex();
            }
        }

        if (_entries.Count > _localLimit)
        {
            reason = "more connection IDs than our active_connection_id_limit";
            return TransportErrorCode.ConnectionIdLimitError;
        }
        // §5.1.2 asks for a bound on the IDs retired whose RETIRE_CONNECTION_ID frames are not acknowledged yet (owed
        // or in flight); a peer that forces more, e.g. by raising retire_prior_to while acknowledging none of them
        // (CVE-2024-22189), is abusive.
        if (UnacknowledgedRetirements > MaxUnacknowledgedRetirements)
        {
            reason = "too many retired connection IDs whose RETIRE_CONNECTION_ID frames are not acknowledged";
            return TransportErrorCode.ConnectionIdLimitError;
        }
        return TransportErrorCode.NoError;
    }

    /// <summary>
    /// Moves to an ID not used yet (for migration, RFC 9000 §9.5) and retires the old one.
    /// Returns false when the peer gave us no spare.
    /// </summary>
    public bool TryRotate()
    {
        if (_entries.Count < 2) return false;
        Version++;
        ulong old = _entries[_activeIndex].Sequence;
        _entries.RemoveAt(_activeIndex);
        Retire(old);
        _activeIndex = LowestSequenceIndex();
        return true;
    }

    /// <summary>True when RETIRE_CONNECTION_ID frames are owed.</summary>
    public bool HasPendingRetirement => _toRetire.Count > 0;

    /// <summary>Takes a RETIRE_CONNECTION_ID frame owed, to send now; it counts as in flight until acknowledged or lost.</summary>
    public bool TryDequeueRetirement(out ulong sequence)
    {
        if (!_toRetire.TryDequeue(out sequence)) return false;
        _retirementsInFlight++;
        return true;
    }

    /// <summary>A packet carrying RETIRE_CONNECTION_ID was lost: owe it again.</summary>
    public void OnRetirementLost(ulong sequence)
    {
        if (_retirementsInFlight > 0) _retirementsInFlight--;
        _toRetire.Enqueue(sequence);
    }

    /// <summary>A packet carrying RETIRE_CONNECTION_ID was acknowledged: that retirement is done.</summary>
    public void OnRetirementAcked()
    {
        if (_retirementsInFlight > 0) _retirementsInFlight--;
    }

    /// <summary>Retired IDs whose RETIRE_CONNECTION_ID frames are owed or sent and not acknowledged yet (§5.1.2).</summary>
    public int UnacknowledgedRetirements => _toRetire.Count + _retirementsInFlight;

    /// <summary>
    /// How many <see cref="UnacknowledgedRetirements"/> we tolerate: four times our active_connection_id_limit, above the
    /// "at least twice" RFC 9000 §5.1.2 asks for; beyond it the connection closes with CONNECTION_ID_LIMIT_ERROR.
    /// </summary>
    public int MaxUnacknowledgedRetirements => 4 * _localLimit;

    /// <summary>True when <paramref name="datagramTail"/> (a datagram's last 16 bytes) is a reset token of an ID we hold (§10.3.1).</summary>
    public bool IsStatelessReset(ReadOnlySpan<byte> datagramTail)
    {
        bool match = false;
        foreach (Entry e in _entries)
        {
            match |= e.HasToken && e.Token.FixedTimeEquals(datagramTail); // no early exit: every token is compared
        }
        return match;
    }

    private void Retire(ulong sequence)
    {
        if (sequence >= _retirePriorTo) _retired.Add(sequence);
        _toRetire.Enqueue(sequence);
    }

    private int IndexOf(in ConnectionId id)
    {
        for (int i = 0; i < _entries.Count; i++)
        {
            if (_entries[i].Id == id) return i;
        }
        return -1;
    }

    private int LowestSequenceIndex()
    {
        int best = 0;
        for (int i = 1; i < _entries.Count; i++)
        {
            if (_entries[i].Sequence < _entries[best].Sequence) best = i;
        }
        return best;
    }
}
