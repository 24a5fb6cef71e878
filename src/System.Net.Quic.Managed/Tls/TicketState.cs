using System.Net.Security;

namespace System.Net.Quic.Managed.Tls;

/// <summary>The server-side state sealed inside a session ticket.</summary>
internal readonly struct TicketState
{
    public TicketState(TlsCipherSuite suite, long issuedUs, uint lifetimeSeconds, uint ageAdd, bool allowsEarlyData, byte[] psk, byte[] alpn)
    {
        Suite = suite;
        IssuedUs = issuedUs;
        LifetimeSeconds = lifetimeSeconds;
        AgeAdd = ageAdd;
        AllowsEarlyData = allowsEarlyData;
        Psk = psk;
        Alpn = alpn;
    }

    public TlsCipherSuite Suite { get; }

    public long IssuedUs { get; }

    public uint LifetimeSeconds { get; }

    public uint AgeAdd { get; }

    public bool AllowsEarlyData { get; }

    public byte[] Psk { get; }

    public byte[] Alpn { get; }
}
