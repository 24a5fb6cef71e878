using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Tests.Wire;

public class TransportParametersTests
{
    // RFC 9001 Appendix A.2: the body of the client's quic_transport_parameters extension (type 0x0039, length 0x32).
    private const string Rfc9001ClientParameters =
        "0408ffffffffffffffff05048000ffff07048000ffff08011001048000" +
        "75300901100f088394c8f03e51570806048000ffff";

    [Fact]
    public void Rfc9001ClientParametersDecode()
    {
        byte[] encoded = Convert.FromHexString(Rfc9001ClientParameters);
        Assert.Equal(0x32, encoded.Length);
        Assert.Equal(TransportErrorCode.NoError, TransportParameters.TryDecode(encoded, sentByServer: false, out TransportParameters? p, out string? reason));
        Assert.Null(reason);
        Assert.NotNull(p);
        Assert.Equal(VariableLengthInteger.MaxValue, p.InitialMaxData);
        Assert.Equal(0xffffUL, p.InitialMaxStreamDataBidiLocal);
        Assert.Equal(0xffffUL, p.InitialMaxStreamDataBidiRemote);
        Assert.Equal(0xffffUL, p.InitialMaxStreamDataUni);
        Assert.Equal(16UL, p.InitialMaxStreamsBidi);
        Assert.Equal(16UL, p.InitialMaxStreamsUni);
        Assert.Equal(30000UL, p.MaxIdleTimeoutMs);
        Assert.Equal("8394c8f03e515708", Convert.ToHexStringLower(p.InitialSourceConnectionId!));

        // Defaults for everything absent. RFC 9000 §18.2.
        Assert.Equal(65527UL, p.MaxUdpPayloadSize);
        Assert.Equal(3UL, p.AckDelayExponent);
        Assert.Equal(25UL, p.MaxAckDelayMs);
        Assert.Equal(2UL, p.ActiveConnectionIdLimit);
        Assert.False(p.DisableActiveMigration);
        Assert.Null(p.MaxDatagramFrameSize);
        Assert.False(p.GreaseQuicBit);
        Assert.Null(p.PreferredAddress);
        Assert.Null(p.OriginalDestinationConnectionId);
        Assert.Null(p.StatelessResetToken);
        Assert.Null(p.RetrySourceConnectionId);
    }

    internal static TransportParameters EveryParameter() => new()
    {
        OriginalDestinationConnectionId = [1, 2, 3, 4, 5, 6, 7, 8],
        MaxIdleTimeoutMs = 30000,
        StatelessResetToken = Convert.FromHexString("00112233445566778899aabbccddeeff"),
        MaxUdpPayloadSize = 1500,
        InitialMaxData = 1 << 20,
        InitialMaxStreamDataBidiLocal = 1000,
        InitialMaxStreamDataBidiRemote = 2000,
        InitialMaxStreamDataUni = 3000,
        InitialMaxStreamsBidi = 100,
        InitialMaxStreamsUni = 1UL << 60,
        AckDelayExponent = 20,
        MaxAckDelayMs = (1 << 14) - 1,
        DisableActiveMigration = true,
        PreferredAddress = new PreferredAddress
        {
            IPv4Address = IPAddress.Parse("192.0.2.1"),
            IPv4Port = 4433,
            IPv6Address = IPAddress.Parse("2001:db8::1"),
            IPv6Port = 4434,
            ConnectionId = [9, 8, 7],
            StatelessResetToken = Convert.FromHexString("ffeeddccbbaa99887766554433221100"),
        },
        ActiveConnectionIdLimit = 8,
        InitialSourceConnectionId = [],
        RetrySourceConnectionId = [0xaa, 0xbb],
        MaxDatagramFrameSize = 65535,
        GreaseQuicBit = true,
    };

    [Fact]
    public void EveryParameterRoundTrips()
    {
        TransportParameters original = EveryParameter();
        byte[]? encoded = original.Encode();
        Assert.NotNull(encoded);
        Assert.Equal(original.GetEncodedLength(), encoded.Length);
        Assert.Equal(TransportErrorCode.NoError, TransportParameters.TryDecode(encoded, sentByServer: true, out TransportParameters? p, out string? reason));
        Assert.Null(reason);
        Assert.NotNull(p);
        Assert.Equal(original.OriginalDestinationConnectionId, p.OriginalDestinationConnectionId);
        Assert.Equal(original.MaxIdleTimeoutMs, p.MaxIdleTimeoutMs);
        Assert.Equal(original.StatelessResetToken, p.StatelessResetToken);
        Assert.Equal(original.MaxUdpPayloadSize, p.MaxUdpPayloadSize);
        Assert.Equal(original.InitialMaxData, p.InitialMaxData);
        Assert.Equal(original.InitialMaxStreamDataBidiLocal, p.InitialMaxStreamDataBidiLocal);
        Assert.Equal(original.InitialMaxStreamDataBidiRemote, p.InitialMaxStreamDataBidiRemote);
        Assert.Equal(original.InitialMaxStreamDataUni, p.InitialMaxStreamDataUni);
        Assert.Equal(original.InitialMaxStreamsBidi, p.InitialMaxStreamsBidi);
        Assert.Equal(original.InitialMaxStreamsUni, p.InitialMaxStreamsUni);
        Assert.Equal(original.AckDelayExponent, p.AckDelayExponent);
        Assert.Equal(original.MaxAckDelayMs, p.MaxAckDelayMs);
        Assert.True(p.DisableActiveMigration);
        Assert.NotNull(p.PreferredAddress);
        Assert.Equal(new IPEndPoint(IPAddress.Parse("192.0.2.1"), 4433), p.PreferredAddress.IPv4EndPoint);
        Assert.Equal(new IPEndPoint(IPAddress.Parse("2001:db8::1"), 4434), p.PreferredAddress.IPv6EndPoint);
        Assert.Equal(original.PreferredAddress!.ConnectionId, p.PreferredAddress.ConnectionId);
        Assert.Equal(original.PreferredAddress.StatelessResetToken, p.PreferredAddress.StatelessResetToken);
        Assert.Equal(original.ActiveConnectionIdLimit, p.ActiveConnectionIdLimit);
        Assert.NotNull(p.InitialSourceConnectionId);
        Assert.Empty(p.InitialSourceConnectionId);
        Assert.Equal(original.RetrySourceConnectionId, p.RetrySourceConnectionId);
        Assert.Equal(original.MaxDatagramFrameSize, p.MaxDatagramFrameSize);
        Assert.True(p.GreaseQuicBit);

        Assert.Equal(encoded, p.Encode());
    }

    [Fact]
    public void DefaultsEncodeToNothing()
    {
        var p = new TransportParameters();
        Assert.Equal(0, p.GetEncodedLength());
        Assert.Empty(p.Encode()!);
        Assert.Equal(TransportErrorCode.NoError, TransportParameters.TryDecode(default, false, out TransportParameters? decoded, out _));
        Assert.Equal(65527UL, decoded!.MaxUdpPayloadSize);
    }

    [Fact]
    public void ZeroMaxDatagramFrameSizeIsStillSent()
    {
        var p = new TransportParameters { MaxDatagramFrameSize = 0 };
        Assert.Equal("200100", Convert.ToHexStringLower(p.Encode()!));
    }

    [Fact]
    public void PreferredAddressEncodingLayout()
    {
        var address = new PreferredAddress
        {
            IPv4Address = IPAddress.Parse("1.2.3.4"),
            IPv4Port = 0x0506,
            IPv6Address = IPAddress.IPv6Any,
            IPv6Port = 0,
            ConnectionId = [0xcc],
            StatelessResetToken = new byte[16],
        };
        var p = new TransportParameters { PreferredAddress = address };
        // id 0x0d, length 42, then Figure 22's fields in order.
        Assert.Equal("0d2a" + "01020304" + "0506" + new string('0', 32) + "0000" + "01cc" + new string('0', 32), Convert.ToHexStringLower(p.Encode()!));
        Assert.Null(address.IPv6EndPoint);
        Assert.NotNull(address.IPv4EndPoint);
    }

    [Theory]
    [InlineData("0302c4af", "max_udp_payload_size 1199")] // 0x04af = 1199
    [InlineData("0a0115", "ack_delay_exponent 21")]
    [InlineData("0b028000", "max_ack_delay 2^14")] // 0x4000 in 4-byte form: 80004000
    [InlineData("0e0101", "active_connection_id_limit 1")]
    [InlineData("0808d000000000000001", "initial_max_streams_bidi 2^60+1")]
    [InlineData("0908d000000000000001", "initial_max_streams_uni 2^60+1")]
    [InlineData("04021000", "integer with a trailing byte")]
    [InlineData("040140", "integer truncated inside its value")]
    [InlineData("0c0100", "disable_active_migration with content")]
    [InlineData("0f15000000000000000000000000000000000000000000", "21-byte initial_source_connection_id")]
    [InlineData("0100", "empty integer value")]
    [InlineData("0110", "length past the end")]
    [InlineData("01", "id without length")]
    [InlineData("0101050101", "duplicate max_idle_timeout")]
    [InlineData("6ab20100", "grease_quic_bit with content")]
    public void MalformedParametersAreTransportParameterErrors(string hex, string why)
    {
        byte[] encoded = Convert.FromHexString(hex.Replace("0b028000", "0b0480004000"));
        TransportErrorCode error = TransportParameters.TryDecode(encoded, sentByServer: true, out TransportParameters? p, out string? reason);
        Assert.True(error == TransportErrorCode.TransportParameterError, why);
        Assert.Null(p);
        Assert.NotNull(reason);
    }

    [Theory]
    [InlineData("0000")] // original_destination_connection_id
    [InlineData("021000112233445566778899aabbccddeeff")] // stateless_reset_token
    [InlineData("1000")] // retry_source_connection_id
    public void ServerOnlyParametersFromAClientAreRejected(string hex)
    {
        byte[] encoded = Convert.FromHexString(hex);
        Assert.Equal(TransportErrorCode.TransportParameterError, TransportParameters.TryDecode(encoded, sentByServer: false, out _, out _));
        Assert.Equal(TransportErrorCode.NoError, TransportParameters.TryDecode(encoded, sentByServer: true, out _, out _));
    }

    [Fact]
    public void PreferredAddressFromAClientIsRejected()
    {
        TransportParameters server = EveryParameter();
        var onlyPreferred = new TransportParameters { PreferredAddress = server.PreferredAddress };
        byte[] encoded = onlyPreferred.Encode()!;
        Assert.Equal(TransportErrorCode.TransportParameterError, TransportParameters.TryDecode(encoded, sentByServer: false, out _, out _));
        Assert.Equal(TransportErrorCode.NoError, TransportParameters.TryDecode(encoded, sentByServer: true, out _, out _));
    }

    [Fact]
    public void PreferredAddressWithEmptyConnectionIdOrWrongLengthIsRejected()
    {
        byte[] encoded = new TransportParameters { PreferredAddress = EveryParameter().PreferredAddress }.Encode()!;
        byte[] emptyCid = (byte[])encoded.Clone();
        emptyCid[2 + 24] = 0; // connection ID length
        Assert.Equal(TransportErrorCode.TransportParameterError, TransportParameters.TryDecode(emptyCid, true, out _, out _));

        byte[] longer = [.. encoded.AsSpan(0, 1), (byte)(encoded[1] + 1), .. encoded.AsSpan(2), 0];
        Assert.Equal(TransportErrorCode.TransportParameterError, TransportParameters.TryDecode(longer, true, out _, out _));

        Assert.False(new TransportParameters { PreferredAddress = new PreferredAddress() }.Encode() is { });
    }

    /// <summary>Hostile preferred_address values: every truncation, and a connection ID longer than 20 bytes (RFC 9000 §18.2).</summary>
    [Fact]
    public void TruncatedOrOverlongPreferredAddressIsRejected()
    {
        byte[] value = new byte[4 + 2 + 16 + 2 + 1 + 8 + 16];
        value[24] = 8;
        Assert.True(PreferredAddress.TryDecode(value, out _));
        for (int length = 0; length < value.Length; length++)
        {
            Assert.False(PreferredAddress.TryDecode(value.AsSpan(0, length), out _), $"truncated to {length}");
            byte[] encoded = [0x0d, (byte)length, .. value.AsSpan(0, length)];
            Assert.Equal(TransportErrorCode.TransportParameterError, TransportParameters.TryDecode(encoded, true, out _, out _));
        }
        byte[] overlong = new byte[4 + 2 + 16 + 2 + 1 + 21 + 16];
        overlong[24] = 21;
        Assert.False(PreferredAddress.TryDecode(overlong, out _));
        Assert.Equal(TransportErrorCode.TransportParameterError, TransportParameters.TryDecode([0x0d, 0x40, (byte)overlong.Length, .. overlong], true, out _, out _));
        // A length byte that claims more than the value holds.
        byte[] claims = (byte[])value.Clone();
        claims[24] = 20;
        Assert.False(PreferredAddress.TryDecode(claims, out _));
    }

    [Fact]
    public void WrongLengthStatelessResetTokenIsRejected()
    {
        Assert.Equal(TransportErrorCode.TransportParameterError,
            TransportParameters.TryDecode(Convert.FromHexString("020f00112233445566778899aabbccddee"), true, out _, out _));
        Assert.Null(new TransportParameters { StatelessResetToken = new byte[15] }.Encode());
    }

    [Fact]
    public void UnknownAndGreasedParametersAreSkipped()
    {
        // Reserved ids 27 (0x1b) and 31*1000+27 = 31027 (0x7933 as 0x4000|... needs 4 bytes: 80007933), an unknown 0x3f,
        // each twice (duplicates of unknown ids are not tracked), around a real parameter.
        string hex = "1b03616263" + "800079330100" + "3f00" + "3f00" + "010125" + "1b00";
        Assert.Equal(TransportErrorCode.NoError, TransportParameters.TryDecode(Convert.FromHexString(hex), false, out TransportParameters? p, out _));
        Assert.Equal(37UL, p!.MaxIdleTimeoutMs);
        Assert.True(TransportParameters.IsReservedId(27));
        Assert.True(TransportParameters.IsReservedId(31027));
        Assert.False(TransportParameters.IsReservedId(28));
    }

    [Fact]
    public void EncodeRefusesUnencodableValues()
    {
        Assert.Null(new TransportParameters { InitialMaxData = ulong.MaxValue }.Encode());
        Assert.Equal(-1, new TransportParameters { InitialMaxData = ulong.MaxValue }.GetEncodedLength());
        var p = EveryParameter();
        Assert.False(p.TryEncode(new byte[p.GetEncodedLength() - 1], out int written));
        Assert.Equal(0, written);
    }
}
