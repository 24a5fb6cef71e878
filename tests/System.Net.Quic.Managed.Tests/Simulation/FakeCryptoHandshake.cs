using System.Net.Quic.Managed.Core;
using System.Net.Quic.Managed.Tls;
using System.Net.Quic.Managed.Wire;
using System.Net.Security;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

namespace System.Net.Quic.Managed.Tests.Simulation;

/// <summary>
/// A deterministic stand-in for TLS with the same shape (RFC 9001 §4 levels and secrets), so the connection state machine
/// is tested on its own: CH (Initial) → SH (Initial) + EE/FIN (Handshake) → CFIN (Handshake). Messages are
/// type(1) length(2) body; transport parameters travel in CH and EE. Secrets are fixed hashes of labels (AES-128-GCM).
/// Not cryptography: only for exercising the transport.
/// </summary>
internal sealed class FakeCryptoHandshake : ICryptoHandshake
{
    private const byte ClientHello = 1, ServerHello = 2, EncryptedExtensions = 3, ServerFinished = 4, ClientFinished = 5;

    private readonly bool _isServer;
    private readonly Queue<(EncryptionLevel, byte[])> _outgoing = new();
    private readonly Queue<HandshakeSecret> _secrets = new();
    private readonly Dictionary<EncryptionLevel, List<byte>> _buffers = new();
    private byte[] _localParameters = Array.Empty<byte>();
    private byte[]? _peerParameters;

    public FakeCryptoHandshake(bool isServer) => _isServer = isServer;

    /// <summary>Make the server fail the handshake with this TLS alert when the ClientHello arrives.</summary>
    public byte? FailWithAlert { get; set; }

    public bool IsComplete { get; private set; }

    public ReadOnlySpan<byte> PeerTransportParameters => _peerParameters;

    public bool HasPeerTransportParameters => _peerParameters is not null;

    public TlsCipherSuite NegotiatedCipherSuite => TlsCipherSuite.TLS_AES_128_GCM_SHA256;

    public SslApplicationProtocol NegotiatedApplicationProtocol => new("fake");

    public X509Certificate2? RemoteCertificate => null;

    public string? ServerName => "fake.example";

    public bool IsResumed => false;

    public bool EarlyDataAccepted => false;

    public bool TryTakeSessionTicket(out System.Net.Quic.Managed.Tls.TlsSessionTicket ticket)
    {
        ticket = null!;
        return false;
    }

    public void Start(ReadOnlySpan<byte> localTransportParameters, long nowUs)
    {
        _localParameters = localTransportParameters.ToArray();
        if (!_isServer) Send(EncryptionLevel.Initial, ClientHello, _localParameters);
    }

    public TransportErrorCode Process(EncryptionLevel level, ReadOnlySpan<byte> data, long nowUs, out string? reason)
    {
        reason = null;
        if (!_buffers.TryGetValue(level, out List<byte>? buffer)) _buffers[level] = buffer = new List<byte>();
        buffer.AddRange(data.ToArray());
        while (buffer.Count >= 3)
        {
            int length = (buffer[1] << 8) | buffer[2];
            if (buffer.Count < 3 + length) break;
            byte type = buffer[0];
            byte[] body = buffer.GetRange(3, length).ToArray();
            buffer.RemoveRange(0, 3 + length);
            TransportErrorCode error = Handle(level, type, body, out reason);
            if (error != TransportErrorCode.NoError) return error;
        }
        return TransportErrorCode.NoError;
    }

    private TransportErrorCode Handle(EncryptionLevel level, byte type, byte[] body, out string? reason)
    {
        reason = null;
        switch ((_isServer, level, type))
        {
            case (true, EncryptionLevel.Initial, ClientHello):
                if (FailWithAlert is byte alert)
                {
                    reason = "fake handshake refused";
                    return TransportErrorCode.CryptoError + alert;
                }
                _peerParameters = body;
                Send(EncryptionLevel.Initial, ServerHello, Array.Empty<byte>());
                Secret(EncryptionLevel.Handshake, sending: true, "s hs");
                Secret(EncryptionLevel.Handshake, sending: false, "c hs");
                Send(EncryptionLevel.Handshake, EncryptedExtensions, _localParameters);
                Send(EncryptionLevel.Handshake, ServerFinished, new byte[32]);
                Secret(EncryptionLevel.OneRtt, sending: true, "s ap");
                Secret(EncryptionLevel.OneRtt, sending: false, "c ap");
                return TransportErrorCode.NoError;
            case (false, EncryptionLevel.Initial, ServerHello):
                Secret(EncryptionLevel.Handshake, sending: true, "c hs");
                Secret(EncryptionLevel.Handshake, sending: false, "s hs");
                return TransportErrorCode.NoError;
            case (false, EncryptionLevel.Handshake, EncryptedExtensions):
                _peerParameters = body;
                return TransportErrorCode.NoError;
            case (false, EncryptionLevel.Handshake, ServerFinished):
                Send(EncryptionLevel.Handshake, ClientFinished, new byte[32]);
                Secret(EncryptionLevel.OneRtt, sending: true, "c ap");
                Secret(EncryptionLevel.OneRtt, sending: false, "s ap");
                IsComplete = true;
                return TransportErrorCode.NoError;
            case (true, EncryptionLevel.Handshake, ClientFinished):
                IsComplete = true;
                return TransportErrorCode.NoError;
            default:
                reason = $"unexpected message {type} at {level}";
                return TransportErrorCode.CryptoError + 10; // unexpected_message
        }
    }

    private void Send(EncryptionLevel level, byte type, byte[] body)
    {
        byte[] message = new byte[3 + body.Length];
        message[0] = type;
        message[1] = (byte)(body.Length >> 8);
        message[2] = (byte)body.Length;
        body.CopyTo(message, 3);
        _outgoing.Enqueue((level, message));
    }

    private void Secret(EncryptionLevel level, bool sending, string label)
        => _secrets.Enqueue(new HandshakeSecret(level, sending, TlsCipherSuite.TLS_AES_128_GCM_SHA256, SHA256.HashData(System.Text.Encoding.ASCII.GetBytes(label))));

    public bool TryTakeOutgoing(out EncryptionLevel level, out byte[] data)
    {
        if (_outgoing.TryDequeue(out (EncryptionLevel Level, byte[] Data) next))
        {
            level = next.Level;
            data = next.Data;
            return true;
        }
        level = default;
        data = Array.Empty<byte>();
        return false;
    }

    public bool TryTakeSecret(out HandshakeSecret secret) => _secrets.TryDequeue(out secret);

    public void Dispose()
    {
    }
}
