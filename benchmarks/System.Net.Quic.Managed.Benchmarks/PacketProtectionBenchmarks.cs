using System.Net.Quic.Managed.Crypto;
using System.Net.Quic.Managed.Wire;
using System.Net.Security;
using BenchmarkDotNet.Attributes;

namespace System.Net.Quic.Managed.Benchmarks;

/// <summary>
/// Protecting and opening one 1-RTT (short header) packet in place (RFC 9001 §5.3, §5.4): 1,200 bytes (the minimum
/// QUIC datagram) and 1,452 bytes (a full 1,500-byte Ethernet MTU over IPv4/UDP with room for IPv6).
/// The per-packet path is expected to allocate 0 bytes. <see cref="BclAesGcm"/> true runs the AES-GCM suite through
/// System.Security.Cryptography.AesGcm (OpenSSL) instead of the AES-NI/PCLMULQDQ implementation, for comparison (each
/// case runs in its own process, so the AppContext switch is read fresh).
/// </summary>
[MemoryDiagnoser]
public class PacketProtectionBenchmarks
{
    private const int PnOffset = 1 + 8; // first byte + 8-byte DCID
    private const int PnLength = 4;

    private PacketProtectionKeys _sender = null!;
    private PacketProtectionKeys _receiver = null!;
    private byte[] _packet = null!;
    private byte[] _protectedTemplate = null!;
    private ulong _packetNumber;

    [Params(TlsCipherSuite.TLS_AES_128_GCM_SHA256, TlsCipherSuite.TLS_CHACHA20_POLY1305_SHA256)]
    public TlsCipherSuite Suite { get; set; }

    [Params(false, true)]
    public bool BclAesGcm { get; set; }

    [Params(1200, 1452)]
    public int PacketLength { get; set; }

    private int PayloadLength => PacketLength - PnOffset - PnLength - PacketProtectionKeys.TagLength;

    [GlobalSetup]
    public void Setup()
    {
        if (BclAesGcm) AppContext.SetSwitch("System.Net.Quic.Managed.DisableAesNiGcm", true);
        byte[] secret = new byte[32];
        new Random(9001).NextBytes(secret);
        _sender = PacketProtectionKeys.Create(secret, Suite, QuicVersion.V1);
        _receiver = PacketProtectionKeys.Create(secret, Suite, QuicVersion.V1);
        _packet = new byte[PacketLength];
        new Random(1).NextBytes(_packet);
        _packet[0] = 0x43; // short header, 4-byte packet number
        _protectedTemplate = (byte[])_packet.Clone();
        _sender.Protect(_protectedTemplate, PnOffset, PnLength, 12345, PayloadLength);
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        _sender.Dispose();
        _receiver.Dispose();
    }

    [Benchmark]
    public int Protect()
    {
        _packet[0] = 0x43;
        return _sender.Protect(_packet, PnOffset, PnLength, _packetNumber++, PayloadLength);
    }

    [Benchmark]
    public int Unprotect()
    {
        _protectedTemplate.CopyTo(_packet, 0);
        if (!_receiver.TryRemoveHeaderProtection(_packet, PnOffset, out int pnLength, out uint truncatedPn)) return -1;
        _receiver.TryDecrypt(_packet, PnOffset + pnLength, truncatedPn, PacketLength - PnOffset - pnLength, out int plaintextLength);
        return plaintextLength;
    }
}
