using System.Collections.Generic;
using System.Net.Quic.Managed.Wire;
using System.Net.Security;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

namespace System.Net.Quic.Managed.Tls;

/// <summary>
/// Sans-IO TLS 1.3 handshake engine for QUIC (RFC 8446 as used by RFC 9001 §4). There is no record layer: the caller
/// feeds in-order CRYPTO stream bytes per encryption level with <see cref="ProcessCryptoData"/>, drains handshake
/// bytes to send per level with <see cref="GetPendingOutput"/>/<see cref="ConsumeOutput"/>, and installs packet
/// protection keys from the secrets dequeued with <see cref="TryDequeueSecret"/>. Peer input never throws: failures
/// are reported as a TLS alert and the QUIC error code CRYPTO_ERROR + alert (RFC 9001 §4.8).
/// </summary>
internal sealed partial class TlsHandshake : IDisposable
{
    private readonly TlsHandshakeOptions _options;
    private readonly TranscriptHash _transcript = new();
    private readonly TlsWriter[] _inbound = new TlsWriter[4];
    private readonly TlsWriter[] _outbound = new TlsWriter[4];
    private readonly int[] _outboundConsumed = new int[4];
    private readonly Queue<TlsTrafficSecret> _secrets = new();
    private readonly List<KeyExchange> _keyExchanges = new();
    private KeySchedule? _keySchedule;
    private HashAlgorithmName _hash;
    private byte[] _clientHandshakeSecret = Array.Empty<byte>();
    private byte[] _serverHandshakeSecret = Array.Empty<byte>();
    private byte[] _clientApplicationSecret = Array.Empty<byte>();
    private byte[] _exporterMasterSecret = Array.Empty<byte>();
    private byte[] _resumptionMasterSecret = Array.Empty<byte>();

    public TlsHandshake(bool isServer, TlsHandshakeOptions options)
    {
        IsServer = isServer;
        _options = options ?? throw new ArgumentNullException(nameof(options));
        for (int i = 0; i < 4; i++)
        {
            _inbound[i] = new TlsWriter(256);
            _outbound[i] = new TlsWriter(256);
        }
        State = isServer ? TlsHandshakeState.ServerWaitClientHello : TlsHandshakeState.Start;
        if (!isServer) ServerName = options.ServerName;
    }

    public bool IsServer { get; }

    public TlsHandshakeState State { get; private set; }

    /// <summary>All handshake messages sent and received, Finished verified (RFC 9001 §4.1.1).</summary>
    public bool IsHandshakeComplete { get; private set; }

    /// <summary>RFC 9001 §4.1.2: the server is confirmed at completion; the client when it receives HANDSHAKE_DONE (<see cref="OnHandshakeDoneReceived"/>).
    /// Handshake keys may be discarded once confirmed (RFC 9001 §4.9.2).</summary>
    public bool IsHandshakeConfirmed { get; private set; }

    public bool HasFailed => State == TlsHandshakeState.Failed;

    /// <summary>
    /// True once the handshake traffic secrets exist. RFC 9001 §4.9.1: a client discards Initial keys when it first
    /// sends a Handshake packet, a server when it first processes one; the core tracks those packet events.
    /// </summary>
    public bool HandshakeKeysAvailable => _clientHandshakeSecret.Length != 0;

    /// <summary>The alert that ended the handshake (sent, or to send, to the peer), if any.</summary>
    public TlsAlert? Alert { get; private set; }

    /// <summary>QUIC error code for the failure: CRYPTO_ERROR + alert, or CRYPTO_BUFFER_EXCEEDED.</summary>
    public TransportErrorCode ErrorCode { get; private set; }

    public string? ErrorReason { get; private set; }

    public TlsCipherSuite? NegotiatedCipherSuite { get; private set; }

    public NamedGroup? NegotiatedGroup { get; private set; }

    public SslApplicationProtocol NegotiatedApplicationProtocol { get; private set; }

    /// <summary>Server: the SNI the client sent. Client: the configured name.</summary>
    public string? ServerName { get; private set; }

    /// <summary>The validated peer leaf certificate. Never disposed here: the API hands this instance to the application.</summary>
    public X509Certificate2? PeerCertificate { get; private set; }

    public SslPolicyErrors PeerCertificatePolicyErrors { get; private set; }

    /// <summary>The peer's raw quic_transport_parameters extension body (RFC 9001 §8.2); parsing belongs to the transport.</summary>
    public byte[]? PeerTransportParameters { get; private set; }

    public bool HelloRetryRequestPerformed { get; private set; }

    public bool IsResumed { get; private set; }

    public bool EarlyDataAccepted { get; private set; }

    /// <summary>exporter_master_secret (RFC 8446 §7.5), available once application secrets are.</summary>
    public ReadOnlySpan<byte> ExporterMasterSecret => _exporterMasterSecret;

    /// <summary>resumption_master_secret (RFC 8446 §7.1), available once the handshake is complete.</summary>
    public ReadOnlySpan<byte> ResumptionMasterSecret => _resumptionMasterSecret;

    /// <summary>Client: call when HANDSHAKE_DONE arrives (RFC 9001 §4.1.2).</summary>
    public void OnHandshakeDoneReceived()
    {
        if (IsHandshakeComplete) IsHandshakeConfirmed = true;
    }

    /// <summary>Bytes the engine wants sent in CRYPTO frames at <paramref name="level"/>, in order.</summary>
    public ReadOnlySpan<byte> GetPendingOutput(EncryptionLevel level)
        => _outbound[(int)level].WrittenSpan.Slice(_outboundConsumed[(int)level]);

    /// <summary>Marks <paramref name="count"/> bytes of <see cref="GetPendingOutput"/> as taken by the caller.</summary>
    public void ConsumeOutput(EncryptionLevel level, int count)
    {
        int i = (int)level;
        if (count < 0 || count > _outbound[i].Length - _outboundConsumed[i]) throw new ArgumentOutOfRangeException(nameof(count));
        _outboundConsumed[i] += count;
        if (_outboundConsumed[i] == _outbound[i].Length)
        {
            // Once the handshake is complete, nothing is written at the Initial and Handshake levels again: their
            // buffers (the server's holds its certificate chain) go instead of staying with the connection.
            if (IsHandshakeComplete && level != EncryptionLevel.OneRtt) _outbound[i].ReleaseBuffer();
            else _outbound[i].Clear();
            _outboundConsumed[i] = 0;
        }
    }

    /// <summary>Bytes the handshake keeps buffered now: the transcript and every level's inbound and outbound buffer (tests).</summary>
    internal int BufferedBytesForTesting
    {
        get
        {
            int total = _transcript.Capacity;
            for (int i = 0; i < 4; i++) total += _inbound[i].Capacity + _outbound[i].Capacity;
            return total;
        }
    }

    /// <summary>
    /// At completion (the resumption secret derived): the transcript and the inbound buffers of the levels below 1-RTT
    /// are not used again, so an established connection keeps only what key updates and session tickets need.
    /// </summary>
    private void ReleaseHandshakeBuffers()
    {
        _transcript.Release();
        for (int i = 0; i < _inbound.Length; i++)
        {
            if (i != (int)EncryptionLevel.OneRtt && _inbound[i].Length == 0) _inbound[i].ReleaseBuffer();
        }
    }

    public bool HasPendingOutput
    {
        get
        {
            for (int i = 0; i < 4; i++)
            {
                if (_outbound[i].Length > _outboundConsumed[i]) return true;
            }
            return false;
        }
    }

    /// <summary>Next newly available traffic secret, in the order they became available.</summary>
    public bool TryDequeueSecret(out TlsTrafficSecret secret) => _secrets.TryDequeue(out secret);

    /// <summary>Client: produces the ClientHello (Initial level). Server: no-op. Returns false on failure.</summary>
    public bool Start(long nowUs = 0)
    {
        if (IsServer) return !HasFailed;
        if (State != TlsHandshakeState.Start) return !HasFailed;
        try
        {
            return ClientStart(nowUs);
        }
        catch (CryptographicException e)
        {
            return Fail(TlsAlert.InternalError, "crypto failure: " + e.Message);
        }
    }

    /// <summary>
    /// Feeds in-order CRYPTO stream bytes received at <paramref name="level"/> (any fragmentation). Returns true if
    /// everything was accepted; false when the handshake failed (see <see cref="Alert"/>, <see cref="ErrorCode"/>).
    /// </summary>
    public bool ProcessCryptoData(EncryptionLevel level, ReadOnlySpan<byte> data, long nowUs = 0)
    {
        if (HasFailed) return false;
        if (data.IsEmpty) return true;
        if (level == EncryptionLevel.EarlyData || level != ExpectedInboundLevel())
        {
            // RFC 9001 §4.1.3 / RFC 8446 §5.1: handshake data at an encryption level the state does not expect.
            return Fail(TlsAlert.UnexpectedMessage, $"CRYPTO data at {level} in state {State}");
        }
        // Every complete message is bounded by MaxBufferedCryptoBytes (checked on its header in DrainMessages), so
        // what stays buffered - at most one incomplete message - is bounded too.
        TlsWriter buffer = _inbound[(int)level];
        buffer.WriteBytes(data);
        try
        {
            return DrainMessages(level, nowUs);
        }
        catch (CryptographicException e)
        {
            return Fail(TlsAlert.InternalError, "crypto failure: " + e.Message);
        }
    }

    private EncryptionLevel ExpectedInboundLevel() => State switch
    {
        TlsHandshakeState.ClientWaitServerHello or TlsHandshakeState.ServerWaitClientHello or TlsHandshakeState.ServerWaitSecondClientHello => EncryptionLevel.Initial,
        TlsHandshakeState.Connected => EncryptionLevel.OneRtt,
        TlsHandshakeState.Start => EncryptionLevel.EarlyData, // nothing is expected before the ClientHello is sent
        _ => EncryptionLevel.Handshake,
    };

    private bool DrainMessages(EncryptionLevel level, long nowUs)
    {
        TlsWriter buffer = _inbound[(int)level];
        int offset = 0;
        while (true)
        {
            ReadOnlySpan<byte> pending = buffer.WrittenSpan.Slice(offset);
            if (pending.Length < 4) break;
            int length = (pending[1] << 16) | (pending[2] << 8) | pending[3];
            if (length + 4 > _options.MaxBufferedCryptoBytes) return FailBufferExceeded();
            if (pending.Length < 4 + length) break;
            byte[] message = pending.Slice(0, 4 + length).ToArray();
            offset += 4 + length;
            if (level != ExpectedInboundLevel())
            {
                // RFC 8446 §5.1: handshake messages MUST NOT span key changes; the next message must come at the new level.
                return Fail(TlsAlert.UnexpectedMessage, $"handshake message at {level} after a key change");
            }
            if (!HandleMessage((HandshakeType)message[0], message, nowUs)) return false;
        }
        if (offset > 0)
        {
            byte[] rest = buffer.WrittenSpan.Slice(offset).ToArray();
            buffer.Clear();
            buffer.WriteBytes(rest);
        }
        if (buffer.Length > 0 && level != ExpectedInboundLevel())
        {
            return Fail(TlsAlert.UnexpectedMessage, $"partial handshake message at {level} spans a key change");
        }
        return true;
    }

    private bool HandleMessage(HandshakeType type, byte[] message, long nowUs)
    {
        ReadOnlySpan<byte> body = message.AsSpan(4);
        if (type == HandshakeType.KeyUpdate) return Fail(TlsAlert.UnexpectedMessage, "KeyUpdate is forbidden in QUIC (RFC 9001 §6)");
        if (type == HandshakeType.EndOfEarlyData) return Fail(TlsAlert.UnexpectedMessage, "EndOfEarlyData is forbidden in QUIC (RFC 9001 §8.3)");
        switch (State)
        {
            case TlsHandshakeState.ClientWaitServerHello when type == HandshakeType.ServerHello:
                return ClientHandleServerHello(body, message);
            case TlsHandshakeState.ClientWaitEncryptedExtensions when type == HandshakeType.EncryptedExtensions:
                return ClientHandleEncryptedExtensions(body, message);
            case TlsHandshakeState.ClientWaitCertificateOrRequest when type == HandshakeType.CertificateRequest:
                return ClientHandleCertificateRequest(body, message);
            case TlsHandshakeState.ClientWaitCertificateOrRequest when type == HandshakeType.Certificate:
            case TlsHandshakeState.ClientWaitCertificate when type == HandshakeType.Certificate:
                return HandlePeerCertificate(body, message);
            case TlsHandshakeState.ClientWaitCertificateVerify when type == HandshakeType.CertificateVerify:
            case TlsHandshakeState.ServerWaitClientCertificateVerify when type == HandshakeType.CertificateVerify:
                return HandlePeerCertificateVerify(body, message);
            case TlsHandshakeState.ClientWaitFinished when type == HandshakeType.Finished:
                return ClientHandleFinished(body, message);
            case TlsHandshakeState.ServerWaitClientHello when type == HandshakeType.ClientHello:
            case TlsHandshakeState.ServerWaitSecondClientHello when type == HandshakeType.ClientHello:
                return ServerHandleClientHello(body, message, nowUs);
            case TlsHandshakeState.ServerWaitClientCertificate when type == HandshakeType.Certificate:
                return HandlePeerCertificate(body, message);
            case TlsHandshakeState.ServerWaitClientFinished when type == HandshakeType.Finished:
                return ServerHandleFinished(body, message, nowUs);
            case TlsHandshakeState.Connected when !IsServer && type == HandshakeType.NewSessionTicket:
                return ClientHandleNewSessionTicket(body, nowUs);
            default:
                return Fail(TlsAlert.UnexpectedMessage, $"{type} in state {State}");
        }
    }

    private bool Fail(TlsAlert alert, string reason)
    {
        if (State == TlsHandshakeState.Failed) return false;
        State = TlsHandshakeState.Failed;
        Alert = alert;
        ErrorCode = alert.ToTransportErrorCode();
        ErrorReason = reason;
        return false;
    }

    private bool FailBufferExceeded()
    {
        State = TlsHandshakeState.Failed;
        ErrorCode = TransportErrorCode.CryptoBufferExceeded;
        ErrorReason = "handshake message exceeds the CRYPTO buffer bound";
        return false;
    }

    private void Send(EncryptionLevel level, TlsWriter message)
    {
        _transcript.Append(message.WrittenSpan);
        _outbound[(int)level].WriteBytes(message.WrittenSpan);
    }

    private byte[] CurrentTranscriptHash()
    {
        byte[] h = new byte[CipherSuiteInfo.GetHashLength(_hash)];
        _transcript.GetHash(_hash, h);
        return h;
    }

    private byte[] DeriveSecret(ReadOnlySpan<byte> label, byte[] transcriptHash)
    {
        byte[] s = new byte[_keySchedule!.HashLength];
        _keySchedule.DeriveSecret(label, transcriptHash, s);
        return s;
    }

    private void EmitSecret(EncryptionLevel level, bool clientSecret, byte[] secret)
        => EmitSecret(new TlsTrafficSecret(level, clientSecret, clientSecret != IsServer, NegotiatedCipherSuite!.Value, secret));

    private void EmitSecret(TlsTrafficSecret secret)
    {
        _secrets.Enqueue(secret);
        if (_options.KeyLog is { } log && ClientRandom is { } random) log(NssKeyLog.FormatLine(secret, random));
    }

    /// <summary>The ClientHello random (of the first ClientHello), which keys the NSS key log.</summary>
    public byte[]? ClientRandom { get; private set; }

    /// <summary>Derives both handshake traffic secrets after ServerHello (RFC 8446 §7.1).</summary>
    private void DeriveHandshakeSecrets(ReadOnlySpan<byte> psk, byte[] sharedSecret)
    {
        _keySchedule = new KeySchedule(_hash);
        _keySchedule.InitializeEarlySecret(psk);
        _keySchedule.AdvanceToHandshakeSecret(sharedSecret);
        CryptographicOperations.ZeroMemory(sharedSecret);
        byte[] th = CurrentTranscriptHash();
        _clientHandshakeSecret = DeriveSecret("c hs traffic"u8, th);
        _serverHandshakeSecret = DeriveSecret("s hs traffic"u8, th);
        // Emit the read side first so the core can decrypt the peer's next flight (order within a level is irrelevant).
        EmitSecret(EncryptionLevel.Handshake, IsServer, IsServer ? _clientHandshakeSecret : _serverHandshakeSecret);
        EmitSecret(EncryptionLevel.Handshake, !IsServer, IsServer ? _serverHandshakeSecret : _clientHandshakeSecret);
    }

    /// <summary>Derives application secrets from the transcript through server Finished (RFC 8446 §7.1).
    /// Returns the server secret; the client secret is kept in <see cref="_clientApplicationSecret"/>.</summary>
    private byte[] DeriveApplicationSecrets()
    {
        _keySchedule!.AdvanceToMasterSecret();
        byte[] th = CurrentTranscriptHash();
        _clientApplicationSecret = DeriveSecret("c ap traffic"u8, th);
        _exporterMasterSecret = DeriveSecret("exp master"u8, th);
        return DeriveSecret("s ap traffic"u8, th);
    }

    private bool VerifyFinished(ReadOnlySpan<byte> body, byte[] baseKey)
    {
        Span<byte> expected = stackalloc byte[64];
        expected = expected.Slice(0, CipherSuiteInfo.GetHashLength(_hash));
        KeySchedule.ComputeFinished(_hash, baseKey, CurrentTranscriptHash(), expected);
        return body.Length == expected.Length && CryptographicOperations.FixedTimeEquals(body, expected);
    }

    private void SendFinished(EncryptionLevel level, byte[] baseKey)
    {
        byte[] verify = new byte[CipherSuiteInfo.GetHashLength(_hash)];
        KeySchedule.ComputeFinished(_hash, baseKey, CurrentTranscriptHash(), verify);
        var w = new TlsWriter(verify.Length + 4);
        int m = w.BeginMessage(HandshakeType.Finished);
        w.WriteBytes(verify);
        w.EndMessage(m);
        Send(level, w);
    }

    private void SendCertificateAndVerify(EncryptionLevel level, X509Certificate2 certificate, SignatureScheme scheme, byte[] context)
    {
        var cert = new CertificateMessage { Context = context };
        cert.Certificates.Add(certificate.RawData);
        if (_options.CertificateChain != null)
        {
            foreach (X509Certificate2 c in _options.CertificateChain) cert.Certificates.Add(c.RawData);
        }
        var w = new TlsWriter(2048);
        cert.Encode(w);
        Send(level, w);

        byte[] content = CertificateSignature.BuildSignedContent(IsServer, CurrentTranscriptHash());
        var cv = new CertificateVerifyMessage { Scheme = (ushort)scheme, Signature = CertificateSignature.Sign(certificate, scheme, content) };
        w = new TlsWriter(512);
        cv.Encode(w);
        Send(level, w);
    }

    private bool HandlePeerCertificate(ReadOnlySpan<byte> body, byte[] message)
    {
        TlsAlert? alert = CertificateMessage.TryDecode(body, out CertificateMessage cert);
        if (alert != null) return Fail(alert.Value, "malformed Certificate");
        // RFC 8446 §4.4.2: the context is empty in the main handshake, and echoes the CertificateRequest for a client.
        if (cert.Context.Length != 0) return Fail(TlsAlert.IllegalParameter, "non-empty certificate_request_context");

        X509Certificate2? leaf = null;
        var intermediates = new List<X509Certificate2>();
        try
        {
            for (int i = 0; i < cert.Certificates.Count; i++)
            {
                X509Certificate2 c = X509CertificateLoader.LoadCertificate(cert.Certificates[i]);
                if (i == 0) leaf = c;
                else intermediates.Add(c);
            }
        }
        catch (CryptographicException)
        {
            leaf?.Dispose();
            foreach (X509Certificate2 c in intermediates) c.Dispose();
            return Fail(TlsAlert.BadCertificate, "unparsable certificate");
        }

        if (leaf == null && !IsServer)
        {
            return Fail(TlsAlert.DecodeError, "server sent an empty Certificate (RFC 8446 §4.4.2.4)");
        }
        // No client certificate: fine unless required; an app validation callback is asked either way (with
        // RemoteCertificateNotAvailable), as SslStream and System.Net.Quic ask it.
        if (leaf == null && !_options.RequireClientCertificate && _options.RemoteCertificateValidation is null)
        {
            _transcript.Append(message);
            State = TlsHandshakeState.ServerWaitClientFinished;
            return true;
        }

        alert = CertificateValidator.Validate(leaf, intermediates, !IsServer, _options, out SslPolicyErrors errors, out string? rejection);
        foreach (X509Certificate2 c in intermediates) c.Dispose();
        PeerCertificatePolicyErrors = errors;
        if (alert != null)
        {
            leaf?.Dispose();
            return Fail(alert.Value, rejection ?? "peer certificate rejected: " + errors);
        }
        PeerCertificate = leaf;
        _transcript.Append(message);
        if (leaf == null)
        {
            State = TlsHandshakeState.ServerWaitClientFinished;
            return true;
        }
        State = IsServer ? TlsHandshakeState.ServerWaitClientCertificateVerify : TlsHandshakeState.ClientWaitCertificateVerify;
        return true;
    }

    private bool HandlePeerCertificateVerify(ReadOnlySpan<byte> body, byte[] message)
    {
        TlsAlert? alert = CertificateVerifyMessage.TryDecode(body, out CertificateVerifyMessage cv);
        if (alert != null) return Fail(alert.Value, "malformed CertificateVerify");
        // RFC 8446 §4.4.3: the scheme must be one we offered (rsa_pkcs1 never is, so it is rejected here).
        if (Array.IndexOf(_options.SignatureSchemes, (SignatureScheme)cv.Scheme) < 0)
        {
            return Fail(TlsAlert.IllegalParameter, "CertificateVerify uses a scheme we did not offer");
        }
        byte[] content = CertificateSignature.BuildSignedContent(!IsServer, CurrentTranscriptHash());
        if (!CertificateSignature.Verify(PeerCertificate!, (SignatureScheme)cv.Scheme, content, cv.Signature))
        {
            return Fail(TlsAlert.DecryptError, "CertificateVerify signature invalid");
        }
        _transcript.Append(message);
        State = IsServer ? TlsHandshakeState.ServerWaitClientFinished : TlsHandshakeState.ClientWaitFinished;
        return true;
    }

    public void Dispose()
    {
        foreach (KeyExchange k in _keyExchanges) k.Dispose();
        _keyExchanges.Clear();
        CryptographicOperations.ZeroMemory(_clientHandshakeSecret);
        CryptographicOperations.ZeroMemory(_serverHandshakeSecret);
    }
}
