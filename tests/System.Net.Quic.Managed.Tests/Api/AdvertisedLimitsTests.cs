using static System.Net.Quic.Managed.Tests.Api.QuicApiTestEnvironment;
using System.Net.Quic.Managed.Bridge;

namespace System.Net.Quic.Managed.Tests.Api;

/// <summary>What the public API's connections advertise must match what the I/O layer can take.</summary>
public class AdvertisedLimitsTests
{
    [Fact]
    public async Task MaxUdpPayloadSizeIsWhatEveryReceivePathAccepts()
    {
        await using QuicListener listener = await ListenAsync(QuicProvider.Managed);
        var (client, server) = await ConnectPairAsync(QuicProvider.Managed, listener);
        await using (client)
        await using (server)
        {
            // RFC 9000 §18.2: a peer must not send datagrams above it; the recvmmsg path without GRO reads 4 KiB slots.
            Assert.Equal((ulong)System.Net.Quic.Managed.Io.UdpReceiver.MaxReceivableDatagram, ((ManagedConnection)client.Impl).Core!.PeerParameters!.MaxUdpPayloadSize);
            Assert.Equal((ulong)System.Net.Quic.Managed.Io.UdpReceiver.MaxReceivableDatagram, ((ManagedConnection)server.Impl).Core!.PeerParameters!.MaxUdpPayloadSize);
        }
    }
}
