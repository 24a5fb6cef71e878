using System.Buffers.Binary;
using System.Security.Cryptography;

namespace System.Net.Quic.Managed.Crypto;

/// <summary>
/// ChaCha20-based header protection (RFC 9001 §5.4.4): counter = sample[0..4] little-endian,
/// nonce = sample[4..16], mask = ChaCha20(hp_key, counter, nonce, {0,0,0,0,0}) = first 5 keystream bytes.
/// </summary>
internal sealed class ChaCha20HeaderProtectionKey : HeaderProtectionKey
{
    private readonly byte[] _key;

    public ChaCha20HeaderProtectionKey(ReadOnlySpan<byte> key)
    {
        if (key.Length != ChaCha20Block.KeySize) throw new ArgumentException("ChaCha20 header protection key must be 32 bytes.", nameof(key));
        _key = key.ToArray();
    }

    public override void ComputeMask(ReadOnlySpan<byte> sample, Span<byte> mask)
    {
        if (sample.Length != SampleLength) throw new ArgumentException("Sample must be 16 bytes.", nameof(sample));
        if (mask.Length < MaskLength) throw new ArgumentException("Mask must hold 5 bytes.", nameof(mask));
        if (IsReleased) throw new ObjectDisposedException(nameof(ChaCha20HeaderProtectionKey));
        uint counter = BinaryPrimitives.ReadUInt32LittleEndian(sample);
        Span<byte> block = stackalloc byte[ChaCha20Block.BlockSize];
        ChaCha20Block.Compute(_key, counter, sample.Slice(4, ChaCha20Block.NonceSize), block);
        block.Slice(0, MaskLength).CopyTo(mask);
        CryptographicOperations.ZeroMemory(block);
    }

    protected override void ReleaseKey() => CryptographicOperations.ZeroMemory(_key);
}
