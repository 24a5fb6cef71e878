using System.Security.Cryptography;

namespace System.Net.Quic.Managed.Tls;

/// <summary>
/// The handshake transcript (RFC 8446 §4.4.1). The raw messages are kept (a handshake is a few KiB) because the
/// client must hash its first flight before the cipher suite - and therefore the hash - is known, and the PSK binder
/// needs the hash of a truncated ClientHello (RFC 8446 §4.2.11.2).
/// </summary>
internal sealed class TranscriptHash
{
    private readonly TlsWriter _messages = new(1024);

    public int Length => _messages.Length;

    /// <summary>Bytes the buffer holds, used or not.</summary>
    public int Capacity => _messages.Capacity;

    /// <summary>The handshake is complete and every secret derived from the transcript is known: the messages go.</summary>
    public void Release() => _messages.ReleaseBuffer();

    public void Append(ReadOnlySpan<byte> handshakeMessage) => _messages.WriteBytes(handshakeMessage);

    /// <summary>Writes Hash(messages so far) into <paramref name="destination"/>; returns the hash length.</summary>
    public int GetHash(HashAlgorithmName hash, Span<byte> destination) => GetHash(hash, default, destination);

    /// <summary>Writes Hash(messages so far || <paramref name="extra"/>) into <paramref name="destination"/>.</summary>
    public int GetHash(HashAlgorithmName hash, ReadOnlySpan<byte> extra, Span<byte> destination)
    {
        using IncrementalHash h = IncrementalHash.CreateHash(hash);
        h.AppendData(_messages.WrittenSpan);
        h.AppendData(extra);
        return h.GetHashAndReset(destination);
    }

    /// <summary>
    /// RFC 8446 §4.4.1: after a HelloRetryRequest, ClientHello1 is replaced by
    /// message_hash(254) || 00 00 Hash.length || Hash(ClientHello1).
    /// </summary>
    public void ReplaceWithMessageHash(HashAlgorithmName hash)
    {
        Span<byte> digest = stackalloc byte[64];
        int length = GetHash(hash, digest);
        _messages.Clear();
        _messages.WriteUInt8((byte)HandshakeType.MessageHash);
        _messages.WriteUInt24(length);
        _messages.WriteBytes(digest.Slice(0, length));
    }
}
