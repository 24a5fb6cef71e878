using System.Buffers.Binary;
using System.Numerics;
using System.Runtime.CompilerServices;

namespace System.Net.Quic.Managed.Crypto;

/// <summary>
/// The raw ChaCha20 block function (RFC 8439 §2.3) and keystream XOR (RFC 8439 §2.4).
/// .NET exposes only the ChaCha20-Poly1305 AEAD, but QUIC header protection (RFC 9001 §5.4.4)
/// needs the bare block function with a caller-chosen counter and nonce.
/// </summary>
internal static class ChaCha20Block
{
    public const int KeySize = 32;
    public const int NonceSize = 12;
    public const int BlockSize = 64;

    /// <summary>
    /// Writes chacha20_block(key, counter, nonce) (64 bytes) into <paramref name="output"/>. Does not allocate.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public static void Compute(ReadOnlySpan<byte> key, uint counter, ReadOnlySpan<byte> nonce, Span<byte> output)
    {
        if (key.Length != KeySize) throw new ArgumentException("ChaCha20 key must be 32 bytes.", nameof(key));
        if (nonce.Length != NonceSize) throw new ArgumentException("ChaCha20 nonce must be 12 bytes.", nameof(nonce));
        if (output.Length < BlockSize) throw new ArgumentException("Output must hold 64 bytes.", nameof(output));

        // RFC 8439 §2.3: constants | key (LE words) | counter | nonce (LE words).
        uint j0 = 0x61707865, j1 = 0x3320646e, j2 = 0x79622d32, j3 = 0x6b206574;
        uint j4 = BinaryPrimitives.ReadUInt32LittleEndian(key);
        uint j5 = BinaryPrimitives.ReadUInt32LittleEndian(key.Slice(4));
        uint j6 = BinaryPrimitives.ReadUInt32LittleEndian(key.Slice(8));
        uint j7 = BinaryPrimitives.ReadUInt32LittleEndian(key.Slice(12));
        uint j8 = BinaryPrimitives.ReadUInt32LittleEndian(key.Slice(16));
        uint j9 = BinaryPrimitives.ReadUInt32LittleEndian(key.Slice(20));
        uint j10 = BinaryPrimitives.ReadUInt32LittleEndian(key.Slice(24));
        uint j11 = BinaryPrimitives.ReadUInt32LittleEndian(key.Slice(28));
        uint j12 = counter;
        uint j13 = BinaryPrimitives.ReadUInt32LittleEndian(nonce);
        uint j14 = BinaryPrimitives.ReadUInt32LittleEndian(nonce.Slice(4));
        uint j15 = BinaryPrimitives.ReadUInt32LittleEndian(nonce.Slice(8));

        uint x0 = j0, x1 = j1, x2 = j2, x3 = j3, x4 = j4, x5 = j5, x6 = j6, x7 = j7;
        uint x8 = j8, x9 = j9, x10 = j10, x11 = j11, x12 = j12, x13 = j13, x14 = j14, x15 = j15;

        // RFC 8439 §2.3.1: ten iterations of a column round followed by a diagonal round.
        for (int i = 0; i < 10; i++)
        {
            QuarterRound(ref x0, ref x4, ref x8, ref x12);
            QuarterRound(ref x1, ref x5, ref x9, ref x13);
            QuarterRound(ref x2, ref x6, ref x10, ref x14);
            QuarterRound(ref x3, ref x7, ref x11, ref x15);
            QuarterRound(ref x0, ref x5, ref x10, ref x15);
            QuarterRound(ref x1, ref x6, ref x11, ref x12);
            QuarterRound(ref x2, ref x7, ref x8, ref x13);
            QuarterRound(ref x3, ref x4, ref x9, ref x14);
        }

        unchecked
        {
            BinaryPrimitives.WriteUInt32LittleEndian(output, x0 + j0);
            BinaryPrimitives.WriteUInt32LittleEndian(output.Slice(4), x1 + j1);
            BinaryPrimitives.WriteUInt32LittleEndian(output.Slice(8), x2 + j2);
            BinaryPrimitives.WriteUInt32LittleEndian(output.Slice(12), x3 + j3);
            BinaryPrimitives.WriteUInt32LittleEndian(output.Slice(16), x4 + j4);
            BinaryPrimitives.WriteUInt32LittleEndian(output.Slice(20), x5 + j5);
            BinaryPrimitives.WriteUInt32LittleEndian(output.Slice(24), x6 + j6);
            BinaryPrimitives.WriteUInt32LittleEndian(output.Slice(28), x7 + j7);
            BinaryPrimitives.WriteUInt32LittleEndian(output.Slice(32), x8 + j8);
            BinaryPrimitives.WriteUInt32LittleEndian(output.Slice(36), x9 + j9);
            BinaryPrimitives.WriteUInt32LittleEndian(output.Slice(40), x10 + j10);
            BinaryPrimitives.WriteUInt32LittleEndian(output.Slice(44), x11 + j11);
            BinaryPrimitives.WriteUInt32LittleEndian(output.Slice(48), x12 + j12);
            BinaryPrimitives.WriteUInt32LittleEndian(output.Slice(52), x13 + j13);
            BinaryPrimitives.WriteUInt32LittleEndian(output.Slice(56), x14 + j14);
            BinaryPrimitives.WriteUInt32LittleEndian(output.Slice(60), x15 + j15);
        }
    }

    /// <summary>
    /// chacha20_encrypt (RFC 8439 §2.4): XORs <paramref name="input"/> with the keystream starting at block
    /// <paramref name="initialCounter"/>. Encryption and decryption are the same operation.
    /// <paramref name="output"/> may be the same memory as <paramref name="input"/>.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public static void Xor(ReadOnlySpan<byte> key, uint initialCounter, ReadOnlySpan<byte> nonce, ReadOnlySpan<byte> input, Span<byte> output)
    {
        if (output.Length < input.Length) throw new ArgumentException("Output is shorter than input.", nameof(output));
        // RFC 8439 §2.4: a (key, nonce) pair covers at most 2^32 blocks; refuse to wrap the counter.
        ulong blocks = ((ulong)input.Length + BlockSize - 1) / BlockSize;
        if (blocks > 0 && initialCounter + (blocks - 1) > uint.MaxValue) throw new ArgumentException("Block counter would wrap.", nameof(input));

        Span<byte> keyStream = stackalloc byte[BlockSize];
        uint counter = initialCounter;
        for (int offset = 0; offset < input.Length; offset += BlockSize)
        {
            Compute(key, counter, nonce, keyStream);
            int n = Math.Min(BlockSize, input.Length - offset);
            for (int i = 0; i < n; i++)
            {
                output[offset + i] = (byte)(input[offset + i] ^ keyStream[i]);
            }
            unchecked { counter++; }
        }
        keyStream.Clear();
    }

    // RFC 8439 §2.1: the ChaCha quarter round.
    private static void QuarterRound(ref uint a, ref uint b, ref uint c, ref uint d)
    {
        unchecked
        {
            a += b; d ^= a; d = BitOperations.RotateLeft(d, 16);
            c += d; b ^= c; b = BitOperations.RotateLeft(b, 12);
            a += b; d ^= a; d = BitOperations.RotateLeft(d, 8);
            c += d; b ^= c; b = BitOperations.RotateLeft(b, 7);
        }
    }
}
