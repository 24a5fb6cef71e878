using System.Security.Cryptography;

namespace System.Net.Quic.Managed.Tests.Ids;

/// <summary>
/// The load balancer's side of QUIC-LB (draft-ietf-quic-load-balancers-21, "Load Balancer Actions"), written apart from
/// the library's generator so that the two check each other: extracts the server ID from a connection ID, with the
/// three-pass shortcut when the server ID lies in the left half and the fourth pass otherwise.
/// </summary>
internal sealed class QuicLbDecoder : IDisposable
{
    private readonly int _configRotation;
    private readonly int _serverIdLength;
    private readonly int _nonceLength;
    private readonly Aes? _aes;

    public QuicLbDecoder(int configRotation, int serverIdLength, int nonceLength, byte[]? key)
    {
        _configRotation = configRotation;
        _serverIdLength = serverIdLength;
        _nonceLength = nonceLength;
        if (key is { Length: > 0 })
        {
            _aes = Aes.Create();
            _aes.Key = key;
        }
    }

    /// <summary>The server ID, or null when the ID is not of this configuration (rotation bits) or too short.</summary>
    public byte[]? DecodeServerId(ReadOnlySpan<byte> cid)
    {
        int length = _serverIdLength + _nonceLength;
        if (cid.Length < 1 + length || cid[0] >> 5 != _configRotation) return null;
        ReadOnlySpan<byte> block = cid.Slice(1, length);
        if (_aes is null) return block.Slice(0, _serverIdLength).ToArray();
        if (length == 16)
        {
            byte[] plain = _aes.DecryptEcb(block.ToArray(), PaddingMode.None);
            return plain.AsSpan(0, _serverIdLength).ToArray();
        }
        int half = (length + 1) / 2;
        bool odd = length % 2 == 1;
        byte[] left = block.Slice(0, half).ToArray();
        byte[] right = block.Slice(length - half).ToArray();
        if (odd)
        {
            left[half - 1] &= 0xF0;
            right[0] &= 0x0F;
        }
        Pass(length, 4, right, left, odd, lastNibble: true);   // left_1
        Pass(length, 3, left, right, odd, lastNibble: false);  // right_1
        Pass(length, 2, right, left, odd, lastNibble: true);   // left_0
        bool inLeft = odd ? _serverIdLength < half : _serverIdLength <= half;
        if (inLeft) return left.AsSpan(0, _serverIdLength).ToArray();
        Pass(length, 1, left, right, odd, lastNibble: false);  // right_0
        byte[] plaintext = new byte[length];
        left.CopyTo(plaintext, 0);
        if (odd)
        {
            plaintext[half - 1] = (byte)(left[half - 1] | right[0]);
            right.AsSpan(1).CopyTo(plaintext.AsSpan(half));
        }
        else
        {
            right.CopyTo(plaintext, half);
        }
        return plaintext.AsSpan(0, _serverIdLength).ToArray();
    }

    private void Pass(int length, int pass, byte[] input, byte[] target, bool odd, bool lastNibble)
    {
        byte[] expanded = new byte[16];
        input.CopyTo(expanded, 0);
        expanded[14] = (byte)length;
        expanded[15] = (byte)pass;
        byte[] output = _aes!.EncryptEcb(expanded, PaddingMode.None);
        for (int i = 0; i < target.Length; i++) target[i] ^= output[i];
        if (!odd) return;
        if (lastNibble) target[^1] &= 0xF0;
        else target[0] &= 0x0F;
    }

    public void Dispose() => _aes?.Dispose();
}
