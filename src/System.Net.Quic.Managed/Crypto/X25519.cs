using System.Runtime.CompilerServices;
using System.Security.Cryptography;

namespace System.Net.Quic.Managed.Crypto;

/// <summary>
/// X25519 Diffie-Hellman (RFC 7748 §5), written here because .NET has no X25519.
/// Constant-time field arithmetic over GF(2^255 - 19) (<see cref="Curve25519FieldElement"/>): a Montgomery ladder
/// with a masked conditional swap, no branches or memory indices that depend on the scalar.
/// </summary>
internal static class X25519
{
    /// <summary>Length of scalars, u-coordinates and shared secrets in bytes.</summary>
    public const int KeySize = 32;

    // RFC 7748 §5: a24 = (486662 - 2) / 4 for curve25519, used as z_2 = E * (AA + a24 * E).
    private const uint A24 = 121665;

    /// <summary>X25519(scalar, u): writes the 32-byte result into <paramref name="result"/>. Clamps the scalar per RFC 7748 §5.</summary>
    /// <exception cref="ArgumentException">A span is not exactly <see cref="KeySize"/> bytes (a caller bug, not peer input).</exception>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public static void ScalarMult(ReadOnlySpan<byte> scalar, ReadOnlySpan<byte> uCoordinate, Span<byte> result)
    {
        if (scalar.Length != KeySize)
        {
            throw new ArgumentException("X25519 scalars are 32 bytes.", nameof(scalar));
        }

        if (uCoordinate.Length != KeySize)
        {
            throw new ArgumentException("X25519 u-coordinates are 32 bytes.", nameof(uCoordinate));
        }

        if (result.Length != KeySize)
        {
            throw new ArgumentException("X25519 results are 32 bytes.", nameof(result));
        }

        // RFC 7748 §5 decodeScalar25519: clear the 3 low bits (cofactor 8), clear bit 255, set bit 254.
        Span<byte> k = stackalloc byte[KeySize];
        scalar.CopyTo(k);
        k[0] &= 248;
        k[31] &= 127;
        k[31] |= 64;

        // decodeUCoordinate masks bit 255 and keeps values >= p non-reduced; the field arithmetic reduces them.
        Curve25519FieldElement x1 = Curve25519FieldElement.FromBytes(uCoordinate);
        Curve25519FieldElement x2 = Curve25519FieldElement.One;
        Curve25519FieldElement z2 = Curve25519FieldElement.Zero;
        Curve25519FieldElement x3 = x1;
        Curve25519FieldElement z3 = Curve25519FieldElement.One;
        ulong swap = 0;

        // RFC 7748 §5 ladder; the loop bound and the byte index t >> 3 are public, only the bit value is secret.
        for (int t = 254; t >= 0; t--)
        {
            ulong kt = (ulong)((k[t >> 3] >> (t & 7)) & 1);
            swap ^= kt;
            Curve25519FieldElement.ConditionalSwap(ref x2, ref x3, swap);
            Curve25519FieldElement.ConditionalSwap(ref z2, ref z3, swap);
            swap = kt;

            Curve25519FieldElement a = Curve25519FieldElement.Add(x2, z2);
            Curve25519FieldElement aa = Curve25519FieldElement.Square(a);
            Curve25519FieldElement b = Curve25519FieldElement.Subtract(x2, z2);
            Curve25519FieldElement bb = Curve25519FieldElement.Square(b);
            Curve25519FieldElement e = Curve25519FieldElement.Subtract(aa, bb);
            Curve25519FieldElement c = Curve25519FieldElement.Add(x3, z3);
            Curve25519FieldElement d = Curve25519FieldElement.Subtract(x3, z3);
            Curve25519FieldElement da = Curve25519FieldElement.Multiply(d, a);
            Curve25519FieldElement cb = Curve25519FieldElement.Multiply(c, b);
            x3 = Curve25519FieldElement.Square(Curve25519FieldElement.Add(da, cb));
            z3 = Curve25519FieldElement.Multiply(x1, Curve25519FieldElement.Square(Curve25519FieldElement.Subtract(da, cb)));
            x2 = Curve25519FieldElement.Multiply(aa, bb);
            z2 = Curve25519FieldElement.Multiply(e, Curve25519FieldElement.Add(aa, Curve25519FieldElement.MultiplySmall(e, A24)));
        }

        Curve25519FieldElement.ConditionalSwap(ref x2, ref x3, swap);
        Curve25519FieldElement.ConditionalSwap(ref z2, ref z3, swap);

        // x2 * z2^(p-2): when z2 = 0 (small-order input) this yields 0, the value §6.1 tells callers to reject.
        Curve25519FieldElement u = Curve25519FieldElement.Multiply(x2, Curve25519FieldElement.Invert(z2));
        u.ToBytes(result);

        CryptographicOperations.ZeroMemory(k);
    }

    /// <summary>Computes the public key X25519(privateKey, 9).</summary>
    public static void GetPublicKey(ReadOnlySpan<byte> privateKey, Span<byte> publicKey)
    {
        // RFC 7748 §4.1: the base point has u = 9.
        Span<byte> basePoint = stackalloc byte[KeySize];
        basePoint.Clear();
        basePoint[0] = 9;
        ScalarMult(privateKey, basePoint, publicKey);
    }

    /// <summary>
    /// Computes the shared secret. Returns false when the result is all zeros (a small-order peer key),
    /// which RFC 7748 §6.1 and RFC 8446 §7.4.2 require to be rejected.
    /// </summary>
    /// <remarks>
    /// A peer key that is not 32 bytes comes from the wire, so it also yields false rather than an exception;
    /// <paramref name="privateKey"/> and <paramref name="sharedSecret"/> must be 32 bytes.
    /// On false, <paramref name="sharedSecret"/> is zeroed.
    /// </remarks>
    public static bool TryComputeSharedSecret(ReadOnlySpan<byte> privateKey, ReadOnlySpan<byte> peerPublicKey, Span<byte> sharedSecret)
    {
        if (sharedSecret.Length != KeySize)
        {
            throw new ArgumentException("X25519 shared secrets are 32 bytes.", nameof(sharedSecret));
        }

        if (peerPublicKey.Length != KeySize)
        {
            sharedSecret.Clear();
            return false;
        }

        ScalarMult(privateKey, peerPublicKey, sharedSecret);

        // RFC 7748 §6.1: check for all-zero by ORing every byte, so the check itself leaks nothing but the verdict.
        int accumulator = 0;
        for (int i = 0; i < KeySize; i++)
        {
            accumulator |= sharedSecret[i];
        }

        return accumulator != 0;
    }
}
