using System.Net.Quic.Managed.Tls;
using System.Net.Quic.Managed.Wire;
using System.Net.Security;
using System.Security.Cryptography.X509Certificates;

namespace System.Net.Quic.Managed.Core;

/// <summary>The managed TLS 1.3 engine behind the connection's <see cref="ICryptoHandshake"/> seam (RFC 9001 §4).</summary>
internal sealed class TlsCryptoHandshake : ICryptoHandshake
{
    private static readonly EncryptionLevel[] s_outputLevels = { EncryptionLevel.Initial, EncryptionLevel.Handshake, EncryptionLevel.OneRtt };

    private readonly bool _isServer;
    private readonly TlsHandshakeOptions _options;
    private TlsHandshake? _tls;

    /// <param name="isServer">The role.</param>
    /// <param name="options">TLS settings; <see cref="TlsHandshakeOptions.LocalTransportParameters"/> is filled in by <see cref="Start"/>.</param>
    public TlsCryptoHandshake(bool isServer, TlsHandshakeOptions options)
    {
        _isServer = isServer;
        _options = options;
    }

    /// <summary>The engine, for what the seam does not carry (resumption tickets, HRR, policy errors).</summary>
    public TlsHandshake? Engine => _tls;

    public void Start(ReadOnlySpan<byte> localTransportParameters, long nowUs)
    {
        _options.LocalTransportParameters = localTransportParameters.ToArray();
        _tls = new TlsHandshake(_isServer, _options);
        _tls.Start(nowUs);
    }

    public TransportErrorCode Process(EncryptionLevel level, ReadOnlySpan<byte> data, long nowUs, out string? reason)
    {
        reason = null;
        if (_tls is null) throw new InvalidOperationException("The handshake was not started.");
        if (_tls.ProcessCryptoData(level, data, nowUs)) return TransportErrorCode.NoError;
        reason = _tls.ErrorReason ?? _tls.Alert?.ToString();
        return _tls.ErrorCode;
    }

    public bool TryTakeOutgoing(out EncryptionLevel level, out byte[] data)
    {
        if (_tls is not null)
        {
            foreach (EncryptionLevel candidate in s_outputLevels)
            {
                ReadOnlySpan<byte> pending = _tls.GetPendingOutput(candidate);
                if (pending.IsEmpty) continue;
                data = pending.ToArray();
                _tls.ConsumeOutput(candidate, data.Length);
                level = candidate;
                return true;
            }
        }
        level = default;
        data = Array.Empty<byte>();
        return false;
    }

    public bool TryTakeSecret(out HandshakeSecret secret)
    {
        if (_tls is not null && _tls.TryDequeueSecret(out TlsTrafficSecret s))
        {
            secret = new HandshakeSecret(s.Level, s.IsWrite, s.CipherSuite, s.Secret);
            return true;
        }
        secret = default;
        return false;
    }

    public bool IsComplete => _tls?.IsHandshakeComplete == true;

    public ReadOnlySpan<byte> PeerTransportParameters => _tls?.PeerTransportParameters;

    public bool HasPeerTransportParameters => _tls?.PeerTransportParameters is not null;

    public TlsCipherSuite NegotiatedCipherSuite => _tls?.NegotiatedCipherSuite ?? default;

    public SslApplicationProtocol NegotiatedApplicationProtocol => _tls?.NegotiatedApplicationProtocol ?? default;

    public X509Certificate2? RemoteCertificate => _tls?.PeerCertificate;

    public byte[]? KeyLogClientRandom => _options.KeyLog is null ? null : _tls?.ClientRandom;

    public string? ServerName => _tls is null ? _options.ServerName : _tls.ServerName ?? _options.ServerName;

    public bool IsResumed => _tls?.IsResumed == true;

    public bool EarlyDataAccepted => _tls?.EarlyDataAccepted == true;

    public bool TryTakeSessionTicket(out TlsSessionTicket ticket)
    {
        if (_tls is not null) return _tls.TryDequeueSessionTicket(out ticket);
        ticket = null!;
        return false;
    }

    public void Dispose() => _tls?.Dispose();
}
