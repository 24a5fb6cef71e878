namespace QuicManaged.Http.Qpack;

/// <summary>The QPACK static table, RFC 9204 Appendix A (99 entries, zero-based).</summary>
internal static class QpackStaticTable
{
    public const int Count = 99;

    private static readonly HeaderField[] s_entries =
    [
        new(":authority", ""), // 0
        new(":path", "/"), // 1
        new("age", "0"), // 2
        new("content-disposition", ""), // 3
        new("content-length", "0"), // 4
        new("cookie", ""), // 5
        new("date", ""), // 6
        new("etag", ""), // 7
        new("if-modified-since", ""), // 8
        new("if-none-match", ""), // 9
        new("last-modified", ""), // 10
        new("link", ""), // 11
        new("location", ""), // 12
        new("referer", ""), // 13
        new("set-cookie", ""), // 14
        new(":method", "CONNECT"), // 15
        new(":method", "DELETE"), // 16
        new(":method", "GET"), // 17
        new(":method", "HEAD"), // 18
        new(":method", "OPTIONS"), // 19
        new(":method", "POST"), // 20
        new(":method", "PUT"), // 21
        new(":scheme", "http"), // 22
        new(":scheme", "https"), // 23
        new(":status", "103"), // 24
        new(":status", "200"), // 25
        new(":status", "304"), // 26
        new(":status", "404"), // 27
        new(":status", "503"), // 28
        new("accept", "*/*"), // 29
        new("accept", "application/dns-message"), // 30
        new("accept-encoding", "gzip, deflate, br"), // 31
        new("accept-ranges", "bytes"), // 32
        new("access-control-allow-headers", "cache-control"), // 33
        new("access-control-allow-headers", "content-type"), // 34
        new("access-control-allow-origin", "*"), // 35
        new("cache-control", "max-age=0"), // 36
        new("cache-control", "max-age=2592000"), // 37
        new("cache-control", "max-age=604800"), // 38
        new("cache-control", "no-cache"), // 39
        new("cache-control", "no-store"), // 40
        new("cache-control", "public, max-age=31536000"), // 41
        new("content-encoding", "br"), // 42
        new("content-encoding", "gzip"), // 43
        new("content-type", "application/dns-message"), // 44
        new("content-type", "application/javascript"), // 45
        new("content-type", "application/json"), // 46
        new("content-type", "application/x-www-form-urlencoded"), // 47
        new("content-type", "image/gif"), // 48
        new("content-type", "image/jpeg"), // 49
        new("content-type", "image/png"), // 50
        new("content-type", "text/css"), // 51
        new("content-type", "text/html; charset=utf-8"), // 52
        new("content-type", "text/plain"), // 53
        new("content-type", "text/plain;charset=utf-8"), // 54
        new("range", "bytes=0-"), // 55
        new("strict-transport-security", "max-age=31536000"), // 56
        new("strict-transport-security", "max-age=31536000; includesubdomains"), // 57
        new("strict-transport-security", "max-age=31536000; includesubdomains; preload"), // 58
        new("vary", "accept-encoding"), // 59
        new("vary", "origin"), // 60
        new("x-content-type-options", "nosniff"), // 61
        new("x-xss-protection", "1; mode=block"), // 62
        new(":status", "100"), // 63
        new(":status", "204"), // 64
        new(":status", "206"), // 65
        new(":status", "302"), // 66
        new(":status", "400"), // 67
        new(":status", "403"), // 68
        new(":status", "421"), // 69
        new(":status", "425"), // 70
        new(":status", "500"), // 71
        new("accept-language", ""), // 72
        new("access-control-allow-credentials", "FALSE"), // 73
        new("access-control-allow-credentials", "TRUE"), // 74
        new("access-control-allow-headers", "*"), // 75
        new("access-control-allow-methods", "get"), // 76
        new("access-control-allow-methods", "get, post, options"), // 77
        new("access-control-allow-methods", "options"), // 78
        new("access-control-expose-headers", "content-length"), // 79
        new("access-control-request-headers", "content-type"), // 80
        new("access-control-request-method", "get"), // 81
        new("access-control-request-method", "post"), // 82
        new("alt-svc", "clear"), // 83
        new("authorization", ""), // 84
        new("content-security-policy", "script-src 'none'; object-src 'none'; base-uri 'none'"), // 85
        new("early-data", "1"), // 86
        new("expect-ct", ""), // 87
        new("forwarded", ""), // 88
        new("if-range", ""), // 89
        new("origin", ""), // 90
        new("purpose", "prefetch"), // 91
        new("server", ""), // 92
        new("timing-allow-origin", "*"), // 93
        new("upgrade-insecure-requests", "1"), // 94
        new("user-agent", ""), // 95
        new("x-forwarded-for", ""), // 96
        new("x-frame-options", "deny"), // 97
        new("x-frame-options", "sameorigin"), // 98
    ];

    public static HeaderField Get(int index) => s_entries[index];

    /// <summary>
    /// Finds the best static reference for a field: an exact name+value match (<paramref name="exactIndex"/>)
    /// or, failing that, the first entry with the same name (<paramref name="nameIndex"/>). -1 when absent.
    /// </summary>
    public static void Find(string name, string value, out int exactIndex, out int nameIndex)
    {
        exactIndex = -1;
        nameIndex = -1;
        if (!s_byName.TryGetValue(name, out int[]? indexes))
        {
            return;
        }

        nameIndex = indexes[0];
        foreach (int i in indexes)
        {
            if (string.Equals(s_entries[i].Value, value, StringComparison.Ordinal))
            {
                exactIndex = i;
                return;
            }
        }
    }

    /// <summary>The entries of each name, in index order: a lookup reads one name's entries, not the whole table.</summary>
    private static readonly Dictionary<string, int[]> s_byName = BuildNameIndex();

    private static Dictionary<string, int[]> BuildNameIndex()
    {
        var lists = new Dictionary<string, List<int>>(StringComparer.Ordinal);
        for (int i = 0; i < s_entries.Length; i++)
        {
            if (!lists.TryGetValue(s_entries[i].Name, out List<int>? list))
            {
                lists[s_entries[i].Name] = list = new List<int>();
            }

            list.Add(i);
        }

        var index = new Dictionary<string, int[]>(lists.Count, StringComparer.Ordinal);
        foreach (KeyValuePair<string, List<int>> pair in lists)
        {
            index[pair.Key] = pair.Value.ToArray();
        }

        return index;
    }
}
