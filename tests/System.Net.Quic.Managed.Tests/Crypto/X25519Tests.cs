using System.Net.Quic.Managed.Crypto;
using System.Numerics;

namespace System.Net.Quic.Managed.Tests.Crypto;

public class X25519Tests
{
    private static readonly BigInteger P = BigInteger.Pow(2, 255) - 19;

    // RFC 7748 §5.2, first test vector.
    [Fact]
    public void Rfc7748_5_2_Vector1()
    {
        AssertScalarMult(
            "a546e36bf0527c9d3b16154b82465edd62144c0ac1fc5a18506a2244ba449ac4",
            "e6db6867583030db3594c1a424b15f7c726624ec26b3353b10a903a6d0ab1c4c",
            "c3da55379de9c6908e94ea4df28d084f32eccf03491c71f754b4075577a28552");
    }

    // RFC 7748 §5.2, second test vector. Its u-coordinate ends in 0x93: bit 255 is set and must be masked (§5).
    [Fact]
    public void Rfc7748_5_2_Vector2_HighBitOfUIsMasked()
    {
        const string Scalar = "4b66e9d4d1b4673c5ad22691957d6af5c11b6421e0ea01d42ca4169e7918ba0d";
        const string Expected = "95cbde9476e8907d7aade45cb4b873f88b595a68799fa152e6f8f7647aac7957";
        AssertScalarMult(Scalar, "e5210f12786811d3f4b7959d0538ae2c31dbe7106fc03c3efc4cd549c715a493", Expected);

        // The same u with bit 255 already clear gives the same output.
        AssertScalarMult(Scalar, "e5210f12786811d3f4b7959d0538ae2c31dbe7106fc03c3efc4cd549c715a413", Expected);
    }

    // RFC 7748 §5.2 iterated test: k = u = 9; each round k' = X25519(k, u), u' = k.
    // The 1,000,000-iteration vector (7c3911e0...) is left out: it takes minutes, too slow for a unit test.
    [Fact]
    public void Rfc7748_5_2_Iterated_1_And_1000()
    {
        byte[] k = new byte[32];
        byte[] u = new byte[32];
        byte[] r = new byte[32];
        k[0] = 9;
        u[0] = 9;
        for (int i = 1; i <= 1000; i++)
        {
            X25519.ScalarMult(k, u, r);
            k.CopyTo(u, 0);
            r.CopyTo(k, 0);
            if (i == 1)
            {
                Assert.Equal("422c8e7a6227d7bca1350b3e2bb7279f7897b87bb6854b783c60e80311ae3079", Convert.ToHexStringLower(k));
            }
        }

        Assert.Equal("684cf59ba83309552800ef566f2f4d3c1c3887c49360e3875f2eb94d99532c51", Convert.ToHexStringLower(k));
    }

    // RFC 7748 §6.1 Diffie-Hellman example.
    [Fact]
    public void Rfc7748_6_1_DiffieHellman()
    {
        byte[] a = Convert.FromHexString("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a");
        byte[] b = Convert.FromHexString("5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb");
        byte[] aPub = new byte[32];
        byte[] bPub = new byte[32];
        X25519.GetPublicKey(a, aPub);
        X25519.GetPublicKey(b, bPub);
        Assert.Equal("8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a", Convert.ToHexStringLower(aPub));
        Assert.Equal("de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f", Convert.ToHexStringLower(bPub));

        byte[] k1 = new byte[32];
        byte[] k2 = new byte[32];
        Assert.True(X25519.TryComputeSharedSecret(a, bPub, k1));
        Assert.True(X25519.TryComputeSharedSecret(b, aPub, k2));
        Assert.Equal("4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742", Convert.ToHexStringLower(k1));
        Assert.Equal("4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742", Convert.ToHexStringLower(k2));
    }

    // RFC 7748 §6.1: a small-order peer key gives the all-zero value, which must be rejected.
    // u = 0, 1, the two order-8 points, p - 1, and the non-canonical p and p + 1 (same as 0 and 1 after reduction).
    [Theory]
    [InlineData("0000000000000000000000000000000000000000000000000000000000000000")]
    [InlineData("0100000000000000000000000000000000000000000000000000000000000000")]
    [InlineData("e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800")]
    [InlineData("5f9c95bca3508c24b1d0b1559c83ef5b04445cc4581c8e86d8224eddd09f1157")]
    [InlineData("ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f")]
    [InlineData("edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f")]
    [InlineData("eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f")]
    [InlineData("edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff")] // p with bit 255 set
    public void LowOrderPeerKey_IsRejected(string peerHex)
    {
        byte[] a = Convert.FromHexString("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a");
        byte[] secret = new byte[32];
        secret.AsSpan().Fill(0xAA);
        Assert.False(X25519.TryComputeSharedSecret(a, Convert.FromHexString(peerHex), secret));
        Assert.All(secret, x => Assert.Equal(0, x));
    }

    // RFC 7748 §5: non-canonical u (p <= u < 2^255) "MUST" be accepted and processed as if reduced mod p.
    // u = p + 9 must therefore behave exactly like the base point 9 (giving Alice's public key from §6.1),
    // also with bit 255 set on top.
    [Theory]
    [InlineData("f6ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f")]
    [InlineData("f6ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff")]
    public void NonCanonicalU_IsReducedModP(string uHex)
    {
        AssertScalarMult(
            "77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a",
            uHex,
            "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a");
    }

    [Fact]
    public void WrongLengthPeerKey_IsRejectedWithoutThrowing()
    {
        byte[] a = new byte[32];
        a[0] = 1;
        byte[] secret = new byte[32];
        Assert.False(X25519.TryComputeSharedSecret(a, new byte[31], secret));
        Assert.False(X25519.TryComputeSharedSecret(a, new byte[33], secret));
        Assert.False(X25519.TryComputeSharedSecret(a, ReadOnlySpan<byte>.Empty, secret));
    }

    [Fact]
    public void ScalarMult_DoesNotModifyInputs_AndAllowsResultAliasingU()
    {
        byte[] scalar = Convert.FromHexString("a546e36bf0527c9d3b16154b82465edd62144c0ac1fc5a18506a2244ba449ac4");
        byte[] u = Convert.FromHexString("e6db6867583030db3594c1a424b15f7c726624ec26b3353b10a903a6d0ab1c4c");
        byte[] scalarCopy = (byte[])scalar.Clone();
        X25519.ScalarMult(scalar, u, u);
        Assert.Equal(scalarCopy, scalar);
        Assert.Equal("c3da55379de9c6908e94ea4df28d084f32eccf03491c71f754b4075577a28552", Convert.ToHexStringLower(u));
    }

    // Cross-check against a direct BigInteger transcription of the RFC 7748 §5 ladder on seeded random inputs,
    // including u values in [p, 2^256) to exercise masking and non-canonical reduction.
    [Fact]
    public void RandomInputs_MatchBigIntegerReference()
    {
        var random = new Random(7748);
        byte[] k = new byte[32];
        byte[] u = new byte[32];
        byte[] r = new byte[32];
        for (int i = 0; i < 64; i++)
        {
            random.NextBytes(k);
            random.NextBytes(u);
            if (i % 8 == 0)
            {
                // p + small, with or without bit 255.
                (P + random.Next(0, 19)).TryWriteBytes(u, out _, isUnsigned: true, isBigEndian: false);
                u[31] |= (byte)(i % 16 == 0 ? 0x80 : 0);
            }

            X25519.ScalarMult(k, u, r);
            Assert.Equal(Convert.ToHexStringLower(ReferenceX25519(k, u)), Convert.ToHexStringLower(r));
        }
    }

    // Field arithmetic against BigInteger mod p, including inputs with every limb at its documented maximum,
    // where carry bugs would show.
    [Fact]
    public void FieldArithmetic_MatchesBigInteger()
    {
        var random = new Random(25519);
        const ulong Mask51 = (1UL << 51) - 1;
        for (int i = 0; i < 2000; i++)
        {
            Curve25519FieldElement a = RandomReduced(random, i);
            Curve25519FieldElement b = RandomReduced(random, i + 1);
            BigInteger av = Value(a), bv = Value(b);

            Assert.Equal(Mod(av * bv), Canonical(Curve25519FieldElement.Multiply(a, b)));
            Assert.Equal(Mod(av * av), Canonical(Curve25519FieldElement.Square(a)));
            Assert.Equal(Mod(av - bv), Canonical(Curve25519FieldElement.Subtract(a, b)));
            Assert.Equal(Mod(av * 121665), Canonical(Curve25519FieldElement.MultiplySmall(a, 121665)));

            // Sums of two reduced elements (limbs up to 2^53) are valid Multiply/Square inputs.
            Curve25519FieldElement s = Curve25519FieldElement.Add(a, b);
            Assert.Equal(Mod(av + bv), Canonical(s));
            Assert.Equal(Mod((av + bv) * (av + bv)), Canonical(Curve25519FieldElement.Square(s)));
            Assert.Equal(Mod((av + bv) * bv), Canonical(Curve25519FieldElement.Multiply(s, b)));

            if (i % 50 == 0)
            {
                Curve25519FieldElement inv = Curve25519FieldElement.Invert(a);
                BigInteger expected = Mod(av) == 0 ? 0 : BigInteger.ModPow(av, P - 2, P);
                Assert.Equal(expected, Canonical(inv));
            }
        }

        // Encoding round trip of the boundary values p - 1, p, 2^255 - 1.
        foreach (BigInteger v in new[] { P - 1, P, BigInteger.Pow(2, 255) - 1, BigInteger.Zero })
        {
            byte[] bytes = new byte[32];
            v.TryWriteBytes(bytes, out _, isUnsigned: true, isBigEndian: false);
            Curve25519FieldElement fe = Curve25519FieldElement.FromBytes(bytes);
            Assert.True(fe.L0 <= Mask51 && fe.L4 <= Mask51);
            Assert.Equal(Mod(v), Canonical(fe));
        }
    }

    private static Curve25519FieldElement RandomReduced(Random random, int i)
    {
        // "Reduced" limbs go up to 2^51 + 2^13; every 4th element sits exactly at that bound, every 4th at 0 / 2^51 - 1 mixes.
        const ulong Max = (1UL << 51) + (1UL << 13) - 1;
        switch (i % 4)
        {
            case 0:
                return new Curve25519FieldElement(Max, Max, Max, Max, Max);
            case 1:
                return new Curve25519FieldElement(
                    (ulong)random.NextInt64(0, (long)Max + 1),
                    (ulong)random.NextInt64(0, (long)Max + 1),
                    (ulong)random.NextInt64(0, (long)Max + 1),
                    (ulong)random.NextInt64(0, (long)Max + 1),
                    (ulong)random.NextInt64(0, (long)Max + 1));
            case 2:
                byte[] bytes = new byte[32];
                random.NextBytes(bytes);
                return Curve25519FieldElement.FromBytes(bytes);
            default:
                return new Curve25519FieldElement(0, (1UL << 51) - 1, 0, Max, (ulong)random.Next(0, 3));
        }
    }

    private static BigInteger Value(Curve25519FieldElement a)
        => new BigInteger(a.L0) + (new BigInteger(a.L1) << 51) + (new BigInteger(a.L2) << 102)
            + (new BigInteger(a.L3) << 153) + (new BigInteger(a.L4) << 204);

    private static BigInteger Mod(BigInteger v)
    {
        BigInteger r = v % P;
        return r < 0 ? r + P : r;
    }

    private static BigInteger Canonical(Curve25519FieldElement a)
    {
        byte[] bytes = new byte[32];
        a.ToBytes(bytes);
        var v = new BigInteger(bytes, isUnsigned: true, isBigEndian: false);
        Assert.True(v < P, "ToBytes must produce the canonical encoding");
        return v;
    }

    private static void AssertScalarMult(string scalarHex, string uHex, string expectedHex)
    {
        byte[] result = new byte[32];
        X25519.ScalarMult(Convert.FromHexString(scalarHex), Convert.FromHexString(uHex), result);
        Assert.Equal(expectedHex, Convert.ToHexStringLower(result));
    }

    // RFC 7748 §5 pseudo-code, transcribed with BigInteger and real branches (fine for a test oracle).
    private static byte[] ReferenceX25519(byte[] scalar, byte[] uBytes)
    {
        byte[] kb = (byte[])scalar.Clone();
        kb[0] &= 248;
        kb[31] &= 127;
        kb[31] |= 64;
        var k = new BigInteger(kb, isUnsigned: true, isBigEndian: false);
        byte[] ub = (byte[])uBytes.Clone();
        ub[31] &= 127;
        BigInteger x1 = new BigInteger(ub, isUnsigned: true, isBigEndian: false) % P;
        BigInteger x2 = 1, z2 = 0, x3 = x1, z3 = 1;
        int swap = 0;
        for (int t = 254; t >= 0; t--)
        {
            int kt = (int)((k >> t) & 1);
            swap ^= kt;
            if (swap == 1)
            {
                (x2, x3) = (x3, x2);
                (z2, z3) = (z3, z2);
            }

            swap = kt;
            BigInteger a = Mod(x2 + z2), aa = Mod(a * a), b = Mod(x2 - z2), bb = Mod(b * b), e = Mod(aa - bb);
            BigInteger c = Mod(x3 + z3), d = Mod(x3 - z3), da = Mod(d * a), cb = Mod(c * b);
            x3 = Mod((da + cb) * (da + cb));
            z3 = Mod(x1 * Mod((da - cb) * (da - cb)));
            x2 = Mod(aa * bb);
            z2 = Mod(e * (aa + 121665 * e));
        }

        if (swap == 1)
        {
            (x2, x3) = (x3, x2);
            (z2, z3) = (z3, z2);
        }

        BigInteger result = Mod(x2 * BigInteger.ModPow(z2, P - 2, P));
        byte[] output = new byte[32];
        result.TryWriteBytes(output, out _, isUnsigned: true, isBigEndian: false);
        return output;
    }
}
