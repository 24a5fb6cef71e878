using System.Net.Quic.Managed.Crypto;
using System.Net.Quic.Managed.Wire;
using System.Net.Security;

namespace System.Net.Quic.Managed.Tests.Crypto;

/// <summary>The per-packet path must not allocate (PREAMBLE: no per-packet allocation).</summary>
public class PacketProtectionAllocationTests
{
    [Theory]
    [InlineData(TlsCipherSuite.TLS_AES_128_GCM_SHA256, 32)]
    [InlineData(TlsCipherSuite.TLS_AES_256_GCM_SHA384, 48)]
    [InlineData(TlsCipherSuite.TLS_CHACHA20_POLY1305_SHA256, 32)]
    public void ProtectAndOpen_AllocateNothing(TlsCipherSuite suite, int secretLength)
    {
        byte[] secret = new byte[secretLength];
        new Random(42).NextBytes(secret);
        using PacketProtectionKeys sender = PacketProtectionKeys.Create(secret, suite, QuicVersion.V1);
        using PacketProtectionKeys receiver = PacketProtectionKeys.Create(secret, suite, QuicVersion.V1);
        byte[] packet = new byte[1200];
        const int pnOffset = 9, pnLength = 4, payloadLength = 1200 - 9 - 4 - 16;

        RoundTrip(sender, receiver, packet, 0); // warm up (JIT, native contexts)
        long before = GC.GetAllocatedBytesForCurrentThread();
        for (ulong pn = 1; pn <= 200; pn++)
        {
            RoundTrip(sender, receiver, packet, pn);
        }
        long allocated = GC.GetAllocatedBytesForCurrentThread() - before;
        Assert.Equal(0, allocated);

        static void RoundTrip(PacketProtectionKeys s, PacketProtectionKeys r, byte[] packet, ulong pn)
        {
            packet[0] = 0x43;
            s.Protect(packet, pnOffset, pnLength, pn, payloadLength);
            if (!r.TryRemoveHeaderProtection(packet, pnOffset, out int len, out uint truncated)) throw new InvalidOperationException("hp");
            if (!r.TryDecrypt(packet, pnOffset + len, truncated, payloadLength + 16, out _)) throw new InvalidOperationException("aead");
        }
    }

    [Fact]
    public void RetryTag_AllocatesNothingAfterWarmUp()
    {
        byte[] odcid = Convert.FromHexString("8394c8f03e515708");
        byte[] retry = new byte[60];
        Span<byte> tag = stackalloc byte[16];
        RetryIntegrity.TryComputeTag(QuicVersion.V1, odcid, retry, tag);
        long before = GC.GetAllocatedBytesForCurrentThread();
        for (int i = 0; i < 50; i++)
        {
            RetryIntegrity.TryComputeTag(QuicVersion.V1, odcid, retry, tag);
        }
        Assert.Equal(0, GC.GetAllocatedBytesForCurrentThread() - before);
    }
}
