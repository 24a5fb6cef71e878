using System.Net.Quic.Managed.Streams;
using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Tests.Streams;

public class StreamLimitTests
{
    [Fact]
    public void LocalOpenRefusedBeyondPeerLimitAndBlockedSignalledOnce()
    {
        var limit = new LocalStreamLimit(isServer: false, unidirectional: true, peerMaxStreams: 2);
        Assert.True(limit.TryOpen(out long a));
        Assert.True(limit.TryOpen(out long b));
        Assert.Equal(2L, a); // client uni: 2, 6
        Assert.Equal(6L, b);
        Assert.False(limit.NeedsStreamsBlocked); // nobody asked for more yet
        Assert.False(limit.TryOpen(out long c));
        Assert.Equal(-1, c);
        Assert.True(limit.NeedsStreamsBlocked);
        limit.OnStreamsBlockedSent(2);
        Assert.False(limit.NeedsStreamsBlocked);
        limit.OnStreamsBlockedLost(2);
        Assert.True(limit.NeedsStreamsBlocked);
        limit.OnStreamsBlockedSent(2);

        Assert.Equal(TransportErrorCode.NoError, limit.OnMaxStreams(1, out _)); // smaller: ignored
        Assert.Equal(2, limit.MaxStreams);
        Assert.Equal(TransportErrorCode.NoError, limit.OnMaxStreams(3, out _));
        Assert.False(limit.NeedsStreamsBlocked);
        Assert.True(limit.TryOpen(out long d));
        Assert.Equal(10L, d);
        Assert.True(limit.IsOpened(10));
        Assert.False(limit.IsOpened(14));
    }

    [Fact]
    public void MaxStreamsAboveTwoToThe60IsFrameEncodingError()
    {
        var limit = new LocalStreamLimit(isServer: true, unidirectional: false);
        Assert.Equal(TransportErrorCode.NoError, limit.OnMaxStreams(StreamId.MaxStreamCount, out _));
        Assert.Equal(TransportErrorCode.FrameEncodingError, limit.OnMaxStreams(StreamId.MaxStreamCount + 1, out string? reason));
        Assert.NotNull(reason);
        var remote = new RemoteStreamLimit(isServer: true, unidirectional: false, concurrency: 4);
        Assert.Equal(TransportErrorCode.FrameEncodingError, remote.OnStreamsBlocked(StreamId.MaxStreamCount + 1, out _));
        Assert.Equal(TransportErrorCode.NoError, remote.OnStreamsBlocked(4, out _));
    }

    [Fact]
    public void PeerBeyondOurLimitIsStreamLimitErrorAndLowerStreamsOpenImplicitly()
    {
        var remote = new RemoteStreamLimit(isServer: true, unidirectional: false, concurrency: 3);
        // Client bidi ids: 0, 4, 8, 12. Limit 3 allows 0, 4, 8.
        Assert.Equal(TransportErrorCode.StreamLimitError, remote.OnPeerStream(12, out _, out _, out _));
        Assert.Equal(0, remote.OpenedCount);
        Assert.Equal(TransportErrorCode.NoError, remote.OnPeerStream(8, out long first, out long count, out _));
        Assert.Equal((0L, 3L), (first, count)); // 0 and 4 open implicitly. RFC 9000 §3.2
        Assert.Equal(TransportErrorCode.NoError, remote.OnPeerStream(4, out _, out count, out _));
        Assert.Equal(0, count);
        Assert.True(remote.IsOpened(4));
        Assert.False(remote.IsOpened(12));
    }

    [Fact]
    public void MaxStreamsNeedsAPacketOfItsOwnOnlyWhenThePeerIsBelowHalfItsLimit()
    {
        var remote = new RemoteStreamLimit(isServer: true, unidirectional: false, concurrency: 4);
        Assert.Equal(TransportErrorCode.NoError, remote.OnPeerStream(StreamId.Make(0, false, false), out _, out _, out _));
        remote.OnStreamClosed();
        Assert.True(remote.NeedsMaxStreams);
        Assert.False(remote.NeedsMaxStreamsPacket); // the peer may still open 3 of 4: the credit rides with a later packet
        Assert.Equal(TransportErrorCode.NoError, remote.OnPeerStream(StreamId.Make(2, false, false), out _, out _, out _));
        Assert.True(remote.NeedsMaxStreamsPacket); // 1 of 4 left
        Assert.Equal(5, remote.CommitMaxStreams());
        Assert.False(remote.NeedsMaxStreamsPacket);
        remote.OnMaxStreamsLost(5);
        Assert.True(remote.NeedsMaxStreamsPacket); // a lost one is repeated at once
    }

    [Fact]
    public void MaxStreamsKeepsPeerCreditToppedUp()
    {
        var remote = new RemoteStreamLimit(isServer: false, unidirectional: true, concurrency: 4);
        Assert.Equal(TransportErrorCode.NoError, remote.OnPeerStream(StreamId.Make(3, true, true), out _, out _, out _));
        Assert.False(remote.NeedsMaxStreams);
        remote.OnStreamClosed();
        Assert.True(remote.NeedsMaxStreams); // each returned stream is advertised at once, as msquic does
        Assert.Equal(5, remote.CommitMaxStreams());
        Assert.False(remote.NeedsMaxStreams);
        remote.OnStreamClosed();
        Assert.True(remote.NeedsMaxStreams);
        Assert.Equal(6, remote.CommitMaxStreams());
        Assert.False(remote.NeedsMaxStreams);
        remote.OnMaxStreamsLost(6);
        Assert.True(remote.NeedsMaxStreams);
        Assert.Equal(6, remote.CommitMaxStreams());
        remote.OnMaxStreamsLost(4); // stale
        Assert.False(remote.NeedsMaxStreams);
        Assert.Equal(TransportErrorCode.NoError, remote.OnPeerStream(StreamId.Make(5, true, true), out _, out _, out _));
        Assert.Equal(TransportErrorCode.StreamLimitError, remote.OnPeerStream(StreamId.Make(6, true, true), out _, out _, out _));
        remote.OnStreamClosed();
        remote.OnStreamClosed();
        remote.OnStreamClosed();
        remote.OnStreamClosed();
        Assert.Throws<InvalidOperationException>(() => remote.OnStreamClosed());
    }
}
