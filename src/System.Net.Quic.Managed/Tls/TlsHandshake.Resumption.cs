using System.Collections.Generic;
using System.Net.Quic.Managed.Wire;
using System.Net.Security;
using System.Security.Cryptography;

namespace System.Net.Quic.Managed.Tls;

/// <summary>Session tickets, PSK resumption with psk_dhe_ke, binders and 0-RTT (RFC 8446 §4.2.9-§4.2.11, §4.6.1; RFC 9001 §4.6).</summary>
internal sealed partial class TlsHandshake
{
    private const byte PskDheKe = 1;
    private const byte TicketFormatVersion = 1;
    private const int TicketNonceLength = 12;
    private const int TicketTagLength = 16;
    private const uint QuicMaxEarlyDataSize = 0xffffffff;

    private TlsSessionTicket? _offeredTicket;
    private readonly Queue<TlsSessionTicket> _receivedTickets = new();
    private byte _ticketsSent;
    private bool _clientAcceptsTickets;

    /// <summary>Client: tickets received from the server (in order), for a later connection's <see cref="TlsHandshakeOptions.SessionTicket"/>.</summary>
    public bool TryDequeueSessionTicket(out TlsSessionTicket ticket) => _receivedTickets.TryDequeue(out ticket!);

    private void AddSessionResumption(ClientHello hello, long nowUs)
    {
        TlsSessionTicket? t = _options.SessionTicket;
        if (t == null || t.IsExpired(nowUs) || !hello.CipherSuites.Contains((ushort)t.CipherSuite)) return;
        // RFC 8446 §4.6.1: only resume toward the server name the ticket was issued for.
        if (!string.Equals(t.ServerName, _options.ServerName, StringComparison.OrdinalIgnoreCase)) return;
        _offeredTicket = t;
        // RFC 8446 §4.2.11.1: obfuscated_ticket_age = (age in ms + ticket_age_add) mod 2^32.
        uint ageMs = (uint)((nowUs - t.ReceivedUs) / 1000);
        hello.PskIdentities.Add(new PskIdentity(t.Ticket, unchecked(ageMs + t.AgeAdd)));
        hello.PskBinders.Add(new byte[CipherSuiteInfo.GetHashLength(t.CipherSuite)]);
        hello.EarlyData = _options.OfferEarlyData && t.AllowsEarlyData;
    }

    /// <summary>RFC 8446 §4.2.11.2: binder = Finished-style HMAC over the transcript up to the truncated ClientHello.</summary>
    private void FinishClientHelloBinders(TlsWriter encodedHello)
    {
        ClientHello ch = _clientHello ?? throw new InvalidOperationException();
        if (_offeredTicket == null || ch.PskIdentities.Count == 0) return;
        HashAlgorithmName hash = CipherSuiteInfo.GetHash(_offeredTicket.CipherSuite);
        var ks = new KeySchedule(hash);
        ks.InitializeEarlySecret(_offeredTicket.Psk);
        byte[] binderKey = new byte[ks.HashLength];
        ks.DeriveBinderKey(external: false, binderKey);
        byte[] partialHash = new byte[ks.HashLength];
        _transcript.GetHash(hash, encodedHello.WrittenSpan.Slice(0, ch.BindersOffset), partialHash);
        Span<byte> binder = encodedHello.WrittenSpanForPatching.Slice(ch.BindersOffset + 2 + 1, ks.HashLength);
        KeySchedule.ComputeFinished(hash, binderKey, partialHash, binder);
        ch.PskBinders[0] = binder.ToArray();

        if (ch.EarlyData && !HelloRetryRequestPerformed)
        {
            // client_early_traffic_secret = Derive-Secret(Early Secret, "c e traffic", ClientHello) (RFC 8446 §7.1).
            byte[] th = new byte[ks.HashLength];
            _transcript.GetHash(hash, encodedHello.WrittenSpan, th);
            byte[] secret = new byte[ks.HashLength];
            ks.DeriveSecret("c e traffic"u8, th, secret);
            EmitSecret(new TlsTrafficSecret(EncryptionLevel.EarlyData, true, true, _offeredTicket.CipherSuite, secret));
        }
    }

    /// <summary>RFC 8446 §4.1.4: after a HelloRetryRequest, drop a PSK whose hash does not match the selected suite.</summary>
    private void DropIncompatiblePskAfterHelloRetry(ClientHello hello, ushort suite)
    {
        if (_offeredTicket == null || CipherSuiteInfo.GetHash(_offeredTicket.CipherSuite) == CipherSuiteInfo.GetHash((TlsCipherSuite)suite)) return;
        _offeredTicket = null;
        hello.PskIdentities.Clear();
        hello.PskBinders.Clear();
        // psk_key_exchange_modes stays: RFC 8446 §4.1.2 allows the second ClientHello to drop pre_shared_key, not it.
    }

    private bool TryAcceptServerPskSelection(int selectedIdentity, ushort suite, out ReadOnlySpan<byte> psk)
    {
        psk = default;
        if (_offeredTicket == null || _clientHello!.PskIdentities.Count == 0 || selectedIdentity != 0) return false;
        // RFC 8446 §4.2.11: the PSK's hash must match the selected suite's hash.
        if (CipherSuiteInfo.GetHash(_offeredTicket.CipherSuite) != CipherSuiteInfo.GetHash((TlsCipherSuite)suite)) return false;
        psk = _offeredTicket.Psk;
        IsResumed = true;
        return true;
    }

    private bool ClientHandleNewSessionTicket(ReadOnlySpan<byte> body, long nowUs)
    {
        TlsAlert? alert = NewSessionTicket.TryDecode(body, out NewSessionTicket nst);
        if (alert != null) return Fail(alert.Value, "malformed NewSessionTicket");
        if (nst.MaxEarlyDataSize is uint max && max != QuicMaxEarlyDataSize)
        {
            // RFC 9001 §4.6.1: any other max_early_data_size is a PROTOCOL_VIOLATION.
            State = TlsHandshakeState.Failed;
            ErrorCode = TransportErrorCode.ProtocolViolation;
            ErrorReason = "max_early_data_size other than 0xffffffff";
            return false;
        }
        if (nst.LifetimeSeconds == 0) return true; // RFC 8446 §4.6.1: zero lifetime means do not use.
        byte[] psk = new byte[CipherSuiteInfo.GetHashLength(_hash)];
        KeySchedule.DeriveResumptionPsk(_hash, _resumptionMasterSecret, nst.Nonce, psk);
        _receivedTickets.Enqueue(new TlsSessionTicket(nst.Ticket, psk, NegotiatedCipherSuite!.Value, nst.LifetimeSeconds, nst.AgeAdd, nowUs,
            nst.MaxEarlyDataSize != null, ServerName, NegotiatedApplicationProtocol, PeerTransportParameters));
        return true;
    }

    /// <summary>
    /// Server: validates the first offered identity. Returns its index, -1 to do a full handshake, or -2 after failing
    /// the connection (bad binder -> decrypt_error, RFC 8446 §4.2.11).
    /// </summary>
    private int ServerSelectPsk(ClientHello ch, byte[] message, byte[]? alpn, bool afterHelloRetry, long nowUs, out byte[]? psk, out bool acceptEarlyData)
    {
        psk = null;
        acceptEarlyData = false;
        if (ch.PskIdentities.Count == 0) return -1;
        // RFC 8446 §4.2.9: pre_shared_key without psk_key_exchange_modes is an error.
        if (ch.PskKeyExchangeModes == null)
        {
            Fail(TlsAlert.MissingExtension, "pre_shared_key without psk_key_exchange_modes");
            return -2;
        }
        if (_options.SessionTicketKey == null || Array.IndexOf(ch.PskKeyExchangeModes, PskDheKe) < 0) return -1;

        PskIdentity id = ch.PskIdentities[0];
        if (!TryOpenTicket(id.Identity, out TicketState state)) return -1;
        if (CipherSuiteInfo.GetHash(state.Suite) != _hash) return -1;
        long ageUs = nowUs - state.IssuedUs;
        if (ageUs < 0 || ageUs >= state.LifetimeSeconds * 1_000_000L) return -1;

        var ks = new KeySchedule(_hash);
        ks.InitializeEarlySecret(state.Psk);
        byte[] binderKey = new byte[ks.HashLength];
        ks.DeriveBinderKey(external: false, binderKey);
        byte[] partialHash = new byte[ks.HashLength];
        _transcript.GetHash(_hash, message.AsSpan(0, ch.BindersOffset), partialHash);
        byte[] expected = new byte[ks.HashLength];
        KeySchedule.ComputeFinished(_hash, binderKey, partialHash, expected);
        if (ch.PskBinders[0].Length != expected.Length || !CryptographicOperations.FixedTimeEquals(ch.PskBinders[0], expected))
        {
            Fail(TlsAlert.DecryptError, "PSK binder mismatch");
            return -2;
        }
        psk = state.Psk;
        IsResumed = true;

        // RFC 8446 §4.2.10 / §8.3: 0-RTT only on the first ClientHello, same ALPN, ticket allowing it, and a plausible age.
        uint reportedAgeMs = unchecked(id.ObfuscatedTicketAge - state.AgeAdd);
        long skewUs = reportedAgeMs * 1000L - ageUs;
        acceptEarlyData = ch.EarlyData && !afterHelloRetry && _options.EnableEarlyData && state.AllowsEarlyData
            && Math.Abs(skewUs) <= _options.MaxTicketAgeSkewUs
            && (alpn ?? Array.Empty<byte>()).AsSpan().SequenceEqual(state.Alpn);
        EarlyDataAccepted = acceptEarlyData;
        return 0;
    }

    private void ServerEmitEarlySecret(byte[] psk)
    {
        var ks = new KeySchedule(_hash);
        ks.InitializeEarlySecret(psk);
        byte[] th = CurrentTranscriptHash();
        byte[] secret = new byte[ks.HashLength];
        ks.DeriveSecret("c e traffic"u8, th, secret);
        EmitSecret(new TlsTrafficSecret(EncryptionLevel.EarlyData, true, false, NegotiatedCipherSuite!.Value, secret));
    }

    private void ServerSendSessionTicket(long nowUs)
    {
        // RFC 8446 §4.2.9: no ticket for a client that did not advertise psk_dhe_ke (it could not use it).
        if (_options.SessionTicketKey == null || !_clientAcceptsTickets || _ticketsSent == byte.MaxValue) return;
        byte[] nonce = [_ticketsSent++];
        byte[] psk = new byte[CipherSuiteInfo.GetHashLength(_hash)];
        KeySchedule.DeriveResumptionPsk(_hash, _resumptionMasterSecret, nonce, psk);
        byte[] ageAddBytes = new byte[4];
        _options.Random.Fill(ageAddBytes);
        uint ageAdd = System.Buffers.Binary.BinaryPrimitives.ReadUInt32BigEndian(ageAddBytes);
        uint lifetime = Math.Min(_options.TicketLifetimeSeconds, 604800u);

        var state = new TlsWriter(128);
        state.WriteUInt8(TicketFormatVersion);
        state.WriteUInt16((ushort)NegotiatedCipherSuite!.Value);
        state.WriteUInt32((uint)((ulong)nowUs >> 32));
        state.WriteUInt32((uint)nowUs);
        state.WriteUInt32(lifetime);
        state.WriteUInt32(ageAdd);
        state.WriteUInt8(_options.EnableEarlyData ? (byte)1 : (byte)0);
        state.WriteVector8(psk);
        state.WriteVector8(NegotiatedApplicationProtocol.Protocol.Span);

        byte[] ticket = new byte[TicketNonceLength + state.Length + TicketTagLength];
        _options.Random.Fill(ticket.AsSpan(0, TicketNonceLength));
        AesGcm aead = SessionTicketCipher.For(_options.SessionTicketKey, TicketTagLength);
        aead.Encrypt(ticket.AsSpan(0, TicketNonceLength), state.WrittenSpan, ticket.AsSpan(TicketNonceLength, state.Length), ticket.AsSpan(TicketNonceLength + state.Length));
        var nst = new NewSessionTicket
        {
            LifetimeSeconds = lifetime,
            AgeAdd = ageAdd,
            Nonce = nonce,
            Ticket = ticket,
            MaxEarlyDataSize = _options.EnableEarlyData ? QuicMaxEarlyDataSize : null,
        };
        var w = new TlsWriter(ticket.Length + 32);
        nst.Encode(w);
        // NewSessionTicket is post-handshake: not part of the transcript.
        _outbound[(int)EncryptionLevel.OneRtt].WriteBytes(w.WrittenSpan);
    }

    private bool TryOpenTicket(byte[] ticket, out TicketState state)
    {
        state = default;
        int plainLength = ticket.Length - TicketNonceLength - TicketTagLength;
        if (plainLength <= 0 || plainLength > 1024) return false;
        byte[] plain = new byte[plainLength];
        try
        {
            AesGcm aead = SessionTicketCipher.For(_options.SessionTicketKey!, TicketTagLength);
            aead.Decrypt(ticket.AsSpan(0, TicketNonceLength), ticket.AsSpan(TicketNonceLength, plainLength), ticket.AsSpan(TicketNonceLength + plainLength), plain);
        }
        catch (CryptographicException)
        {
            return false;
        }
        var r = new TlsReader(plain);
        if (!r.TryReadUInt8(out byte version) || version != TicketFormatVersion) return false;
        if (!r.TryReadUInt16(out ushort suite) || !CipherSuiteInfo.IsSupported((TlsCipherSuite)suite)) return false;
        if (!r.TryReadUInt32(out uint hi) || !r.TryReadUInt32(out uint lo) || !r.TryReadUInt32(out uint lifetime) || !r.TryReadUInt32(out uint ageAdd)) return false;
        if (!r.TryReadUInt8(out byte early) || !r.TryReadVector8(out ReadOnlySpan<byte> psk) || !r.TryReadVector8(out ReadOnlySpan<byte> alpn) || !r.IsEmpty) return false;
        state = new TicketState((TlsCipherSuite)suite, (long)(((ulong)hi << 32) | lo), lifetime, ageAdd, early == 1, psk.ToArray(), alpn.ToArray());
        return true;
    }
}
