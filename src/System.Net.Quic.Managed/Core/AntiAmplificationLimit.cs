namespace System.Net.Quic.Managed.Core;

/// <summary>
/// Before a peer's address is validated, an endpoint may send at most three times the bytes it
/// received from that address (RFC 9000 §8, §8.1). Counts UDP payload bytes (whole datagrams).
/// </summary>
internal struct AntiAmplificationLimit
{
    /// <summary>The factor of RFC 9000 §8.</summary>
    public const int Factor = 3;

    private long _received;
    private long _sent;

    /// <summary>True once the address is validated: no limit applies any more.</summary>
    public bool IsAddressValidated { get; private set; }

    public void OnAddressValidated() => IsAddressValidated = true;

    public void OnDatagramReceived(int bytes) => _received += bytes;

    public void OnDatagramSent(int bytes) => _sent += bytes;

    /// <summary>Bytes that may still be sent now (long.MaxValue once validated).</summary>
    public readonly long Remaining => IsAddressValidated ? long.MaxValue : Math.Max(0, Factor * _received - _sent);

    /// <summary>True when a datagram of <paramref name="bytes"/> fits the budget.</summary>
    public readonly bool CanSend(int bytes) => Remaining >= bytes;

    /// <summary>True when the budget is used up, which matters for timers (RFC 9002 §6.2.2.1: no PTO armed then).</summary>
    public readonly bool IsBlocked => !IsAddressValidated && Remaining == 0;
}
