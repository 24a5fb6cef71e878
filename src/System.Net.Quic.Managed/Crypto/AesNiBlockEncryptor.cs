using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using System.Runtime.Intrinsics;
using System.Runtime.Intrinsics.X86;

namespace System.Net.Quic.Managed.Crypto;

/// <summary>
/// One-block AES-128/AES-256 encryption with the x86 AES-NI instructions (FIPS 197), for header protection
/// (RFC 9001 §5.4.3: one AES block per packet). Going through <see cref="System.Security.Cryptography.ICryptoTransform"/>
/// costs a native call and OpenSSL context work per 16-byte block; a profile of a bulk transfer put header protection at
/// ~12% of the receiving thread. Managed code on BCL intrinsics, no native library. Use only when <see cref="IsSupported"/>.
/// </summary>
internal sealed class AesNiBlockEncryptor
{
    private readonly Vector128<byte>[] _roundKeys;

    public AesNiBlockEncryptor(ReadOnlySpan<byte> key)
    {
        if (!IsSupported) throw new PlatformNotSupportedException("AES-NI is not available.");
        _roundKeys = ExpandKey(key);
    }

    /// <summary>The AES-128 (11) or AES-256 (15) round keys of <paramref name="key"/> (FIPS 197 §5.2); AES-NI required.</summary>
    internal static Vector128<byte>[] ExpandKey(ReadOnlySpan<byte> key) => key.Length switch
    {
        16 => Expand128(Vector128.Create(key)),
        32 => Expand256(Vector128.Create(key), Vector128.Create(key.Slice(16))),
        _ => throw new ArgumentException("AES key must be 16 or 32 bytes.", nameof(key)),
    };

    public static bool IsSupported => System.Runtime.Intrinsics.X86.Aes.IsSupported && Sse2.IsSupported;

    /// <summary>Encrypts one 16-byte block.</summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public void EncryptBlock(ReadOnlySpan<byte> input, Span<byte> output)
    {
        Vector128<byte>[] keys = _roundKeys;
        Vector128<byte> state = Vector128.Create(input) ^ keys[0];
        int last = keys.Length - 1;
        for (int round = 1; round < last; round++) state = System.Runtime.Intrinsics.X86.Aes.Encrypt(state, keys[round]);
        System.Runtime.Intrinsics.X86.Aes.EncryptLast(state, keys[last]).CopyTo(output);
    }

    /// <summary>Overwrites the round keys (the key schedule is as secret as the key).</summary>
    public void Clear() => Array.Clear(_roundKeys);

    // FIPS 197 §5.2: w[i] = w[i-4] ^ SubWord(RotWord(w[i-1])) ^ Rcon; AESKEYGENASSIST computes the SubWord/RotWord part.
    private static Vector128<byte>[] Expand128(Vector128<byte> key)
    {
        var k = new Vector128<byte>[11];
        k[0] = key;
        k[1] = key = Step(key, System.Runtime.Intrinsics.X86.Aes.KeygenAssist(key, 0x01), 0xff);
        k[2] = key = Step(key, System.Runtime.Intrinsics.X86.Aes.KeygenAssist(key, 0x02), 0xff);
        k[3] = key = Step(key, System.Runtime.Intrinsics.X86.Aes.KeygenAssist(key, 0x04), 0xff);
        k[4] = key = Step(key, System.Runtime.Intrinsics.X86.Aes.KeygenAssist(key, 0x08), 0xff);
        k[5] = key = Step(key, System.Runtime.Intrinsics.X86.Aes.KeygenAssist(key, 0x10), 0xff);
        k[6] = key = Step(key, System.Runtime.Intrinsics.X86.Aes.KeygenAssist(key, 0x20), 0xff);
        k[7] = key = Step(key, System.Runtime.Intrinsics.X86.Aes.KeygenAssist(key, 0x40), 0xff);
        k[8] = key = Step(key, System.Runtime.Intrinsics.X86.Aes.KeygenAssist(key, 0x80), 0xff);
        k[9] = key = Step(key, System.Runtime.Intrinsics.X86.Aes.KeygenAssist(key, 0x1b), 0xff);
        k[10] = Step(key, System.Runtime.Intrinsics.X86.Aes.KeygenAssist(key, 0x36), 0xff);
        return k;
    }

    // FIPS 197 §5.2 for Nk = 8: every other round key uses SubWord without RotWord or Rcon (word 2 of the assist).
    private static Vector128<byte>[] Expand256(Vector128<byte> a, Vector128<byte> b)
    {
        var k = new Vector128<byte>[15];
        k[0] = a;
        k[1] = b;
        k[2] = a = Step(a, System.Runtime.Intrinsics.X86.Aes.KeygenAssist(b, 0x01), 0xff);
        k[3] = b = Step(b, System.Runtime.Intrinsics.X86.Aes.KeygenAssist(a, 0x00), 0xaa);
        k[4] = a = Step(a, System.Runtime.Intrinsics.X86.Aes.KeygenAssist(b, 0x02), 0xff);
        k[5] = b = Step(b, System.Runtime.Intrinsics.X86.Aes.KeygenAssist(a, 0x00), 0xaa);
        k[6] = a = Step(a, System.Runtime.Intrinsics.X86.Aes.KeygenAssist(b, 0x04), 0xff);
        k[7] = b = Step(b, System.Runtime.Intrinsics.X86.Aes.KeygenAssist(a, 0x00), 0xaa);
        k[8] = a = Step(a, System.Runtime.Intrinsics.X86.Aes.KeygenAssist(b, 0x08), 0xff);
        k[9] = b = Step(b, System.Runtime.Intrinsics.X86.Aes.KeygenAssist(a, 0x00), 0xaa);
        k[10] = a = Step(a, System.Runtime.Intrinsics.X86.Aes.KeygenAssist(b, 0x10), 0xff);
        k[11] = b = Step(b, System.Runtime.Intrinsics.X86.Aes.KeygenAssist(a, 0x00), 0xaa);
        k[12] = a = Step(a, System.Runtime.Intrinsics.X86.Aes.KeygenAssist(b, 0x20), 0xff);
        k[13] = b = Step(b, System.Runtime.Intrinsics.X86.Aes.KeygenAssist(a, 0x00), 0xaa);
        k[14] = Step(a, System.Runtime.Intrinsics.X86.Aes.KeygenAssist(b, 0x40), 0xff);
        return k;
    }

    /// <summary>Previous round key with each word XORed into the next (prefix XOR), plus the broadcast assist word.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static Vector128<byte> Step(Vector128<byte> previous, Vector128<byte> assist, [ConstantExpected] byte word)
    {
        Vector128<byte> t = Sse2.Shuffle(assist.AsInt32(), word).AsByte();
        previous ^= Sse2.ShiftLeftLogical128BitLane(previous, 4);
        previous ^= Sse2.ShiftLeftLogical128BitLane(previous, 4);
        previous ^= Sse2.ShiftLeftLogical128BitLane(previous, 4);
        return previous ^ t;
    }
}
