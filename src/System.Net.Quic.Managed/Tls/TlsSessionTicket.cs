using System.Net.Security;

namespace System.Net.Quic.Managed.Tls;

/// <summary>
/// What a client keeps from a NewSessionTicket (RFC 8446 §4.6.1) to resume later. The QUIC core must also remember
/// the server's transport parameters to use 0-RTT (RFC 9001 §4.6.1/§7.4.1); they are stored here for it.
/// </summary>
internal sealed class TlsSessionTicket
{
    public TlsSessionTicket(byte[] ticket, byte[] psk, TlsCipherSuite cipherSuite, uint lifetimeSeconds, uint ageAdd, long receivedUs, bool allowsEarlyData,
        string? serverName, SslApplicationProtocol applicationProtocol, byte[]? peerTransportParameters)
    {
        Ticket = ticket;
        Psk = psk;
        CipherSuite = cipherSuite;
        LifetimeSeconds = lifetimeSeconds;
        AgeAdd = ageAdd;
        ReceivedUs = receivedUs;
        AllowsEarlyData = allowsEarlyData;
        ServerName = serverName;
        ApplicationProtocol = applicationProtocol;
        PeerTransportParameters = peerTransportParameters;
    }

    public byte[] Ticket { get; }

    public byte[] Psk { get; }

    public TlsCipherSuite CipherSuite { get; }

    public uint LifetimeSeconds { get; }

    public uint AgeAdd { get; }

    public long ReceivedUs { get; }

    public bool AllowsEarlyData { get; }

    public string? ServerName { get; }

    public SslApplicationProtocol ApplicationProtocol { get; }

    public byte[]? PeerTransportParameters { get; }

    public bool IsExpired(long nowUs) => nowUs - ReceivedUs >= LifetimeSeconds * 1_000_000L || nowUs < ReceivedUs;
}
