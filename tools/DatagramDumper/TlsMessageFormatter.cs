using System.Diagnostics.CodeAnalysis;
using System.Net.Quic.Managed.Wire;
using System.Net.Security;
using System.Text;

namespace QuicManaged.Tools.DatagramDumper;

/// <summary>Describes TLS 1.3 handshake messages carried in CRYPTO frames (RFC 8446 §4, RFC 9001 §4). Every length is
/// checked against the bytes present; a message that does not parse is described up to the problem.</summary>
internal static class TlsMessageFormatter
{
    // RFC 8446 §4.1.3: a ServerHello with this random is a HelloRetryRequest.
    private static readonly byte[] s_helloRetryRequestRandom = Convert.FromHexString(
        "cf21ad74e59a6111be1d8c021e65b891c2a211167abb8c5e079e09e2c8a8339c");

    /// <summary>Writes one complete handshake message (4-byte header included). ClientHello and ServerHello update
    /// <paramref name="connection"/> with the client random and the negotiated cipher suite.</summary>
    public static void Format(TextWriter output, string indent, ReadOnlySpan<byte> message, DumpConnection? connection)
    {
        byte type = message[0];
        ReadOnlySpan<byte> body = message.Slice(4);
        output.WriteLine($"{indent}TLS {TlsNames.HandshakeType(type)} length={body.Length}");
        string inner = indent + "  ";
        string? error = type switch
        {
            1 => FormatHello(output, inner, body, isClient: true, connection),
            2 => FormatHello(output, inner, body, isClient: false, connection),
            4 => FormatNewSessionTicket(output, inner, body),
            8 => FormatEncryptedExtensions(output, inner, body, connection),
            11 => FormatCertificate(output, inner, body),
            15 => FormatCertificateVerify(output, inner, body),
            20 => FormatFinished(output, inner, body),
            _ => null,
        };
        if (error != null)
        {
            output.WriteLine($"{inner}error: {error}");
        }
    }

    private static string? FormatHello(TextWriter output, string indent, ReadOnlySpan<byte> body, bool isClient, DumpConnection? connection)
    {
        var reader = new QuicReader(body);
        if (!reader.TryReadUInt16(out ushort legacyVersion) || !reader.TryReadBytes(32, out ReadOnlySpan<byte> random) ||
            !reader.TryReadByte(out byte sessionIdLength) || !reader.TryReadBytes(sessionIdLength, out ReadOnlySpan<byte> sessionId))
        {
            return "truncated hello";
        }

        bool helloRetry = !isClient && random.SequenceEqual(s_helloRetryRequestRandom);
        output.WriteLine($"{indent}legacy_version=0x{legacyVersion:x4} random={HexText.Of(random)}{(helloRetry ? " (HelloRetryRequest)" : "")}");
        output.WriteLine($"{indent}session_id={HexText.Of(sessionId)}");
        if (isClient)
        {
            if (connection != null) connection.ClientRandom = random.ToArray();
            if (!reader.TryReadUInt16(out ushort suitesLength) || !reader.TryReadBytes(suitesLength, out ReadOnlySpan<byte> suites) ||
                !reader.TryReadByte(out byte compressionLength) || !reader.TryReadBytes(compressionLength, out _))
            {
                return "truncated cipher_suites or compression methods";
            }

            output.WriteLine($"{indent}cipher_suites: {JoinUInt16(suites, TlsNames.CipherSuite)}");
        }
        else
        {
            if (!reader.TryReadUInt16(out ushort suite) || !reader.TryReadByte(out _))
            {
                return "truncated cipher_suite";
            }

            output.WriteLine($"{indent}cipher_suite: {TlsNames.CipherSuite(suite)}");
            if (connection != null && !helloRetry)
            {
                connection.CipherSuite = (TlsCipherSuite)suite;
            }
        }

        if (reader.IsEmpty) return null;
        return FormatExtensions(output, indent, ref reader, isClient ? (byte)1 : (byte)2, null);
    }

    private static string? FormatEncryptedExtensions(TextWriter output, string indent, ReadOnlySpan<byte> body, DumpConnection? connection)
    {
        var reader = new QuicReader(body);
        return FormatExtensions(output, indent, ref reader, 8, connection);
    }

    private static string? FormatExtensions(TextWriter output, string indent, ref QuicReader reader, byte messageType, DumpConnection? server)
    {
        if (!reader.TryReadUInt16(out ushort length) || !reader.TryReadBytes(length, out ReadOnlySpan<byte> extensions))
        {
            return "truncated extensions";
        }

        var list = new QuicReader(extensions);
        while (!list.IsEmpty)
        {
            if (!list.TryReadUInt16(out ushort type) || !list.TryReadUInt16(out ushort dataLength) ||
                !list.TryReadBytes(dataLength, out ReadOnlySpan<byte> data))
            {
                return "truncated extension";
            }

            string name = TlsNames.Extension(type);
            string? value = DescribeExtension(type, data, messageType);
            if (type is 57 or 0xffa5)
            {
                output.WriteLine($"{indent}extension {name} ({type}) length={dataLength}:");
                FormatTransportParameters(output, indent + "  ", data, server);
            }
            else if (value != null)
            {
                output.WriteLine($"{indent}extension {name} ({type}) length={dataLength}: {value}");
            }
            else
            {
                output.WriteLine($"{indent}extension {name} ({type}) length={dataLength}: {HexText.Prefix(data, 32)}");
            }
        }

        return null;
    }

    /// <summary>A one-line value for the extensions worth reading in an interop log; null to fall back to hex.</summary>
    private static string? DescribeExtension(ushort type, ReadOnlySpan<byte> data, byte messageType)
    {
        var reader = new QuicReader(data);
        switch (type)
        {
            case 0: // RFC 6066 §3: ServerNameList; empty in the server's EncryptedExtensions.
            {
                if (data.IsEmpty) return "(acknowledged)";
                if (!reader.TryReadUInt16(out ushort listLength) || !reader.TryReadBytes(listLength, out ReadOnlySpan<byte> names)) return null;
                var sb = new StringBuilder();
                var nameReader = new QuicReader(names);
                while (nameReader.TryReadByte(out byte nameType) && nameReader.TryReadUInt16(out ushort nameLength) &&
                       nameReader.TryReadBytes(nameLength, out ReadOnlySpan<byte> name))
                {
                    if (sb.Length > 0) sb.Append(", ");
                    sb.Append(nameType == 0 ? HexText.Preview(name, 255) : $"type {nameType} {HexText.Of(name)}");
                }

                return sb.ToString();
            }
            case 16: // RFC 7301 §3.1: ProtocolNameList.
            {
                if (!reader.TryReadUInt16(out ushort listLength) || !reader.TryReadBytes(listLength, out ReadOnlySpan<byte> protocols)) return null;
                var sb = new StringBuilder();
                var protocolReader = new QuicReader(protocols);
                while (protocolReader.TryReadByte(out byte protocolLength) && protocolReader.TryReadBytes(protocolLength, out ReadOnlySpan<byte> protocol))
                {
                    if (sb.Length > 0) sb.Append(", ");
                    sb.Append(HexText.Preview(protocol, 255));
                }

                return sb.ToString();
            }
            case 10: // RFC 8446 §4.2.7
            {
                if (!reader.TryReadUInt16(out ushort listLength) || !reader.TryReadBytes(listLength, out ReadOnlySpan<byte> groups)) return null;
                return JoinUInt16(groups, TlsNames.Group);
            }
            case 13: // RFC 8446 §4.2.3
            case 50:
            {
                if (!reader.TryReadUInt16(out ushort listLength) || !reader.TryReadBytes(listLength, out ReadOnlySpan<byte> schemes)) return null;
                return JoinUInt16(schemes, TlsNames.SignatureScheme);
            }
            case 43: // RFC 8446 §4.2.1: a list in ClientHello, one version in ServerHello.
            {
                if (messageType == 1)
                {
                    if (!reader.TryReadByte(out byte listLength) || !reader.TryReadBytes(listLength, out ReadOnlySpan<byte> versions)) return null;
                    return JoinUInt16(versions, TlsNames.Version);
                }

                return reader.TryReadUInt16(out ushort selected) ? TlsNames.Version(selected) : null;
            }
            case 51: // RFC 8446 §4.2.8: client shares; server share; HelloRetryRequest selected group.
            {
                if (messageType == 1)
                {
                    if (!reader.TryReadUInt16(out ushort listLength) || !reader.TryReadBytes(listLength, out ReadOnlySpan<byte> shares)) return null;
                    var sb = new StringBuilder();
                    var shareReader = new QuicReader(shares);
                    while (shareReader.TryReadUInt16(out ushort group) && shareReader.TryReadUInt16(out ushort keyLength) &&
                           shareReader.TryReadBytes(keyLength, out ReadOnlySpan<byte> key))
                    {
                        if (sb.Length > 0) sb.Append(", ");
                        sb.Append($"{TlsNames.Group(group)} ({key.Length}-byte key {HexText.Prefix(key, 8)})");
                    }

                    return sb.Length == 0 ? "(none)" : sb.ToString();
                }

                if (data.Length == 2 && reader.TryReadUInt16(out ushort selectedGroup)) return $"selected group {TlsNames.Group(selectedGroup)}";
                if (reader.TryReadUInt16(out ushort serverGroup) && reader.TryReadUInt16(out ushort serverKeyLength) &&
                    reader.TryReadBytes(serverKeyLength, out ReadOnlySpan<byte> serverKey))
                {
                    return $"{TlsNames.Group(serverGroup)} ({serverKey.Length}-byte key {HexText.Prefix(serverKey, 8)})";
                }

                return null;
            }
            case 45: // RFC 8446 §4.2.9
            {
                if (!reader.TryReadByte(out byte listLength) || !reader.TryReadBytes(listLength, out ReadOnlySpan<byte> modes)) return null;
                var sb = new StringBuilder();
                foreach (byte mode in modes)
                {
                    if (sb.Length > 0) sb.Append(", ");
                    sb.Append(mode switch { 0 => "psk_ke", 1 => "psk_dhe_ke", _ => mode.ToString() });
                }

                return sb.ToString();
            }
            case 28: // RFC 8449 §4
                return reader.TryReadUInt16(out ushort limit) ? limit.ToString() : null;
            case 42: // RFC 8446 §4.2.10: empty, or max_early_data_size in NewSessionTicket.
                return data.IsEmpty ? "(empty)" : reader.TryReadUInt32(out uint maxEarly) ? $"max_early_data_size={maxEarly}" : null;
            default:
                return null;
        }
    }

    /// <summary>RFC 9000 §18: a sequence of (varint id, varint length, value). Integer parameters show their value;
    /// preferred_address its fields, and its connection ID (sequence number 1, RFC 9000 §5.1.1) becomes one of
    /// <paramref name="server"/>'s, so a client that moves there is still attributed (the server's parameters only).</summary>
    private static void FormatTransportParameters(TextWriter output, string indent, ReadOnlySpan<byte> data, DumpConnection? server)
    {
        var reader = new QuicReader(data);
        while (!reader.IsEmpty)
        {
            if (!reader.TryReadVarInt(out ulong id) || !reader.TryReadLengthPrefixed(out ReadOnlySpan<byte> value))
            {
                output.WriteLine($"{indent}error: truncated transport parameter at byte {reader.Position}");
                return;
            }

            string text;
            var valueReader = new QuicReader(value);
            if (QuicNames.IsIntegerTransportParameter(id) && valueReader.TryReadVarInt(out ulong integer) && valueReader.IsEmpty)
            {
                text = integer.ToString();
            }
            else if (value.IsEmpty)
            {
                text = "(empty)";
            }
            else if (id == (ulong)TransportParameterId.PreferredAddress && TryReadPreferredAddress(value, out string? address, out ReadOnlySpan<byte> cid, out ReadOnlySpan<byte> token))
            {
                text = address;
                server?.AddCid(Sender.Server, cid);
                server?.AddResetToken(Sender.Server, token);
            }
            else
            {
                text = HexText.Of(value);
                if (id == (ulong)TransportParameterId.StatelessResetToken && value.Length == 16) server?.AddResetToken(Sender.Server, value);
            }

            output.WriteLine($"{indent}0x{id:x2} {QuicNames.TransportParameter(id)} = {text}");
        }
    }

    /// <summary>RFC 9000 §18.2: IPv4 address and port, IPv6 address and port, connection ID (8-bit length), 16-byte
    /// stateless reset token.</summary>
    private static bool TryReadPreferredAddress(ReadOnlySpan<byte> value, [NotNullWhen(true)] out string? text, out ReadOnlySpan<byte> cid, out ReadOnlySpan<byte> token)
    {
        text = null;
        cid = default;
        token = default;
        var reader = new QuicReader(value);
        if (!reader.TryReadBytes(4, out ReadOnlySpan<byte> v4) || !reader.TryReadUInt16(out ushort v4Port) ||
            !reader.TryReadBytes(16, out ReadOnlySpan<byte> v6) || !reader.TryReadUInt16(out ushort v6Port) ||
            !reader.TryReadByte(out byte cidLength) || cidLength is 0 or > 20 || !reader.TryReadBytes(cidLength, out cid) ||
            !reader.TryReadBytes(16, out token) || !reader.IsEmpty)
        {
            return false;
        }

        text = $"ipv4={new System.Net.IPAddress(v4)}:{v4Port} ipv6=[{new System.Net.IPAddress(v6)}]:{v6Port} cid={HexText.Of(cid)} reset_token={HexText.Of(token)}";
        return true;
    }

    private static string? FormatNewSessionTicket(TextWriter output, string indent, ReadOnlySpan<byte> body)
    {
        // RFC 8446 §4.6.1
        var reader = new QuicReader(body);
        if (!reader.TryReadUInt32(out uint lifetime) || !reader.TryReadUInt32(out uint ageAdd) ||
            !reader.TryReadByte(out byte nonceLength) || !reader.TryReadBytes(nonceLength, out ReadOnlySpan<byte> nonce) ||
            !reader.TryReadUInt16(out ushort ticketLength) || !reader.TryReadBytes(ticketLength, out _))
        {
            return "truncated NewSessionTicket";
        }

        output.WriteLine($"{indent}lifetime={lifetime}s age_add={ageAdd} nonce={HexText.Of(nonce)} ticket={ticketLength} bytes");
        return FormatExtensions(output, indent, ref reader, 4, null);
    }

    private static string? FormatCertificate(TextWriter output, string indent, ReadOnlySpan<byte> body)
    {
        // RFC 8446 §4.4.2: context, then a 24-bit list of (24-bit cert_data, 16-bit extensions).
        var reader = new QuicReader(body);
        if (!reader.TryReadByte(out byte contextLength) || !reader.TryReadBytes(contextLength, out _) ||
            !TryReadUInt24(ref reader, out int listLength) || !reader.TryReadBytes(listLength, out ReadOnlySpan<byte> list))
        {
            return "truncated Certificate";
        }

        var entries = new QuicReader(list);
        int index = 0;
        while (!entries.IsEmpty)
        {
            if (!TryReadUInt24(ref entries, out int certLength) || !entries.TryReadBytes(certLength, out _) ||
                !entries.TryReadUInt16(out ushort extensionsLength) || !entries.TryReadBytes(extensionsLength, out _))
            {
                return "truncated CertificateEntry";
            }

            output.WriteLine($"{indent}certificate[{index++}] {certLength} bytes, extensions {extensionsLength} bytes");
        }

        if (index == 0) output.WriteLine($"{indent}(no certificates)");
        return null;
    }

    private static string? FormatCertificateVerify(TextWriter output, string indent, ReadOnlySpan<byte> body)
    {
        var reader = new QuicReader(body);
        if (!reader.TryReadUInt16(out ushort scheme) || !reader.TryReadUInt16(out ushort signatureLength) || !reader.TryReadBytes(signatureLength, out _))
        {
            return "truncated CertificateVerify";
        }

        output.WriteLine($"{indent}algorithm={TlsNames.SignatureScheme(scheme)} signature={signatureLength} bytes");
        return null;
    }

    private static string? FormatFinished(TextWriter output, string indent, ReadOnlySpan<byte> body)
    {
        output.WriteLine($"{indent}verify_data={HexText.Of(body)}");
        return null;
    }

    private static bool TryReadUInt24(ref QuicReader reader, out int value)
    {
        value = 0;
        if (!reader.TryReadByte(out byte high) || !reader.TryReadUInt16(out ushort low)) return false;
        value = (high << 16) | low;
        return true;
    }

    private static string JoinUInt16(ReadOnlySpan<byte> data, Func<ushort, string> name)
    {
        var sb = new StringBuilder();
        for (int i = 0; i + 1 < data.Length; i += 2)
        {
            if (sb.Length > 0) sb.Append(", ");
            sb.Append(name((ushort)((data[i] << 8) | data[i + 1])));
        }

        if (data.Length % 2 != 0) sb.Append(" (odd length)");
        return sb.Length == 0 ? "(none)" : sb.ToString();
    }
}
