using System.Net.Quic.Managed.Crypto;
using System.Security.Cryptography;

namespace System.Net.Quic.Managed.Tls;

/// <summary>
/// One ephemeral (EC)DHE key pair (RFC 8446 §4.2.8, §7.4): x25519 through <see cref="X25519"/>, secp256r1/secp384r1
/// through <see cref="ECDiffieHellman"/>. Private keys come from <see cref="IRandomSource"/> so a seeded run is
/// reproducible; if the platform refuses to import a private scalar it falls back to its own key generation.
/// </summary>
internal sealed class KeyExchange : IDisposable
{
    private readonly byte[]? _x25519Private;
    private readonly ECDiffieHellman? _ecdh;

    private KeyExchange(NamedGroup group, byte[] publicKey, byte[]? x25519Private, ECDiffieHellman? ecdh)
    {
        Group = group;
        PublicKey = publicKey;
        _x25519Private = x25519Private;
        _ecdh = ecdh;
    }

    public NamedGroup Group { get; }

    /// <summary>The key_exchange bytes: 32-byte u-coordinate (x25519) or an uncompressed point 04||X||Y (RFC 8446 §4.2.8.2).</summary>
    public byte[] PublicKey { get; }

    public static bool IsSupported(NamedGroup group) => group is NamedGroup.X25519 or NamedGroup.Secp256r1 or NamedGroup.Secp384r1;

    private static int CoordinateLength(NamedGroup group) => group == NamedGroup.Secp384r1 ? 48 : 32;

    private static ECCurve Curve(NamedGroup group) => group == NamedGroup.Secp384r1 ? ECCurve.NamedCurves.nistP384 : ECCurve.NamedCurves.nistP256;

    public static KeyExchange Create(NamedGroup group, IRandomSource random)
    {
        if (group == NamedGroup.X25519)
        {
            byte[] priv = new byte[X25519.KeySize];
            random.Fill(priv);
            byte[] pub = new byte[X25519.KeySize];
            X25519.GetPublicKey(priv, pub);
            return new KeyExchange(group, pub, priv, null);
        }
        if (group != NamedGroup.Secp256r1 && group != NamedGroup.Secp384r1) throw new ArgumentOutOfRangeException(nameof(group));

        int n = CoordinateLength(group);
        ECDiffieHellman ecdh;
        byte[] d = new byte[n];
        random.Fill(d);
        d[0] &= 0x7f; // keep the scalar below the group order (both orders have the top bit set)
        d[n - 1] |= 1; // and non-zero
        try
        {
            ecdh = ECDiffieHellman.Create();
            ecdh.ImportParameters(new ECParameters { Curve = Curve(group), D = d });
        }
        catch (CryptographicException)
        {
            ecdh = ECDiffieHellman.Create(Curve(group));
        }
        finally
        {
            CryptographicOperations.ZeroMemory(d);
        }
        ECParameters p = ecdh.ExportParameters(false);
        byte[] point = new byte[1 + 2 * n];
        point[0] = 4;
        p.Q.X!.CopyTo(point, 1 + n - p.Q.X!.Length);
        p.Q.Y!.CopyTo(point, 1 + 2 * n - p.Q.Y!.Length);
        return new KeyExchange(group, point, null, ecdh);
    }

    /// <summary>
    /// Computes the shared secret with the peer's key_exchange bytes. Returns false for a malformed or invalid
    /// public key (the caller sends illegal_parameter, RFC 8446 §4.2.8.1/§4.2.8.2).
    /// </summary>
    public bool TryComputeSharedSecret(ReadOnlySpan<byte> peerPublicKey, out byte[] sharedSecret)
    {
        sharedSecret = Array.Empty<byte>();
        if (_x25519Private != null)
        {
            if (peerPublicKey.Length != X25519.KeySize) return false;
            byte[] s = new byte[X25519.KeySize];
            if (!X25519.TryComputeSharedSecret(_x25519Private, peerPublicKey, s)) return false;
            sharedSecret = s;
            return true;
        }
        int n = CoordinateLength(Group);
        if (peerPublicKey.Length != 1 + 2 * n || peerPublicKey[0] != 4) return false;
        try
        {
            using ECDiffieHellman peer = ECDiffieHellman.Create();
            peer.ImportParameters(new ECParameters
            {
                Curve = Curve(Group),
                Q = new ECPoint { X = peerPublicKey.Slice(1, n).ToArray(), Y = peerPublicKey.Slice(1 + n, n).ToArray() },
            });
            // RFC 8446 §7.4.2: the shared secret is the x-coordinate only.
            sharedSecret = _ecdh!.DeriveRawSecretAgreement(peer.PublicKey);
            return true;
        }
        catch (CryptographicException)
        {
            return false;
        }
    }

    public void Dispose()
    {
        if (_x25519Private != null) CryptographicOperations.ZeroMemory(_x25519Private);
        _ecdh?.Dispose();
    }
}
