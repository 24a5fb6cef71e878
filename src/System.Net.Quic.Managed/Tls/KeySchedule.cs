using System.Net.Quic.Managed.Crypto;
using System.Security.Cryptography;

namespace System.Net.Quic.Managed.Tls;

/// <summary>
/// The TLS 1.3 key schedule (RFC 8446 §7.1): Early Secret -> Handshake Secret -> Master Secret, each stage
/// derived from the previous one through Derive-Secret(., "derived", "").
/// </summary>
internal sealed class KeySchedule
{
    private readonly byte[] _secret = new byte[64];
    private readonly byte[] _emptyHash = new byte[64];

    public KeySchedule(HashAlgorithmName hash)
    {
        Hash = hash;
        HashLength = CipherSuiteInfo.GetHashLength(hash);
        // Hash("") is the context of every Derive-Secret(., "derived", "") (RFC 8446 §7.1).
        using IncrementalHash h = IncrementalHash.CreateHash(hash);
        h.GetHashAndReset(_emptyHash);
    }

    public HashAlgorithmName Hash { get; }

    public int HashLength { get; }

    /// <summary>The secret of the current stage (early, handshake or master).</summary>
    public ReadOnlySpan<byte> CurrentSecret => _secret.AsSpan(0, HashLength);

    /// <summary>Early Secret = HKDF-Extract(0, PSK), with PSK = 0 when none is used (RFC 8446 §7.1).</summary>
    public void InitializeEarlySecret(ReadOnlySpan<byte> psk)
    {
        Span<byte> zeros = stackalloc byte[64];
        zeros.Clear();
        ReadOnlySpan<byte> ikm = psk.IsEmpty ? zeros.Slice(0, HashLength) : psk;
        HkdfLabel.Extract(Hash, ikm, zeros.Slice(0, HashLength), _secret);
    }

    /// <summary>Handshake Secret = HKDF-Extract(Derive-Secret(Early, "derived", ""), (EC)DHE).</summary>
    public void AdvanceToHandshakeSecret(ReadOnlySpan<byte> sharedSecret) => Advance(sharedSecret);

    /// <summary>Master Secret = HKDF-Extract(Derive-Secret(Handshake, "derived", ""), 0).</summary>
    public void AdvanceToMasterSecret()
    {
        Span<byte> zeros = stackalloc byte[64];
        zeros.Clear();
        Advance(zeros.Slice(0, HashLength));
    }

    private void Advance(ReadOnlySpan<byte> ikm)
    {
        Span<byte> derived = stackalloc byte[64];
        derived = derived.Slice(0, HashLength);
        HkdfLabel.Expand(Hash, CurrentSecret, "derived"u8, _emptyHash.AsSpan(0, HashLength), derived);
        HkdfLabel.Extract(Hash, ikm, derived, _secret);
    }

    /// <summary>Derive-Secret(current, label, Messages) given Transcript-Hash(Messages) (RFC 8446 §7.1).</summary>
    public void DeriveSecret(ReadOnlySpan<byte> label, ReadOnlySpan<byte> transcriptHash, Span<byte> destination)
        => HkdfLabel.Expand(Hash, CurrentSecret, label, transcriptHash, destination.Slice(0, HashLength));

    /// <summary>Binder key: "ext binder" or "res binder" over Hash("") from the early secret (RFC 8446 §7.1).</summary>
    public void DeriveBinderKey(bool external, Span<byte> destination)
        => DeriveSecret(external ? "ext binder"u8 : "res binder"u8, _emptyHash.AsSpan(0, HashLength), destination);

    /// <summary>finished_key = HKDF-Expand-Label(BaseKey, "finished", "", Hash.length);
    /// verify_data = HMAC(finished_key, Transcript-Hash) (RFC 8446 §4.4.4).</summary>
    public static void ComputeFinished(HashAlgorithmName hash, ReadOnlySpan<byte> baseKey, ReadOnlySpan<byte> transcriptHash, Span<byte> verifyData)
    {
        int length = CipherSuiteInfo.GetHashLength(hash);
        Span<byte> finishedKey = stackalloc byte[64];
        finishedKey = finishedKey.Slice(0, length);
        HkdfLabel.Expand(hash, baseKey, "finished"u8, default, finishedKey);
        if (hash == HashAlgorithmName.SHA384) HMACSHA384.HashData(finishedKey, transcriptHash, verifyData);
        else HMACSHA256.HashData(finishedKey, transcriptHash, verifyData);
        CryptographicOperations.ZeroMemory(finishedKey);
    }

    /// <summary>PSK for a ticket = HKDF-Expand-Label(resumption_master_secret, "resumption", ticket_nonce, Hash.length) (RFC 8446 §4.6.1).</summary>
    public static void DeriveResumptionPsk(HashAlgorithmName hash, ReadOnlySpan<byte> resumptionMasterSecret, ReadOnlySpan<byte> ticketNonce, Span<byte> psk)
        => HkdfLabel.Expand(hash, resumptionMasterSecret, "resumption"u8, ticketNonce, psk.Slice(0, CipherSuiteInfo.GetHashLength(hash)));
}
