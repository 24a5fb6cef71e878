using System.Net.Quic.Managed.Crypto;
using System.Net.Quic.Managed.Ids;

namespace System.Net.Quic.Managed.Tests.Ids;

public class AddressValidationTokenCodecTests
{
    private static readonly IPEndPoint Client = new(IPAddress.Parse("192.0.2.7"), 50000);

    [Fact]
    public void RetryTokenRoundTripsWithConnectionIds()
    {
        using var codec = new AddressValidationTokenCodec(new SeededRandomSource(1));
        var odcid = new ConnectionId(Convert.FromHexString("8394c8f03e515708"));
        var rscid = new ConnectionId(Convert.FromHexString("f067a5502a4262b5"));
        byte[] token = new byte[AddressValidationTokenCodec.MaxTokenLength];
        int length = codec.WriteRetryToken(token, Client, odcid, rscid, nowUs: 1_000_000);
        Assert.Equal(AddressTokenValidation.Valid,
            codec.Validate(token.AsSpan(0, length), Client, 2_000_000, out AddressTokenKind kind, out ConnectionId o, out ConnectionId r));
        Assert.Equal(AddressTokenKind.Retry, kind);
        Assert.Equal(odcid, o);
        Assert.Equal(rscid, r);
    }

    [Fact]
    public void RetryTokenIsBoundToAddressAndPort()
    {
        using var codec = new AddressValidationTokenCodec(new SeededRandomSource(1));
        byte[] token = new byte[AddressValidationTokenCodec.MaxTokenLength];
        int length = codec.WriteRetryToken(token, Client, new ConnectionId(new byte[8]), new ConnectionId(new byte[8]), 0);
        var otherPort = new IPEndPoint(Client.Address, 50001);
        var otherAddress = new IPEndPoint(IPAddress.Parse("192.0.2.8"), 50000);
        Assert.Equal(AddressTokenValidation.Invalid, codec.Validate(token.AsSpan(0, length), otherPort, 1, out _, out _, out _));
        Assert.Equal(AddressTokenValidation.Invalid, codec.Validate(token.AsSpan(0, length), otherAddress, 1, out _, out _, out _));
    }

    [Fact]
    public void NewTokenIsBoundToAddressButNotPort()
    {
        using var codec = new AddressValidationTokenCodec(new SeededRandomSource(1));
        byte[] token = new byte[AddressValidationTokenCodec.MaxTokenLength];
        int length = codec.WriteNewToken(token, Client, 0);
        Assert.Equal(AddressTokenValidation.Valid, codec.Validate(token.AsSpan(0, length), new IPEndPoint(Client.Address, 1234), 5, out AddressTokenKind kind, out _, out _));
        Assert.Equal(AddressTokenKind.NewToken, kind);
        Assert.Equal(AddressTokenValidation.Invalid, codec.Validate(token.AsSpan(0, length), new IPEndPoint(IPAddress.Loopback, 1234), 5, out _, out _, out _));
    }

    [Fact]
    public void ExpiredAndFutureTokensAreNotValid()
    {
        using var codec = new AddressValidationTokenCodec(new SeededRandomSource(1), retryLifetimeUs: 10_000_000);
        byte[] token = new byte[AddressValidationTokenCodec.MaxTokenLength];
        int length = codec.WriteRetryToken(token, Client, default, default, nowUs: 100_000_000);
        Assert.Equal(AddressTokenValidation.Valid, codec.Validate(token.AsSpan(0, length), Client, 110_000_000, out _, out _, out _));
        Assert.Equal(AddressTokenValidation.Expired, codec.Validate(token.AsSpan(0, length), Client, 110_000_001, out _, out _, out _));
        Assert.Equal(AddressTokenValidation.Expired, codec.Validate(token.AsSpan(0, length), Client, 99_999_999, out _, out _, out _));
    }

    [Fact]
    public void TamperedForeignAndGarbageTokensAreInvalid()
    {
        using var codec = new AddressValidationTokenCodec(new SeededRandomSource(1));
        using var other = new AddressValidationTokenCodec(new SeededRandomSource(2));
        byte[] token = new byte[AddressValidationTokenCodec.MaxTokenLength];
        int length = codec.WriteRetryToken(token, Client, new ConnectionId(new byte[] { 1, 2 }), default, 0);
        Assert.Equal(AddressTokenValidation.Invalid, other.Validate(token.AsSpan(0, length), Client, 1, out _, out _, out _));
        var random = new Random(3);
        for (int i = 0; i < length * 8; i++)
        {
            byte[] copy = token.AsSpan(0, length).ToArray();
            copy[i / 8] ^= (byte)(1 << (i % 8));
            Assert.Equal(AddressTokenValidation.Invalid, codec.Validate(copy, Client, 1, out _, out _, out _));
        }
        for (int n = 0; n < 200; n++)
        {
            byte[] garbage = new byte[random.Next(0, 120)];
            random.NextBytes(garbage);
            Assert.Equal(AddressTokenValidation.Invalid, codec.Validate(garbage, Client, 1, out _, out _, out _));
        }
    }
}
