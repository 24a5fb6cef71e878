using System.Net.Quic.Managed.Ids;
using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Tests.Ids;

public class PeerConnectionIdSetTests
{
    private static ConnectionId Cid(byte b) => new(new byte[] { b, b, b, b, b, b, b, b });

    private static StatelessResetToken Token(byte b) => new(Enumerable.Repeat(b, 16).ToArray());

    private static PeerConnectionIdSet Create(ulong limit = 4)
    {
        var set = new PeerConnectionIdSet(limit);
        set.SetInitial(Cid(0));
        return set;
    }

    private static List<ulong> DrainRetirements(PeerConnectionIdSet set)
    {
        var list = new List<ulong>();
        while (set.TryDequeueRetirement(out ulong s)) list.Add(s);
        return list;
    }

    [Fact]
    public void AcceptsNewIdsUpToTheLimitAndRejectsMore()
    {
        PeerConnectionIdSet set = Create(limit: 3);
        Assert.Equal(TransportErrorCode.NoError, set.OnNewConnectionId(1, 0, Cid(1), Token(1), out _));
        Assert.Equal(TransportErrorCode.NoError, set.OnNewConnectionId(2, 0, Cid(2), Token(2), out _));
        Assert.Equal(TransportErrorCode.ConnectionIdLimitError, set.OnNewConnectionId(3, 0, Cid(3), Token(3), out string? reason));
        Assert.NotNull(reason);
    }

    [Fact]
    public void RepeatedFrameIsNotAnError()
    {
        PeerConnectionIdSet set = Create();
        Assert.Equal(TransportErrorCode.NoError, set.OnNewConnectionId(1, 0, Cid(1), Token(1), out _));
        Assert.Equal(TransportErrorCode.NoError, set.OnNewConnectionId(1, 0, Cid(1), Token(1), out _));
        Assert.Equal(2, set.Count);
    }

    [Theory]
    [InlineData(1, 9, 1)]  // same sequence, different ID
    [InlineData(2, 1, 1)]  // same ID, different sequence
    [InlineData(1, 1, 7)]  // same sequence and ID, different token
    public void ConflictingReuseIsAProtocolViolation(ulong seq, byte cid, byte token)
    {
        PeerConnectionIdSet set = Create();
        Assert.Equal(TransportErrorCode.NoError, set.OnNewConnectionId(1, 0, Cid(1), Token(1), out _));
        Assert.Equal(TransportErrorCode.ProtocolViolation, set.OnNewConnectionId(seq, 0, Cid(cid), Token(token), out _));
    }

    [Fact]
    public void RetirePriorToRetiresOlderIdsAndMovesTheActiveOne()
    {
        PeerConnectionIdSet set = Create();
        set.OnNewConnectionId(1, 0, Cid(1), Token(1), out _);
        Assert.Equal(Cid(0), set.Active);
        Assert.Equal(TransportErrorCode.NoError, set.OnNewConnectionId(2, 2, Cid(2), Token(2), out _));
        Assert.Equal(Cid(2), set.Active);
        Assert.Equal(new ulong[] { 0, 1 }, DrainRetirements(set).OrderBy(s => s));
        Assert.Equal(1, set.Count);
    }

    [Fact]
    public void IdBelowTheFloorIsRetiredAtOnceAndOnlyOnce()
    {
        PeerConnectionIdSet set = Create();
        set.OnNewConnectionId(3, 3, Cid(3), Token(3), out _);
        DrainRetirements(set);
        Assert.Equal(TransportErrorCode.NoError, set.OnNewConnectionId(1, 0, Cid(1), Token(1), out _));
        Assert.Equal(new ulong[] { 1 }, DrainRetirements(set));
        Assert.Equal(TransportErrorCode.NoError, set.OnNewConnectionId(1, 0, Cid(1), Token(1), out _));
        Assert.Empty(DrainRetirements(set));
        Assert.Equal(Cid(3), set.Active);
    }

    [Fact]
    public void RotateUsesASpareAndRetiresTheOldId()
    {
        PeerConnectionIdSet set = Create();
        Assert.False(set.TryRotate());
        set.OnNewConnectionId(1, 0, Cid(1), Token(1), out _);
        Assert.True(set.TryRotate());
        Assert.Equal(Cid(1), set.Active);
        Assert.Equal(new ulong[] { 0 }, DrainRetirements(set));
        // A retransmitted NEW_CONNECTION_ID for the retired ID does not bring it back.
        Assert.Equal(TransportErrorCode.NoError, set.OnNewConnectionId(0, 0, Cid(0), Token(0), out _));
        Assert.Equal(Cid(1), set.Active);
        Assert.Equal(1, set.Count);
    }

    [Fact]
    public void ZeroLengthPeerIdMakesNewConnectionIdAProtocolViolation()
    {
        var set = new PeerConnectionIdSet(2);
        set.SetInitial(ConnectionId.Empty);
        Assert.Equal(TransportErrorCode.ProtocolViolation, set.OnNewConnectionId(1, 0, Cid(1), Token(1), out _));
    }

    [Fact]
    public void DetectsStatelessResetByAnyHeldToken()
    {
        PeerConnectionIdSet set = Create();
        set.SetInitialResetToken(Token(0xAA));
        set.OnNewConnectionId(1, 0, Cid(1), Token(0xBB), out _);
        Assert.True(set.IsStatelessReset(Enumerable.Repeat((byte)0xAA, 16).ToArray()));
        Assert.True(set.IsStatelessReset(Enumerable.Repeat((byte)0xBB, 16).ToArray()));
        Assert.False(set.IsStatelessReset(Enumerable.Repeat((byte)0xCC, 16).ToArray()));
    }

    [Fact]
    public void TooManyRetirementsOwedIsAnError()
    {
        PeerConnectionIdSet set = Create(limit: 2);
        TransportErrorCode last = TransportErrorCode.NoError;
        // Each frame raises the floor, retiring the previous ID; we never send the RETIRE frames.
        for (ulong i = 1; i < 50 && last == TransportErrorCode.NoError; i++)
        {
            last = set.OnNewConnectionId(i, i, Cid((byte)i), Token((byte)i), out _);
        }
        Assert.Equal(TransportErrorCode.ConnectionIdLimitError, last);
    }

    [Fact]
    public void RetirementsSentButNeverAcknowledgedCountTowardTheBound()
    {
        PeerConnectionIdSet set = Create(limit: 2);
        TransportErrorCode last = TransportErrorCode.NoError;
        ulong i = 1;
        // One retirement a frame, each RETIRE_CONNECTION_ID sent at once and never acknowledged (CVE-2024-22189).
        for (; i < 50 && last == TransportErrorCode.NoError; i++)
        {
            last = set.OnNewConnectionId(i, i, Cid((byte)i), Token((byte)i), out _);
            while (set.TryDequeueRetirement(out _)) { }
        }
        Assert.Equal(TransportErrorCode.ConnectionIdLimitError, last);
        Assert.Equal(set.MaxUnacknowledgedRetirements + 1, set.UnacknowledgedRetirements);
    }

    [Fact]
    public void AcknowledgedRetirementsFreeTheBound()
    {
        PeerConnectionIdSet set = Create(limit: 2);
        for (ulong i = 1; i < 200; i++)
        {
            Assert.Equal(TransportErrorCode.NoError, set.OnNewConnectionId(i, i, Cid((byte)i), Token((byte)i), out _));
            while (set.TryDequeueRetirement(out ulong s))
            {
                if (s % 2 == 0) set.OnRetirementAcked();
                else
                {
                    set.OnRetirementLost(s); // owed again, then sent and acknowledged
                    Assert.True(set.TryDequeueRetirement(out ulong again));
                    Assert.Equal(s, again);
                    set.OnRetirementAcked();
                }
            }
            Assert.Equal(0, set.UnacknowledgedRetirements);
        }
    }

    [Fact]
    public void LimitBelowTwoIsRejected() => Assert.Throws<ArgumentOutOfRangeException>(() => new PeerConnectionIdSet(1));
}
