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
/// of a bulk transfer (docs/PERFORMANCE.md) put `ERR_clear_error`, `CRYPTO_free`, `OSSL_PARAM_locate` and
/// friends at about a third of both the sending and the receiving driver thread, with the AES and GHASH work itself
/// under 3%.
/// </para>
/// <para>
/// What it does, after OpenSSL's stitched aesni_gcm: counter-mode AES eight blocks at a time, with the GHASH of eight
/// blocks interleaved with those AES rounds (for decryption the ciphertext of the same eight blocks; for encryption the
/// eight blocks encrypted in the previous pass, re-read from the output), so the AES and the carry-less multiply
/// units work side by side. GHASH runs in the POLYVAL form (RFC 8452 appendix A: byte-reversed blocks and hash key
/// times x), which reduces with two carry-less multiplications instead of a chain of shifts, and aggregates: one
/// reduction per eight blocks, and one for the whole end of a packet (its last 0-7 whole blocks, the zero-padded
/// partial block and the length block, for encryption also the last eight-block pass; powers H^1..H^17 computed per
/// key). Where the CPU has 256-bit
/// VPCLMULQDQ and AVX2 (<see cref="IsVector256Supported"/>), GHASH multiplies two blocks per instruction; otherwise the
/// same code runs on 128-bit PCLMULQDQ. The AES rounds stay 128-bit (.NET 10 exposes no VAES). Per call: the keystream
/// of the tail and E(J0) for the tag are computed first, in batches of two or four blocks (they depend on nothing
/// else, so their AES latency overlaps the hashing and the bulk passes), and an encryption hashes associated data of up
/// to 128 bytes in its first pass's otherwise idle GHASH slot. Tried and dropped (slower or no gain on a Zen 3):
/// Karatsuba multiplication in the 256-bit pass (three multiplications per pair instead of four, plus shuffles), and
/// unrolling the remaining round loop.
/// </para>
/// <para>
/// All instructions used run in constant time for all data, no branch or memory index depends on secret data (only
/// on lengths), and the tag is compared as one vector without an early exit. Tests check both GHASH widths byte for
/// byte against <see cref="AesGcm"/> (random keys, nonces, AAD and lengths 0..1,600, both key sizes) and against the
/// GCM specification's test cases. Use only when <see cref="IsSupported"/>; <see cref="PacketProtectionKeys"/> falls
/// back to <see cref="AesGcm"/>. Not thread-safe (no state changes per call, but keep it owned by one connection like
/// the keys it serves). No allocation per call.
/// </para>
/// </summary>
internal sealed class AesNiGcm
{
    /// <summary>Nonce length (RFC 9001 §5.3: the AEAD IV is 12 bytes).</summary>
    public const int NonceLength = 12;

    /// <summary>Tag length.</summary>
    public const int TagLength = 16;

    private const int Aggregation = 8;
    private const int PowerCount = 17;

    // Source of the "previous eight blocks" hashed during the first pass of an encryption (nothing was encrypted yet)
    // when the associated data is too long (over 128 bytes) to take that slot.
    private static readonly byte[] s_zeroBlocks = new byte[Aggregation * 16];

    private readonly Vector128<byte>[] _roundKeys;

    // H^17 .. H^1 in POLYVAL form (descending, so that two neighbouring entries load as one 256-bit pair matching two
    // consecutive blocks): index j holds H^(17 - j).
    private readonly Vector128<ulong>[] _hPowers;

    private readonly bool _vector256;

    /// <summary>Expands <paramref name="key"/> (16 or 32 bytes); uses 256-bit GHASH when <see cref="IsVector256Supported"/>.</summary>
    public AesNiGcm(ReadOnlySpan<byte> key)
        : this(key, IsVector256Supported)
    {
    }

    /// <summary>As the public constructor, with the GHASH width chosen (tests run both paths).</summary>
    internal AesNiGcm(ReadOnlySpan<byte> key, bool useVector256)
    {
        if (!IsSupported) throw new PlatformNotSupportedException("AES-NI, PCLMULQDQ and SSSE3 are required.");
        if (useVector256 && !IsVector256Supported) throw new PlatformNotSupportedException("256-bit VPCLMULQDQ and AVX2 are required.");
        _vector256 = useVector256;
        _roundKeys = AesNiBlockEncryptor.ExpandKey(key);
        Vector128<ulong> h = MultiplyByX(ByteReverse(EncryptBlock(Vector128<byte>.Zero)).AsUInt64());
        _hPowers = new Vector128<ulong>[PowerCount];
        _hPowers[PowerCount - 1] = h;
        for (int i = PowerCount - 2; i >= 0; i--) _hPowers[i] = Multiply(_hPowers[i + 1], h);
    }

    /// <summary>True when this CPU has the instructions (x86-64 with AES-NI, PCLMULQDQ and SSSE3).</summary>
    public static bool IsSupported => Aes.IsSupported && Pclmulqdq.IsSupported && Ssse3.IsSupported && Sse2.IsSupported;

    /// <summary>True when GHASH can multiply two blocks per instruction (256-bit VPCLMULQDQ and AVX2).</summary>
    internal static bool IsVector256Supported => IsSupported && Pclmulqdq.V256.IsSupported && Avx2.IsSupported;

    /// <summary>True when this instance hashes with 256-bit VPCLMULQDQ (tests).</summary>
    internal bool UsesVector256 => _vector256;

    /// <summary>
    /// Encrypts <paramref name="plaintext"/> into <paramref name="ciphertext"/> (same length; the same memory is allowed,
    /// partial overlap is not) and writes the tag over <paramref name="associatedData"/> and the ciphertext.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public void Encrypt(ReadOnlySpan<byte> nonce, ReadOnlySpan<byte> plaintext, Span<byte> ciphertext, Span<byte> tag, ReadOnlySpan<byte> associatedData)
    {
        CheckArguments(nonce, plaintext.Length, ciphertext.Length, tag.Length);
        Vector128<uint> counter = CounterBlockLittleEndian(nonce, 2);
        Vector128<byte> computed = _vector256
            ? Crypt<Wide>(counter, plaintext, ciphertext, associatedData, encrypting: true)
            : Crypt<Narrow>(counter, plaintext, ciphertext, associatedData, encrypting: true);
        computed.CopyTo(tag);
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
        Vector128<uint> counter = CounterBlockLittleEndian(nonce, 2);
        Vector128<byte> computed = _vector256
            ? Crypt<Wide>(counter, ciphertext, plaintext, associatedData, encrypting: false)
            : Crypt<Narrow>(counter, ciphertext, plaintext, associatedData, encrypting: false);
        // Constant time: one vector compare of all 16 bytes, no early exit.
        Vector128<byte> difference = computed ^ Vector128.Create(tag);
        if (difference == Vector128<byte>.Zero) return true;
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

    /// <summary>
    /// SP 800-38D §7.1: the counter block nonce || counter for a 96-bit nonce (J0 has counter 1), here with the counter as a
    /// native 32-bit lane (lane 3), so that counters add with one instruction (<see cref="CounterAt"/> swaps it back).
    /// </summary>
    private static Vector128<uint> CounterBlockLittleEndian(ReadOnlySpan<byte> nonce, uint counter) =>
        Vector128.Create(
            BinaryPrimitives.ReadUInt64LittleEndian(nonce),
            BinaryPrimitives.ReadUInt32LittleEndian(nonce.Slice(8)) | ((ulong)counter << 32)).AsUInt32();

    /// <summary>The counter block <paramref name="counter"/> + (0, 0, 0, <paramref name="add"/>), the counter lane back in big-endian.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static Vector128<byte> CounterAt(Vector128<uint> counter, uint add) =>
        Ssse3.Shuffle((counter + Vector128.Create(0, 0, 0, add)).AsByte(), Vector128.Create((byte)0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 15, 14, 13, 12));

    /// <summary>
    /// Hashes <paramref name="associatedData"/>, runs counter-mode AES from <paramref name="counter"/> (counter 2) over
    /// <paramref name="input"/> into <paramref name="output"/> hashing the ciphertext, hashes the length block, and
    /// returns the tag.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    [SkipLocalsInit]
    private Vector128<byte> Crypt<TWidth>(Vector128<uint> counter, ReadOnlySpan<byte> input, Span<byte> output, ReadOnlySpan<byte> associatedData, bool encrypting)
        where TWidth : struct
    {
        int length = input.Length;
        int bulk = length & ~(Aggregation * 16 - 1);
        int rest = length - bulk;
        int tailBlocks = (rest + 15) >> 4;

        // First, as they depend on nothing else, the keystream of the tail and E(J0) for the tag: their AES latency
        // then overlaps the hashing and the bulk passes. Slot 0 is J0 (counter 1 = 2 - 1), slots 1..8 the tail.
        Span<byte> keystream = stackalloc byte[10 * 16];
        ref byte keystreamRef = ref MemoryMarshal.GetReference(keystream);
        // Batches of four (eight AES chains in flight fill the pipeline) or two, as many slots as needed.
        uint tailCounter = (uint)(bulk >> 4);
        int slots = tailBlocks + 1;
        if (slots <= 2) Keystream2(counter, uint.MaxValue, tailCounter, ref keystreamRef);
        else Keystream4(counter, uint.MaxValue, tailCounter, tailCounter + 1, tailCounter + 2, ref keystreamRef);
        if (slots > 6) Keystream4(counter, tailCounter + 3, tailCounter + 4, tailCounter + 5, tailCounter + 6, ref Unsafe.Add(ref keystreamRef, 64));
        else if (slots > 4) Keystream2(counter, tailCounter + 3, tailCounter + 4, ref Unsafe.Add(ref keystreamRef, 64));
        if (slots > 8) Keystream2(counter, tailCounter + 7, tailCounter + 8, ref Unsafe.Add(ref keystreamRef, 128));

        Span<byte> buffer = stackalloc byte[(PowerCount + 1) * 16];
        ref byte bufferRef = ref MemoryMarshal.GetReference(buffer);
        Vector128<ulong> x = Vector128<ulong>.Zero;
        if (bulk > 0 && encrypting && associatedData.Length <= Aggregation * 16)
        {
            // The first encryption pass has no ciphertext of a previous pass to hash: it hashes the associated data,
            // right-aligned in eight zero-padded blocks (leading zero blocks add nothing to GHASH from a zero state).
            int aadBlocks = (associatedData.Length + 15) >> 4;
            Vector256<byte>.Zero.StoreUnsafe(ref bufferRef);
            Vector256<byte>.Zero.StoreUnsafe(ref bufferRef, 32);
            Vector256<byte>.Zero.StoreUnsafe(ref bufferRef, 64);
            Vector256<byte>.Zero.StoreUnsafe(ref bufferRef, 96);
            associatedData.CopyTo(buffer.Slice((Aggregation - aadBlocks) * 16));
            x = CryptBlocks<TWidth>(ref counter, ref MemoryMarshal.GetReference(input), ref MemoryMarshal.GetReference(output), bulk, x, encrypting, ref bufferRef);
        }
        else
        {
            // Associated data: 16 blocks per reduction straight from the span, the rest (with the zero-padded partial
            // block) through the buffer.
            ref byte aadRef = ref MemoryMarshal.GetReference(associatedData);
            int aadOffset = 0;
            for (; associatedData.Length - aadOffset > PowerCount * 16; aadOffset += PowerCount * 16)
            {
                x = HashBlocks<TWidth>(x, ref Unsafe.Add(ref aadRef, aadOffset), PowerCount);
            }
            int aadRest = associatedData.Length - aadOffset;
            if (aadRest > 0)
            {
                int blocks = (aadRest + 15) >> 4;
                Vector128<byte>.Zero.StoreUnsafe(ref bufferRef, (nuint)(blocks - 1) * 16);
                associatedData.Slice(aadOffset).CopyTo(buffer);
                x = HashBlocks<TWidth>(x, ref bufferRef, blocks);
            }
            if (bulk > 0)
            {
                x = CryptBlocks<TWidth>(ref counter, ref MemoryMarshal.GetReference(input), ref MemoryMarshal.GetReference(output), bulk, x, encrypting,
                    ref MemoryMarshal.GetArrayDataReference(s_zeroBlocks));
            }
        }

        // Tail: the last 0-7 whole blocks and the partial block through the buffer, then their GHASH together with the
        // length block (and, for encryption, the last bulk pass's eight ciphertext blocks, copied in front) under one
        // reduction.
        int pendingBytes = 0;
        if (encrypting && bulk > 0)
        {
            pendingBytes = Aggregation * 16;
            ref byte lastPass = ref Unsafe.Add(ref MemoryMarshal.GetReference(output), bulk - pendingBytes);
            Vector128.LoadUnsafe(ref lastPass).StoreUnsafe(ref bufferRef);
            Vector128.LoadUnsafe(ref lastPass, 16).StoreUnsafe(ref bufferRef, 16);
            Vector128.LoadUnsafe(ref lastPass, 32).StoreUnsafe(ref bufferRef, 32);
            Vector128.LoadUnsafe(ref lastPass, 48).StoreUnsafe(ref bufferRef, 48);
            Vector128.LoadUnsafe(ref lastPass, 64).StoreUnsafe(ref bufferRef, 64);
            Vector128.LoadUnsafe(ref lastPass, 80).StoreUnsafe(ref bufferRef, 80);
            Vector128.LoadUnsafe(ref lastPass, 96).StoreUnsafe(ref bufferRef, 96);
            Vector128.LoadUnsafe(ref lastPass, 112).StoreUnsafe(ref bufferRef, 112);
        }
        ref byte tailRef = ref Unsafe.Add(ref bufferRef, pendingBytes);
        if (rest > 0)
        {
            ref byte tailKeystream = ref Unsafe.Add(ref keystreamRef, 16);
            Vector128<byte>.Zero.StoreUnsafe(ref tailRef, (nuint)(tailBlocks - 1) * 16);
            input.Slice(bulk).CopyTo(buffer.Slice(pendingBytes));
            for (int b = 0; b < tailBlocks; b++)
            {
                (Vector128.LoadUnsafe(ref tailRef, (nuint)b * 16) ^ Vector128.LoadUnsafe(ref tailKeystream, (nuint)b * 16)).StoreUnsafe(ref tailKeystream, (nuint)b * 16);
            }
            Span<byte> result = keystream.Slice(16, rest);
            result.CopyTo(output.Slice(bulk));
            if (encrypting) result.CopyTo(buffer.Slice(pendingBytes)); // GHASH pads the last ciphertext block with zeros
        }

        // SP 800-38D §7.1 step 5: the last GHASH block is len(A) || len(C) in bits, each 64-bit big-endian.
        ref byte lengthBlock = ref Unsafe.Add(ref tailRef, tailBlocks * 16);
        Unsafe.WriteUnaligned(ref lengthBlock, BinaryPrimitives.ReverseEndianness((ulong)associatedData.Length * 8));
        Unsafe.WriteUnaligned(ref Unsafe.Add(ref lengthBlock, 8), BinaryPrimitives.ReverseEndianness((ulong)length * 8));
        x = HashBlocks<TWidth>(x, ref bufferRef, (pendingBytes >> 4) + tailBlocks + 1);
        return ByteReverse(x.AsByte()) ^ Vector128.LoadUnsafe(ref keystreamRef);
    }

    /// <summary>
    /// Counter-mode AES over <paramref name="length"/> bytes (a multiple of 128), eight blocks per pass, with the GHASH of
    /// eight ciphertext blocks interleaved with each pass's AES rounds; advances <paramref name="counter"/>.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    private Vector128<ulong> CryptBlocks<TWidth>(ref Vector128<uint> counter, ref byte inRef, ref byte outRef, int length, Vector128<ulong> x, bool encrypting, ref byte firstHash)
        where TWidth : struct
    {
        ref Vector128<byte> k = ref MemoryMarshal.GetArrayDataReference(_roundKeys);
        ref Vector128<ulong> hp = ref MemoryMarshal.GetArrayDataReference(_hPowers);
        int lastRound = _roundKeys.Length - 1;
        bool aes256 = lastRound == 14;
        Vector128<uint> ctr = counter;

        // Decryption hashes each pass's own input. Encryption hashes the previous pass's output; the first pass hashes
        // <paramref name="firstHash"/> from a zero state (eight zero blocks, giving zero, or the right-aligned associated
        // data) and <paramref name="x"/> joins after it.
        ref byte hashRef = ref encrypting ? ref firstHash : ref inRef;
        Vector128<ulong> pending = Vector128<ulong>.Zero;
        if (encrypting)
        {
            pending = x;
            x = Vector128<ulong>.Zero;
        }

        for (int i = 0; i < length; i += Aggregation * 16)
        {
            Vector128<byte> k0 = k;
            Vector128<byte> s0 = CounterAt(ctr, 0) ^ k0;
            Vector128<byte> s1 = CounterAt(ctr, 1) ^ k0;
            Vector128<byte> s2 = CounterAt(ctr, 2) ^ k0;
            Vector128<byte> s3 = CounterAt(ctr, 3) ^ k0;
            Vector128<byte> s4 = CounterAt(ctr, 4) ^ k0;
            Vector128<byte> s5 = CounterAt(ctr, 5) ^ k0;
            Vector128<byte> s6 = CounterAt(ctr, 6) ^ k0;
            Vector128<byte> s7 = CounterAt(ctr, 7) ^ k0;
            ctr += Vector128.Create(0u, 0, 0, Aggregation);

            Vector128<byte> rk = Unsafe.Add(ref k, 1);
            s0 = Aes.Encrypt(s0, rk); s1 = Aes.Encrypt(s1, rk); s2 = Aes.Encrypt(s2, rk); s3 = Aes.Encrypt(s3, rk);
            s4 = Aes.Encrypt(s4, rk); s5 = Aes.Encrypt(s5, rk); s6 = Aes.Encrypt(s6, rk); s7 = Aes.Encrypt(s7, rk);

            // Aggregated GHASH: X' = (X + C0)·H^8 + C1·H^7 + ... + C7·H, reduced once; spread over the rounds.
            Vector128<ulong> lo, mid, hi;
            if (typeof(TWidth) == typeof(Wide))
            {
                Vector256<ulong> lo2, mid2, hi2;
                Vector256<ulong> d = ByteReverse(Vector256.LoadUnsafe(ref hashRef)).AsUInt64() ^ x.ToVector256();
                Vector256<ulong> h = Load256(ref hp, 9);
                lo2 = Pclmulqdq.V256.CarrylessMultiply(d, h, 0x00);
                hi2 = Pclmulqdq.V256.CarrylessMultiply(d, h, 0x11);
                mid2 = Pclmulqdq.V256.CarrylessMultiply(d, h, 0x01) ^ Pclmulqdq.V256.CarrylessMultiply(d, h, 0x10);

                rk = Unsafe.Add(ref k, 2);
                s0 = Aes.Encrypt(s0, rk); s1 = Aes.Encrypt(s1, rk); s2 = Aes.Encrypt(s2, rk); s3 = Aes.Encrypt(s3, rk);
                s4 = Aes.Encrypt(s4, rk); s5 = Aes.Encrypt(s5, rk); s6 = Aes.Encrypt(s6, rk); s7 = Aes.Encrypt(s7, rk);
                MultiplyAccumulate(ByteReverse(Vector256.LoadUnsafe(ref hashRef, 32)).AsUInt64(), Load256(ref hp, 11), ref lo2, ref mid2, ref hi2);

                rk = Unsafe.Add(ref k, 3);
                s0 = Aes.Encrypt(s0, rk); s1 = Aes.Encrypt(s1, rk); s2 = Aes.Encrypt(s2, rk); s3 = Aes.Encrypt(s3, rk);
                s4 = Aes.Encrypt(s4, rk); s5 = Aes.Encrypt(s5, rk); s6 = Aes.Encrypt(s6, rk); s7 = Aes.Encrypt(s7, rk);
                MultiplyAccumulate(ByteReverse(Vector256.LoadUnsafe(ref hashRef, 64)).AsUInt64(), Load256(ref hp, 13), ref lo2, ref mid2, ref hi2);

                rk = Unsafe.Add(ref k, 4);
                s0 = Aes.Encrypt(s0, rk); s1 = Aes.Encrypt(s1, rk); s2 = Aes.Encrypt(s2, rk); s3 = Aes.Encrypt(s3, rk);
                s4 = Aes.Encrypt(s4, rk); s5 = Aes.Encrypt(s5, rk); s6 = Aes.Encrypt(s6, rk); s7 = Aes.Encrypt(s7, rk);
                MultiplyAccumulate(ByteReverse(Vector256.LoadUnsafe(ref hashRef, 96)).AsUInt64(), Load256(ref hp, 15), ref lo2, ref mid2, ref hi2);
                lo = lo2.GetLower() ^ lo2.GetUpper();
                mid = mid2.GetLower() ^ mid2.GetUpper();
                hi = hi2.GetLower() ^ hi2.GetUpper();
            }
            else
            {
                Vector128<ulong> d = ByteReverse(Vector128.LoadUnsafe(ref hashRef)).AsUInt64() ^ x;
                Vector128<ulong> h = Unsafe.Add(ref hp, 9);
                lo = Pclmulqdq.CarrylessMultiply(d, h, 0x00);
                hi = Pclmulqdq.CarrylessMultiply(d, h, 0x11);
                mid = Pclmulqdq.CarrylessMultiply(d, h, 0x01) ^ Pclmulqdq.CarrylessMultiply(d, h, 0x10);
                MultiplyAccumulate(ByteReverse(Vector128.LoadUnsafe(ref hashRef, 16)).AsUInt64(), Unsafe.Add(ref hp, 10), ref lo, ref mid, ref hi);

                rk = Unsafe.Add(ref k, 2);
                s0 = Aes.Encrypt(s0, rk); s1 = Aes.Encrypt(s1, rk); s2 = Aes.Encrypt(s2, rk); s3 = Aes.Encrypt(s3, rk);
                s4 = Aes.Encrypt(s4, rk); s5 = Aes.Encrypt(s5, rk); s6 = Aes.Encrypt(s6, rk); s7 = Aes.Encrypt(s7, rk);
                MultiplyAccumulate(ByteReverse(Vector128.LoadUnsafe(ref hashRef, 32)).AsUInt64(), Unsafe.Add(ref hp, 11), ref lo, ref mid, ref hi);
                MultiplyAccumulate(ByteReverse(Vector128.LoadUnsafe(ref hashRef, 48)).AsUInt64(), Unsafe.Add(ref hp, 12), ref lo, ref mid, ref hi);

                rk = Unsafe.Add(ref k, 3);
                s0 = Aes.Encrypt(s0, rk); s1 = Aes.Encrypt(s1, rk); s2 = Aes.Encrypt(s2, rk); s3 = Aes.Encrypt(s3, rk);
                s4 = Aes.Encrypt(s4, rk); s5 = Aes.Encrypt(s5, rk); s6 = Aes.Encrypt(s6, rk); s7 = Aes.Encrypt(s7, rk);
                MultiplyAccumulate(ByteReverse(Vector128.LoadUnsafe(ref hashRef, 64)).AsUInt64(), Unsafe.Add(ref hp, 13), ref lo, ref mid, ref hi);
                MultiplyAccumulate(ByteReverse(Vector128.LoadUnsafe(ref hashRef, 80)).AsUInt64(), Unsafe.Add(ref hp, 14), ref lo, ref mid, ref hi);

                rk = Unsafe.Add(ref k, 4);
                s0 = Aes.Encrypt(s0, rk); s1 = Aes.Encrypt(s1, rk); s2 = Aes.Encrypt(s2, rk); s3 = Aes.Encrypt(s3, rk);
                s4 = Aes.Encrypt(s4, rk); s5 = Aes.Encrypt(s5, rk); s6 = Aes.Encrypt(s6, rk); s7 = Aes.Encrypt(s7, rk);
                MultiplyAccumulate(ByteReverse(Vector128.LoadUnsafe(ref hashRef, 96)).AsUInt64(), Unsafe.Add(ref hp, 15), ref lo, ref mid, ref hi);
                MultiplyAccumulate(ByteReverse(Vector128.LoadUnsafe(ref hashRef, 112)).AsUInt64(), Unsafe.Add(ref hp, 16), ref lo, ref mid, ref hi);
            }

            rk = Unsafe.Add(ref k, 5);
            s0 = Aes.Encrypt(s0, rk); s1 = Aes.Encrypt(s1, rk); s2 = Aes.Encrypt(s2, rk); s3 = Aes.Encrypt(s3, rk);
            s4 = Aes.Encrypt(s4, rk); s5 = Aes.Encrypt(s5, rk); s6 = Aes.Encrypt(s6, rk); s7 = Aes.Encrypt(s7, rk);
            x = Reduce(lo, mid, hi) ^ pending;
            pending = Vector128<ulong>.Zero;

            for (int r = 6; r < lastRound; r++)
            {
                rk = Unsafe.Add(ref k, r);
                s0 = Aes.Encrypt(s0, rk); s1 = Aes.Encrypt(s1, rk); s2 = Aes.Encrypt(s2, rk); s3 = Aes.Encrypt(s3, rk);
                s4 = Aes.Encrypt(s4, rk); s5 = Aes.Encrypt(s5, rk); s6 = Aes.Encrypt(s6, rk); s7 = Aes.Encrypt(s7, rk);
            }

            // The last round's AddRoundKey is a XOR: fold the data into the round key (EncryptLast(s, k ^ d) = EncryptLast(s, k) ^ d).
            rk = Unsafe.Add(ref k, lastRound);
            ref byte src = ref Unsafe.Add(ref inRef, i);
            ref byte dst = ref Unsafe.Add(ref outRef, i);
            Vector128<byte> o0 = Aes.EncryptLast(s0, rk ^ Vector128.LoadUnsafe(ref src));
            Vector128<byte> o1 = Aes.EncryptLast(s1, rk ^ Vector128.LoadUnsafe(ref src, 16));
            Vector128<byte> o2 = Aes.EncryptLast(s2, rk ^ Vector128.LoadUnsafe(ref src, 32));
            Vector128<byte> o3 = Aes.EncryptLast(s3, rk ^ Vector128.LoadUnsafe(ref src, 48));
            Vector128<byte> o4 = Aes.EncryptLast(s4, rk ^ Vector128.LoadUnsafe(ref src, 64));
            Vector128<byte> o5 = Aes.EncryptLast(s5, rk ^ Vector128.LoadUnsafe(ref src, 80));
            Vector128<byte> o6 = Aes.EncryptLast(s6, rk ^ Vector128.LoadUnsafe(ref src, 96));
            Vector128<byte> o7 = Aes.EncryptLast(s7, rk ^ Vector128.LoadUnsafe(ref src, 112));
            if (typeof(TWidth) == typeof(Wide))
            {
                // 256-bit stores, so that the next pass's 256-bit loads of this ciphertext forward from them.
                Vector256.Create(o0, o1).StoreUnsafe(ref dst);
                Vector256.Create(o2, o3).StoreUnsafe(ref dst, 32);
                Vector256.Create(o4, o5).StoreUnsafe(ref dst, 64);
                Vector256.Create(o6, o7).StoreUnsafe(ref dst, 96);
            }
            else
            {
                o0.StoreUnsafe(ref dst);
                o1.StoreUnsafe(ref dst, 16);
                o2.StoreUnsafe(ref dst, 32);
                o3.StoreUnsafe(ref dst, 48);
                o4.StoreUnsafe(ref dst, 64);
                o5.StoreUnsafe(ref dst, 80);
                o6.StoreUnsafe(ref dst, 96);
                o7.StoreUnsafe(ref dst, 112);
            }
            hashRef = ref encrypting ? ref dst : ref Unsafe.Add(ref src, Aggregation * 16);
        }

        // Encryption still owes the hash of the last pass's ciphertext: the caller adds it to the tail's.
        counter = ctr;
        return x;
    }

    /// <summary>The encryptions of counter + <paramref name="a0"/> and counter + <paramref name="a1"/> into <paramref name="destination"/> (32 bytes).</summary>
    private void Keystream2(Vector128<uint> counter, uint a0, uint a1, ref byte destination)
    {
        ref Vector128<byte> k = ref MemoryMarshal.GetArrayDataReference(_roundKeys);
        int lastRound = _roundKeys.Length - 1;
        Vector128<byte> k0 = k;
        Vector128<byte> s0 = CounterAt(counter, a0) ^ k0;
        Vector128<byte> s1 = CounterAt(counter, a1) ^ k0;
        for (int r = 1; r < lastRound; r++)
        {
            Vector128<byte> rk = Unsafe.Add(ref k, r);
            s0 = Aes.Encrypt(s0, rk); s1 = Aes.Encrypt(s1, rk);
        }
        Vector128<byte> last = Unsafe.Add(ref k, lastRound);
        Aes.EncryptLast(s0, last).StoreUnsafe(ref destination);
        Aes.EncryptLast(s1, last).StoreUnsafe(ref destination, 16);
    }

    /// <summary>The encryptions of counter + <paramref name="a0"/> .. counter + <paramref name="a3"/> into <paramref name="destination"/> (64 bytes).</summary>
    private void Keystream4(Vector128<uint> counter, uint a0, uint a1, uint a2, uint a3, ref byte destination)
    {
        ref Vector128<byte> k = ref MemoryMarshal.GetArrayDataReference(_roundKeys);
        int lastRound = _roundKeys.Length - 1;
        Vector128<byte> k0 = k;
        Vector128<byte> s0 = CounterAt(counter, a0) ^ k0;
        Vector128<byte> s1 = CounterAt(counter, a1) ^ k0;
        Vector128<byte> s2 = CounterAt(counter, a2) ^ k0;
        Vector128<byte> s3 = CounterAt(counter, a3) ^ k0;
        for (int r = 1; r < lastRound; r++)
        {
            Vector128<byte> rk = Unsafe.Add(ref k, r);
            s0 = Aes.Encrypt(s0, rk); s1 = Aes.Encrypt(s1, rk); s2 = Aes.Encrypt(s2, rk); s3 = Aes.Encrypt(s3, rk);
        }
        Vector128<byte> last = Unsafe.Add(ref k, lastRound);
        Aes.EncryptLast(s0, last).StoreUnsafe(ref destination);
        Aes.EncryptLast(s1, last).StoreUnsafe(ref destination, 16);
        Aes.EncryptLast(s2, last).StoreUnsafe(ref destination, 32);
        Aes.EncryptLast(s3, last).StoreUnsafe(ref destination, 48);
    }

    /// <summary>
    /// GHASH of <paramref name="count"/> (1..17) whole blocks at <paramref name="blocks"/> continuing from
    /// <paramref name="x"/>: (X + B0)·H^n + B1·H^(n-1) + ... + B(n-1)·H, with one reduction.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    private Vector128<ulong> HashBlocks<TWidth>(Vector128<ulong> x, ref byte blocks, int count)
        where TWidth : struct
    {
        ref Vector128<ulong> hp = ref MemoryMarshal.GetArrayDataReference(_hPowers);
        int first = PowerCount - count;
        Vector128<ulong> lo = Vector128<ulong>.Zero, mid = Vector128<ulong>.Zero, hi = Vector128<ulong>.Zero;
        int b = 0;
        if (typeof(TWidth) == typeof(Wide))
        {
            if ((count & 1) != 0)
            {
                MultiplyAccumulate(ByteReverse(Vector128.LoadUnsafe(ref blocks)).AsUInt64() ^ x, Unsafe.Add(ref hp, first), ref lo, ref mid, ref hi);
                x = Vector128<ulong>.Zero;
                b = 1;
            }
            Vector256<ulong> lo2 = Vector256<ulong>.Zero, mid2 = Vector256<ulong>.Zero, hi2 = Vector256<ulong>.Zero;
            Vector256<ulong> x2 = x.ToVector256();
            for (; b < count; b += 2)
            {
                MultiplyAccumulate(ByteReverse(Vector256.LoadUnsafe(ref blocks, (nuint)b * 16)).AsUInt64() ^ x2, Load256(ref hp, first + b), ref lo2, ref mid2, ref hi2);
                x2 = Vector256<ulong>.Zero;
            }
            lo ^= lo2.GetLower() ^ lo2.GetUpper();
            mid ^= mid2.GetLower() ^ mid2.GetUpper();
            hi ^= hi2.GetLower() ^ hi2.GetUpper();
        }
        else
        {
            for (; b < count; b++)
            {
                MultiplyAccumulate(ByteReverse(Vector128.LoadUnsafe(ref blocks, (nuint)b * 16)).AsUInt64() ^ x, Unsafe.Add(ref hp, first + b), ref lo, ref mid, ref hi);
                x = Vector128<ulong>.Zero;
            }
        }
        return Reduce(lo, mid, hi);
    }

    private Vector128<byte> EncryptBlock(Vector128<byte> block)
    {
        ref Vector128<byte> k = ref MemoryMarshal.GetArrayDataReference(_roundKeys);
        int last = _roundKeys.Length - 1;
        Vector128<byte> state = block ^ k;
        for (int r = 1; r < last; r++) state = Aes.Encrypt(state, Unsafe.Add(ref k, r));
        return Aes.EncryptLast(state, Unsafe.Add(ref k, last));
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static Vector256<ulong> Load256(ref Vector128<ulong> powers, int index) =>
        Unsafe.As<Vector128<ulong>, Vector256<ulong>>(ref Unsafe.Add(ref powers, index));

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static Vector128<byte> ByteReverse(Vector128<byte> value) =>
        Ssse3.Shuffle(value, Vector128.Create((byte)15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0));

    /// <summary>Each 128-bit lane byte-reversed (two blocks).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static Vector256<byte> ByteReverse(Vector256<byte> value) =>
        Avx2.Shuffle(value, Vector256.Create((byte)15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0));

    /// <summary>
    /// RFC 8452 mulX_POLYVAL: <paramref name="value"/>·x modulo x^128 + x^127 + x^126 + x^121 + 1 (the hash key in POLYVAL
    /// form is mulX_POLYVAL(ByteReverse(H))); the conditional reduction is a mask, not a branch.
    /// </summary>
    private static Vector128<ulong> MultiplyByX(Vector128<ulong> value)
    {
        Vector128<ulong> carries = Vector128.ShiftRightLogical(value, 63);
        Vector128<ulong> shifted = Vector128.ShiftLeft(value, 1) | Sse2.ShiftLeftLogical128BitLane(carries, 8);
        Vector128<ulong> mask = Vector128<ulong>.Zero - Vector128.Create(carries.GetElement(1));
        return shifted ^ (mask & Vector128.Create(1UL, 0xC200000000000000UL));
    }

    /// <summary>The 256-bit carry-less product a·b, added (XOR) into lo/mid/hi (schoolbook, four multiplications).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void MultiplyAccumulate(Vector128<ulong> a, Vector128<ulong> b, ref Vector128<ulong> lo, ref Vector128<ulong> mid, ref Vector128<ulong> hi)
    {
        lo ^= Pclmulqdq.CarrylessMultiply(a, b, 0x00);
        hi ^= Pclmulqdq.CarrylessMultiply(a, b, 0x11);
        mid ^= Pclmulqdq.CarrylessMultiply(a, b, 0x01) ^ Pclmulqdq.CarrylessMultiply(a, b, 0x10);
    }

    /// <summary>Two products at once, one per 128-bit lane (256-bit VPCLMULQDQ).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void MultiplyAccumulate(Vector256<ulong> a, Vector256<ulong> b, ref Vector256<ulong> lo, ref Vector256<ulong> mid, ref Vector256<ulong> hi)
    {
        lo ^= Pclmulqdq.V256.CarrylessMultiply(a, b, 0x00);
        hi ^= Pclmulqdq.V256.CarrylessMultiply(a, b, 0x11);
        mid ^= Pclmulqdq.V256.CarrylessMultiply(a, b, 0x01) ^ Pclmulqdq.V256.CarrylessMultiply(a, b, 0x10);
    }

    /// <summary>a·b·x^-128 in POLYVAL form (RFC 8452 dot).</summary>
    private static Vector128<ulong> Multiply(Vector128<ulong> a, Vector128<ulong> b)
    {
        Vector128<ulong> lo = Vector128<ulong>.Zero, mid = Vector128<ulong>.Zero, hi = Vector128<ulong>.Zero;
        MultiplyAccumulate(a, b, ref lo, ref mid, ref hi);
        return Reduce(lo, mid, hi);
    }

    /// <summary>
    /// Reduces the 256-bit product (hi:mid:lo) to (product)·x^-128 modulo x^128 + x^127 + x^126 + x^121 + 1 with two
    /// carry-less multiplications by 0xC2 &lt;&lt; 56 (Gueron, the POLYVAL reduction also used by OpenSSL and BoringSSL).
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static Vector128<ulong> Reduce(Vector128<ulong> lo, Vector128<ulong> mid, Vector128<ulong> hi)
    {
        Vector128<ulong> polynomial = Vector128.Create(1UL, 0xC200000000000000UL);
        lo ^= Sse2.ShiftLeftLogical128BitLane(mid, 8);
        hi ^= Sse2.ShiftRightLogical128BitLane(mid, 8);
        Vector128<ulong> t = Pclmulqdq.CarrylessMultiply(lo, polynomial, 0x10);
        lo = Sse2.Shuffle(lo.AsUInt32(), 0x4E).AsUInt64() ^ t;
        t = Pclmulqdq.CarrylessMultiply(lo, polynomial, 0x10);
        lo = Sse2.Shuffle(lo.AsUInt32(), 0x4E).AsUInt64() ^ t;
        return lo ^ hi;
    }

    /// <summary>Type argument selecting 256-bit GHASH.</summary>
    private struct Wide;

    /// <summary>Type argument selecting 128-bit GHASH.</summary>
    private struct Narrow;
}
