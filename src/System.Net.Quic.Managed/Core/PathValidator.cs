using System.Buffers.Binary;
using System.Net.Quic.Managed.Crypto;

namespace System.Net.Quic.Managed.Core;

/// <summary>
/// Validation of one path with PATH_CHALLENGE / PATH_RESPONSE (RFC 9000 §8.2). A lost challenge
/// is not retransmitted: a new one with fresh data is sent (§8.2.1), and a response matching any
/// outstanding challenge validates the path. Validation is abandoned after three times the larger
/// of the current PTO and the new path's initial PTO (§8.2.4).
/// </summary>
internal sealed class PathValidator
{
    /// <summary>Challenges remembered at once; older data is forgotten (a response to it then fails to match).</summary>
    public const int MaxOutstanding = 4;

    private readonly IRandomSource _random;
    private readonly ulong[] _outstanding = new ulong[MaxOutstanding];
    private int _count;
    private int _next;
    private long _startedUs;
    private long _timeoutUs;

    public PathValidator(IRandomSource random) => _random = random;

    public PathValidationState State { get; private set; } = PathValidationState.Idle;

    /// <summary>
    /// The PTO of a path nothing is known about yet (RFC 9002 §6.2.2 with kInitialRtt = 333 ms: 333 + 4 × 166.5 ms,
    /// plus a 25 ms max_ack_delay), the floor of the abandon deadline (RFC 9000 §8.2.4).
    /// </summary>
    public const long NewPathPtoUs = 1_024_000;

    /// <summary>
    /// Begins validation at <paramref name="nowUs"/>. RFC 9000 §8.2.4: the abandon deadline is three times the larger of
    /// the current PTO (<paramref name="ptoUs"/>) and a new path's PTO; three times the current one alone gave up after
    /// ~60 ms on a 20 ms path, before a challenge lost twice (or held back by the new path's amplification limit) could
    /// get through.
    /// </summary>
    public void Start(long nowUs, long ptoUs)
    {
        _count = 0;
        _next = 0;
        _startedUs = nowUs;
        _timeoutUs = 3 * Math.Max(ptoUs, NewPathPtoUs);
        State = PathValidationState.Pending;
    }

    /// <summary>Makes the data for a new PATH_CHALLENGE frame (8 bytes) and remembers it.</summary>
    public void CreateChallenge(Span<byte> data)
    {
        if (State != PathValidationState.Pending) throw new InvalidOperationException("No validation in progress.");
        _random.Fill(data.Slice(0, 8));
        _outstanding[_next] = BinaryPrimitives.ReadUInt64BigEndian(data);
        _next = (_next + 1) % MaxOutstanding;
        if (_count < MaxOutstanding) _count++;
    }

    /// <summary>A PATH_RESPONSE arrived. Returns true when it validates the path.</summary>
    public bool OnResponse(ReadOnlySpan<byte> data)
    {
        if (State != PathValidationState.Pending || data.Length != 8) return false;
        ulong value = BinaryPrimitives.ReadUInt64BigEndian(data);
        for (int i = 0; i < _count; i++)
        {
            if (_outstanding[i] != value) continue;
            State = PathValidationState.Validated;
            return true;
        }
        return false;
    }

    /// <summary>When validation is abandoned, or long.MaxValue when none is pending.</summary>
    public long DeadlineUs => State == PathValidationState.Pending ? _startedUs + _timeoutUs : long.MaxValue;

    /// <summary>Marks the validation failed when its deadline passed. Returns true when that happened now.</summary>
    public bool OnTimeout(long nowUs)
    {
        if (State != PathValidationState.Pending || nowUs < DeadlineUs) return false;
        State = PathValidationState.Failed;
        return true;
    }
}
