using System.Net.Quic.Managed.Core;
using System.Net.Quic.Managed.Crypto;
using System.Net.Quic.Managed.Tests.Wire;
using System.Net.Quic.Managed.Tls;
using System.Net.Quic.Managed.Wire;
using QuicManaged.Tools.DatagramDumper;

namespace System.Net.Quic.Managed.Tests.Core;

/// <summary>
/// <see cref="ClientHelloPeek"/>: the SNI of a client's first Initial, read before any connection exists, without
/// touching the datagram and without ever throwing on attacker bytes.
/// </summary>
public class ClientHelloPeekTests
{
    private static readonly byte[] Dcid = Convert.FromHexString("8394c8f03e515708");
    private static readonly byte[] Scid = Convert.FromHexString("c0ffee");

    [Fact]
    public void ReadsTheServerNameOfTheRfc9001ClientInitial()
    {
        // RFC 9001 Appendix A.2: the ClientHello in the protected sample names "example.com".
        byte[] datagram = Convert.FromHexString(string.Concat(SampleDatagrams.Rfc9001ClientInitial.Where(c => !char.IsWhiteSpace(c))));
        Assert.Equal(1200, datagram.Length);
        byte[] before = (byte[])datagram.Clone();
        Assert.Equal("example.com", ClientHelloPeek.TryReadServerName(datagram));
        Assert.Equal(before, datagram); // the connection opens the original: the peek works on a copy
    }

    [Theory]
    [InlineData(QuicVersion.V1)]
    [InlineData(QuicVersion.V2)]
    public void ReadsTheServerNameOfAClientHelloSplitIntoReorderedCryptoFrames(uint version)
    {
        byte[] hello = EncodeClientHello("api.example.test");
        int a = hello.Length / 3, b = 2 * hello.Length / 3;
        // Chrome-style: the ClientHello in three CRYPTO frames, last first, with PING and PADDING between them.
        byte[] payload = Frames(
            Crypto(b, hello.AsSpan(b)), [0x01], Crypto(0, hello.AsSpan(0, a)), [0x00, 0x00], Crypto(a, hello.AsSpan(a, b - a)));
        Assert.Equal("api.example.test", ClientHelloPeek.TryReadServerName(InitialDatagram(version, payload)));
    }

    [Fact]
    public void ReadsTheServerNameAcrossCoalescedInitialPackets()
    {
        byte[] hello = EncodeClientHello("coalesced.example");
        int half = hello.Length / 2;
        byte[] first = Protect(QuicVersion.V1, Dcid, 0, Frames(Crypto(half, hello.AsSpan(half))));
        byte[] second = Protect(QuicVersion.V1, Dcid, 1, Pad(Frames(Crypto(0, hello.AsSpan(0, half))), 1200 - first.Length - 60));
        Assert.Equal("coalesced.example", ClientHelloPeek.TryReadServerName([.. first, .. second]));
    }

    [Fact]
    public void AnIncompleteClientHelloGivesNoName()
    {
        // The ClientHello continues in a second datagram (RFC 9001 §4.3 allows it): the name is not known yet.
        byte[] hello = EncodeClientHello("split.example");
        byte[] payload = Frames(Crypto(0, hello.AsSpan(0, hello.Length - 1)));
        Assert.Null(ClientHelloPeek.TryReadServerName(InitialDatagram(QuicVersion.V1, payload)));
        // A gap at the start is the same: nothing contiguous from offset 0.
        Assert.Null(ClientHelloPeek.TryReadServerName(InitialDatagram(QuicVersion.V1, Frames(Crypto(1, hello.AsSpan(1))))));
    }

    [Fact]
    public void NoSniOrWrongKeysOrNotAnInitialGivesNoName()
    {
        Assert.Null(ClientHelloPeek.TryReadServerName(InitialDatagram(QuicVersion.V1, Frames(Crypto(0, EncodeClientHello(null))))));
        // Protected with keys of another DCID than the one in the header: does not open.
        byte[] packet = Protect(QuicVersion.V1, Dcid, 0, Pad(Frames(Crypto(0, EncodeClientHello("x.example"))), 1100), keyDcid: Scid);
        Assert.Null(ClientHelloPeek.TryReadServerName(packet));
        Assert.Null(ClientHelloPeek.TryReadServerName([]));
        Assert.Null(ClientHelloPeek.TryReadServerName(new byte[1200])); // short header form
    }

    [Fact]
    public void NeverThrowsOnMutatedOrRandomDatagrams()
    {
        // Seeded and bounded: mutations of the protected datagram (mostly rejected by the AEAD), and valid protection
        // around mutated plaintext (frames and ClientHello bytes reach the parsers).
        var mutator = new InputMutator(seed: 5150);
        byte[] hello = EncodeClientHello("fuzz.example");
        byte[] plaintext = Frames(Crypto(0, hello.AsSpan(0, 40)), Crypto(40, hello.AsSpan(40)));
        byte[] protectedDatagram = InitialDatagram(QuicVersion.V1, plaintext);
        int named = 0;
        for (int i = 0; i < 3000; i++)
        {
            byte[] input = i % 2 == 0
                ? mutator.Mutate(protectedDatagram)
                : Protect(QuicVersion.V1, Dcid, i, Pad(mutator.Mutate(plaintext), 1100));
            string? name = ClientHelloPeek.TryReadServerName(input);
            if (name is not null)
            {
                named++;
                Assert.All(name, c => Assert.InRange(c, '!', '~')); // ClientHello.TryDecode admits printable ASCII only
            }
        }
        Assert.InRange(named, 1, 2999); // the unmutated cases (and benign mutations) still name the host
    }

    private static byte[] EncodeClientHello(string? serverName)
    {
        var hello = new ClientHello { ServerName = serverName };
        hello.CipherSuites.Add(0x1301);
        hello.SupportedGroups.Add(0x001d);
        hello.KeyShares.Add(new KeyShareEntry(0x001d, new byte[32]));
        hello.SignatureAlgorithms.Add(0x0403);
        hello.ApplicationProtocols.Add("h3"u8.ToArray());
        hello.TransportParameters = [0x01, 0x02, 0x67, 0x10];
        var writer = new TlsWriter();
        hello.Encode(writer);
        return writer.ToArray();
    }

    private static byte[] Crypto(long offset, ReadOnlySpan<byte> data)
        => new RawFrameBuilder().VarInt(0x06).VarInt((ulong)offset).VarInt((ulong)data.Length).Bytes(data).ToArray();

    private static byte[] Frames(params byte[][] frames) => frames.SelectMany(f => f).ToArray();

    private static byte[] Pad(byte[] payload, int length) => payload.Length >= length ? payload : [.. payload, .. new byte[length - payload.Length]];

    /// <summary>One Initial packet in a 1200-byte datagram (RFC 9000 §14.1), PADDING frames filling the rest.</summary>
    private static byte[] InitialDatagram(uint version, byte[] payload)
    {
        int overhead = Protect(version, Dcid, 0, [0, 0, 0, 0]).Length - 4;
        return Protect(version, Dcid, 0, Pad(payload, 1200 - overhead));
    }

    /// <summary>Builds and protects a client Initial (RFC 9000 §17.2.2, RFC 9001 §5) with a 4-byte packet number.</summary>
    private static byte[] Protect(uint version, byte[] dcid, long packetNumber, byte[] payload, byte[]? keyDcid = null)
    {
        const int pnLength = 4;
        int typeBits = version == QuicVersion.V2 ? 0b01 : 0b00; // RFC 9369 §3.2: Initial is type 0b01 in v2
        var header = new List<byte> { (byte)(0xC0 | (typeBits << 4) | (pnLength - 1)) };
        header.AddRange([(byte)(version >> 24), (byte)(version >> 16), (byte)(version >> 8), (byte)version]);
        header.Add((byte)dcid.Length);
        header.AddRange(dcid);
        header.Add((byte)Scid.Length);
        header.AddRange(Scid);
        header.Add(0); // token length
        int length = pnLength + payload.Length + PacketProtectionKeys.TagLength;
        header.Add((byte)(0x40 | (length >> 8)));
        header.Add((byte)length);
        int pnOffset = header.Count;
        byte[] packet = new byte[pnOffset + length];
        header.CopyTo(packet);
        payload.CopyTo(packet, pnOffset + pnLength);
        using InitialKeys keys = InitialKeys.Create(version, keyDcid ?? dcid);
        keys.Client.Protect(packet, pnOffset, pnLength, (ulong)packetNumber, payload.Length);
        return packet;
    }
}
