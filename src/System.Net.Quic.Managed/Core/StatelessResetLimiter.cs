namespace System.Net.Quic.Managed.Core;

/// <summary>
/// Rate limit on stateless resets (RFC 9000 §10.3, §21.11): every short-header datagram for an unknown connection ID
/// could otherwise draw a reset, so a flood of them from one source would be answered datagram for datagram. At most
/// <see cref="PerAddressLimit"/> resets go to one IP address (any port) per second and <see cref="GlobalLimit"/> per
/// second in all, as msquic and quinn bound theirs; the rest are dropped (the peer's connection then ends by its idle
/// timeout, as it would if the reset were lost). Addresses share <see cref="Slots"/> counters by hash, so the state is
/// fixed in size whatever the number of sources; two addresses in one slot share its allowance. The counters (12 KiB)
/// are allocated with the first reset, so an endpoint that never sends one (every client endpoint, as a rule) holds
/// none; no allocation after that. The caller supplies the time.
/// </summary>
internal sealed class StatelessResetLimiter
{
    /// <summary>Resets one IP address may get per second.</summary>
    public const int PerAddressLimit = 2;

    /// <summary>Resets the endpoint sends per second, all addresses together.</summary>
    public const int GlobalLimit = 200;

    /// <summary>Counters addresses are hashed onto.</summary>
    public const int Slots = 1024;

    private const long WindowUs = 1_000_000;

    // Far enough in the past that any clock value starts a new window, and no subtraction overflows.
    private const long NoWindow = long.MinValue / 2;

    private long[]? _windowStartUs;
    private int[]? _counts;
    private long _globalWindowStartUs = NoWindow;
    private int _globalCount;

    /// <summary>True once the per-address counters exist (the first reset asked for); tests.</summary>
    internal bool HasCounters => _counts is not null;

    /// <summary>True when a reset may go to <paramref name="remote"/> now (and counts it); false to drop it.</summary>
    public bool TryAcquire(in NetworkAddress remote, long nowUs)
    {
        if (nowUs - _globalWindowStartUs >= WindowUs || nowUs < _globalWindowStartUs)
        {
            _globalWindowStartUs = nowUs;
            _globalCount = 0;
        }
        if (_globalCount >= GlobalLimit) return false;

        if (_counts is null)
        {
            _windowStartUs = new long[Slots];
            Array.Fill(_windowStartUs, NoWindow);
            _counts = new int[Slots];
        }
        long[] windowStartUs = _windowStartUs!;
        int slot = SlotOf(remote);
        if (nowUs - windowStartUs[slot] >= WindowUs || nowUs < windowStartUs[slot])
        {
            windowStartUs[slot] = nowUs;
            _counts[slot] = 0;
        }
        if (_counts[slot] >= PerAddressLimit) return false;

        _counts[slot]++;
        _globalCount++;
        return true;
    }

    private static int SlotOf(in NetworkAddress remote)
    {
        var hash = new HashCode();
        hash.AddBytes(remote.AddressSpan);
        return (int)((uint)hash.ToHashCode() % Slots);
    }
}
