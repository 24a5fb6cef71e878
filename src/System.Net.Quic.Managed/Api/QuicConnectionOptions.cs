using System.Runtime.CompilerServices;
using System.Threading;

namespace System.Net.Quic.Managed;

/// <summary>Options shared by client (outbound) and server (inbound) connections. Mirrors System.Net.Quic.QuicConnectionOptions.</summary>
public abstract class QuicConnectionOptions
{
    private QuicReceiveWindowSizes? _initialReceiveWindowSizes;

    /// <summary>Prevents sub-classing outside this assembly.</summary>
    internal QuicConnectionOptions()
    {
    }

    /// <summary>The number of concurrent bidirectional streams the peer may open. Default 0 for clients, 100 for servers.</summary>
    public int MaxInboundBidirectionalStreams { get; set; }

    /// <summary>The number of concurrent unidirectional streams the peer may open. Default 0 for clients, 10 for servers.</summary>
    public int MaxInboundUnidirectionalStreams { get; set; }

    /// <summary>Idle timeout (max_idle_timeout, RFC 9000 §10.1). <see cref="TimeSpan.Zero"/> means the implementation default (30 s).</summary>
    public TimeSpan IdleTimeout { get; set; } = TimeSpan.Zero;

    /// <summary>
    /// Error code used when a stream's read or write side must be aborted internally (e.g. on dispose before completion).
    /// Mandatory: not setting it fails validation when the connection is established.
    /// </summary>
    public long DefaultStreamErrorCode { get; set; } = -1;

    /// <summary>
    /// Error code used to close the connection when it is disposed without <c>CloseAsync</c>.
    /// Mandatory: not setting it fails validation when the connection is established.
    /// </summary>
    public long DefaultCloseErrorCode { get; set; } = -1;

    /// <summary>The initial receive window sizes for the connection and individual stream types.</summary>
    public QuicReceiveWindowSizes InitialReceiveWindowSizes
    {
        get => _initialReceiveWindowSizes ??= new QuicReceiveWindowSizes();
        set => _initialReceiveWindowSizes = value;
    }

    /// <summary>
    /// Interval at which keep-alive (PING) packets are sent. <see cref="TimeSpan.Zero"/> means the implementation default;
    /// the default <see cref="Timeout.InfiniteTimeSpan"/> means no keep-alive.
    /// </summary>
    public TimeSpan KeepAliveInterval { get; set; } = Timeout.InfiniteTimeSpan;

    /// <summary>
    /// Upper bound on the time the handshake may take; past it the connection fails with <see cref="QuicError.ConnectionTimeout"/>.
    /// <see cref="TimeSpan.Zero"/> means the implementation default (10 s).
    /// </summary>
    public TimeSpan HandshakeTimeout { get; set; } = QuicDefaults.HandshakeTimeout;

    /// <summary>
    /// Called when the peer allows more streams to be opened (a MAX_STREAMS increase). It runs on the connection's
    /// I/O thread: keep it short and do not block.
    /// </summary>
    public Action<QuicConnection, QuicStreamCapacityChangedArgs>? StreamCapacityCallback { get; set; }

    /// <summary>
    /// Extension beyond System.Net.Quic (RFC 9221): the max_datagram_frame_size this side advertises, that is the largest
    /// DATAGRAM frame (type, length and payload) it accepts; 0 (the default) advertises nothing and the peer may not
    /// send datagrams. Sending datagrams depends only on the peer's value (<see cref="QuicConnection.MaxDatagramSize"/>).
    /// 0 to 65535. Managed provider only: above 0 on the msquic provider the connection fails with
    /// <see cref="NotSupportedException"/>.
    /// </summary>
    public int MaxDatagramFrameSize { get; set; }

    /// <summary>
    /// Extension beyond System.Net.Quic (RFC 9221): how many received datagrams wait for
    /// <see cref="QuicConnection.ReceiveDatagramAsync"/>; when full, the oldest is dropped and counted in
    /// <see cref="QuicConnectionStatistics.DatagramsReceiveDropped"/>. 1 to 65536, default 128.
    /// </summary>
    public int DatagramReceiveQueueCapacity { get; set; } = DefaultDatagramReceiveQueueCapacity;

    /// <summary>
    /// Extension beyond System.Net.Quic (RFC 9000 §13.4): send ECT(0)-marked datagrams while the path validates ECN, report the
    /// codepoints received in ACK_ECN frames, and treat CE marks as congestion. Default true. Managed provider only (the
    /// msquic provider keeps msquic's own setting).
    /// </summary>
    public bool EnableEcn { get; set; } = true;

    /// <summary>
    /// Extension beyond System.Net.Quic (RFC 8899, RFC 9000 §14.3): the largest UDP payload path MTU discovery probes for.
    /// 0 (the default): 16,000 when the peer's address is a loopback address (the loopback interface carries 64 KiB,
    /// as TCP's segments there show; four such datagrams fill one segmented send), 1452 on any other path (Ethernet
    /// over IPv6); 1200 turns discovery off. 0 or 1200 to 65527. Datagrams never exceed the peer's max_udp_payload_size
    /// either, and a size the path does not carry is found by the search (lost probes are no congestion signal).
    /// Managed provider only.
    /// </summary>
    public int MaxPathDatagramSize { get; set; }

    /// <summary>
    /// Extension beyond System.Net.Quic: the congestion controller of this side's sending direction: CUBIC (the default),
    /// NewReno or BBR. Each side chooses for what it sends; nothing is negotiated. Managed provider only: the msquic
    /// provider ignores it, as System.Net.Quic has no such setting (msquic chooses per registration/settings, which
    /// System.Net.Quic does not expose). An undefined value fails with <see cref="ArgumentOutOfRangeException"/>.
    /// </summary>
    public QuicCongestionControlAlgorithm CongestionControlAlgorithm { get; set; }

    /// <summary>The value 0 of <see cref="MaxPathDatagramSize"/> stands for on a path to a non-loopback address.</summary>
    internal const int DefaultMaxPathDatagramSize = 1452;

    /// <summary>The value 0 of <see cref="MaxPathDatagramSize"/> stands for on a path to a loopback address.</summary>
    internal const int LoopbackMaxPathDatagramSize = 16_000;

    /// <summary>The ceiling of path MTU discovery towards <paramref name="remote"/> for a configured <see cref="MaxPathDatagramSize"/>.</summary>
    internal static int PathDatagramCeiling(int configured, IPAddress remote)
        => configured != 0 ? configured : IPAddress.IsLoopback(remote) ? LoopbackMaxPathDatagramSize : DefaultMaxPathDatagramSize;

    /// <summary>Default of <see cref="DatagramReceiveQueueCapacity"/>.</summary>
    internal const int DefaultDatagramReceiveQueueCapacity = 128;

    /// <summary>Validates the options synchronously, before any async work, as System.Net.Quic does.</summary>
    internal virtual void Validate(string argumentName)
    {
        ValidateInRange(argumentName, MaxInboundBidirectionalStreams, ushort.MaxValue);
        ValidateInRange(argumentName, MaxInboundUnidirectionalStreams, ushort.MaxValue);
        ValidateTimeSpan(argumentName, IdleTimeout);
        ValidateTimeSpan(argumentName, KeepAliveInterval);
        ValidateInRange(argumentName, DefaultCloseErrorCode, QuicDefaults.MaxErrorCodeValue);
        ValidateInRange(argumentName, DefaultStreamErrorCode, QuicDefaults.MaxErrorCodeValue);
        ValidateTimeSpan(argumentName, HandshakeTimeout);
        _initialReceiveWindowSizes?.Validate(argumentName);
        ValidateInRange(argumentName, MaxDatagramFrameSize, ushort.MaxValue);
        if (DatagramReceiveQueueCapacity is < 1 or > 65536)
        {
            throw new ArgumentOutOfRangeException(argumentName, DatagramReceiveQueueCapacity, "'DatagramReceiveQueueCapacity' should be within [1, 65536] range.");
        }
        if (MaxPathDatagramSize != 0 && MaxPathDatagramSize is < 1200 or > 65527)
        {
            throw new ArgumentOutOfRangeException(argumentName, MaxPathDatagramSize, "'MaxPathDatagramSize' should be 0 (the default) or within [1200, 65527] range.");
        }
        if (!Enum.IsDefined(CongestionControlAlgorithm))
        {
            throw new ArgumentOutOfRangeException(argumentName, CongestionControlAlgorithm, "'CongestionControlAlgorithm' should be Cubic, NewReno or Bbr.");
        }

        static void ValidateInRange(string argumentName, long value, long max, [CallerArgumentExpression(nameof(value))] string? propertyName = null)
        {
            if (value < 0 || value > max)
            {
                throw new ArgumentOutOfRangeException(argumentName, value, $"'{propertyName}' should be within [0, {max}] range.");
            }
        }

        static void ValidateTimeSpan(string argumentName, TimeSpan value, [CallerArgumentExpression(nameof(value))] string? propertyName = null)
        {
            if (value < TimeSpan.Zero && value != Timeout.InfiniteTimeSpan)
            {
                throw new ArgumentOutOfRangeException(argumentName, value, $"'{propertyName}' should be greater than or equal to zero, or Timeout.InfiniteTimeSpan.");
            }
        }
    }

    /// <summary>The effective idle timeout in microseconds (0 = none).</summary>
    internal long IdleTimeoutUs => IdleTimeout == Timeout.InfiniteTimeSpan ? 0
        : (IdleTimeout == TimeSpan.Zero ? QuicDefaults.IdleTimeout : IdleTimeout).Ticks / 10;

    /// <summary>The effective handshake timeout in microseconds.</summary>
    internal long HandshakeTimeoutUs => HandshakeTimeout == Timeout.InfiniteTimeSpan ? long.MaxValue
        : (HandshakeTimeout == TimeSpan.Zero ? QuicDefaults.HandshakeTimeout : HandshakeTimeout).Ticks / 10;
}
