using System.Net.Security;

namespace System.Net.Quic.Managed.Crypto;

/// <summary>
/// A header protection key (RFC 9001 §5.4) turning a 16-byte ciphertext sample into a 5-byte mask.
/// The same key serves every key phase of a direction (RFC 9001 §6.1: header protection keys are not updated),
/// so instances are shared between key generations and reference counted; single-threaded like the rest of a connection.
/// </summary>
internal abstract class HeaderProtectionKey
{
    /// <summary>RFC 9001 §5.4.2: the sample is 16 bytes for all defined suites.</summary>
    public const int SampleLength = 16;

    /// <summary>RFC 9001 §5.4.1: one mask byte for the first byte plus up to four packet number bytes.</summary>
    public const int MaskLength = 5;

    private int _references = 1;

    /// <summary>Creates the header protection algorithm for <paramref name="suite"/> keyed with <paramref name="key"/>.</summary>
    public static HeaderProtectionKey Create(TlsCipherSuite suite, ReadOnlySpan<byte> key)
    {
        if (key.Length != QuicCipherSuite.GetKeyLength(suite)) throw new ArgumentException("Key length does not match the cipher suite.", nameof(key));
        return suite switch
        {
            TlsCipherSuite.TLS_AES_128_GCM_SHA256 or TlsCipherSuite.TLS_AES_256_GCM_SHA384 => new AesHeaderProtectionKey(key),
            TlsCipherSuite.TLS_CHACHA20_POLY1305_SHA256 => new ChaCha20HeaderProtectionKey(key),
            _ => throw new ArgumentOutOfRangeException(nameof(suite)),
        };
    }

    /// <summary>
    /// Writes the 5-byte header protection mask for <paramref name="sample"/> (exactly 16 bytes) into
    /// <paramref name="mask"/> (at least 5 bytes). Does not allocate.
    /// </summary>
    public abstract void ComputeMask(ReadOnlySpan<byte> sample, Span<byte> mask);

    /// <summary>Adds a reference for another key generation that shares this key.</summary>
    public HeaderProtectionKey AddReference()
    {
        if (_references <= 0) throw new ObjectDisposedException(GetType().Name);
        _references++;
        return this;
    }

    /// <summary>Drops a reference; the key material is released when the last one goes.</summary>
    public void Release()
    {
        if (_references <= 0) return;
        if (--_references == 0) ReleaseKey();
    }

    /// <summary>True once every reference has been released.</summary>
    public bool IsReleased => _references <= 0;

    protected abstract void ReleaseKey();
}
