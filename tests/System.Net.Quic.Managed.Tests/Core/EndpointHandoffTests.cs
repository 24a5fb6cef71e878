using System.Net.Quic.Managed.Core;
using System.Net.Quic.Managed.Crypto;
using System.Net.Quic.Managed.Ids;

namespace System.Net.Quic.Managed.Tests.Core;

/// <summary>A datagram another worker of the port owns goes there with everything the owner needs, its ECN bits included.</summary>
public class EndpointHandoffTests
{
    private sealed class RecordingHandoff : IDatagramHandoff
    {
        public readonly List<(int Worker, byte[] Datagram, byte Ecn)> HandedOff = [];

        public bool TryHandOff(int worker, ReadOnlySpan<byte> datagram, in NetworkAddress remote, byte ecn)
        {
            HandedOff.Add((worker, datagram.ToArray(), ecn));
            return true;
        }
    }

    /// <summary>No connection is ever created here: the datagram must leave before routing gets that far.</summary>
    private sealed class NoConnections : IServerConnectionFactory
    {
        public bool TryCreate(in IncomingConnectionRequest request, out ConnectionOptions options, out ICryptoHandshake handshake)
            => throw new InvalidOperationException("a handed-off datagram reached the accept path");
    }

    [Theory]
    [InlineData((byte)0)]
    [InlineData((byte)1)] // ECT(1)
    [InlineData((byte)2)] // ECT(0)
    [InlineData((byte)3)] // CE: the owner must count it, or its congestion response misses a signal
    public void AShortHeaderForAnotherWorkerIsHandedOffWithItsEcnBits(byte ecn)
    {
        var random = new SeededRandomSource(11);
        var handoff = new RecordingHandoff();
        var endpoint = new Endpoint(new EndpointOptions
        {
            IsServer = true,
            ConnectionIdGenerator = new WorkerTaggedConnectionIdGenerator(new RandomConnectionIdGenerator(8), worker: 0, workerCount: 2),
            Handoff = handoff,
            Random = random,
        }, new NoConnections());
        ConnectionId other = new WorkerTaggedConnectionIdGenerator(new RandomConnectionIdGenerator(8), worker: 1, workerCount: 2).Create(random);
        byte[] datagram = new byte[60];
        datagram[0] = 0x40; // short header, fixed bit
        other.Span.CopyTo(datagram.AsSpan(1));
        endpoint.Receive(datagram, NetworkAddress.FromEndPoint(new IPEndPoint(IPAddress.Loopback, 4433)), ecn, nowUs: 1_000);
        (int worker, byte[] handed, byte handedEcn) = Assert.Single(handoff.HandedOff);
        Assert.Equal(1, worker);
        Assert.Equal(datagram, handed);
        Assert.Equal(ecn, handedEcn);
    }
}
