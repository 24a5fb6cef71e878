using System.Globalization;
using QuicManaged.Http.Qpack;

namespace QuicManaged.Http;

/// <summary>The request's field section (RFC 9114 §4.3.1): pseudo-headers first, then lowercase fields, minus connection-specific ones.</summary>
internal static class Http3RequestHeaders
{
    public static List<HeaderField> Build(HttpRequestMessage request)
    {
        Uri uri = request.RequestUri!;
        string authority = request.Headers.Host ?? (uri.IsDefaultPort ? uri.IdnHost : uri.IdnHost + ":" + uri.Port.ToString(CultureInfo.InvariantCulture));
        if (uri.HostNameType == UriHostNameType.IPv6 && request.Headers.Host is null)
        {
            authority = uri.IsDefaultPort ? "[" + uri.IdnHost + "]" : "[" + uri.IdnHost + "]:" + uri.Port.ToString(CultureInfo.InvariantCulture);
        }

        var fields = new List<HeaderField>(8)
        {
            new(":method", request.Method.Method),
            new(":scheme", "https"),
            new(":authority", authority),
            new(":path", string.IsNullOrEmpty(uri.PathAndQuery) ? "/" : uri.PathAndQuery),
        };
        Add(fields, request.Headers);
        if (request.Content is not null)
        {
            // Reading ContentLength computes it when the content knows its length (content-length then goes out).
            _ = request.Content.Headers.ContentLength;
            Add(fields, request.Content.Headers);
        }

        return fields;
    }

    private static void Add(List<HeaderField> fields, System.Net.Http.Headers.HttpHeaders headers)
    {
        foreach (KeyValuePair<string, System.Net.Http.Headers.HeaderStringValues> header in headers.NonValidated)
        {
            string name = header.Key.ToLowerInvariant();
            if (name is "host" or "connection" or "keep-alive" or "proxy-connection" or "transfer-encoding" or "upgrade")
            {
                continue; // RFC 9114 §4.2: connection-specific; :authority carries the host
            }

            foreach (string value in header.Value)
            {
                if (name == "te" && !string.Equals(value, "trailers", StringComparison.OrdinalIgnoreCase))
                {
                    continue;
                }

                fields.Add(new HeaderField(name, value));
            }
        }
    }
}
