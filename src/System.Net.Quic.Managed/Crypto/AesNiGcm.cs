using System.Buffers.Binary;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Runtime.Intrinsics;
using System.Runtime.Intrinsics.X86;
using System.Security.Cryptography;
using Aes = System.Runtime.Intrinsics.X86.Aes;

namespace System.Net.Quic.Managed.Crypto;

/// <summary>
/// AES-GCM (NIST SP 800-38D) with a 12-byte nonce and a 16-byte tag on the x86 AES-NI and PCLMULQDQ instructions, for
/// QUIC packet protection (RFC 9001 §5.3), keyed once per packet protection key.
/// <para>
/// Why not <see cref="AesGcm"/>: on Linux every call goes through OpenSSL's EVP layer, whose fixed cost per call
/// (error-queue clearing, parameter lookups by name, frees) dwarfs the cipher work for a 1,200-byte packet. A profile
/// of a bulk transfer (docs/PERFORMANCE.md, session 4) put `ERR_clear_error`, `CRYPTO_free`, `OSSL_PARAM_locate` and
/// friends at about a third of both the sending and the receiving driver thread, with the AES and GHASH work itself
/// under 3%. This class is what OpenSSL's own GCM code does, minus that per-call overhead: counter-mode AES eight
/// blocks at a time and GHASH by carry-less multiplication with one reduction per eight blocks (Intel, "Carry-Less
/// Multiplication Instruction and its Usage for Computing the GCM Mode", algorithms 1 and 5).
/// </para>
/// <para>
/// Both instructions run in constant time for all data; the tag is compared with
/// <see cref="CryptographicOperations.FixedTimeEquals"/>. Tests check it byte for byte against <see cref="AesGcm"/>
/// (random keys, nonces, AAD and lengths, both key sizes) and against the GCM specification's test cases.
/// Use only when <see cref="IsSupported"/>; <see cref="PacketProtectionKeys"/> falls back to <see cref="AesGcm"/>.
/// Not thread-safe (no state changes per call, but keep it owned by one connection like the keys it serves).
/// </para>
/// </summary>
internal sealed class AesNiGcm
{
    /// <summary>Nonce length (RFC 9001 §5.3: the AEAD IV is 12 bytes).</summary>
    public const int NonceLength = 12;

    /// <summary>Tag length.</summary>
    public const int TagLength = 16;

    private const int Aggregation = 8;

    private readonly Vector128<byte>[] _roundKeys;

    // H^1 .. H^8 in the byte-reversed representation the multiplication works in; index i holds H^(i+1).
    private readonly Vector128<ulong>[] _hPowers;

    public AesNiGcm(ReadOnlySpan<byte> key)
    {
        if (!IsSupported) throw new PlatformNotSupportedException("AES-NI, PCLMULQDQ and SSSE3 are required.");
        _roundKeys = AesNiBlockEncryptor.ExpandKey(key);
        Vector128<byte> h = EncryptBlock(Vector128<byte>.Zero);
        _hPowers = new Vector128<ulong>[Aggregation];
        _hPowers[0] = ByteReverse(h).AsUInt64();
        for (int i = 1; i < Aggregation; i++) _hPowers[i] = Multiply(_hPowers[i - 1], _hPowers[0]);
    }

    /// <summary>True when this CPU has the instructions (x86-64 with AES-NI, PCLMULQDQ and SSSE3).</summary>
    public static bool IsSupported => Aes.IsSupported && Pclmulqdq.IsSupported && Ssse3.IsSupported && Sse2.IsSupported;

    /// <summary>
    /// Encrypts <paramref name="plaintext"/> into <paramref name="ciphertext"/> (same length; the same memory is allowed,
    /// partial overlap is not) and writes the tag over <paramref name="associatedData"/> and the ciphertext.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public void Encrypt(ReadOnlySpan<byte> nonce, ReadOnlySpan<byte> plaintext, Span<byte> ciphertext, Span<byte> tag, ReadOnlySpan<byte> associatedData)
    {
        CheckArguments(nonce, plaintext.Length, ciphertext.Length, tag.Length);
        Vector128<byte> j0 = CounterBlock(nonce);
        Vector128<ulong> x = HashAssociatedData(associatedData);
        x = Crypt(j0, plaintext, ciphertext, x, encrypting: true);
        ComputeTag(j0, x, associatedData.Length, plaintext.Length).CopyTo(tag);
    }

    /// <summary>
    /// Checks the tag over <paramref name="associatedData"/> and <paramref name="ciphertext"/> and decrypts into
    /// <paramref name="plaintext"/> (same memory allowed). Returns false when the tag does not match; the plaintext is then
    /// cleared.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public bool TryDecrypt(ReadOnlySpan<byte> nonce, ReadOnlySpan<byte> ciphertext, ReadOnlySpan<byte> tag, Span<byte> plaintext, ReadOnlySpan<byte> associatedData)
    {
        CheckArguments(nonce, ciphertext.Length, plaintext.Length, tag.Length);
        Vector128<byte> j0 = CounterBlock(nonce);
        Vector128<ulong> x = HashAssociatedData(associatedData);
        x = Crypt(j0, ciphertext, plaintext, x, encrypting: false);
        Span<byte> expected = stackalloc byte[TagLength];
        ComputeTag(j0, x, associatedData.Length, ciphertext.Length).CopyTo(expected);
        if (CryptographicOperations.FixedTimeEquals(expected, tag)) return true;
        plaintext.Clear();
        return false;
    }

    /// <summary>Overwrites the round keys and hash key powers (as secret as the key).</summary>
    public void Clear()
    {
        Array.Clear(_roundKeys);
        Array.Clear(_hPowers);
    }

    private static void CheckArguments(ReadOnlySpan<byte> nonce, int inputLength, int outputLength, int tagLength)
    {
        if (nonce.Length != NonceLength) throw new ArgumentException("The nonce must be 12 bytes.", nameof(nonce));
        if (outputLength != inputLength) throw new ArgumentException("Input and output lengths differ.");
        if (tagLength != TagLength) throw new ArgumentException("The tag must be 16 bytes.", nameof(tagLength));
    }

    /// <summary>SP 800-38D §7.1: J0 = nonce || 0^31 || 1 for a 96-bit nonce.</summary>
    private static Vector128<byte> CounterBlock(ReadOnlySpan<byte> nonce)
    {
        Span<byte> block = stackalloc byte[16];
        nonce.CopyTo(block);
        block[12] = 0;
        block[13] = 0;
        block[14] = 0;
        block[15] = 1;
        return Vector128.Create((ReadOnlySpan<byte>)block);
    }

    /// <summary>The counter block with its last 32 bits (big-endian) set to <paramref name="counter"/>.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static Vector128<byte> WithCounter(Vector128<byte> j0, uint counter) =>
        j0.AsUInt32().WithElement(3, BinaryPrimitives.ReverseEndianness(counter)).AsByte();

    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    private Vector128<ulong> HashAssociatedData(ReadOnlySpan<byte> data)
    {
        Vector128<ulong> x = Vector128<ulong>.Zero;
        Vector128<ulong> h = _hPowers[0];
        int i = 0;
        for (; data.Length - i >= 16; i += 16)
        {
            x = Multiply(x ^ ByteReverse(Vector128.Create(data.Slice(i, 16))).AsUInt64(), h);
        }
        if (i < data.Length) x = Multiply(x ^ ByteReverse(LoadPartial(data.Slice(i))).AsUInt64(), h);
        return x;
    }

    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    private Vector128<byte> ComputeTag(Vector128<byte> j0, Vector128<ulong> x, int associatedDataLength, int dataLength)
    {
        // SP 800-38D §7.1 step 5: the last GHASH block is len(A) || len(C) in bits, each 64-bit big-endian.
        Vector128<ulong> lengths = Vector128.Create((ulong)dataLength * 8, (ulong)associatedDataLength * 8);
        x = Multiply(x ^ lengths, _hPowers[0]);
        return ByteReverse(x.AsByte()) ^ EncryptBlock(j0);
    }

    /// <summary>Counter-mode AES from counter 2 over <paramref name="input"/>, hashing the ciphertext into <paramref name="x"/>.</summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    private Vector128<ulong> Crypt(Vector128<byte> j0, ReadOnlySpan<byte> input, Span<byte> output, Vector128<ulong> x, bool encrypting)
    {
        Vector128<byte>[] k = _roundKeys;
        Vector128<ulong>[] hp = _hPowers;
        int rounds = k.Length - 1;
        uint counter = 2;
        int i = 0;
        int length = input.Length;
        ref byte inRef = ref MemoryMarshal.GetReference(input);
        ref byte outRef = ref MemoryMarshal.GetReference(output);

        while (length - i >= Aggregation * 16)
        {
            Vector128<byte> k0 = k[0];
            Vector128<byte> s0 = WithCounter(j0, counter) ^ k0;
            Vector128<byte> s1 = WithCounter(j0, counter + 1) ^ k0;
            Vector128<byte> s2 = WithCounter(j0, counter + 2) ^ k0;
            Vector128<byte> s3 = WithCounter(j0, counter + 3) ^ k0;
            Vector128<byte> s4 = WithCounter(j0, counter + 4) ^ k0;
            Vector128<byte> s5 = WithCounter(j0, counter + 5) ^ k0;
            Vector128<byte> s6 = WithCounter(j0, counter + 6) ^ k0;
            Vector128<byte> s7 = WithCounter(j0, counter + 7) ^ k0;
            counter += Aggregation;
            for (int r = 1; r < rounds; r++)
            {
                Vector128<byte> rk = k[r];
                s0 = Aes.Encrypt(s0, rk);
                s1 = Aes.Encrypt(s1, rk);
                s2 = Aes.Encrypt(s2, rk);
                s3 = Aes.Encrypt(s3, rk);
                s4 = Aes.Encrypt(s4, rk);
                s5 = Aes.Encrypt(s5, rk);
                s6 = Aes.Encrypt(s6, rk);
                s7 = Aes.Encrypt(s7, rk);
            }
            Vector128<byte> last = k[rounds];
            Vector128<byte> d0 = Vector128.LoadUnsafe(ref inRef, (nuint)i);
            Vector128<byte> d1 = Vector128.LoadUnsafe(ref inRef, (nuint)(i + 16));
            Vector128<byte> d2 = Vector128.LoadUnsafe(ref inRef, (nuint)(i + 32));
            Vector128<byte> d3 = Vector128.LoadUnsafe(ref inRef, (nuint)(i + 48));
            Vector128<byte> d4 = Vector128.LoadUnsafe(ref inRef, (nuint)(i + 64));
            Vector128<byte> d5 = Vector128.LoadUnsafe(ref inRef, (nuint)(i + 80));
            Vector128<byte> d6 = Vector128.LoadUnsafe(ref inRef, (nuint)(i + 96));
            Vector128<byte> d7 = Vector128.LoadUnsafe(ref inRef, (nuint)(i + 112));
            Vector128<byte> o0 = Aes.EncryptLast(s0, last) ^ d0;
            Vector128<byte> o1 = Aes.EncryptLast(s1, last) ^ d1;
            Vector128<byte> o2 = Aes.EncryptLast(s2, last) ^ d2;
            Vector128<byte> o3 = Aes.EncryptLast(s3, last) ^ d3;
            Vector128<byte> o4 = Aes.EncryptLast(s4, last) ^ d4;
            Vector128<byte> o5 = Aes.EncryptLast(s5, last) ^ d5;
            Vector128<byte> o6 = Aes.EncryptLast(s6, last) ^ d6;
            Vector128<byte> o7 = Aes.EncryptLast(s7, last) ^ d7;
            o0.StoreUnsafe(ref outRef, (nuint)i);
            o1.StoreUnsafe(ref outRef, (nuint)(i + 16));
            o2.StoreUnsafe(ref outRef, (nuint)(i + 32));
            o3.StoreUnsafe(ref outRef, (nuint)(i + 48));
            o4.StoreUnsafe(ref outRef, (nuint)(i + 64));
            o5.StoreUnsafe(ref outRef, (nuint)(i + 80));
            o6.StoreUnsafe(ref outRef, (nuint)(i + 96));
            o7.StoreUnsafe(ref outRef, (nuint)(i + 112));
            if (encrypting)
            {
                d0 = o0; d1 = o1; d2 = o2; d3 = o3; d4 = o4; d5 = o5; d6 = o6; d7 = o7;
            }

            // Aggregated GHASH: X' = (X + C0)·H^8 + C1·H^7 + ... + C7·H, reduced once.
            Vector128<ulong> lo = Vector128<ulong>.Zero, mid = Vector128<ulong>.Zero, hi = Vector128<ulong>.Zero;
            MultiplyAccumulate(x ^ ByteReverse(d0).AsUInt64(), hp[7], ref lo, ref mid, ref hi);
            MultiplyAccumulate(ByteReverse(d1).AsUInt64(), hp[6], ref lo, ref mid, ref hi);
            MultiplyAccumulate(ByteReverse(d2).AsUInt64(), hp[5], ref lo, ref mid, ref hi);
            MultiplyAccumulate(ByteReverse(d3).AsUInt64(), hp[4], ref lo, ref mid, ref hi);
            MultiplyAccumulate(ByteReverse(d4).AsUInt64(), hp[3], ref lo, ref mid, ref hi);
            MultiplyAccumulate(ByteReverse(d5).AsUInt64(), hp[2], ref lo, ref mid, ref hi);
            MultiplyAccumulate(ByteReverse(d6).AsUInt64(), hp[1], ref lo, ref mid, ref hi);
            MultiplyAccumulate(ByteReverse(d7).AsUInt64(), hp[0], ref lo, ref mid, ref hi);
            x = Reduce(lo, mid, hi);
            i += Aggregation * 16;
        }

        Vector128<ulong> h = hp[0];
        for (; length - i >= 16; i += 16)
        {
            Vector128<byte> d = Vector128.LoadUnsafe(ref inRef, (nuint)i);
            Vector128<byte> o = EncryptBlock(WithCounter(j0, counter++)) ^ d;
            o.StoreUnsafe(ref outRef, (nuint)i);
            x = Multiply(x ^ ByteReverse(encrypting ? o : d).AsUInt64(), h);
        }

        if (i < length)
        {
            int rest = length - i;
            Span<byte> block = stackalloc byte[16];
            block.Clear();
            input.Slice(i, rest).CopyTo(block);
            Vector128<byte> d = Vector128.Create((ReadOnlySpan<byte>)block);
            Vector128<byte> o = EncryptBlock(WithCounter(j0, counter)) ^ d;
            o.CopyTo(block);
            block.Slice(0, rest).CopyTo(output.Slice(i));
            // GHASH pads the last partial ciphertext block with zeros.
            block.Slice(rest).Clear();
            Vector128<byte> c = encrypting ? Vector128.Create((ReadOnlySpan<byte>)block) : d;
            x = Multiply(x ^ ByteReverse(c).AsUInt64(), h);
        }
        return x;
    }

    private Vector128<byte> EncryptBlock(Vector128<byte> block)
    {
        Vector128<byte>[] k = _roundKeys;
        Vector128<byte> state = block ^ k[0];
        int last = k.Length - 1;
        for (int r = 1; r < last; r++) state = Aes.Encrypt(state, k[r]);
        return Aes.EncryptLast(state, k[last]);
    }

    private static Vector128<byte> LoadPartial(ReadOnlySpan<byte> data)
    {
        Span<byte> block = stackalloc byte[16];
        block.Clear();
        data.CopyTo(block);
        return Vector128.Create((ReadOnlySpan<byte>)block);
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static Vector128<byte> ByteReverse(Vector128<byte> value) =>
        Ssse3.Shuffle(value, Vector128.Create((byte)15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0));

    /// <summary>The 256-bit carry-less product a·b, added (XOR) into lo/mid/hi (schoolbook, four multiplications).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void MultiplyAccumulate(Vector128<ulong> a, Vector128<ulong> b, ref Vector128<ulong> lo, ref Vector128<ulong> mid, ref Vector128<ulong> hi)
    {
        lo ^= Pclmulqdq.CarrylessMultiply(a, b, 0x00);
        hi ^= Pclmulqdq.CarrylessMultiply(a, b, 0x11);
        mid ^= Pclmulqdq.CarrylessMultiply(a, b, 0x01) ^ Pclmulqdq.CarrylessMultiply(a, b, 0x10);
    }

    /// <summary>a·b in GF(2^128) (GCM's polynomial), both in the byte-reversed representation.</summary>
    private static Vector128<ulong> Multiply(Vector128<ulong> a, Vector128<ulong> b)
    {
        Vector128<ulong> lo = Vector128<ulong>.Zero, mid = Vector128<ulong>.Zero, hi = Vector128<ulong>.Zero;
        MultiplyAccumulate(a, b, ref lo, ref mid, ref hi);
        return Reduce(lo, mid, hi);
    }

    /// <summary>
    /// Reduces the 256-bit product (hi:mid:lo) modulo x^128 + x^7 + x^2 + x + 1: GCM's bit-reflected convention makes
    /// the product one bit short, hence the shift left by one first (Intel's white paper, algorithm 5).
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static Vector128<ulong> Reduce(Vector128<ulong> lo, Vector128<ulong> mid, Vector128<ulong> hi)
    {
        Vector128<uint> t3 = (lo ^ Sse2.ShiftLeftLogical128BitLane(mid, 8)).AsUInt32();
        Vector128<uint> t6 = (hi ^ Sse2.ShiftRightLogical128BitLane(mid, 8)).AsUInt32();

        // (t6:t3) <<= 1 across all 256 bits.
        Vector128<uint> t7 = Sse2.ShiftRightLogical(t3, 31);
        Vector128<uint> t8 = Sse2.ShiftRightLogical(t6, 31);
        t3 = Sse2.ShiftLeftLogical(t3, 1);
        t6 = Sse2.ShiftLeftLogical(t6, 1);
        Vector128<uint> t9 = Sse2.ShiftRightLogical128BitLane(t7, 12);
        t8 = Sse2.ShiftLeftLogical128BitLane(t8, 4);
        t7 = Sse2.ShiftLeftLogical128BitLane(t7, 4);
        t3 |= t7;
        t6 |= t8 | t9;

        // First phase of the reduction.
        t7 = Sse2.ShiftLeftLogical(t3, 31) ^ Sse2.ShiftLeftLogical(t3, 30) ^ Sse2.ShiftLeftLogical(t3, 25);
        t8 = Sse2.ShiftRightLogical128BitLane(t7, 4);
        t7 = Sse2.ShiftLeftLogical128BitLane(t7, 12);
        t3 ^= t7;

        // Second phase.
        Vector128<uint> t2 = Sse2.ShiftRightLogical(t3, 1) ^ Sse2.ShiftRightLogical(t3, 2) ^ Sse2.ShiftRightLogical(t3, 7) ^ t8;
        t3 ^= t2;
        return (t6 ^ t3).AsUInt64();
    }
}
