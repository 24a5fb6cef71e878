using System.Net.Quic.Managed.Crypto;
using System.Net.Quic.Managed.Wire;
using System.Net.Security;

namespace QuicManaged.Tools.DatagramDumper;

/// <summary>What the dumper has learned about one QUIC connection: the client's original DCID (Initial keys), the
/// connection IDs each side uses (to attribute packets and find short-header DCID lengths), the TLS client random and
/// cipher suite (to pick key log secrets), the version the server chose, packet number state and CRYPTO reassembly.</summary>
internal sealed class DumpConnection : IDisposable
{
    private readonly HashSet<string> _clientCids = new(StringComparer.Ordinal);
    private readonly HashSet<string> _serverCids = new(StringComparer.Ordinal);
    private readonly Dictionary<string, Sender> _resetTokens = new(StringComparer.Ordinal);
    private readonly long[] _largestPacketNumber = [-1, -1, -1, -1, -1, -1];
    private readonly CryptoStreamBuffer?[] _cryptoStreams = new CryptoStreamBuffer?[8];
    private readonly PacketProtectionKeys?[] _keys = new PacketProtectionKeys?[8];
    private readonly PacketProtectionKeys?[] _nextOneRttKeys = new PacketProtectionKeys?[2];
    private readonly uint[] _keysVersion = new uint[8];
    private readonly bool[] _oneRttKeyPhase = new bool[2];
    private readonly Dictionary<uint, InitialKeys> _initialKeys = new();
    private byte[] _initialCid;

    public DumpConnection(int number, uint version, ReadOnlySpan<byte> originalDcid)
    {
        Number = number;
        Version = version;
        OriginalDcid = originalDcid.ToArray();
        _initialCid = OriginalDcid;
        _initialKeys.Add(version, InitialKeys.Create(version, originalDcid));
        _serverCids.Add(Convert.ToHexStringLower(originalDcid));
    }

    public int Number { get; }

    /// <summary>The version of the client's first Initial, then the version of the server's long-header packets:
    /// RFC 9368 compatible version negotiation (v1 -> v2) changes it during the handshake; 1-RTT keys use it.</summary>
    public uint Version { get; set; }

    public byte[] OriginalDcid { get; }

    /// <summary>The ClientHello random, once the client's first CRYPTO data has been decoded.</summary>
    public byte[]? ClientRandom { get; set; }

    /// <summary>The ServerHello's cipher suite; RFC 9001 §5: it protects Handshake and 1-RTT packets.</summary>
    public TlsCipherSuite CipherSuite { get; set; } = TlsCipherSuite.TLS_AES_128_GCM_SHA256;

    /// <summary>Connection IDs the client chose (servers send to them).</summary>
    public IReadOnlyCollection<string> ClientCids => _clientCids;

    /// <summary>Connection IDs the server chose, plus the original DCID (clients send to them).</summary>
    public IReadOnlyCollection<string> ServerCids => _serverCids;

    /// <summary>True once a side was seen using a zero-length connection ID: short headers to it have no DCID.</summary>
    public bool HasEmptyCid { get; private set; }

    public void AddCid(Sender owner, ReadOnlySpan<byte> cid)
    {
        if (cid.IsEmpty)
        {
            HasEmptyCid = true;
            return;
        }

        (owner == Sender.Client ? _clientCids : _serverCids).Add(Convert.ToHexStringLower(cid));
    }

    /// <summary>RFC 9000 §10.3: a stateless reset token <paramref name="owner"/> issued (NEW_CONNECTION_ID, the server's
    /// stateless_reset_token and preferred_address parameters); <paramref name="owner"/> may end the connection with it.</summary>
    public void AddResetToken(Sender owner, ReadOnlySpan<byte> token) => _resetTokens[Convert.ToHexStringLower(token)] = owner;

    /// <summary>Who issued this stateless reset token, or null when it is not one of this connection's.</summary>
    public Sender? ResetTokenOwner(ReadOnlySpan<byte> token) =>
        _resetTokens.TryGetValue(Convert.ToHexStringLower(token), out Sender owner) ? owner : null;

    /// <summary>Who sent a packet with this DCID (the owner's peer), or null when the DCID is not known here.</summary>
    public Sender? SenderForDcid(string dcidHex)
    {
        if (_serverCids.Contains(dcidHex)) return Sender.Client;
        if (_clientCids.Contains(dcidHex)) return Sender.Server;
        return null;
    }

    /// <summary>True once a Retry was applied (<see cref="RekeyInitial"/>): the client follows no other.</summary>
    public bool FollowedRetry { get; private set; }

    /// <summary>RFC 9001 §5.2: after a Retry the client derives Initial keys from the Retry's Source Connection ID.
    /// RFC 9000 §17.2.5.2: it then starts over with a new first flight: its CRYPTO stream restarts at offset 0 with a
    /// new ClientHello (a new TLS random for most stacks), so the Initial reassembly and every secret looked up by
    /// the old random are dropped too.</summary>
    public void RekeyInitial(ReadOnlySpan<byte> retrySourceCid)
    {
        FollowedRetry = true;
        DisposeInitialKeys();
        _initialCid = retrySourceCid.ToArray();
        _largestPacketNumber[0] = -1;
        _largestPacketNumber[1] = -1;
        _cryptoStreams[((int)KeyLevel.Initial * 2) + (int)Sender.Client] = null;
        _cryptoStreams[((int)KeyLevel.Initial * 2) + (int)Sender.Server] = null;
        ClientRandom = null;
        for (int i = 0; i < _keys.Length; i++)
        {
            _keys[i]?.Dispose();
            _keys[i] = null;
        }

        for (int i = 0; i < _nextOneRttKeys.Length; i++)
        {
            _nextOneRttKeys[i]?.Dispose();
            _nextOneRttKeys[i] = null;
            _oneRttKeyPhase[i] = false;
        }
    }

    /// <summary>Largest packet number seen in a packet number space (RFC 9000 §12.3) from one sender, or -1.</summary>
    public long LargestPacketNumber(KeyLevel level, Sender sender) => _largestPacketNumber[SpaceIndex(level, sender)];

    public void RecordPacketNumber(KeyLevel level, Sender sender, long packetNumber)
    {
        int index = SpaceIndex(level, sender);
        if (packetNumber > _largestPacketNumber[index]) _largestPacketNumber[index] = packetNumber;
    }

    public CryptoStreamBuffer CryptoStream(KeyLevel level, Sender sender) =>
        _cryptoStreams[((int)level * 2) + (int)sender] ??= new CryptoStreamBuffer();

    /// <summary>The keys that open <paramref name="sender"/>'s packets at <paramref name="level"/> in
    /// <paramref name="version"/> (the long header's; <see cref="Version"/> for 1-RTT): Initial keys are derived from
    /// the original DCID (or the Retry's SCID), the others come from the key log. Null when unknown.</summary>
    public PacketProtectionKeys? Keys(KeyLevel level, Sender sender, KeyLog? keyLog, uint version)
    {
        if (level == KeyLevel.Initial)
        {
            if (!QuicVersion.IsSupported(version)) return null;
            if (!_initialKeys.TryGetValue(version, out InitialKeys? initial))
            {
                initial = InitialKeys.Create(version, _initialCid);
                _initialKeys.Add(version, initial);
            }

            return sender == Sender.Client ? initial.Client : initial.Server;
        }

        int index = ((int)level * 2) + (int)sender;
        if (_keys[index] != null && _keysVersion[index] != version)
        {
            // Looked up in the other version of a compatible negotiation: the same secret, other labels (RFC 9369 §3.3.2).
            _keys[index]!.Dispose();
            _keys[index] = null;
        }

        if (_keys[index] != null || keyLog == null || !QuicVersion.IsSupported(version)) return _keys[index];
        string? label = (level, sender) switch
        {
            (KeyLevel.ZeroRtt, Sender.Client) => KeyLog.ClientEarlyTrafficSecret,
            (KeyLevel.Handshake, Sender.Client) => KeyLog.ClientHandshakeTrafficSecret,
            (KeyLevel.Handshake, Sender.Server) => KeyLog.ServerHandshakeTrafficSecret,
            (KeyLevel.OneRtt, Sender.Client) => KeyLog.ClientTrafficSecret0,
            (KeyLevel.OneRtt, Sender.Server) => KeyLog.ServerTrafficSecret0,
            _ => null,
        };
        if (label == null) return null;
        byte[]? secret = keyLog.Find(ClientRandom, label);
        if (secret == null || !QuicCipherSuite.IsSupported(CipherSuite) || secret.Length != QuicCipherSuite.GetSecretLength(CipherSuite))
        {
            return null;
        }

        // Looked up once the suite is known: the ServerHello precedes every Handshake packet, so the suite is settled.
        _keys[index] = PacketProtectionKeys.Create(secret, CipherSuite, version);
        _keysVersion[index] = version;
        return _keys[index];
    }

    /// <summary>RFC 9001 §6: the key phase bit of 1-RTT packets flips on each key update; the current keys, or the
    /// next generation when the phase differs. <see cref="ConfirmOneRttPhase"/> moves on once such a packet opens.</summary>
    public PacketProtectionKeys? OneRttKeysForPhase(Sender sender, bool keyPhase, KeyLog? keyLog)
    {
        PacketProtectionKeys? current = Keys(KeyLevel.OneRtt, sender, keyLog, Version);
        if (current == null || keyPhase == _oneRttKeyPhase[(int)sender]) return current;
        return _nextOneRttKeys[(int)sender] ??= current.CreateNextGeneration();
    }

    public void ConfirmOneRttPhase(Sender sender, bool keyPhase)
    {
        int s = (int)sender;
        if (keyPhase == _oneRttKeyPhase[s] || _nextOneRttKeys[s] == null) return;
        int index = ((int)KeyLevel.OneRtt * 2) + s;
        _keys[index]?.Dispose();
        _keys[index] = _nextOneRttKeys[s];
        _nextOneRttKeys[s] = null;
        _oneRttKeyPhase[s] = keyPhase;
    }

    public void Dispose()
    {
        DisposeInitialKeys();
        foreach (PacketProtectionKeys? keys in _keys) keys?.Dispose();
        foreach (PacketProtectionKeys? keys in _nextOneRttKeys) keys?.Dispose();
    }

    private void DisposeInitialKeys()
    {
        foreach (InitialKeys keys in _initialKeys.Values) keys.Dispose();
        _initialKeys.Clear();
    }

    // RFC 9000 §12.3: Initial, Handshake and application data (0-RTT and 1-RTT share it) spaces.
    private static int SpaceIndex(KeyLevel level, Sender sender)
    {
        int space = level switch
        {
            KeyLevel.Initial => 0,
            KeyLevel.Handshake => 1,
            _ => 2,
        };
        return (space * 2) + (int)sender;
    }
}
