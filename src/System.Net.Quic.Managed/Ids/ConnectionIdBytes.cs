using System.Runtime.CompilerServices;

namespace System.Net.Quic.Managed.Ids;

/// <summary>Inline storage for a connection ID: at most 20 bytes in QUIC v1 and v2 (RFC 9000 §17.2).</summary>
[InlineArray(ConnectionId.MaxLength)]
internal struct ConnectionIdBytes
{
    private byte _element0;
}
