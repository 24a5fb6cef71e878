using System.Net.Security;
using System.Security.Cryptography.X509Certificates;

namespace System.Net.Quic.Managed.Tls;

internal sealed partial class TlsHandshake
{
    private ClientHello? _clientHello;
    private ushort _helloRetrySuite;
    private CertificateRequest? _certificateRequest;

    private bool ClientStart(long nowUs)
    {
        var hello = new ClientHello();
        _options.Random.Fill(hello.Random);
        ClientRandom = (byte[])hello.Random.Clone();
        foreach (TlsCipherSuite s in _options.CipherSuites)
        {
            if (CipherSuiteInfo.IsSupported(s)) hello.CipherSuites.Add((ushort)s);
        }
        foreach (NamedGroup g in _options.Groups)
        {
            if (KeyExchange.IsSupported(g)) hello.SupportedGroups.Add((ushort)g);
        }
        foreach (SignatureScheme s in _options.SignatureSchemes) hello.SignatureAlgorithms.Add((ushort)s);
        if (hello.CipherSuites.Count == 0 || hello.SupportedGroups.Count == 0 || hello.SignatureAlgorithms.Count == 0)
        {
            return Fail(TlsAlert.InternalError, "no usable cipher suite, group or signature scheme configured");
        }
        NamedGroup[] shareGroups = _options.KeyShareGroups ?? [(NamedGroup)hello.SupportedGroups[0]];
        foreach (NamedGroup g in shareGroups)
        {
            if (!hello.SupportedGroups.Contains((ushort)g)) continue;
            KeyExchange kx = KeyExchange.Create(g, _options.Random);
            _keyExchanges.Add(kx);
            hello.KeyShares.Add(new KeyShareEntry((ushort)g, kx.PublicKey));
        }
        // An empty key_share list is legal: the server answers with a HelloRetryRequest (RFC 8446 §4.2.8).
        hello.ServerName = string.IsNullOrEmpty(_options.ServerName) || IsIpAddress(_options.ServerName!) ? null : _options.ServerName;
        foreach (SslApplicationProtocol p in _options.ApplicationProtocols) hello.ApplicationProtocols.Add(p.Protocol.ToArray());
        hello.TransportParameters = _options.LocalTransportParameters;
        // RFC 9001 §8.4: legacy_session_id stays empty; QUIC forbids middlebox compatibility mode.
        // RFC 8446 §4.2.9: psk_key_exchange_modes goes in every ClientHello, with or without a ticket to offer. Servers
        // SHOULD NOT issue tickets incompatible with the advertised modes: qtls (quic-go) skips deriving the
        // resumption secret when psk_dhe_ke is absent, so the tickets it still hands out cannot resume anything.
        hello.PskKeyExchangeModes = [PskDheKe];
        AddSessionResumption(hello, nowUs);
        _clientHello = hello;
        var w = new TlsWriter(512);
        hello.Encode(w);
        FinishClientHelloBinders(w);
        Send(EncryptionLevel.Initial, w);
        State = TlsHandshakeState.ClientWaitServerHello;
        return true;
    }

    private static bool IsIpAddress(string name) => IPAddress.TryParse(name, out _);

    private bool ClientHandleServerHello(ReadOnlySpan<byte> body, byte[] message)
    {
        TlsAlert? alert = ServerHello.TryDecode(body, out ServerHello sh);
        if (alert != null) return Fail(alert.Value, "malformed ServerHello");
        ClientHello ch = _clientHello!;
        if (!sh.LegacySessionIdEcho.AsSpan().SequenceEqual(ch.LegacySessionId)) return Fail(TlsAlert.IllegalParameter, "legacy_session_id_echo mismatch");
        if (!ch.CipherSuites.Contains(sh.CipherSuite)) return Fail(TlsAlert.IllegalParameter, "server chose a cipher suite we did not offer");
        var suite = (TlsCipherSuite)sh.CipherSuite;

        if (sh.IsHelloRetryRequest)
        {
            // RFC 8446 §4.1.4: at most one HelloRetryRequest, and it must change something.
            if (HelloRetryRequestPerformed) return Fail(TlsAlert.UnexpectedMessage, "second HelloRetryRequest");
            if (!sh.HasKeyShare && sh.Cookie == null) return Fail(TlsAlert.IllegalParameter, "HelloRetryRequest would not change the ClientHello");
            if (sh.HasKeyShare)
            {
                if (!ch.SupportedGroups.Contains(sh.KeyShareGroup)) return Fail(TlsAlert.IllegalParameter, "HelloRetryRequest selected a group we do not support");
                foreach (KeyShareEntry k in ch.KeyShares)
                {
                    if (k.Group == sh.KeyShareGroup) return Fail(TlsAlert.IllegalParameter, "HelloRetryRequest selected a group we already sent a key share for");
                }
            }
            HelloRetryRequestPerformed = true;
            _helloRetrySuite = sh.CipherSuite;
            _hash = CipherSuiteInfo.GetHash(suite);
            _transcript.ReplaceWithMessageHash(_hash);
            _transcript.Append(message);
            if (sh.HasKeyShare)
            {
                foreach (KeyExchange k in _keyExchanges) k.Dispose();
                _keyExchanges.Clear();
                ch.KeyShares.Clear();
                KeyExchange kx = KeyExchange.Create((NamedGroup)sh.KeyShareGroup, _options.Random);
                _keyExchanges.Add(kx);
                ch.KeyShares.Add(new KeyShareEntry(sh.KeyShareGroup, kx.PublicKey));
            }
            ch.Cookie = sh.Cookie;
            DropIncompatiblePskAfterHelloRetry(ch, sh.CipherSuite);
            // RFC 8446 §4.2.10: early data is not allowed after a HelloRetryRequest.
            ch.EarlyData = false;
            var w = new TlsWriter(512);
            ch.Encode(w);
            FinishClientHelloBinders(w);
            Send(EncryptionLevel.Initial, w);
            return true;
        }

        if (HelloRetryRequestPerformed && sh.CipherSuite != _helloRetrySuite) return Fail(TlsAlert.IllegalParameter, "ServerHello cipher suite differs from HelloRetryRequest");
        if (!sh.HasKeyShare) return Fail(TlsAlert.MissingExtension, "ServerHello without key_share (psk_ke is not offered)");
        KeyExchange? ours = null;
        foreach (KeyExchange k in _keyExchanges)
        {
            if ((ushort)k.Group == sh.KeyShareGroup) ours = k;
        }
        if (ours == null) return Fail(TlsAlert.IllegalParameter, "ServerHello key_share for a group we did not send");
        if (!ours.TryComputeSharedSecret(sh.KeyShare!, out byte[] shared)) return Fail(TlsAlert.IllegalParameter, "invalid server key share");

        ReadOnlySpan<byte> psk = default;
        if (sh.SelectedIdentity >= 0)
        {
            if (!TryAcceptServerPskSelection(sh.SelectedIdentity, sh.CipherSuite, out psk)) return Fail(TlsAlert.IllegalParameter, "server selected a PSK we did not offer or with a different hash");
        }
        NegotiatedCipherSuite = suite;
        NegotiatedGroup = ours.Group;
        _hash = CipherSuiteInfo.GetHash(suite);
        _transcript.Append(message);
        DeriveHandshakeSecrets(psk, shared);
        foreach (KeyExchange k in _keyExchanges) k.Dispose();
        _keyExchanges.Clear();
        State = TlsHandshakeState.ClientWaitEncryptedExtensions;
        return true;
    }

    private bool ClientHandleEncryptedExtensions(ReadOnlySpan<byte> body, byte[] message)
    {
        TlsAlert? alert = EncryptedExtensions.TryDecode(body, out EncryptedExtensions ee);
        if (alert != null) return Fail(alert.Value, "malformed EncryptedExtensions");
        ClientHello ch = _clientHello!;
        if (ee.ApplicationProtocol != null)
        {
            bool offered = false;
            foreach (byte[] p in ch.ApplicationProtocols)
            {
                if (p.AsSpan().SequenceEqual(ee.ApplicationProtocol)) offered = true;
            }
            if (!offered) return Fail(ch.ApplicationProtocols.Count == 0 ? TlsAlert.UnsupportedExtension : TlsAlert.IllegalParameter, "server selected an ALPN protocol we did not offer");
            NegotiatedApplicationProtocol = new SslApplicationProtocol(ee.ApplicationProtocol);
        }
        else if (ch.ApplicationProtocols.Count > 0 && _options.RequirePeerTransportParameters)
        {
            // RFC 9001 §8.1: QUIC requires an application protocol to be negotiated.
            return Fail(TlsAlert.NoApplicationProtocol, "server selected no ALPN protocol");
        }
        if (ee.ServerNameAcknowledged && ch.ServerName == null) return Fail(TlsAlert.UnsupportedExtension, "server_name acknowledged but not sent");
        if (ee.EarlyData && !ch.EarlyData) return Fail(TlsAlert.UnsupportedExtension, "early_data accepted but not offered");
        if (ee.TransportParameters == null && _options.RequirePeerTransportParameters) return Fail(TlsAlert.MissingExtension, "server omitted quic_transport_parameters");
        PeerTransportParameters = ee.TransportParameters;
        EarlyDataAccepted = ee.EarlyData;
        _transcript.Append(message);
        State = IsResumed ? TlsHandshakeState.ClientWaitFinished : TlsHandshakeState.ClientWaitCertificateOrRequest;
        return true;
    }

    private bool ClientHandleCertificateRequest(ReadOnlySpan<byte> body, byte[] message)
    {
        TlsAlert? alert = CertificateRequest.TryDecode(body, out CertificateRequest cr);
        if (alert != null) return Fail(alert.Value, "malformed CertificateRequest");
        if (cr.Context.Length != 0) return Fail(TlsAlert.IllegalParameter, "non-empty certificate_request_context in the handshake");
        _certificateRequest = cr;
        _transcript.Append(message);
        State = TlsHandshakeState.ClientWaitCertificate;
        return true;
    }

    private bool ClientHandleFinished(ReadOnlySpan<byte> body, byte[] message)
    {
        if (!VerifyFinished(body, _serverHandshakeSecret))
        {
            return Fail(body.Length == CipherSuiteInfo.GetHashLength(_hash) ? TlsAlert.DecryptError : TlsAlert.DecodeError, "server Finished verify_data mismatch");
        }
        _transcript.Append(message);
        byte[] serverApplicationSecret = DeriveApplicationSecrets();

        if (_certificateRequest != null)
        {
            X509Certificate2? cert = _options.Certificate;
            SignatureScheme scheme = default;
            if (cert != null && !(cert.HasPrivateKey && CertificateSignature.TrySelectScheme(cert, _certificateRequest.SignatureAlgorithms, _options.SignatureSchemes, out scheme)))
            {
                cert = null; // RFC 8446 §4.4.2: no suitable certificate -> send an empty Certificate.
            }
            if (cert != null)
            {
                SendCertificateAndVerify(EncryptionLevel.Handshake, cert, scheme, _certificateRequest.Context);
            }
            else
            {
                var empty = new CertificateMessage { Context = _certificateRequest.Context };
                var w = new TlsWriter(16);
                empty.Encode(w);
                Send(EncryptionLevel.Handshake, w);
            }
        }
        SendFinished(EncryptionLevel.Handshake, _clientHandshakeSecret);
        _resumptionMasterSecret = DeriveSecret("res master"u8, CurrentTranscriptHash());
        EmitSecret(EncryptionLevel.OneRtt, false, serverApplicationSecret);
        EmitSecret(EncryptionLevel.OneRtt, true, _clientApplicationSecret);
        State = TlsHandshakeState.Connected;
        IsHandshakeComplete = true;
        ReleaseHandshakeBuffers();
        return true;
    }
}
