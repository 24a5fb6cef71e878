using System.Net.Quic.Managed.Core;

namespace System.Net.Quic.Managed.Tests.Core;

public class PendingStreamEventsTests
{
    [Fact]
    public void EachStreamHasAtMostOneEventWaitingWhateverTheOrder()
    {
        var pending = new PendingStreamEvents();
        Assert.True(pending.Add(4));
        Assert.False(pending.Add(4)); // the remembered id
        Assert.True(pending.Add(8));
        Assert.False(pending.Add(4)); // in the set, no longer the last one
        Assert.False(pending.Add(8));

        pending.Remove(4);
        Assert.False(pending.Add(8)); // removing another id keeps the remembered one
        Assert.True(pending.Add(4));

        pending.Remove(4);            // the remembered id leaves: the next add of it queues again
        Assert.True(pending.Add(4));
        pending.Remove(8);
        pending.Remove(8);            // already gone: nothing changes
        Assert.True(pending.Add(8));
        Assert.False(pending.Add(4));
    }
}
