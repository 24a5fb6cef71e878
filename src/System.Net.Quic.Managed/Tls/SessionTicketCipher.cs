using System.Security.Cryptography;

namespace System.Net.Quic.Managed.Tls;

/// <summary>
/// The AES-GCM instance that seals and opens session tickets (RFC 8446 §4.6.1: the ticket is opaque to the client,
/// here AES-GCM under the listener's key). Creating an AesGcm fetches a cipher from OpenSSL and expands the key, once
/// per ticket before; a listener's connections all run on its one driver thread, so one instance per thread, kept
/// while the key stays the same, serves them all. AesGcm instances are not safe for concurrent use: per thread they
/// never are shared.
/// </summary>
internal static class SessionTicketCipher
{
    [ThreadStatic]
    private static byte[]? t_key;

    [ThreadStatic]
    private static AesGcm? t_aead;

    /// <summary>The instance for <paramref name="key"/> on this thread (a copy of the key is compared, so a key changed in place is noticed).</summary>
    public static AesGcm For(byte[] key, int tagLength)
    {
        AesGcm? aead = t_aead;
        byte[]? cached = t_key;
        if (aead is not null && cached is not null && aead.TagSizeInBytes == tagLength && CryptographicOperations.FixedTimeEquals(cached, key))
        {
            return aead;
        }
        aead?.Dispose();
        if (cached is not null) CryptographicOperations.ZeroMemory(cached);
        t_aead = null;
        t_key = null;
        aead = new AesGcm(key, tagLength);
        t_key = (byte[])key.Clone();
        t_aead = aead;
        return aead;
    }
}
