using System.Net.Quic.Managed.Crypto;
using System.Net.Quic.Managed.Recovery;
using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Core;

/// <summary>
/// QUIC v2 (RFC 9369) and compatible version negotiation (RFC 9368). Both sides send version_information. A server
/// whose endpoint prefers another version the client listed answers the client's first Initial in that version (the
/// endpoint decides before the connection exists: <see cref="Endpoint"/>), still reading the client's Initials in the
/// original version until they stop. A client whose first server Initial comes in another version it listed switches
/// to it before reading it (new Initial keys; 0-RTT sent in the old version is dropped and its data goes again as 1-RTT).
/// Downgrade protection (§4): each side checks the other's Chosen Version against what was actually used.
/// </summary>
internal sealed partial class Connection
{
    /// <summary>The version of the client's first Initial; <see cref="Version"/> differs after a compatible negotiation.</summary>
    public uint OriginalVersion => _versions.Original;

    /// <summary>True when compatible version negotiation changed the version (RFC 9368 §2.3).</summary>
    public bool VersionChanged => _versions.Original != Version;

    /// <summary>RFC 9368 §2.2: v1 and v2 share the ClientHello format and transport parameters, so each is compatible with the other.</summary>
    internal static bool AreCompatible(uint from, uint to) => QuicVersion.IsSupported(from) && QuicVersion.IsSupported(to);

    /// <summary>Before the handshake starts: the version_information we send (Chosen = the version in use).</summary>
    private void SetVersionInformation(uint[]? available)
    {
        _versions.Available = available is { Length: > 0 } ? available : new[] { Version };
        _localParameters.ChosenVersion = Version;
        _localParameters.AvailableVersions = _versions.Available;
    }

    /// <summary>Server: the client's first Initial came in <paramref name="clientVersion"/>; we answer in <see cref="Version"/>.</summary>
    private void AcceptOriginalVersion(uint clientVersion, in Ids.ConnectionId clientInitialDestinationId)
    {
        _versions.Original = clientVersion;
        if (clientVersion == Version) return;
        InitialKeys keys = InitialKeys.Create(clientVersion, clientInitialDestinationId.Span);
        keys.SendKeys(isServer: true).Dispose();
        _versions.OriginalInitialReceiveKeys = keys.ReceiveKeys(isServer: true);
    }

    /// <summary>
    /// A long-header packet in a version other than <see cref="Version"/>: returns the keys to open it with, or null to
    /// drop it. Server: the client's Initials in the original version. Client: the server's first Initial in a version
    /// we listed switches the connection to it (the Initial space's keys are replaced; the returned keys are those).
    /// </summary>
    private PacketProtectionKeys? KeysForOtherVersion(in LongHeader header, long nowUs)
    {
        if (header.Type != PacketType.Initial) return null;
        if (IsServer) return header.Version == _versions.Original ? _versions.OriginalInitialReceiveKeys : null;
        if (_handshake.ReceivedServerPacket || Array.IndexOf(_versions.Available, header.Version) < 0 || !AreCompatible(Version, header.Version)) return null;
        Version = header.Version;
        InstallInitialKeys(_retrySourceId ?? _originalDestinationId);
        // 0-RTT went in the old version, which the server no longer reads: its data goes again in 1-RTT.
        RejectZeroRttPackets(nowUs);
        Space(PacketNumberSpace.ApplicationData).DiscardZeroRttKeys();
        return Space(PacketNumberSpace.Initial).ReceiveKeys;
    }

    /// <summary>RFC 9368 §4: downgrade protection, on the peer's transport parameters.</summary>
    private TransportErrorCode ValidateVersionInformation(TransportParameters peer, out string? reason)
    {
        reason = null;
        if (peer.AvailableVersions is null)
        {
            // Without version_information nothing can be checked; a version change needs it, though.
            if (!VersionChanged) return TransportErrorCode.NoError;
            reason = "the version changed but the peer sent no version_information";
            return TransportErrorCode.VersionNegotiationError;
        }
        if (IsServer)
        {
            if (peer.ChosenVersion != _versions.Original)
            {
                reason = "the client's Chosen Version is not the version of its first Initial";
                return TransportErrorCode.VersionNegotiationError;
            }
            if (VersionChanged && Array.IndexOf(peer.AvailableVersions, Version) < 0)
            {
                reason = "the negotiated version is not among the client's Available Versions";
                return TransportErrorCode.VersionNegotiationError;
            }
            return TransportErrorCode.NoError;
        }
        if (peer.ChosenVersion != Version)
        {
            reason = "the server's Chosen Version is not the version in use";
            return TransportErrorCode.VersionNegotiationError;
        }
        return TransportErrorCode.NoError;
    }
}
