namespace System.Net.Quic.Managed.Recovery;

/// <summary>
/// Token-bucket pacer. RFC 9002 §7.7: rate = N * cwnd / smoothed_rtt with N = 1.25 (2 in slow start, where the window
/// doubles each round trip). A burst is <c>burstPackets</c> datagrams, or what the rate sends in
/// <see cref="BurstIntervalUs"/> when that is more, up to <see cref="MaxBurstPackets"/>: Linux TCP sizes its TSO bursts
/// to about a millisecond of its pacing rate the same way. A path whose round trip is shorter than that interval is thus
/// limited by the congestion window, not by timers finer than a scheduler can keep, and the sender hands the I/O layer
/// runs of datagrams it can send with one GSO call. Integer math, allocation free.
/// With a rate source (BBR, which sets its own pacing rate, draft-ietf-ccwg-bbr §4.6.2) the bucket refills at that
/// rate instead and the window/RTT arguments are ignored.
/// </summary>
internal sealed class Pacer
{
    /// <summary>The pacing rate may send this much time's worth of data at once.</summary>
    public const long BurstIntervalUs = 1_000;

    /// <summary>Most datagrams in one burst (a GSO send carries at most 64 segments).</summary>
    public const int MaxBurstPackets = 64;

    private readonly long _capacity;
    private readonly long _maxCapacity;
    private long _tokens;
    private long _lastUpdateUs = long.MinValue;
    private readonly IRateSamplingCongestionController? _rateSource;

    public Pacer(int maxDatagramSize, int burstPackets = 10, IRateSamplingCongestionController? rateSource = null)
    {
        _rateSource = rateSource;
        if (maxDatagramSize <= 0 || burstPackets <= 0)
        {
            throw new ArgumentOutOfRangeException(nameof(maxDatagramSize));
        }

        _capacity = (long)maxDatagramSize * burstPackets;
        _maxCapacity = (long)maxDatagramSize * Math.Max(burstPackets, MaxBurstPackets);
        _tokens = _capacity;
    }

    /// <summary>Bytes that may be sent right now (for tests and diagnostics).</summary>
    public long Tokens => _tokens;

    /// <summary>The smallest burst, in bytes (slow rates).</summary>
    public long BurstBytes => _capacity;

    /// <summary>
    /// Earliest time a packet of <paramref name="bytes"/> may be sent: <paramref name="nowUs"/> when the bucket holds
    /// enough tokens, otherwise when it will have refilled enough at the current rate.
    /// </summary>
    public long GetNextSendTimeUs(int bytes, long nowUs, long congestionWindow, long smoothedRttUs, bool inSlowStart)
    {
        long tokens = TokensAt(nowUs, congestionWindow, smoothedRttUs, inSlowStart);
        long needed = Math.Min(bytes, _capacity);
        if (tokens >= needed)
        {
            return nowUs;
        }

        if (_rateSource is not null)
        {
            long rate = Math.Max(_rateSource.PacingRateBytesPerSecond, 1);
            Int128 wait = ((Int128)(needed - tokens) * 1_000_000 + rate - 1) / rate;
            return wait > long.MaxValue - nowUs ? long.MaxValue : nowUs + (long)wait;
        }

        // time = missing * srtt * den / (cwnd * num), rounded up.
        GetRate(inSlowStart, out long num, out long den);
        Int128 numerator = (Int128)(needed - tokens) * Math.Max(smoothedRttUs, 1) * den;
        Int128 denominator = (Int128)Math.Max(congestionWindow, 1) * num;
        Int128 waitUs = (numerator + denominator - 1) / denominator;
        return waitUs > long.MaxValue - nowUs ? long.MaxValue : nowUs + (long)waitUs;
    }

    /// <summary>Spends tokens for a sent packet (probes included: pacing applies to everything sent).</summary>
    public void OnPacketSent(int bytes, long nowUs, long congestionWindow, long smoothedRttUs, bool inSlowStart)
    {
        _tokens = TokensAt(nowUs, congestionWindow, smoothedRttUs, inSlowStart) - bytes;
        if (_tokens < 0)
        {
            _tokens = 0;
        }

        _lastUpdateUs = nowUs;
    }

    private long TokensAt(long nowUs, long congestionWindow, long smoothedRttUs, bool inSlowStart)
    {
        if (_lastUpdateUs == long.MinValue || nowUs <= _lastUpdateUs)
        {
            return _tokens;
        }

        if (_rateSource is not null)
        {
            long rate = Math.Max(_rateSource.PacingRateBytesPerSecond, 1);
            Int128 byRate = (Int128)(nowUs - _lastUpdateUs) * rate / 1_000_000 + _tokens;
            long rateCapacity = Capacity((Int128)rate * BurstIntervalUs / 1_000_000);
            return byRate >= rateCapacity ? rateCapacity : (long)byRate;
        }

        GetRate(inSlowStart, out long num, out long den);
        Int128 perUsDenominator = (Int128)Math.Max(smoothedRttUs, 1) * den;
        Int128 refill = (Int128)(nowUs - _lastUpdateUs) * Math.Max(congestionWindow, 1) * num / perUsDenominator;
        Int128 total = refill + _tokens;
        long capacity = Capacity((Int128)BurstIntervalUs * Math.Max(congestionWindow, 1) * num / perUsDenominator);
        return total >= capacity ? capacity : (long)total;
    }

    // The burst for a rate that sends `perInterval` bytes in BurstIntervalUs.
    private long Capacity(Int128 perInterval) => perInterval <= _capacity ? _capacity : perInterval >= _maxCapacity ? _maxCapacity : (long)perInterval;

    private static void GetRate(bool inSlowStart, out long numerator, out long denominator)
    {
        if (inSlowStart)
        {
            numerator = 2;
            denominator = 1;
        }
        else
        {
            numerator = 5;
            denominator = 4;
        }
    }
}
