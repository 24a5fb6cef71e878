using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Streams;

/// <summary>
/// The receive limit we advertise for one stream (MAX_STREAM_DATA) or the connection (MAX_DATA). RFC 9000 §4.1, §4.2.
/// Tracks the highest offset received (credit the peer used), bytes the application consumed, and decides when to
/// advertise a new limit: once the application consumed half the window. The window auto-tunes like quic-go and
/// ngtcp2: when half a window was consumed in less than about two round trips, the window doubles, up to a maximum,
/// so a fast reader is not throttled by a small initial window while a slow one never gets a large buffer.
/// </summary>
internal sealed class ReceiveFlowWindow
{
    private long _epochStartUs = -1;
    private long _epochStartConsumed;
    private bool _updateForced;

    public ReceiveFlowWindow(long initialWindow, long maxWindow)
    {
        if (initialWindow < 0 || maxWindow < initialWindow)
        {
            throw new ArgumentOutOfRangeException(nameof(initialWindow));
        }

        Window = initialWindow;
        MaxWindow = maxWindow;
        MaxData = initialWindow;
    }

    /// <summary>As new, for a recycled stream (see <see cref="StreamTable"/>'s pool).</summary>
    public void Reuse(long initialWindow, long maxWindow)
    {
        _epochStartUs = -1;
        _epochStartConsumed = 0;
        _updateForced = false;
        Window = initialWindow;
        MaxWindow = maxWindow;
        MaxData = initialWindow;
        Received = 0;
        Consumed = 0;
    }

    /// <summary>The limit advertised to the peer (an absolute offset / byte count).</summary>
    public long MaxData { get; private set; }

    /// <summary>The current window size (grows by auto-tuning).</summary>
    public long Window { get; private set; }

    /// <summary>Largest window auto-tuning may reach.</summary>
    public long MaxWindow { get; private set; }

    /// <summary>Credit used by the peer: for a stream the highest offset received, for the connection the sum.</summary>
    public long Received { get; private set; }

    /// <summary>Bytes the application consumed (or that were discarded and so released).</summary>
    public long Consumed { get; private set; }

    /// <summary>Whether the peer may use credit up to <paramref name="highestOffset"/>.</summary>
    public bool CanReceive(long highestOffset) => highestOffset <= MaxData;

    /// <summary>Records credit used up to <paramref name="highestOffset"/>; beyond the advertised limit is FLOW_CONTROL_ERROR. RFC 9000 §4.1.</summary>
    public TransportErrorCode OnReceived(long highestOffset)
    {
        if (highestOffset > MaxData)
        {
            return TransportErrorCode.FlowControlError;
        }

        if (highestOffset > Received)
        {
            Received = highestOffset;
        }

        return TransportErrorCode.NoError;
    }

    /// <summary>Connection-level form: <paramref name="delta"/> more bytes of credit were used by some stream.</summary>
    public TransportErrorCode OnReceivedDelta(long delta) => delta <= 0 ? TransportErrorCode.NoError : OnReceived(Received + delta);

    /// <summary>The application consumed (or the stack discarded) <paramref name="bytes"/> more bytes.</summary>
    public void OnConsumed(long bytes)
    {
        if (bytes < 0 || Consumed + bytes > Received)
        {
            throw new InvalidOperationException("consumed more than received");
        }

        Consumed += bytes;
    }

    /// <summary>
    /// A new limit is worth advertising: the application consumed more than half of the window since the last
    /// advertisement, so the remaining credit dropped below half a window.
    /// </summary>
    public bool ShouldSendUpdate => MaxData - Consumed < Window - Window / 2 && MaxData < Consumed + Window;

    /// <summary>An update is due: <see cref="ShouldSendUpdate"/>, or a lost or solicited one must be repeated.</summary>
    public bool NeedsUpdate => _updateForced || ShouldSendUpdate;

    /// <summary>A MAX_DATA / MAX_STREAM_DATA carrying <paramref name="maxData"/> was lost: repeat it if still the latest.</summary>
    public void OnUpdateLost(long maxData)
    {
        if (maxData == MaxData)
        {
            _updateForced = true;
        }
    }

    /// <summary>
    /// The peer says it is blocked (DATA_BLOCKED / STREAM_DATA_BLOCKED) at <paramref name="limit"/>: if that is our
    /// current limit, our update may have been lost, so advertise again (RFC 9000 §4.1).
    /// </summary>
    public void OnPeerBlocked(long limit)
    {
        if (limit >= MaxData)
        {
            _updateForced = true;
        }
    }

    /// <summary>
    /// Raises <see cref="MaxData"/> to <see cref="Consumed"/> + window, first auto-tuning the window, and returns the
    /// new limit to advertise. Auto-tuning (quic-go flowcontrol.maybeAdjustWindowSize): if the bytes consumed since
    /// the previous update, as a fraction f of the window, took less than 4·f·RTT (≈2 RTTs for half a window), the
    /// window doubles up to <see cref="MaxWindow"/>.
    /// </summary>
    public long CommitUpdate(long nowUs, long smoothedRttUs)
    {
        _updateForced = false;
        long consumedInEpoch = Consumed - _epochStartConsumed;
        if (_epochStartUs >= 0 && smoothedRttUs > 0 && Window > 0 && consumedInEpoch > Window / 2)
        {
            // elapsed < 4 * (consumed / window) * rtt, kept in integers: elapsed * window < 4 * consumed * rtt.
            Int128 lhs = (Int128)(nowUs - _epochStartUs) * Window;
            Int128 rhs = (Int128)4 * consumedInEpoch * smoothedRttUs;
            if (lhs < rhs)
            {
                Window = Math.Min(Window * 2, MaxWindow);
            }
        }

        _epochStartUs = nowUs;
        _epochStartConsumed = Consumed;
        long next = Math.Min(Consumed + Window, StreamId.MaxValue);
        if (next > MaxData)
        {
            MaxData = next;
        }

        return MaxData;
    }

    /// <summary>
    /// Grows the window to at least <paramref name="window"/> (bounded by <see cref="MaxWindow"/>): the connection
    /// window follows a stream window that auto-tuned, so it does not become the bottleneck.
    /// </summary>
    public void EnsureMinimumWindow(long window)
    {
        if (window > Window)
        {
            Window = Math.Min(window, MaxWindow);
        }
    }

    /// <summary>Starts the auto-tuning clock (for example when the first limit is advertised in transport parameters).</summary>
    public void StartEpoch(long nowUs)
    {
        _epochStartUs = nowUs;
        _epochStartConsumed = Consumed;
    }
}
