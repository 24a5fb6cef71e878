using System.Net.Quic.Managed.Diagnostics;
using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Core;

internal sealed partial class Connection
{
    /// <summary>The application closes the connection with its own error code (CONNECTION_CLOSE type 0x1d, RFC 9000 §10.2).</summary>
    public void Close(ulong applicationErrorCode, string? reason, long nowUs)
    {
        RequestService();
        if (_close.Phase != ConnectionPhase.Open) return;
        Error = ConnectionError.Application(applicationErrorCode, reason, byPeer: false);
        EnterClosing(nowUs);
    }

    /// <summary>A protocol error: close with a transport error code (CONNECTION_CLOSE type 0x1c).</summary>
    private void CloseWithError(TransportErrorCode code, string? reason, long nowUs, ulong frameType = 0)
    {
        if (_close.Phase != ConnectionPhase.Open) return;
        Error = ConnectionError.Transport(code, reason, byPeer: false, frameType);
        if (!_handshake.IsCompleted) OnHandshakeFailed();
        EnterClosing(nowUs);
    }

    private void EnterClosing(long nowUs)
    {
        _close.EnterClosing(nowUs, _recovery.PtoDurationUs);
        _closeFramePending = true;
        LogClosed(byPeer: false);
        Emit(ConnectionEventKind.Closed);
    }

    /// <summary>The peer closed (or reset) the connection: nothing more is sent (RFC 9000 §10.2.2).</summary>
    private void EnterDraining(ConnectionError error, long nowUs)
    {
        if (_close.Phase is ConnectionPhase.Draining or ConnectionPhase.Closed) return;
        bool wasOpen = _close.Phase == ConnectionPhase.Open;
        Error ??= error;
        if (wasOpen && !_handshake.IsCompleted) OnHandshakeFailed();
        _close.EnterDraining(nowUs, _recovery.PtoDurationUs);
        if (wasOpen)
        {
            LogClosed(byPeer: true);
            Emit(ConnectionEventKind.Closed);
        }
    }

    private void LogClosed(bool byPeer)
    {
        if (Error is not null) _trace.Tracer?.ConnectionClosed(_trace.LastEventUs, byPeer, Error.Source == ConnectionErrorSource.Application, Error.Code, Error.Reason);
        if (!QuicEventSource.Log.InformationalEnabled || Error is null) return;
        QuicEventSource.Log.ConnectionClosed(EventConnectionId, (long)Error.Code, Error.Source == ConnectionErrorSource.Application, byPeer, Error.Reason ?? "");
    }

    private void ReportPathSample()
    {
        long rtt = _recovery.Rtt.HasSample ? _recovery.Rtt.SmoothedRttUs : 0;
        long cwnd = _recovery.CongestionController.CongestionWindow;
        if (rtt == _trace.LastReportedRttUs && cwnd == _trace.LastReportedCwnd) return;
        if (rtt == 0) return;
        QuicTelemetryCounters.UpdatePathSample(_trace.LastReportedRttUs, _trace.LastReportedCwnd, rtt, cwnd);
        _trace.LastReportedRttUs = rtt;
        _trace.LastReportedCwnd = cwnd;
    }
}
