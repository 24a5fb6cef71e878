using System.Net.Quic.Managed.Crypto;
using System.Net.Quic.Managed.Ids;
using System.Security.Cryptography;

namespace System.Net.Quic.Managed.Tests.Ids;

public class StatelessResetTests
{
    [Fact]
    public void TokenIsHmacOfTheConnectionIdUnderTheStaticKey()
    {
        byte[] key = Convert.FromHexString("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f");
        var generator = new StatelessResetTokenGenerator(key);
        var cid = new ConnectionId(Convert.FromHexString("8394c8f03e515708"));
        byte[] expected = HMACSHA256.HashData(key, cid.Span.ToArray()).AsSpan(0, 16).ToArray();
        Span<byte> actual = stackalloc byte[16];
        generator.Generate(cid).CopyTo(actual);
        Assert.Equal(expected, actual.ToArray());
        // Deterministic for the same ID, different for another.
        Assert.Equal(generator.Generate(cid), generator.Generate(cid));
        Assert.NotEqual(generator.Generate(cid), generator.Generate(new ConnectionId(new byte[] { 1 })));
    }

    [Fact]
    public void DifferentKeysGiveDifferentTokens()
    {
        var cid = new ConnectionId(new byte[] { 9, 9, 9, 9 });
        Assert.NotEqual(new StatelessResetTokenGenerator(new SeededRandomSource(1)).Generate(cid),
                        new StatelessResetTokenGenerator(new SeededRandomSource(2)).Generate(cid));
        Assert.Throws<ArgumentException>(() => new StatelessResetTokenGenerator(new byte[8]));
    }

    [Fact]
    public void FixedTimeEqualsMatchesOnlyTheExactToken()
    {
        byte[] raw = Enumerable.Range(1, 16).Select(i => (byte)i).ToArray();
        var token = new StatelessResetToken(raw);
        Assert.True(token.FixedTimeEquals(raw));
        byte[] other = (byte[])raw.Clone();
        other[15] ^= 1;
        Assert.False(token.FixedTimeEquals(other));
        Assert.False(token.FixedTimeEquals(raw.AsSpan(0, 15)));
        Assert.Throws<ArgumentException>(() => new StatelessResetToken(new byte[15]));
    }
}
