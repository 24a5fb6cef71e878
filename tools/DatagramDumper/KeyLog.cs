namespace QuicManaged.Tools.DatagramDumper;

/// <summary>An NSS key log (SSLKEYLOGFILE format: "LABEL client_random_hex secret_hex" per line), keyed by the
/// ClientHello random. Only the TLS 1.3 labels QUIC needs are kept; malformed lines are ignored.</summary>
internal sealed class KeyLog
{
    public const string ClientEarlyTrafficSecret = "CLIENT_EARLY_TRAFFIC_SECRET";
    public const string ClientHandshakeTrafficSecret = "CLIENT_HANDSHAKE_TRAFFIC_SECRET";
    public const string ServerHandshakeTrafficSecret = "SERVER_HANDSHAKE_TRAFFIC_SECRET";
    public const string ClientTrafficSecret0 = "CLIENT_TRAFFIC_SECRET_0";
    public const string ServerTrafficSecret0 = "SERVER_TRAFFIC_SECRET_0";

    private readonly Dictionary<string, Dictionary<string, byte[]>> _byClientRandom = new(StringComparer.Ordinal);

    public int ClientRandomCount => _byClientRandom.Count;

    public static KeyLog Parse(string text)
    {
        var log = new KeyLog();
        foreach (string rawLine in text.Split('\n'))
        {
            string line = rawLine.Trim();
            if (line.Length == 0 || line[0] == '#') continue;
            string[] parts = line.Split(' ', StringSplitOptions.RemoveEmptyEntries);
            if (parts.Length != 3 || !IsKnownLabel(parts[0])) continue;
            if (!HexText.TryParse(parts[1], out byte[] random) || random.Length != 32) continue;
            if (!HexText.TryParse(parts[2], out byte[] secret) || secret.Length == 0) continue;
            string key = Convert.ToHexStringLower(random);
            if (!log._byClientRandom.TryGetValue(key, out Dictionary<string, byte[]>? secrets))
            {
                secrets = new Dictionary<string, byte[]>(StringComparer.Ordinal);
                log._byClientRandom.Add(key, secrets);
            }

            secrets[parts[0]] = secret;
        }

        return log;
    }

    /// <summary>The secret for <paramref name="label"/>; when <paramref name="clientRandom"/> is unknown (the
    /// ClientHello was not captured) and the log holds a single connection, that connection's secret.</summary>
    public byte[]? Find(ReadOnlySpan<byte> clientRandom, string label)
    {
        Dictionary<string, byte[]>? secrets = null;
        if (!clientRandom.IsEmpty)
        {
            _byClientRandom.TryGetValue(Convert.ToHexStringLower(clientRandom), out secrets);
        }
        else if (_byClientRandom.Count == 1)
        {
            foreach (Dictionary<string, byte[]> only in _byClientRandom.Values) secrets = only;
        }

        return secrets != null && secrets.TryGetValue(label, out byte[]? secret) ? secret : null;
    }

    private static bool IsKnownLabel(string label) => label is ClientEarlyTrafficSecret or ClientHandshakeTrafficSecret or
        ServerHandshakeTrafficSecret or ClientTrafficSecret0 or ServerTrafficSecret0;
}
