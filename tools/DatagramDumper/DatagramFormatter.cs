using System.Globalization;
using System.Net.Quic.Managed.Crypto;
using System.Net.Quic.Managed.Wire;

namespace QuicManaged.Tools.DatagramDumper;

/// <summary>Turns datagrams into a readable packet log: one block per datagram, one section per coalesced packet, one
/// line per frame. Keeps per-connection state across datagrams (Initial keys from the client's original DCID,
/// connection IDs, key log secrets, CRYPTO reassembly). Never throws on input bytes: what cannot be decoded is
/// reported in the log and the next packet or datagram follows.</summary>
internal sealed class DatagramFormatter : IDisposable
{
    private const int MaxConnections = 64;

    // Packet number windows a capture gap (or a copy's lag) may span, each way, before a packet counts as undecryptable
    // (16 x 256 packets for the one-byte packet numbers busy connections use).
    private const int MaxPacketNumberWindowsSkipped = 16;

    private readonly TextWriter _output;
    private readonly DumpOptions _options;
    private readonly KeyLog? _keyLog;
    private readonly List<DumpConnection> _connections = new();
    private long? _firstTimestampUs;
    private int _connectionNumber;

    public DatagramFormatter(TextWriter output, DumpOptions? options = null, KeyLog? keyLog = null)
    {
        _output = output;
        _options = options ?? new DumpOptions();
        _keyLog = keyLog;
    }

    /// <summary>Datagrams formatted so far.</summary>
    public int DatagramCount { get; private set; }

    /// <summary>Exceptions caught while decoding: each is a dumper bug, reported in the log as "internal error".</summary>
    public int InternalErrorCount { get; private set; }

    public void Format(CapturedDatagram datagram)
    {
        DatagramCount++;
        var block = new StringWriter(CultureInfo.InvariantCulture);
        block.WriteLine(FormatDatagramLine(datagram));
        if (datagram.Note != null)
        {
            block.WriteLine($"  note: {datagram.Note}");
        }

        bool shown = _options.CidFilter == null || datagram.Note != null;
        try
        {
            if (datagram.Data.Length > 0 || datagram.Note == null)
            {
                shown |= FormatPackets(block, datagram.Data);
            }
        }
        catch (Exception e)
        {
            // Last line of defence for the CLI; tests assert this never happens.
            InternalErrorCount++;
            block.WriteLine($"  internal error: {e.GetType().Name}: {e.Message}");
            shown = true;
        }

        if (shown)
        {
            _output.Write(block.ToString());
        }
    }

    public void Dispose()
    {
        foreach (DumpConnection connection in _connections) connection.Dispose();
        _connections.Clear();
    }

    private string FormatDatagramLine(CapturedDatagram datagram)
    {
        var line = new System.Text.StringBuilder();
        line.Append('#').Append(DatagramCount);
        if (datagram.TimestampUs is long timestampUs)
        {
            _firstTimestampUs ??= timestampUs;
            long relative = timestampUs - _firstTimestampUs.Value;
            line.Append(" t=").Append((relative / 1_000_000.0).ToString("F6", CultureInfo.InvariantCulture));
        }

        if (datagram.Source != null || datagram.Destination != null)
        {
            line.Append(' ').Append(datagram.Source ?? "?").Append(" -> ").Append(datagram.Destination ?? "?");
        }

        line.Append(" len=").Append(datagram.Data.Length);
        return line.ToString();
    }

    /// <summary>Returns true when at least one packet passed the --cid filter.</summary>
    private bool FormatPackets(TextWriter output, byte[] data)
    {
        if (data.Length == 0)
        {
            output.WriteLine("  (empty datagram)");
            return false;
        }

        bool anyShown = false;
        int number = 0;
        int end = 0;
        var packets = new CoalescedPacketEnumerator(data, allowGreasedFixedBit: true);
        string? firstDcid = null;
        while (packets.MoveNext())
        {
            number++;
            end = packets.CurrentOffset + packets.Current.Length;
            ReadOnlySpan<byte> packet = data.AsSpan(packets.CurrentOffset, packets.Current.Length);
            if (number > 1 && packet.IndexOfAnyExcept((byte)0) < 0)
            {
                // Zeros after the last packet are not a packet (the Fixed Bit is clear); some stacks pad this way.
                output.WriteLine($"  [{number}] offset={packets.CurrentOffset} {packet.Length} zero bytes after the last packet (datagram padding, not a QUIC packet)");
                break;
            }

            if (PacketFirstByte.IsLongHeader(packet[0]) && LongHeader.TryParse(packet, out LongHeader header, allowGreasedFixedBit: true))
            {
                string dcid = Convert.ToHexStringLower(header.DestinationConnectionId);
                firstDcid ??= dcid;
                if (dcid != firstDcid)
                {
                    // RFC 9000 §12.2: receivers SHOULD drop coalesced packets whose DCID differs from the first one's.
                    output.WriteLine($"  warning: packet {number} DCID differs from the first packet's; receivers drop it (RFC 9000 §12.2)");
                }
            }

            anyShown |= FormatPacket(output, packet, number, packets.CurrentOffset);
        }

        if (packets.StoppedOnMalformedPacket)
        {
            int remaining = data.Length - end;
            output.WriteLine($"  error: malformed long header at offset {end} (truncated, bad connection ID length or Length past the datagram end); {remaining} bytes undecoded: {HexText.Prefix(data.AsSpan(end), 24)}");
            anyShown = true;
        }

        return anyShown;
    }

    private bool FormatPacket(TextWriter output, ReadOnlySpan<byte> packet, int number, int offset)
    {
        if (PacketFirstByte.IsLongHeader(packet[0]))
        {
            if (!LongHeader.TryParse(packet, out LongHeader header, allowGreasedFixedBit: true))
            {
                output.WriteLine($"  [{number}] offset={offset} error: malformed long header");
                return true;
            }

            bool shown = MatchesCidFilter(header.DestinationConnectionId) || MatchesCidFilter(header.SourceConnectionId);
            FormatLongHeaderPacket(shown ? output : TextWriter.Null, packet, header, number, offset);
            return shown;
        }

        return FormatShortHeaderPacket(output, packet, number, offset);
    }

    private void FormatLongHeaderPacket(TextWriter output, ReadOnlySpan<byte> packet, LongHeader header, int number, int offset)
    {
        string dcid = HexText.Of(header.DestinationConnectionId);
        string scid = HexText.Of(header.SourceConnectionId);
        string prefix = $"  [{number}] offset={offset} {PacketTypeName(header.Type)} version={VersionName(header.Version)}";
        switch (header.Type)
        {
            case PacketType.VersionNegotiation:
            {
                output.WriteLine($"{prefix} DCID={dcid} SCID={scid} len={packet.Length}");
                if (VersionNegotiationPacket.TryParse(packet, out VersionNegotiationPacket vn))
                {
                    var versions = new System.Text.StringBuilder();
                    foreach (uint version in vn.Versions)
                    {
                        if (versions.Length > 0) versions.Append(", ");
                        versions.Append(VersionName(version));
                    }

                    output.WriteLine($"    supported versions: {(versions.Length == 0 ? "(none)" : versions.ToString())}");
                }
                else
                {
                    output.WriteLine("    error: malformed Version Negotiation packet (versions not a multiple of 4 bytes)");
                }

                return;
            }
            case PacketType.UnsupportedVersion:
                output.WriteLine($"{prefix} DCID={dcid} SCID={scid} len={packet.Length}");
                output.WriteLine("    (unsupported version: only the RFC 8999 invariant fields are known)");
                return;
            case PacketType.Retry:
                FormatRetry(output, packet, header, prefix, dcid, scid);
                return;
        }

        KeyLevel level = header.Type switch
        {
            PacketType.Initial => KeyLevel.Initial,
            PacketType.ZeroRtt => KeyLevel.ZeroRtt,
            _ => KeyLevel.Handshake,
        };
        string token = header.Type == PacketType.Initial ? $" token=({header.Token.Length} bytes){(header.Token.IsEmpty ? "" : " " + HexText.Prefix(header.Token, 16))}" : "";
        output.WriteLine($"{prefix} DCID={dcid} SCID={scid}{token} length={header.PayloadLength}");

        OpenResult result = OpenLongHeader(packet, header, level, out DumpConnection? connection, out Sender sender);
        string who = connection == null ? "" : $"conn={connection.Number} from={(sender == Sender.Client ? "client" : "server")} ";
        if (result.Error != null)
        {
            output.WriteLine($"    {who}{result.Error}");
            return;
        }

        output.WriteLine($"    {who}pn={result.PacketNumber} pn_len={result.PacketNumberLength}{ReservedBitsWarning(result.FirstByte)}");
        FrameFormatter.Format(output, result.Payload.Span, header.Type, level, sender, connection!, _options.FrameFilter);
    }

    private void FormatRetry(TextWriter output, ReadOnlySpan<byte> packet, LongHeader header, string prefix, string dcid, string scid)
    {
        output.WriteLine($"{prefix} DCID={dcid} SCID={scid} len={packet.Length}");
        output.WriteLine($"    retry_token=({header.Token.Length} bytes) {HexText.Prefix(header.Token, 16)} integrity_tag={HexText.Of(header.RetryIntegrityTag)}");
        // RFC 9001 §5.8: the tag covers the client's original DCID, so checking it also finds the connection (the
        // Retry's DCID is the client's SCID, which may be empty). RFC 9001 §5.2: new Initial keys follow.
        DumpConnection? byCid = FindConnection(Convert.ToHexStringLower(header.DestinationConnectionId), out Sender sender);
        DumpConnection? verified = null;
        if (byCid != null && sender == Sender.Server && RetryIntegrity.Verify(header.Version, byCid.OriginalDcid, packet))
        {
            verified = byCid;
        }

        for (int i = _connections.Count - 1; i >= 0 && verified == null; i--)
        {
            if (RetryIntegrity.Verify(header.Version, _connections[i].OriginalDcid, packet)) verified = _connections[i];
        }

        if (verified is { FollowedRetry: true })
        {
            // RFC 9000 §17.2.5.2: a client accepts at most one Retry; a server that retried a late copy of its first
            // Initial sends another, which the client ignores: its Initial keys stay those of the first Retry.
            output.WriteLine($"    conn={verified.Number} integrity tag valid (original DCID {HexText.Of(verified.OriginalDcid)}); ignored by the client, which follows only the first Retry (RFC 9000 §17.2.5.2)");
        }
        else if (verified != null)
        {
            output.WriteLine($"    conn={verified.Number} integrity tag valid (original DCID {HexText.Of(verified.OriginalDcid)})");
            verified.AddCid(Sender.Server, header.SourceConnectionId);
            verified.RekeyInitial(header.SourceConnectionId);
        }
        else if (_options.OriginalDcid != null)
        {
            bool valid = RetryIntegrity.Verify(header.Version, _options.OriginalDcid, packet);
            output.WriteLine($"    integrity tag {(valid ? "valid" : "INVALID")} for --odcid {HexText.Of(_options.OriginalDcid)}");
        }
        else if (byCid != null)
        {
            output.WriteLine($"    conn={byCid.Number} integrity tag INVALID (original DCID {HexText.Of(byCid.OriginalDcid)})");
        }
        else
        {
            output.WriteLine("    (integrity not checked: the client Initial it answers was not seen; give --odcid)");
        }
    }

    private OpenResult OpenLongHeader(ReadOnlySpan<byte> packet, LongHeader header, KeyLevel level, out DumpConnection? connection, out Sender sender)
    {
        int pnOffset = header.PacketNumberOffset;
        connection = FindConnection(Convert.ToHexStringLower(header.DestinationConnectionId), out sender);
        if (connection == null && !header.SourceConnectionId.IsEmpty)
        {
            // The SCID is the sender's own ID: a packet from a known side whose DCID we have not learned yet.
            connection = FindConnection(Convert.ToHexStringLower(header.SourceConnectionId), out Sender peerOfOwner);
            sender = peerOfOwner == Sender.Client ? Sender.Server : Sender.Client;
        }

        OpenResult result;
        if (connection != null)
        {
            result = TryOpen(packet, pnOffset, connection, level, sender, header.Version);
            if (result.Error == null || result.Error.StartsWith("(no keys", StringComparison.Ordinal))
            {
                LearnCids(connection, sender, header);
                return result;
            }
        }
        else
        {
            result = OpenResult.Failed(level == KeyLevel.Initial
                ? "(no keys: connection unknown; give --odcid for a server Initial whose client Initial is missing)"
                : "(no keys: connection unknown)");
        }

        bool initial = level == KeyLevel.Initial && QuicVersion.IsSupported(header.Version);
        // RFC 9001 §5.2: a client's first Initial is protected with keys from its own DCID. Tried before the other
        // connections' keys because an unknown DCID is most often exactly that.
        if (initial && connection == null &&
            TryStartConnection(packet, header, header.DestinationConnectionId, Sender.Client, out DumpConnection? created, out OpenResult opened))
        {
            connection = created;
            sender = opened.Sender;
            return opened;
        }

        // Attribution by connection ID failed: try every known connection's keys (zero-length IDs, migrations).
        for (int i = _connections.Count - 1; i >= 0; i--)
        {
            for (int s = 0; s < 2; s++)
            {
                if (_connections[i] == connection && (Sender)s == sender) continue;
                OpenResult trial = TryOpen(packet, pnOffset, _connections[i], level, (Sender)s, header.Version);
                if (trial.Error == null)
                {
                    connection = _connections[i];
                    sender = (Sender)s;
                    LearnCids(connection, sender, header);
                    return trial;
                }
            }
        }

        if (initial && _options.OriginalDcid != null &&
            TryStartConnection(packet, header, _options.OriginalDcid, Sender.Server, out DumpConnection? fromOdcid, out OpenResult openedWithOdcid))
        {
            connection = fromOdcid;
            sender = openedWithOdcid.Sender;
            return openedWithOdcid;
        }

        return result;
    }

    private bool TryStartConnection(ReadOnlySpan<byte> packet, LongHeader header, ReadOnlySpan<byte> originalDcid, Sender sender,
        out DumpConnection? connection, out OpenResult result)
    {
        connection = null;
        result = default;
        if (originalDcid.Length > ConnectionIdLimits.MaxLength) return false;
        var candidate = new DumpConnection(_connectionNumber + 1, header.Version, originalDcid);
        OpenResult trial = TryOpen(packet, header.PacketNumberOffset, candidate, KeyLevel.Initial, sender, header.Version);
        if (trial.Error != null)
        {
            candidate.Dispose();
            return false;
        }

        _connectionNumber++;
        if (_connections.Count == MaxConnections)
        {
            _connections[0].Dispose();
            _connections.RemoveAt(0);
        }

        _connections.Add(candidate);
        LearnCids(candidate, sender, header);
        connection = candidate;
        result = trial with { Sender = sender };
        return true;
    }

    private static void LearnCids(DumpConnection connection, Sender sender, LongHeader header)
    {
        Sender peer = sender == Sender.Client ? Sender.Server : Sender.Client;
        connection.AddCid(sender, header.SourceConnectionId);
        // A client's DCID before the server answers is the original (or Retry) ID, already known as the server's.
        if (sender == Sender.Server) connection.AddCid(peer, header.DestinationConnectionId);
    }

    private bool FormatShortHeaderPacket(TextWriter output, ReadOnlySpan<byte> packet, int number, int offset)
    {
        DumpConnection? connection = null;
        Sender sender = Sender.Client;
        int cidLength = -1;

        // RFC 9000 §17.3: the DCID length is not on the wire; match the IDs each side chose, longest first.
        for (int i = _connections.Count - 1; i >= 0 && cidLength < 0; i--)
        {
            DumpConnection candidate = _connections[i];
            int best = -1;
            Sender bestSender = Sender.Client;
            FindLongestCidPrefix(packet, candidate.ServerCids, Sender.Client, ref best, ref bestSender);
            FindLongestCidPrefix(packet, candidate.ClientCids, Sender.Server, ref best, ref bestSender);
            if (best >= 0)
            {
                connection = candidate;
                sender = bestSender;
                cidLength = best;
            }
        }

        if (cidLength < 0 && _options.CidLength is int given) cidLength = given;
        if (cidLength < 0)
        {
            foreach (DumpConnection candidate in _connections)
            {
                if (candidate.HasEmptyCid) cidLength = 0;
            }
        }

        string spin = PacketFirstByte.GetSpinBit(packet[0]) ? "1" : "0";
        if (cidLength < 0 || !ShortHeader.TryParse(packet, cidLength, out ShortHeader header, allowGreasedFixedBit: true))
        {
            bool shownUnknown = _options.CidFilter == null;
            if (shownUnknown && FindStatelessReset(packet) is { } reset)
            {
                output.WriteLine($"  [{number}] offset={offset} Stateless Reset len={packet.Length} (RFC 9000 §10.3: a short header with an unknown DCID)");
                output.WriteLine($"    {reset}");
            }
            else if (shownUnknown)
            {
                output.WriteLine($"  [{number}] offset={offset} 1-RTT len={packet.Length} spin={spin} DCID=(length unknown: no long header of this connection seen; use --cid-len N)");
                output.WriteLine($"    (no keys) first bytes {HexText.Prefix(packet, 24)}");
            }

            return shownUnknown;
        }

        bool shown = MatchesCidFilter(header.DestinationConnectionId);
        TextWriter packetOutput = shown ? output : TextWriter.Null;
        packetOutput.WriteLine($"  [{number}] offset={offset} 1-RTT DCID={HexText.Of(header.DestinationConnectionId)} len={packet.Length} spin={spin}");

        OpenResult result = connection != null
            ? TryOpen(packet, header.PacketNumberOffset, connection, KeyLevel.OneRtt, sender, connection.Version)
            : OpenResult.Failed("(no keys: connection unknown)");
        if (result.Error != null)
        {
            for (int i = _connections.Count - 1; i >= 0 && result.Error != null; i--)
            {
                for (int s = 0; s < 2; s++)
                {
                    OpenResult trial = TryOpen(packet, header.PacketNumberOffset, _connections[i], KeyLevel.OneRtt, (Sender)s, _connections[i].Version);
                    if (trial.Error == null)
                    {
                        connection = _connections[i];
                        sender = (Sender)s;
                        result = trial;
                        break;
                    }
                }
            }
        }

        string who = connection == null ? "" : $"conn={connection.Number} from={(sender == Sender.Client ? "client" : "server")} ";
        if (result.Error != null && FindStatelessReset(packet) is { } knownReset)
        {
            // RFC 9000 §10.3: it looks like a short header packet on purpose; its DCID may even be a known one.
            packetOutput.WriteLine($"    Stateless Reset, not a 1-RTT packet: {knownReset}");
            return shown;
        }

        if (result.Error != null)
        {
            string reset = packet.Length >= StatelessReset.MinimumLength && StatelessReset.TryGetTokenCandidate(packet, out ReadOnlySpan<byte> token)
                ? $"; if a Stateless Reset, token={HexText.Of(token)}"
                : "";
            packetOutput.WriteLine($"    {who}{result.Error}{reset}");
            return shown;
        }

        packetOutput.WriteLine($"    {who}pn={result.PacketNumber} pn_len={result.PacketNumberLength} key_phase={(PacketFirstByte.GetKeyPhase(result.FirstByte) ? 1 : 0)}{ReservedBitsWarning(result.FirstByte)}");
        FrameFormatter.Format(packetOutput, result.Payload.Span, PacketType.OneRtt, KeyLevel.OneRtt, sender, connection!, _options.FrameFilter);
        return shown;
    }

    /// <summary>"conn=N from=... token=..." when the datagram ends with a stateless reset token a connection's endpoint
    /// issued (RFC 9000 §10.3.1: the last 16 bytes), else null.</summary>
    private string? FindStatelessReset(ReadOnlySpan<byte> packet)
    {
        if (!StatelessReset.TryGetTokenCandidate(packet, out ReadOnlySpan<byte> token)) return null;
        for (int i = _connections.Count - 1; i >= 0; i--)
        {
            if (_connections[i].ResetTokenOwner(token) is Sender owner)
            {
                return $"conn={_connections[i].Number} from={(owner == Sender.Client ? "client" : "server")} token={HexText.Of(token)} (issued by the {(owner == Sender.Client ? "client" : "server")})";
            }
        }

        return null;
    }

    private static void FindLongestCidPrefix(ReadOnlySpan<byte> packet, IReadOnlyCollection<string> cids, Sender senderIfMatched, ref int best, ref Sender bestSender)
    {
        ReadOnlySpan<byte> afterFirstByte = packet.Slice(1);
        Span<byte> cid = stackalloc byte[ConnectionIdLimits.MaxInvariantLength];
        foreach (string hex in cids)
        {
            int length = hex.Length / 2;
            if (length <= best || length > afterFirstByte.Length || length > cid.Length) continue;
            Convert.FromHexString(hex, cid.Slice(0, length), out _, out _);
            if (afterFirstByte.StartsWith(cid.Slice(0, length)))
            {
                best = length;
                bestSender = senderIfMatched;
            }
        }
    }

    /// <summary>Removes header protection and decrypts a copy of the packet. RFC 9001 §5.3, §5.4; packet numbers are
    /// decoded against the largest seen in the space (RFC 9000 Appendix A.3). A server's long-header packet that opens
    /// settles the connection's version (RFC 9368: the server answers in the version it chose).</summary>
    private OpenResult TryOpen(ReadOnlySpan<byte> packet, int pnOffset, DumpConnection connection, KeyLevel level, Sender sender, uint version)
    {
        PacketProtectionKeys? keys = connection.Keys(level, sender, _keyLog, version);
        if (keys == null)
        {
            return OpenResult.Failed(level == KeyLevel.Initial ? "(no keys)" : $"(no keys: {level} secrets for this connection are not in the key log)");
        }

        byte[] copy = packet.ToArray();
        if (!keys.TryRemoveHeaderProtection(copy, pnOffset, out int pnLength, out uint truncated))
        {
            return OpenResult.Failed($"error: packet too short to remove header protection ({packet.Length} bytes, packet number at {pnOffset}; RFC 9001 §5.4.2 needs 20 bytes from there)");
        }

        if (level == KeyLevel.OneRtt)
        {
            bool keyPhase = PacketFirstByte.GetKeyPhase(copy[0]);
            keys = connection.OneRttKeysForPhase(sender, keyPhase, _keyLog) ?? keys;
        }

        long packetNumber = PacketNumber.Decode(connection.LargestPacketNumber(level, sender), truncated, pnLength);
        int headerLength = pnOffset + pnLength;
        byte[] unprotected = copy.ToArray();
        int plaintextLength;
        long expected = packetNumber;
        long window = 1L << (8 * pnLength);
        int attempt = 0;
        // A capture that missed packets (a full capture buffer) leaves the largest packet number seen too far behind,
        // and one that holds a packet twice (both legs of a relay) can show a copy far behind it: with the one-byte
        // packet numbers of a busy connection the packet is then a few windows later or earlier than RFC 9000
        // Appendix A.3's guess. Only the AEAD tag can tell: later and earlier windows are tried in turn.
        while (!keys.TryDecrypt(copy, headerLength, (ulong)packetNumber, copy.Length - headerLength, out plaintextLength))
        {
            do
            {
                if (++attempt > 2 * MaxPacketNumberWindowsSkipped)
                {
                    return OpenResult.Failed($"(decryption failed: wrong keys or corrupted packet; pn={expected} if the header was right)");
                }

                long k = (attempt + 1) / 2;
                packetNumber = expected + (attempt % 2 == 1 ? k * window : -k * window);
            }
            while (packetNumber < 0 || packetNumber > PacketNumber.MaxValue);

            unprotected.CopyTo(copy, 0);
        }

        connection.RecordPacketNumber(level, sender, packetNumber);
        if (level != KeyLevel.OneRtt && sender == Sender.Server) connection.Version = version;
        if (level == KeyLevel.OneRtt)
        {
            connection.ConfirmOneRttPhase(sender, PacketFirstByte.GetKeyPhase(copy[0]));
        }

        return new OpenResult(null, copy[0], packetNumber, pnLength, copy.AsMemory(headerLength, plaintextLength), sender);
    }

    private DumpConnection? FindConnection(string dcidHex, out Sender sender)
    {
        for (int i = _connections.Count - 1; i >= 0; i--)
        {
            if (_connections[i].SenderForDcid(dcidHex) is Sender found)
            {
                sender = found;
                return _connections[i];
            }
        }

        sender = Sender.Client;
        return null;
    }

    private bool MatchesCidFilter(ReadOnlySpan<byte> cid) => _options.CidFilter == null || cid.SequenceEqual(_options.CidFilter);

    // RFC 9000 §17.2/§17.3.1: reserved bits MUST be 0 after header protection is removed (PROTOCOL_VIOLATION).
    private static string ReservedBitsWarning(byte firstByte) =>
        PacketFirstByte.ReservedBitsAreZero(firstByte) ? "" : " warning: reserved bits set (PROTOCOL_VIOLATION)";

    private static string PacketTypeName(PacketType type) => type switch
    {
        PacketType.Initial => "Initial",
        PacketType.ZeroRtt => "0-RTT",
        PacketType.Handshake => "Handshake",
        PacketType.Retry => "Retry",
        PacketType.VersionNegotiation => "VersionNegotiation",
        PacketType.OneRtt => "1-RTT",
        _ => "UnknownVersion",
    };

    private static string VersionName(uint version) => version switch
    {
        QuicVersion.V1 => "v1",
        QuicVersion.V2 => "v2",
        _ when QuicVersion.IsReserved(version) => $"0x{version:x8} (reserved)",
        _ => $"0x{version:x8}",
    };

    private readonly record struct OpenResult(string? Error, byte FirstByte, long PacketNumber, int PacketNumberLength, ReadOnlyMemory<byte> Payload, Sender Sender)
    {
        public static OpenResult Failed(string error) => new(error, 0, 0, 0, default, Sender.Client);
    }
}
