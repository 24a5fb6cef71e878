using System.Net.Quic.Managed.Crypto;
using System.Net.Quic.Managed.Ids;
using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Tests.Ids;

public class LocalConnectionIdSetTests
{
    private static LocalConnectionIdSet Create(int length = 8)
    {
        var random = new SeededRandomSource(42);
        ConnectionId initial = ConnectionId.Create(random, length);
        return new LocalConnectionIdSet(initial, random, new StatelessResetTokenGenerator(random));
    }

    private static List<IssuedConnectionId> DrainAdvertisements(LocalConnectionIdSet set)
    {
        var list = new List<IssuedConnectionId>();
        while (set.TryDequeueAdvertisement(out IssuedConnectionId issued)) list.Add(issued);
        return list;
    }

    [Fact]
    public void IssuesUpToThePeersLimitWithIncreasingSequenceNumbers()
    {
        LocalConnectionIdSet set = Create();
        Assert.True(set.TryDequeueRoutingChange(out ConnectionIdRoutingChange first));
        Assert.True(first.Added);
        set.SetPeerActiveLimit(4);
        List<IssuedConnectionId> sent = DrainAdvertisements(set);
        Assert.Equal(new ulong[] { 1, 2, 3 }, sent.Select(s => s.SequenceNumber));
        Assert.Equal(4, set.ActiveCount);
        Assert.All(sent, s => Assert.Equal(8, s.Id.Length));
        Assert.Equal(3, sent.Select(s => s.Id).Distinct().Count());
    }

    [Fact]
    public void CapsAtMaxActiveWhateverThePeerAllows()
    {
        LocalConnectionIdSet set = Create();
        set.SetPeerActiveLimit(1000);
        Assert.Equal(LocalConnectionIdSet.MaxActive, set.ActiveCount);
    }

    [Fact]
    public void ZeroLengthIdsAreNeverIssued()
    {
        LocalConnectionIdSet set = Create(0);
        set.SetPeerActiveLimit(8);
        Assert.Equal(1, set.ActiveCount);
        Assert.Empty(DrainAdvertisements(set));
    }

    [Fact]
    public void RetireReplacesTheIdAndUpdatesRouting()
    {
        LocalConnectionIdSet set = Create();
        set.SetPeerActiveLimit(2);
        IssuedConnectionId one = DrainAdvertisements(set).Single();
        while (set.TryDequeueRoutingChange(out _)) { }

        ConnectionId packetDcid = set.Active.First(a => a.SequenceNumber == 0).Id;
        Assert.Equal(TransportErrorCode.NoError, set.OnRetire(1, packetDcid));
        Assert.False(set.Contains(one.Id));
        Assert.True(set.TryDequeueRoutingChange(out ConnectionIdRoutingChange removed));
        Assert.Equal(one.Id, removed.Id);
        Assert.False(removed.Added);
        Assert.True(set.TryDequeueRoutingChange(out ConnectionIdRoutingChange added));
        Assert.True(added.Added);
        Assert.Equal(2UL, DrainAdvertisements(set).Single().SequenceNumber);
        // A repeat of the same RETIRE_CONNECTION_ID is harmless.
        Assert.Equal(TransportErrorCode.NoError, set.OnRetire(1, packetDcid));
    }

    [Fact]
    public void RetiringAnUnissuedSequenceIsAProtocolViolation()
    {
        LocalConnectionIdSet set = Create();
        set.SetPeerActiveLimit(2);
        Assert.Equal(TransportErrorCode.ProtocolViolation, set.OnRetire(5, default));
    }

    [Fact]
    public void RetiringTheIdThePacketWasSentToIsAProtocolViolation()
    {
        LocalConnectionIdSet set = Create();
        set.SetPeerActiveLimit(2);
        IssuedConnectionId one = DrainAdvertisements(set).Single();
        Assert.Equal(TransportErrorCode.ProtocolViolation, set.OnRetire(1, one.Id));
    }

    [Fact]
    public void LostAdvertisementIsResentOnlyWhileActive()
    {
        LocalConnectionIdSet set = Create();
        set.SetPeerActiveLimit(3);
        DrainAdvertisements(set);
        set.OnAdvertisementLost(2);
        Assert.Equal(2UL, DrainAdvertisements(set).Single().SequenceNumber);
        ConnectionId zero = set.Active.First(a => a.SequenceNumber == 0).Id;
        set.OnRetire(2, zero);
        DrainAdvertisements(set); // the replacement (sequence 3)
        set.OnAdvertisementLost(2);
        Assert.Empty(DrainAdvertisements(set));
    }
}
