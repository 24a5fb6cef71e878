using System.Runtime.CompilerServices;
using System.Security.Cryptography;

namespace System.Net.Quic.Managed.Crypto;

/// <summary>
/// AES-based header protection (RFC 9001 §5.4.3): mask = AES-ECB(hp_key, sample).
/// The one-shot <see cref="SymmetricAlgorithm.EncryptEcb(ReadOnlySpan{byte}, Span{byte}, PaddingMode)"/> builds a
/// fresh native cipher context per call (measured: 64 bytes allocated per call on .NET 10 / Linux), so a single ECB
/// encryptor is created up front and fed from two reused 16-byte arrays; ECB with no padding carries no state
/// between blocks, so reusing the transform is correct. Where the CPU has AES-NI, one block is encrypted with
/// <see cref="AesNiBlockEncryptor"/> instead (no native call per packet).
/// </summary>
internal sealed class AesHeaderProtectionKey : HeaderProtectionKey
{
    private readonly AesNiBlockEncryptor? _aesNi;
    private readonly Aes? _aes;
    private readonly ICryptoTransform? _encryptor;
    private readonly byte[] _input = new byte[SampleLength];
    private readonly byte[] _output = new byte[SampleLength];

    public AesHeaderProtectionKey(ReadOnlySpan<byte> key)
        : this(key, useIntrinsics: AesNiBlockEncryptor.IsSupported)
    {
    }

    /// <param name="key">The hp key (16 or 32 bytes).</param>
    /// <param name="useIntrinsics">Tests set false to exercise the portable path on an AES-NI machine.</param>
    internal AesHeaderProtectionKey(ReadOnlySpan<byte> key, bool useIntrinsics)
    {
        if (key.Length != 16 && key.Length != 32) throw new ArgumentException("AES header protection key must be 16 or 32 bytes.", nameof(key));
        if (useIntrinsics)
        {
            _aesNi = new AesNiBlockEncryptor(key);
            return;
        }
        _aes = Aes.Create();
        byte[] keyBytes = key.ToArray();
        _aes.Key = keyBytes;
        CryptographicOperations.ZeroMemory(keyBytes);
        _aes.Mode = CipherMode.ECB;
        _aes.Padding = PaddingMode.None;
        _encryptor = _aes.CreateEncryptor();
    }

    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public override void ComputeMask(ReadOnlySpan<byte> sample, Span<byte> mask)
    {
        if (sample.Length != SampleLength) throw new ArgumentException("Sample must be 16 bytes.", nameof(sample));
        if (mask.Length < MaskLength) throw new ArgumentException("Mask must hold 5 bytes.", nameof(mask));
        if (IsReleased) throw new ObjectDisposedException(nameof(AesHeaderProtectionKey));
        if (_aesNi is not null)
        {
            Span<byte> block = stackalloc byte[SampleLength];
            _aesNi.EncryptBlock(sample, block);
            block.Slice(0, MaskLength).CopyTo(mask);
            return;
        }
        sample.CopyTo(_input);
        _encryptor!.TransformBlock(_input, 0, SampleLength, _output, 0);
        _output.AsSpan(0, MaskLength).CopyTo(mask);
    }

    protected override void ReleaseKey()
    {
        _aesNi?.Clear();
        _encryptor?.Dispose();
        _aes?.Dispose();
        CryptographicOperations.ZeroMemory(_input);
        CryptographicOperations.ZeroMemory(_output);
    }
}
