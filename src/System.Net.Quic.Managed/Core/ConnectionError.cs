using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Core;

/// <summary>
/// Why a connection ended: a transport error, an application close, an idle or handshake timeout, or a stateless
/// reset. <see cref="ByPeer"/> tells who decided. The API maps it to a QuicException.
/// </summary>
internal sealed record ConnectionError(
    ConnectionErrorSource Source,
    ulong Code,
    bool ByPeer,
    string? Reason,
    ulong TriggeringFrameType = 0)
{
    public static ConnectionError Transport(TransportErrorCode code, string? reason, bool byPeer, ulong frameType = 0)
        => new(ConnectionErrorSource.Transport, (ulong)code, byPeer, reason, frameType);

    public static ConnectionError Application(ulong code, string? reason, bool byPeer)
        => new(ConnectionErrorSource.Application, code, byPeer, reason);

    public override string ToString()
        => $"{Source} 0x{Code:x}{(ByPeer ? " (peer)" : "")}{(Reason is null ? "" : ": " + Reason)}";
}
