using System;
using System.Net;
using Microsoft.Extensions.Logging;

namespace QuicManaged.AspNetCore;

/// <summary>
/// The transport's log messages, all in one class: the logging source generator of the .NET 10 reference packs emits
/// the classes of a compilation in an unstable order (dotnet/runtime#119587), so with messages in several classes
/// two builds of one commit gave different assemblies. One class keeps the build reproducible.
/// </summary>
internal static partial class TransportLog
{
    [LoggerMessage(1, LogLevel.Debug, "QuicManaged listening for HTTP/3 on {EndPoint}.")]
    public static partial void Listening(ILogger logger, EndPoint endPoint);

    [LoggerMessage(2, LogLevel.Warning, "The TLS configuration of {EndPoint} has no server certificate: QUIC handshakes will fail.")]
    public static partial void NoCertificate(ILogger logger, EndPoint endPoint);

    [LoggerMessage(3, LogLevel.Debug, "A QUIC handshake failed; the listener keeps accepting.")]
    public static partial void HandshakeFailed(ILogger logger, Exception exception);

    [LoggerMessage(10, LogLevel.Debug, "Connection {ConnectionId} closed by the peer with application error {ErrorCode}.")]
    public static partial void ConnectionPeerClosed(ILogger logger, string connectionId, long errorCode);

    [LoggerMessage(11, LogLevel.Debug, "Connection {ConnectionId} aborted with error {ErrorCode}: {Reason}")]
    public static partial void ConnectionAbort(ILogger logger, string connectionId, long errorCode, string reason);

    [LoggerMessage(12, LogLevel.Error, "A ConnectionClosed callback threw.")]
    public static partial void ConnectionCallbackFailed(ILogger logger, Exception exception);

    [LoggerMessage(20, LogLevel.Debug, "Stream {ConnectionId} aborted with error {ErrorCode}: {Reason}")]
    public static partial void StreamAbort(ILogger logger, string connectionId, long errorCode, string reason);

    [LoggerMessage(21, LogLevel.Debug, "Stream {ConnectionId}: the output ended with an error.")]
    public static partial void StreamSendFailed(ILogger logger, string connectionId, Exception exception);

    [LoggerMessage(22, LogLevel.Error, "Stream {ConnectionId}: a closed callback threw.")]
    public static partial void StreamCallbackFailed(ILogger logger, string connectionId, Exception exception);

    [LoggerMessage(23, LogLevel.Debug, "Stream {ConnectionId}: the peer ended our {Side} side with application error {ErrorCode}.")]
    public static partial void StreamPeerAbort(ILogger logger, string connectionId, string side, long errorCode);

    [LoggerMessage(24, LogLevel.Debug, "Stream {ConnectionId}: sending ended: {Reason}")]
    public static partial void StreamSendEnded(ILogger logger, string connectionId, string reason);
}
