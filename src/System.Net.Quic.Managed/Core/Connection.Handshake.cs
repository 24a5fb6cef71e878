using System.Net.Quic.Managed.Crypto;
using System.Net.Quic.Managed.Diagnostics;
using System.Net.Quic.Managed.Ids;
using System.Net.Quic.Managed.Recovery;
using System.Net.Quic.Managed.Tls;
using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Core;

internal sealed partial class Connection
{
    private void StartClient(long nowUs)
    {
        // A token from an earlier connection's NEW_TOKEN goes in our Initials until a Retry replaces it (RFC 9000 §8.1.3).
        if (_options.InitialToken is { Length: > 0 } token) _retryToken = token;
        // RFC 9000 §7.2: the client's first Destination Connection ID is random, at least 8 bytes.
        _originalDestinationId = ConnectionId.Create(_random, 8);
        _peerIds.SetInitial(_originalDestinationId);
        InstallInitialKeys(_originalDestinationId);
        _path.Amplification.OnAddressValidated(); // a client is never limited by §8
        StartHandshake(nowUs);
    }

    private void StartServer(in ConnectionId originalDestinationId, in ConnectionId clientInitialDestinationId, in ConnectionId clientSourceId,
        ConnectionId? retrySourceId, long nowUs)
    {
        _originalDestinationId = originalDestinationId;
        _peerInitialSourceId = clientSourceId;
        _peerIds.SetInitial(clientSourceId);
        _retrySourceId = retrySourceId;
        if (retrySourceId is not null) _path.Amplification.OnAddressValidated(); // the Retry token proved the address (§8.1.2)
        _localParameters.OriginalDestinationConnectionId = originalDestinationId.Span.ToArray();
        _localParameters.RetrySourceConnectionId = retrySourceId?.Span.ToArray();
        Span<byte> token = stackalloc byte[StatelessResetToken.Length];
        _localIds.InitialResetToken.CopyTo(token);
        _localParameters.StatelessResetToken = token.ToArray();
        InstallInitialKeys(clientInitialDestinationId);
        StartHandshake(nowUs);
    }

    private void StartHandshake(long nowUs)
    {
        byte[] encoded = _localParameters.Encode() ?? throw new InvalidOperationException("Local transport parameters could not be encoded.");
        _tls.Start(encoded, nowUs);
        DrainHandshake(nowUs);
    }

    private void InstallInitialKeys(in ConnectionId clientDestinationId)
    {
        PacketSpaceState initial = Space(PacketNumberSpace.Initial);
        initial.SendKeys?.Dispose();
        initial.ReceiveKeys?.Dispose();
        InitialKeys keys = InitialKeys.Create(Version, clientDestinationId.Span);
        initial.SendKeys = keys.SendKeys(IsServer);
        initial.ReceiveKeys = keys.ReceiveKeys(IsServer);
    }

    /// <summary>Moves what the TLS engine produced into the connection: secrets become keys, messages become CRYPTO data.</summary>
    private void DrainHandshake(long nowUs)
    {
        while (_tls.TryTakeSecret(out HandshakeSecret secret))
        {
            TraceSecret(secret);
            InstallSecret(secret, nowUs);
        }
        while (_tls.TryTakeOutgoing(out EncryptionLevel level, out byte[] data))
        {
            PacketSpaceState space = SpaceFor(level);
            if (space.Discarded) continue;
            space.CryptoSend.Append(data, fin: false);
        }
        if (!IsServer) TakeSessionTickets();

        if (_tls.HasPeerTransportParameters && _handshake.TakePeerParameters())
        {
            TransportErrorCode error = ApplyPeerParameters(nowUs, out string? reason);
            if (error != TransportErrorCode.NoError)
            {
                CloseWithError(error, reason, nowUs);
                return;
            }
        }

        if (!_handshake.IsCompleted && _tls.IsComplete) OnHandshakeComplete(nowUs);
    }

    private static PacketSpaceState SpaceFor(PacketSpaceState[] spaces, EncryptionLevel level) => level switch
    {
        EncryptionLevel.Initial => spaces[(int)PacketNumberSpace.Initial],
        EncryptionLevel.Handshake => spaces[(int)PacketNumberSpace.Handshake],
        _ => spaces[(int)PacketNumberSpace.ApplicationData],
    };

    private PacketSpaceState SpaceFor(EncryptionLevel level) => SpaceFor(_spaces, level);

    private void InstallSecret(in HandshakeSecret secret, long nowUs)
    {
        switch (secret.Level)
        {
            case EncryptionLevel.Handshake:
            {
                PacketSpaceState space = Space(PacketNumberSpace.Handshake);
                PacketProtectionKeys keys = PacketProtectionKeys.Create(secret.Secret, secret.CipherSuite, Version);
                if (secret.ForSending) space.SendKeys = keys;
                else space.ReceiveKeys = keys;
                if (space.SendKeys is not null && space.ReceiveKeys is not null) _recovery.OnHandshakeKeysAvailable(nowUs);
                break;
            }
            case EncryptionLevel.OneRtt:
            {
                PacketSpaceState space = Space(PacketNumberSpace.ApplicationData);
                var keys = new KeyPhaseKeys(PacketProtectionKeys.Create(secret.Secret, secret.CipherSuite, Version));
                if (secret.ForSending)
                {
                    space.SendPhaseKeys = keys;
                    // RFC 9001 §4.9.3: a client with 1-RTT keys sends no more 0-RTT packets.
                    space.ZeroRttSendKeys?.Dispose();
                    space.ZeroRttSendKeys = null;
                }
                else
                {
                    space.ReceivePhaseKeys = keys;
                }
                break;
            }
            case EncryptionLevel.EarlyData:
                InstallEarlySecret(secret);
                break;
        }
    }

    private TransportErrorCode ApplyPeerParameters(long nowUs, out string? reason)
    {
        TransportErrorCode error = TransportParameters.TryDecode(_tls.PeerTransportParameters, sentByServer: !IsServer, out TransportParameters? peer, out reason);
        if (error != TransportErrorCode.NoError) return error;
        PeerParameters = peer!;
        error = ResolveEarlyData(peer!, nowUs, out reason);
        if (error != TransportErrorCode.NoError) return error;

        // RFC 9000 §7.3: the connection IDs both sides used must be authenticated through the handshake.
        if (peer!.InitialSourceConnectionId is null || !peer.InitialSourceConnectionId.AsSpan().SequenceEqual(_peerInitialSourceId.Span))
        {
            reason = "initial_source_connection_id does not match the peer's Source Connection ID";
            return TransportErrorCode.TransportParameterError;
        }
        if (!IsServer)
        {
            if (peer.OriginalDestinationConnectionId is null || !peer.OriginalDestinationConnectionId.AsSpan().SequenceEqual(_originalDestinationId.Span))
            {
                reason = "original_destination_connection_id does not match";
                return TransportErrorCode.TransportParameterError;
            }
            bool retried = _retrySourceId is not null;
            if (retried != (peer.RetrySourceConnectionId is not null)
                || (retried && !peer.RetrySourceConnectionId.AsSpan().SequenceEqual(_retrySourceId!.Value.Span)))
            {
                reason = "retry_source_connection_id does not match the Retry we received";
                return TransportErrorCode.TransportParameterError;
            }
            if (peer.StatelessResetToken is { Length: StatelessResetToken.Length } token)
            {
                _peerIds.SetInitialResetToken(new StatelessResetToken(token));
            }
            error = ApplyPreferredAddress(peer, out reason);
            if (error != TransportErrorCode.NoError) return error;
        }

        error = ValidateVersionInformation(peer, out reason);
        if (error != TransportErrorCode.NoError) return error;

        error = _streams.ApplyPeerTransportParameters(ToLong(peer.InitialMaxData), ToLong(peer.InitialMaxStreamDataBidiLocal),
            ToLong(peer.InitialMaxStreamDataBidiRemote), ToLong(peer.InitialMaxStreamDataUni),
            ToLong(peer.InitialMaxStreamsBidi), ToLong(peer.InitialMaxStreamsUni), out reason);
        if (error != TransportErrorCode.NoError) return error;

        _idle.OnPeerTimeout((long)Math.Min(peer.MaxIdleTimeoutMs, long.MaxValue / 1000) * 1000);
        _recovery.PeerMaxAckDelayUs = (long)peer.MaxAckDelayMs * 1000;
        _peerAckDelayExponent = (int)peer.AckDelayExponent;
        _path.MaxDatagramSize = (int)Math.Min((ulong)_path.MaxDatagramSize, peer.MaxUdpPayloadSize);
        _localIds.SetPeerActiveLimit(peer.ActiveConnectionIdLimit);
        if (_streams.LocalBidiLimit.MaxStreams > 0 || _streams.LocalUniLimit.MaxStreams > 0) Emit(ConnectionEventKind.StreamsAvailable);
        return TransportErrorCode.NoError;
    }

    private static long ToLong(ulong value) => value > long.MaxValue ? long.MaxValue : (long)value;

    private void OnHandshakeComplete(long nowUs)
    {
        _handshake.Complete();
        _handshakeDeadlineUs = long.MaxValue;
        QuicTelemetryCounters.HandshakeCompleted();
        if (QuicEventSource.Log.InformationalEnabled)
        {
            QuicEventSource.Log.HandshakeCompleted(EventConnectionId, Version, _tls.NegotiatedApplicationProtocol.ToString(),
                _tls.NegotiatedCipherSuite.ToString(), (nowUs - _startTimeUs) / 1000.0);
        }
        if (IsServer)
        {
            // RFC 9001 §4.1.2: the server's handshake is confirmed when it completes; HANDSHAKE_DONE tells the client.
            _handshake.QueueHandshakeDone();
            OnHandshakeConfirmed(nowUs);
        }
        Emit(ConnectionEventKind.HandshakeCompleted);
    }

    private void OnHandshakeConfirmed(long nowUs)
    {
        if (!_handshake.Confirm()) return;
        _recovery.OnHandshakeConfirmed(nowUs);
        _path.Pmtu.Start((int)Math.Min(PeerParameters?.MaxUdpPayloadSize ?? (ulong)MinInitialDatagramSize, int.MaxValue));
        // RFC 9001 §4.9.3: 0-RTT still in flight after this is dropped; the client resends it in 1-RTT.
        Space(PacketNumberSpace.ApplicationData).DiscardZeroRttKeys();
        // RFC 9001 §4.9.2: Handshake keys are discarded once the handshake is confirmed.
        DiscardSpace(PacketNumberSpace.Handshake, nowUs);
        // A client may now also retire the ID it sent in its first Initial; we keep routing it until then.
    }

    private void DiscardSpace(PacketNumberSpace space, long nowUs)
    {
        PacketSpaceState state = Space(space);
        if (state.Discarded) return;
        ReturnOutstandingFrames(space);
        _recovery.DiscardPacketNumberSpace(space, nowUs);
        state.Discard();
    }
}
