using System.Buffers.Binary;
using System.Net.Quic.Managed.Crypto;
using System.Net.Quic.Managed.Tls;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Cryptography;

namespace System.Net.Quic.Managed.Tests.Tls.Interop;

/// <summary>
/// TEST-ONLY TLS 1.3 record layer (RFC 8446 §5) over a TCP socket, so our sans-IO engine can talk to OpenSSL.
/// Plaintext records before keys, AEAD-protected TLSInnerPlaintext after; ChangeCipherSpec is ignored (§5).
/// </summary>
internal sealed class TlsRecordLayer
{
    private const byte ChangeCipherSpec = 20;
    private const byte AlertType = 21;
    private const byte HandshakeType = 22;
    private const byte ApplicationData = 23;

    private readonly Socket _socket;
    private readonly TlsHandshake _engine;
    private readonly Direction?[] _read = new Direction?[4];
    private readonly Direction?[] _write = new Direction?[4];
    private EncryptionLevel _readLevel = EncryptionLevel.Initial;
    private readonly Queue<byte[]> _applicationData = new();

    private sealed class Direction
    {
        public required TlsCipherSuite Suite;
        public required byte[] Key;
        public required byte[] Iv;
        public ulong Sequence;
    }

    public TlsRecordLayer(Socket socket, TlsHandshake engine)
    {
        _socket = socket;
        _engine = engine;
    }

    public string? PeerAlert { get; private set; }

    /// <summary>Optional diagnostics: installed secrets and decryption failures.</summary>
    public System.Text.StringBuilder? Debug { get; set; }

    /// <summary>Drives the handshake until both the engine completes and its output is flushed. Returns false on failure.</summary>
    public bool RunHandshake()
    {
        if (!_engine.Start()) return false;
        while (true)
        {
            InstallSecrets();
            Flush();
            if (_engine.HasFailed) return false;
            if (_engine.IsHandshakeComplete) return true;
            if (!ReadRecord()) return false;
        }
    }

    private void InstallSecrets()
    {
        while (_engine.TryDequeueSecret(out TlsTrafficSecret s))
        {
            Debug?.AppendLine($"SECRET {s.Level} client={s.IsClientSecret} write={s.IsWrite} {Convert.ToHexString(s.Secret)}");
            HashAlgorithmName hash = s.CipherSuite == TlsCipherSuite.TLS_AES_256_GCM_SHA384 ? HashAlgorithmName.SHA384 : HashAlgorithmName.SHA256;
            byte[] key = new byte[s.CipherSuite == TlsCipherSuite.TLS_AES_128_GCM_SHA256 ? 16 : 32];
            byte[] iv = new byte[12];
            HkdfLabel.Expand(hash, s.Secret, "key"u8, default, key);
            HkdfLabel.Expand(hash, s.Secret, "iv"u8, default, iv);
            var d = new Direction { Suite = s.CipherSuite, Key = key, Iv = iv };
            if (s.IsWrite) _write[(int)s.Level] = d;
            else
            {
                _read[(int)s.Level] = d;
                if (s.Level > _readLevel && s.Level != EncryptionLevel.EarlyData) _readLevel = s.Level;
            }
        }
    }

    private void Flush()
    {
        foreach (EncryptionLevel level in new[] { EncryptionLevel.Initial, EncryptionLevel.Handshake, EncryptionLevel.OneRtt })
        {
            byte[] data = _engine.GetPendingOutput(level).ToArray();
            if (data.Length == 0) continue;
            _engine.ConsumeOutput(level, data.Length);
            WriteRecord(level, HandshakeType, data);
        }
    }

    public void WriteApplicationData(byte[] data) => WriteRecord(EncryptionLevel.OneRtt, ApplicationData, data);

    /// <summary>Reads until application data arrives (handling post-handshake messages); null on close/alert/error.</summary>
    public byte[]? ReadApplicationData()
    {
        while (_applicationData.Count == 0)
        {
            if (!ReadRecord()) return null;
            InstallSecrets();
            Flush();
        }
        return _applicationData.Dequeue();
    }

    private void WriteRecord(EncryptionLevel level, byte contentType, byte[] data)
    {
        Direction? d = _write[(int)level];
        for (int offset = 0; offset < data.Length || data.Length == 0; offset += 16384)
        {
            int n = Math.Min(16384, data.Length - offset);
            ReadOnlySpan<byte> fragment = data.AsSpan(offset, n);
            byte[] record;
            if (d == null)
            {
                record = new byte[5 + n];
                record[0] = contentType;
                record[1] = 3;
                record[2] = 3;
                BinaryPrimitives.WriteUInt16BigEndian(record.AsSpan(3), (ushort)n);
                fragment.CopyTo(record.AsSpan(5));
            }
            else
            {
                // RFC 8446 §5.2: TLSInnerPlaintext = content || type, sealed under an outer application_data header.
                byte[] inner = new byte[n + 1];
                fragment.CopyTo(inner);
                inner[n] = contentType;
                int ctLength = inner.Length + 16;
                record = new byte[5 + ctLength];
                record[0] = ApplicationData;
                record[1] = 3;
                record[2] = 3;
                BinaryPrimitives.WriteUInt16BigEndian(record.AsSpan(3), (ushort)ctLength);
                Seal(d, record.AsSpan(0, 5), inner, record.AsSpan(5, inner.Length), record.AsSpan(5 + inner.Length, 16));
            }
            _socket.Send(record);
            if (data.Length == 0) break;
        }
    }

    private static byte[] Nonce(Direction d)
    {
        byte[] nonce = (byte[])d.Iv.Clone();
        for (int i = 0; i < 8; i++) nonce[11 - i] ^= (byte)(d.Sequence >> (8 * i));
        d.Sequence++;
        return nonce;
    }

    private static void Seal(Direction d, ReadOnlySpan<byte> aad, ReadOnlySpan<byte> plaintext, Span<byte> ciphertext, Span<byte> tag)
    {
        byte[] nonce = Nonce(d);
        if (d.Suite == TlsCipherSuite.TLS_CHACHA20_POLY1305_SHA256)
        {
            using var c = new ChaCha20Poly1305(d.Key);
            c.Encrypt(nonce, plaintext, ciphertext, tag, aad);
        }
        else
        {
            using var g = new AesGcm(d.Key, 16);
            g.Encrypt(nonce, plaintext, ciphertext, tag, aad);
        }
    }

    private static bool Open(Direction d, ReadOnlySpan<byte> aad, ReadOnlySpan<byte> ciphertext, ReadOnlySpan<byte> tag, Span<byte> plaintext)
    {
        byte[] nonce = Nonce(d);
        try
        {
            if (d.Suite == TlsCipherSuite.TLS_CHACHA20_POLY1305_SHA256)
            {
                using var c = new ChaCha20Poly1305(d.Key);
                c.Decrypt(nonce, ciphertext, tag, plaintext, aad);
            }
            else
            {
                using var g = new AesGcm(d.Key, 16);
                g.Decrypt(nonce, ciphertext, tag, plaintext, aad);
            }
            return true;
        }
        catch (CryptographicException)
        {
            return false;
        }
    }

    private bool ReadExactly(Span<byte> buffer)
    {
        int got = 0;
        while (got < buffer.Length)
        {
            int n;
            try
            {
                n = _socket.Receive(buffer.Slice(got));
            }
            catch (SocketException)
            {
                return false;
            }
            if (n == 0) return false;
            got += n;
        }
        return true;
    }

    private bool ReadRecord()
    {
        byte[] header = new byte[5];
        if (!ReadExactly(header)) return false;
        int length = BinaryPrimitives.ReadUInt16BigEndian(header.AsSpan(3));
        if (length > 16384 + 256) return false;
        byte[] body = new byte[length];
        if (!ReadExactly(body)) return false;
        byte type = header[0];
        if (type == ChangeCipherSpec) return true;
        Direction? d = _read[(int)_readLevel];
        if (type == ApplicationData && d != null)
        {
            if (length < 17) return false;
            byte[] inner = new byte[length - 16];
            if (!Open(d, header, body.AsSpan(0, length - 16), body.AsSpan(length - 16), inner)) { Debug?.AppendLine("OPEN FAILED at " + _readLevel); return false; }
            int end = inner.Length - 1;
            while (end >= 0 && inner[end] == 0) end--;
            if (end < 0) return false;
            type = inner[end];
            body = inner.AsSpan(0, end).ToArray();
        }
        switch (type)
        {
            case HandshakeType:
                return _engine.ProcessCryptoData(_readLevel, body);
            case ApplicationData:
                _applicationData.Enqueue(body);
                return true;
            case AlertType:
                PeerAlert = body.Length == 2 ? $"level {body[0]} description {body[1]}" : "malformed alert";
                return false;
            default:
                return false;
        }
    }
}
