using System.Buffers.Binary;
using System.Runtime.CompilerServices;
using System.Runtime.Intrinsics.Arm;
using System.Runtime.Intrinsics.X86;

namespace System.Net.Quic.Managed.Crypto;

/// <summary>
/// An element of GF(2^255 - 19) (RFC 7748 §4.1) in radix 2^51: value = L0 + L1·2^51 + L2·2^102 + L3·2^153 + L4·2^204.
/// Every operation is branch-free and does no secret-indexed memory access, so the X25519 ladder runs in constant time.
/// </summary>
/// <remarks>
/// Limb bounds (why no intermediate overflows):
/// "reduced" = every limb below 2^51 + 2^13, produced by <see cref="Multiply"/>, <see cref="Square"/>,
/// <see cref="Subtract"/> and <see cref="MultiplySmall"/>. <see cref="Add"/> of two reduced elements leaves limbs
/// below 2^53 without carrying. Multiply/Square accept limbs below 2^54: each 128-bit column is at most
/// 5·19·2^108 &lt; 2^115, and the top column carry (&lt; 2^61) times 19 still fits in 64 bits.
/// </remarks>
internal struct Curve25519FieldElement
{
    private const ulong Mask51 = (1UL << 51) - 1;

    public ulong L0, L1, L2, L3, L4;

    public Curve25519FieldElement(ulong l0, ulong l1, ulong l2, ulong l3, ulong l4)
    {
        L0 = l0;
        L1 = l1;
        L2 = l2;
        L3 = l3;
        L4 = l4;
    }

    public static Curve25519FieldElement Zero => default;

    public static Curve25519FieldElement One => new(1, 0, 0, 0, 0);

    /// <summary>
    /// Decodes 32 little-endian bytes, ignoring bit 255 (RFC 7748 §5: "implementations of X25519 MUST mask the most
    /// significant bit in the final byte"). Values in [p, 2^255) are kept as non-canonical representatives, which
    /// the arithmetic treats exactly like their reduction mod p, as §5 requires.
    /// </summary>
    public static Curve25519FieldElement FromBytes(ReadOnlySpan<byte> source)
    {
        // Bit offsets 0, 51, 102, 153, 204 = byte 0, byte 6 + 3, byte 12 + 6, byte 19 + 1, byte 24 + 12.
        ulong l0 = BinaryPrimitives.ReadUInt64LittleEndian(source) & Mask51;
        ulong l1 = (BinaryPrimitives.ReadUInt64LittleEndian(source.Slice(6)) >> 3) & Mask51;
        ulong l2 = (BinaryPrimitives.ReadUInt64LittleEndian(source.Slice(12)) >> 6) & Mask51;
        ulong l3 = (BinaryPrimitives.ReadUInt64LittleEndian(source.Slice(19)) >> 1) & Mask51;
        ulong l4 = (BinaryPrimitives.ReadUInt64LittleEndian(source.Slice(24)) >> 12) & Mask51;
        return new Curve25519FieldElement(l0, l1, l2, l3, l4);
    }

    /// <summary>Writes the canonical (fully reduced mod p) 32-byte little-endian encoding (RFC 7748 §5 encodeUCoordinate).</summary>
    public readonly void ToBytes(Span<byte> destination)
    {
        ulong l0 = L0, l1 = L1, l2 = L2, l3 = L3, l4 = L4;

        // Weak reduction first: afterwards the value is below 2^255 + 2^18 < 2p, so subtracting p at most once suffices.
        ulong c;
        c = l0 >> 51; l0 &= Mask51; l1 += c;
        c = l1 >> 51; l1 &= Mask51; l2 += c;
        c = l2 >> 51; l2 &= Mask51; l3 += c;
        c = l3 >> 51; l3 &= Mask51; l4 += c;
        c = l4 >> 51; l4 &= Mask51; l0 += c * 19;

        // q = 1 exactly when value >= p, i.e. when value + 19 carries out of bit 255; computed without branches.
        ulong q = (l0 + 19) >> 51;
        q = (l1 + q) >> 51;
        q = (l2 + q) >> 51;
        q = (l3 + q) >> 51;
        q = (l4 + q) >> 51;

        // value - q·p = value + 19q - q·2^255: add 19q, carry, and drop bit 255 by masking the top limb.
        l0 += 19 * q;
        c = l0 >> 51; l0 &= Mask51; l1 += c;
        c = l1 >> 51; l1 &= Mask51; l2 += c;
        c = l2 >> 51; l2 &= Mask51; l3 += c;
        c = l3 >> 51; l3 &= Mask51; l4 += c;
        l4 &= Mask51;

        BinaryPrimitives.WriteUInt64LittleEndian(destination, l0 | (l1 << 51));
        BinaryPrimitives.WriteUInt64LittleEndian(destination.Slice(8), (l1 >> 13) | (l2 << 38));
        BinaryPrimitives.WriteUInt64LittleEndian(destination.Slice(16), (l2 >> 26) | (l3 << 25));
        BinaryPrimitives.WriteUInt64LittleEndian(destination.Slice(24), (l3 >> 39) | (l4 << 12));
    }

    /// <summary>a + b without carrying (inputs reduced, output limbs below 2^53: only valid as a Multiply/Square input or Subtract minuend).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static Curve25519FieldElement Add(in Curve25519FieldElement a, in Curve25519FieldElement b)
        => new(a.L0 + b.L0, a.L1 + b.L1, a.L2 + b.L2, a.L3 + b.L3, a.L4 + b.L4);

    /// <summary>a - b, computed as a + 4p - b so no limb goes negative (b reduced, a limbs below 2^53), then carried.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static Curve25519FieldElement Subtract(in Curve25519FieldElement a, in Curve25519FieldElement b)
    {
        // 4p in radix 2^51: limb 0 = 4·(2^51 - 19), the others 4·(2^51 - 1); each exceeds any reduced limb of b.
        const ulong FourP0 = 0x1FFFFFFFFFFFB4;
        const ulong FourPi = 0x1FFFFFFFFFFFFC;
        return Carry(
            a.L0 + FourP0 - b.L0,
            a.L1 + FourPi - b.L1,
            a.L2 + FourPi - b.L2,
            a.L3 + FourPi - b.L3,
            a.L4 + FourPi - b.L4);
    }

    /// <summary>a · b mod p (limbs of a and b below 2^54; output reduced).</summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public static Curve25519FieldElement Multiply(in Curve25519FieldElement a, in Curve25519FieldElement b)
    {
        ulong a0 = a.L0, a1 = a.L1, a2 = a.L2, a3 = a.L3, a4 = a.L4;
        ulong b0 = b.L0, b1 = b.L1, b2 = b.L2, b3 = b.L3, b4 = b.L4;

        // 2^255 ≡ 19 (mod p): columns that wrap past limb 4 are folded back with a factor 19.
        ulong b1x19 = b1 * 19, b2x19 = b2 * 19, b3x19 = b3 * 19, b4x19 = b4 * 19;

        ulong h0 = MulHigh(a0, b0), l0 = a0 * b0;
        MulAdd(ref h0, ref l0, a1, b4x19);
        MulAdd(ref h0, ref l0, a2, b3x19);
        MulAdd(ref h0, ref l0, a3, b2x19);
        MulAdd(ref h0, ref l0, a4, b1x19);

        ulong h1 = MulHigh(a0, b1), l1 = a0 * b1;
        MulAdd(ref h1, ref l1, a1, b0);
        MulAdd(ref h1, ref l1, a2, b4x19);
        MulAdd(ref h1, ref l1, a3, b3x19);
        MulAdd(ref h1, ref l1, a4, b2x19);

        ulong h2 = MulHigh(a0, b2), l2 = a0 * b2;
        MulAdd(ref h2, ref l2, a1, b1);
        MulAdd(ref h2, ref l2, a2, b0);
        MulAdd(ref h2, ref l2, a3, b4x19);
        MulAdd(ref h2, ref l2, a4, b3x19);

        ulong h3 = MulHigh(a0, b3), l3 = a0 * b3;
        MulAdd(ref h3, ref l3, a1, b2);
        MulAdd(ref h3, ref l3, a2, b1);
        MulAdd(ref h3, ref l3, a3, b0);
        MulAdd(ref h3, ref l3, a4, b4x19);

        ulong h4 = MulHigh(a0, b4), l4 = a0 * b4;
        MulAdd(ref h4, ref l4, a1, b3);
        MulAdd(ref h4, ref l4, a2, b2);
        MulAdd(ref h4, ref l4, a3, b1);
        MulAdd(ref h4, ref l4, a4, b0);

        return CarryWide(h0, l0, h1, l1, h2, l2, h3, l3, h4, l4);
    }

    /// <summary>a² mod p (limbs below 2^54; output reduced).</summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public static Curve25519FieldElement Square(in Curve25519FieldElement a)
    {
        ulong a0 = a.L0, a1 = a.L1, a2 = a.L2, a3 = a.L3, a4 = a.L4;
        ulong a0x2 = a0 * 2, a1x2 = a1 * 2;
        ulong a1x38 = a1 * 38, a2x38 = a2 * 38, a3x38 = a3 * 38;
        ulong a3x19 = a3 * 19, a4x19 = a4 * 19;

        ulong h0 = MulHigh(a0, a0), l0 = a0 * a0;
        MulAdd(ref h0, ref l0, a1x38, a4);
        MulAdd(ref h0, ref l0, a2x38, a3);

        ulong h1 = MulHigh(a0x2, a1), l1 = a0x2 * a1;
        MulAdd(ref h1, ref l1, a2x38, a4);
        MulAdd(ref h1, ref l1, a3x19, a3);

        ulong h2 = MulHigh(a0x2, a2), l2 = a0x2 * a2;
        MulAdd(ref h2, ref l2, a1, a1);
        MulAdd(ref h2, ref l2, a3x38, a4);

        ulong h3 = MulHigh(a0x2, a3), l3 = a0x2 * a3;
        MulAdd(ref h3, ref l3, a1x2, a2);
        MulAdd(ref h3, ref l3, a4x19, a4);

        ulong h4 = MulHigh(a0x2, a4), l4 = a0x2 * a4;
        MulAdd(ref h4, ref l4, a1x2, a3);
        MulAdd(ref h4, ref l4, a2, a2);

        return CarryWide(h0, l0, h1, l1, h2, l2, h3, l3, h4, l4);
    }

    /// <summary>a · n mod p for a small constant n below 2^17 (a reduced; output reduced).</summary>
    public static Curve25519FieldElement MultiplySmall(in Curve25519FieldElement a, uint n)
    {
        ulong h0 = MulHigh(a.L0, n), l0 = a.L0 * n;
        ulong h1 = MulHigh(a.L1, n), l1 = a.L1 * n;
        ulong h2 = MulHigh(a.L2, n), l2 = a.L2 * n;
        ulong h3 = MulHigh(a.L3, n), l3 = a.L3 * n;
        ulong h4 = MulHigh(a.L4, n), l4 = a.L4 * n;
        return CarryWide(h0, l0, h1, l1, h2, l2, h3, l3, h4, l4);
    }

    /// <summary>a^(p-2) = a^-1 mod p (Fermat; 0 maps to 0, as RFC 7748 §5 relies on). Fixed addition chain, no branches.</summary>
    public static Curve25519FieldElement Invert(in Curve25519FieldElement z)
    {
        // p - 2 = 2^255 - 21. Chain as in the curve25519 reference code: 254 squarings, 11 multiplications.
        Curve25519FieldElement z2 = Square(z);                         // 2
        Curve25519FieldElement t = SquareTimes(z2, 2);                 // 8
        Curve25519FieldElement z9 = Multiply(t, z);                    // 9
        Curve25519FieldElement z11 = Multiply(z9, z2);                 // 11
        t = Square(z11);                                               // 22
        Curve25519FieldElement z2_5_0 = Multiply(t, z9);               // 2^5 - 1
        t = SquareTimes(z2_5_0, 5);
        Curve25519FieldElement z2_10_0 = Multiply(t, z2_5_0);          // 2^10 - 1
        t = SquareTimes(z2_10_0, 10);
        Curve25519FieldElement z2_20_0 = Multiply(t, z2_10_0);         // 2^20 - 1
        t = SquareTimes(z2_20_0, 20);
        Curve25519FieldElement z2_40_0 = Multiply(t, z2_20_0);         // 2^40 - 1
        t = SquareTimes(z2_40_0, 10);
        Curve25519FieldElement z2_50_0 = Multiply(t, z2_10_0);         // 2^50 - 1
        t = SquareTimes(z2_50_0, 50);
        Curve25519FieldElement z2_100_0 = Multiply(t, z2_50_0);        // 2^100 - 1
        t = SquareTimes(z2_100_0, 100);
        Curve25519FieldElement z2_200_0 = Multiply(t, z2_100_0);       // 2^200 - 1
        t = SquareTimes(z2_200_0, 50);
        Curve25519FieldElement z2_250_0 = Multiply(t, z2_50_0);       // 2^250 - 1
        t = SquareTimes(z2_250_0, 5);                                  // 2^255 - 2^5
        return Multiply(t, z11);                                       // 2^255 - 21
    }

    /// <summary>
    /// Swaps a and b when <paramref name="choice"/> is 1, leaves them when 0 (RFC 7748 §5 cswap), using a mask
    /// instead of a branch so the scalar bit never steers control flow.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static void ConditionalSwap(ref Curve25519FieldElement a, ref Curve25519FieldElement b, ulong choice)
    {
        ulong mask = 0UL - choice;
        ulong t;
        t = mask & (a.L0 ^ b.L0); a.L0 ^= t; b.L0 ^= t;
        t = mask & (a.L1 ^ b.L1); a.L1 ^= t; b.L1 ^= t;
        t = mask & (a.L2 ^ b.L2); a.L2 ^= t; b.L2 ^= t;
        t = mask & (a.L3 ^ b.L3); a.L3 ^= t; b.L3 ^= t;
        t = mask & (a.L4 ^ b.L4); a.L4 ^= t; b.L4 ^= t;
    }

    private static Curve25519FieldElement SquareTimes(in Curve25519FieldElement a, int count)
    {
        Curve25519FieldElement r = Square(a);
        for (int i = 1; i < count; i++)
        {
            r = Square(r);
        }

        return r;
    }

    /// <summary>
    /// The high 64 bits of a · b (the low 64 are a plain a * b). mulx / umulh directly: Math.BigMul's out parameter
    /// made the JIT keep every low word in a stack slot, which cost half the ladder's time.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static ulong MulHigh(ulong a, ulong b)
    {
        if (Bmi2.X64.IsSupported)
        {
            return Bmi2.X64.MultiplyNoFlags(a, b);
        }

        if (ArmBase.Arm64.IsSupported)
        {
            return ArmBase.Arm64.MultiplyHigh(a, b);
        }

        return Math.BigMul(a, b, out _);
    }

    /// <summary>
    /// (hi:lo) += a · b. The carry out of the low word is a comparison of constants, which the JIT compiles to
    /// cmp + setb (x64) / cmp + cset (ARM64): a flag read, not a branch, so it takes the same time for every value
    /// (checked in the disassembly: no conditional jump in Multiply or Square). Three times faster than the bit-twiddled
    /// carry it replaced, which the JIT could not keep in registers.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void MulAdd(ref ulong hi, ref ulong lo, ulong a, ulong b)
    {
        ulong productHigh = MulHigh(a, b), productLow = a * b;
        ulong sum = lo + productLow;
        ulong carry = sum < lo ? 1UL : 0UL;
        lo = sum;
        hi += productHigh + carry;
    }

    /// <summary>(hi:lo) += c, branch-free (see <see cref="MulAdd"/>).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void AddWide(ref ulong hi, ref ulong lo, ulong c)
    {
        ulong sum = lo + c;
        ulong carry = sum < lo ? 1UL : 0UL;
        lo = sum;
        hi += carry;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static Curve25519FieldElement Carry(ulong l0, ulong l1, ulong l2, ulong l3, ulong l4)
    {
        ulong c;
        c = l0 >> 51; l0 &= Mask51; l1 += c;
        c = l1 >> 51; l1 &= Mask51; l2 += c;
        c = l2 >> 51; l2 &= Mask51; l3 += c;
        c = l3 >> 51; l3 &= Mask51; l4 += c;
        c = l4 >> 51; l4 &= Mask51; l0 += c * 19;
        c = l0 >> 51; l0 &= Mask51; l1 += c;
        return new Curve25519FieldElement(l0, l1, l2, l3, l4);
    }

    /// <summary>Carries five 128-bit columns (hi:lo) into reduced 51-bit limbs.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static Curve25519FieldElement CarryWide(
        ulong h0, ulong l0, ulong h1, ulong l1, ulong h2, ulong l2, ulong h3, ulong l3, ulong h4, ulong l4)
    {
        // Each column is below 2^115, so column >> 51 fits in 64 bits: (lo >> 51) | (hi << 13).
        ulong r0 = l0 & Mask51;
        AddWide(ref h1, ref l1, (l0 >> 51) | (h0 << 13));
        ulong r1 = l1 & Mask51;
        AddWide(ref h2, ref l2, (l1 >> 51) | (h1 << 13));
        ulong r2 = l2 & Mask51;
        AddWide(ref h3, ref l3, (l2 >> 51) | (h2 << 13));
        ulong r3 = l3 & Mask51;
        AddWide(ref h4, ref l4, (l3 >> 51) | (h3 << 13));
        ulong r4 = l4 & Mask51;
        ulong c = (l4 >> 51) | (h4 << 13);

        // 2^255 ≡ 19: fold the top carry (below 2^61 given the input bounds) back into limb 0.
        r0 += c * 19;
        c = r0 >> 51;
        r0 &= Mask51;
        r1 += c;
        return new Curve25519FieldElement(r0, r1, r2, r3, r4);
    }
}
