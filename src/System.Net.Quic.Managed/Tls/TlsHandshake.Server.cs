using System.Net.Security;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

namespace System.Net.Quic.Managed.Tls;

internal sealed partial class TlsHandshake
{
    private ushort _serverSuite;
    private NamedGroup _helloRetryGroup;
    private byte[]? _helloRetryCookie;
    private byte[] _echoSessionId = Array.Empty<byte>();

    private bool ServerHandleClientHello(ReadOnlySpan<byte> body, byte[] message, long nowUs)
    {
        TlsAlert? alert = ClientHello.TryDecode(body, out ClientHello ch);
        if (alert is null && ClientRandom is null) ClientRandom = (byte[])ch.Random.Clone();
        if (alert != null) return Fail(alert.Value, "malformed ClientHello");
        bool second = State == TlsHandshakeState.ServerWaitSecondClientHello;

        // RFC 8446 §4.2.1: without supported_versions including 0x0304 this is not TLS 1.3.
        if (!ch.HasSupportedVersions || !ch.OffersTls13) return Fail(TlsAlert.ProtocolVersion, "client does not offer TLS 1.3");
        if (!ch.CompressionIsNullOnly) return Fail(TlsAlert.IllegalParameter, "legacy_compression_methods must be exactly [null]");
        // RFC 9001 §8.4: a QUIC client must not use middlebox compatibility mode.
        if (ch.LegacySessionId.Length != 0 && _options.RequirePeerTransportParameters) return Fail(TlsAlert.IllegalParameter, "non-empty legacy_session_id from a QUIC client");
        if (!ch.HasSignatureAlgorithms) return Fail(TlsAlert.MissingExtension, "ClientHello without signature_algorithms");
        if (!ch.HasKeyShare || ch.SupportedGroups.Count == 0) return Fail(TlsAlert.MissingExtension, "ClientHello without key_share/supported_groups");
        foreach (KeyShareEntry k in ch.KeyShares)
        {
            // RFC 8446 §4.2.8: each KeyShareEntry must correspond to a group in supported_groups.
            if (!ch.SupportedGroups.Contains(k.Group)) return Fail(TlsAlert.IllegalParameter, "key share for a group not in supported_groups");
        }
        if (ch.TransportParameters == null && _options.RequirePeerTransportParameters) return Fail(TlsAlert.MissingExtension, "client omitted quic_transport_parameters");

        ushort suite = 0;
        foreach (TlsCipherSuite s in _options.CipherSuites)
        {
            if (CipherSuiteInfo.IsSupported(s) && ch.CipherSuites.Contains((ushort)s))
            {
                suite = (ushort)s;
                break;
            }
        }
        if (suite == 0) return Fail(TlsAlert.HandshakeFailure, "no common cipher suite");

        KeyShareEntry? clientShare = null;
        NamedGroup retryGroup = 0;
        foreach (NamedGroup g in _options.Groups)
        {
            if (!KeyExchange.IsSupported(g)) continue;
            foreach (KeyShareEntry k in ch.KeyShares)
            {
                if (k.Group == (ushort)g) { clientShare = k; break; }
            }
            if (clientShare != null) break;
        }
        if (clientShare == null)
        {
            foreach (NamedGroup g in _options.Groups)
            {
                if (KeyExchange.IsSupported(g) && ch.SupportedGroups.Contains((ushort)g)) { retryGroup = g; break; }
            }
            if (retryGroup == 0) return Fail(TlsAlert.HandshakeFailure, "no common key exchange group");
        }

        if (second)
        {
            // RFC 8446 §4.1.2: the second ClientHello answers our HelloRetryRequest exactly.
            if (suite != _serverSuite) return Fail(TlsAlert.IllegalParameter, "cipher suite changed after HelloRetryRequest");
            if (clientShare == null || (_helloRetryGroup != 0 && (ch.KeyShares.Count != 1 || clientShare.Value.Group != (ushort)_helloRetryGroup)))
            {
                return Fail(TlsAlert.IllegalParameter, "second ClientHello does not carry the requested key share");
            }
            if (_helloRetryCookie != null && (ch.Cookie == null || !CryptographicOperations.FixedTimeEquals(ch.Cookie, _helloRetryCookie)))
            {
                return Fail(TlsAlert.IllegalParameter, "cookie missing or altered");
            }
            if (ch.EarlyData) return Fail(TlsAlert.IllegalParameter, "early_data after HelloRetryRequest");
        }

        // ALPN (RFC 7301 §3.2): the first of the server's protocols that the client offers.
        byte[]? alpn = null;
        if (_options.ApplicationProtocols.Count > 0)
        {
            foreach (SslApplicationProtocol p in _options.ApplicationProtocols)
            {
                foreach (byte[] offered in ch.ApplicationProtocols)
                {
                    if (p.Protocol.Span.SequenceEqual(offered)) { alpn = offered; break; }
                }
                if (alpn != null) break;
            }
            if (alpn == null && (ch.HasAlpn || _options.RequirePeerTransportParameters)) return Fail(TlsAlert.NoApplicationProtocol, "no common application protocol");
        }

        ServerName = ch.ServerName;
        // A selection callback, when there is one, decides alone (SslStream and System.Net.Quic ignore ServerCertificate then).
        X509Certificate2? certificate = _options.ServerCertificateSelector is { } select ? select(ch.ServerName) : _options.Certificate;
        // A selection callback that gave nothing is the application declining this handshake: user_canceled, as msquic
        // sends it (its client reports that alert in an AuthenticationException).
        if (certificate == null && _options.ServerCertificateSelector is not null) return Fail(TlsAlert.UserCanceled, "the certificate selection callback returned no certificate");
        if (certificate == null || !certificate.HasPrivateKey) return Fail(TlsAlert.HandshakeFailure, "no server certificate with a private key");
        if (!CertificateSignature.TrySelectScheme(certificate, ch.SignatureAlgorithms, _options.SignatureSchemes, out SignatureScheme scheme))
        {
            return Fail(TlsAlert.HandshakeFailure, "no common signature scheme for the server certificate");
        }

        if (!second && (clientShare == null || _options.ServerForceHelloRetryWithCookie))
        {
            return ServerSendHelloRetryRequest(ch, message, suite, clientShare == null ? retryGroup : 0);
        }
        if (clientShare == null) return Fail(TlsAlert.IllegalParameter, "second ClientHello still has no usable key share");

        _serverSuite = suite;
        _hash = CipherSuiteInfo.GetHash((TlsCipherSuite)suite);
        NegotiatedCipherSuite = (TlsCipherSuite)suite;
        var group = (NamedGroup)clientShare.Value.Group;
        NegotiatedGroup = group;
        PeerTransportParameters = ch.TransportParameters;
        if (alpn != null) NegotiatedApplicationProtocol = new SslApplicationProtocol(alpn);
        _echoSessionId = ch.LegacySessionId;
        _clientAcceptsTickets = ch.PskKeyExchangeModes != null && Array.IndexOf(ch.PskKeyExchangeModes, PskDheKe) >= 0;

        // PSK resumption (RFC 8446 §4.2.11) - decided before ServerHello because it changes the key schedule;
        // the binder covers the transcript before this ClientHello plus its truncated self.
        int selectedIdentity = ServerSelectPsk(ch, message, alpn, second, nowUs, out byte[]? psk, out bool acceptEarlyData);
        if (selectedIdentity == -2) return false;
        _transcript.Append(message);
        if (acceptEarlyData) ServerEmitEarlySecret(psk!);

        using KeyExchange kx = KeyExchange.Create(group, _options.Random);
        if (!kx.TryComputeSharedSecret(clientShare.Value.KeyExchange, out byte[] shared)) return Fail(TlsAlert.IllegalParameter, "invalid client key share");

        var sh = new ServerHello
        {
            LegacySessionIdEcho = _echoSessionId,
            CipherSuite = suite,
            KeyShareGroup = (ushort)group,
            KeyShare = kx.PublicKey,
            SelectedIdentity = selectedIdentity,
        };
        _options.Random.Fill(sh.Random);
        var w = new TlsWriter(256);
        sh.Encode(w);
        Send(EncryptionLevel.Initial, w);
        DeriveHandshakeSecrets(psk, shared);

        var ee = new EncryptedExtensions
        {
            ApplicationProtocol = alpn,
            TransportParameters = _options.LocalTransportParameters,
            ServerNameAcknowledged = ch.ServerName != null,
            EarlyData = acceptEarlyData,
        };
        w = new TlsWriter(256);
        ee.Encode(w);
        Send(EncryptionLevel.Handshake, w);

        if (!IsResumed)
        {
            if (_options.RequestClientCertificate)
            {
                var cr = new CertificateRequest();
                foreach (SignatureScheme s in _options.SignatureSchemes) cr.SignatureAlgorithms.Add((ushort)s);
                w = new TlsWriter(64);
                cr.Encode(w);
                Send(EncryptionLevel.Handshake, w);
            }
            SendCertificateAndVerify(EncryptionLevel.Handshake, certificate, scheme, Array.Empty<byte>());
        }
        SendFinished(EncryptionLevel.Handshake, _serverHandshakeSecret);
        // The server may send 0.5-RTT data; it reads 1-RTT only after the client Finished (RFC 9001 §5.7).
        byte[] serverApplicationSecret = DeriveApplicationSecrets();
        EmitSecret(EncryptionLevel.OneRtt, false, serverApplicationSecret);
        State = !IsResumed && _options.RequestClientCertificate ? TlsHandshakeState.ServerWaitClientCertificate : TlsHandshakeState.ServerWaitClientFinished;
        return true;
    }

    private bool ServerSendHelloRetryRequest(ClientHello ch, byte[] message, ushort suite, NamedGroup group)
    {
        _serverSuite = suite;
        _helloRetryGroup = group;
        HelloRetryRequestPerformed = true;
        _hash = CipherSuiteInfo.GetHash((TlsCipherSuite)suite);
        _transcript.Append(message);
        _transcript.ReplaceWithMessageHash(_hash);
        var hrr = new ServerHello
        {
            LegacySessionIdEcho = ch.LegacySessionId,
            CipherSuite = suite,
            KeyShareGroup = (ushort)group,
            HasKeyShare = group != 0,
        };
        ServerHello.HelloRetryRequestRandom.CopyTo(hrr.Random);
        if (_options.ServerForceHelloRetryWithCookie)
        {
            _helloRetryCookie = new byte[32];
            _options.Random.Fill(_helloRetryCookie);
            hrr.Cookie = _helloRetryCookie;
        }
        var w = new TlsWriter(128);
        hrr.Encode(w);
        Send(EncryptionLevel.Initial, w);
        State = TlsHandshakeState.ServerWaitSecondClientHello;
        return true;
    }

    private bool ServerHandleFinished(ReadOnlySpan<byte> body, byte[] message, long nowUs)
    {
        if (!VerifyFinished(body, _clientHandshakeSecret))
        {
            return Fail(body.Length == CipherSuiteInfo.GetHashLength(_hash) ? TlsAlert.DecryptError : TlsAlert.DecodeError, "client Finished verify_data mismatch");
        }
        _transcript.Append(message);
        _resumptionMasterSecret = DeriveSecret("res master"u8, CurrentTranscriptHash());
        EmitSecret(EncryptionLevel.OneRtt, true, _clientApplicationSecret);
        State = TlsHandshakeState.Connected;
        IsHandshakeComplete = true;
        IsHandshakeConfirmed = true; // RFC 9001 §4.1.2
        ServerSendSessionTicket(nowUs);
        ReleaseHandshakeBuffers();
        return true;
    }
}
