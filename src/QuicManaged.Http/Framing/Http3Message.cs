using QuicManaged.Http.Qpack;

namespace QuicManaged.Http.Framing;

/// <summary>Field-section checks from RFC 9114 §4.2 and §4.3 that make a message malformed (H3_MESSAGE_ERROR).</summary>
internal static class Http3Message
{
    /// <summary>Validates name case, pseudo-header placement and uniqueness, and the absence of connection-specific fields.</summary>
    public static void Validate(List<HeaderField> fields, bool isRequest)
    {
        bool regularSeen = false;
        for (int i = 0; i < fields.Count; i++)
        {
            string name = fields[i].Name;
            if (name.Length == 0)
            {
                throw new Http3ProtocolException(Http3ErrorCode.MessageError, "empty field name");
            }

            foreach (char c in name)
            {
                // RFC 9114 §4.2: field names containing uppercase characters are malformed.
                if (c is >= 'A' and <= 'Z')
                {
                    throw new Http3ProtocolException(Http3ErrorCode.MessageError, "uppercase field name");
                }
            }

            if (name[0] == ':')
            {
                // RFC 9114 §4.3: pseudo-headers come first, are known for the message kind, and appear once.
                if (regularSeen)
                {
                    throw new Http3ProtocolException(Http3ErrorCode.MessageError, "pseudo-header after a regular field");
                }

                bool known = isRequest ? name is ":method" or ":scheme" or ":authority" or ":path" or ":protocol" : name == ":status";
                if (!known)
                {
                    throw new Http3ProtocolException(Http3ErrorCode.MessageError, $"unexpected pseudo-header {name}");
                }

                for (int j = 0; j < i; j++)
                {
                    if (fields[j].Name == name)
                    {
                        throw new Http3ProtocolException(Http3ErrorCode.MessageError, $"duplicate pseudo-header {name}");
                    }
                }
            }
            else
            {
                regularSeen = true;
                // RFC 9114 §4.2: connection-specific fields make the message malformed; TE may only be "trailers".
                if (name is "connection" or "keep-alive" or "proxy-connection" or "transfer-encoding" or "upgrade"
                    || name == "te" && fields[i].Value != "trailers")
                {
                    throw new Http3ProtocolException(Http3ErrorCode.MessageError, $"connection-specific field {name}");
                }
            }
        }
    }

    public static string? Find(List<HeaderField> fields, string name)
    {
        for (int i = 0; i < fields.Count; i++)
        {
            if (fields[i].Name == name)
            {
                return fields[i].Value;
            }
        }

        return null;
    }

    /// <summary>Decodes a HEADERS payload, turning QPACK errors into exceptions with their codes.</summary>
    public static List<HeaderField> DecodeFieldSection(byte[] payload, long maxFieldSectionSize)
    {
        List<HeaderField> fields = new();
        Http3ErrorCode error = QpackDecoder.Decode(payload, maxFieldSectionSize, fields, out string? reason);
        if (error != Http3ErrorCode.NoError)
        {
            throw new Http3ProtocolException(error, reason ?? "field section rejected");
        }

        return fields;
    }

    /// <summary>
    /// Decodes a HEADERS payload of <paramref name="streamId"/> with the connection's dynamic table when there is one
    /// (waiting while the section is blocked), else as for a 0-capacity table.
    /// </summary>
    public static ValueTask<List<HeaderField>> DecodeFieldSectionAsync(byte[] payload, long maxFieldSectionSize, QpackDecoderSession? session,
        long streamId, CancellationToken cancellationToken)
        => session is null ? ValueTask.FromResult(DecodeFieldSection(payload, maxFieldSectionSize))
            : session.DecodeAsync(payload, streamId, maxFieldSectionSize, cancellationToken);

    public static byte[] EncodeHeadersFrame(List<HeaderField> fields)
    {
        byte[] section = QpackEncoder.Encode(fields);
        return Http3FrameCodec.EncodeFrame(Http3FrameType.Headers, section);
    }

    /// <summary>True for errors RFC 9114 §8 makes connection errors (as opposed to a malformed message on one stream).</summary>
    public static bool IsConnectionError(Http3ErrorCode code) => code is not (Http3ErrorCode.MessageError or Http3ErrorCode.RequestIncomplete or Http3ErrorCode.RequestCancelled or Http3ErrorCode.RequestRejected);
}
