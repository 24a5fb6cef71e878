using System.Collections.Generic;
using System.Net.Quic.Managed.Tls;
using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Core;

/// <summary>
/// Resumption and 0-RTT state of one connection (RFC 9001 §4.6): session tickets received, the transport parameters
/// remembered from the ticket, the largest 0-RTT packet sent, the hold of a client's first flight for early data, and
/// the CRYPTO retransmissions made while 0-RTT was in flight.
/// </summary>
internal sealed class EarlyDataState
{
    public Queue<TlsSessionTicket> SessionTickets = new();

    public TransportParameters? RememberedParameters;

    public long LargestZeroRttPacket = -1;

    public long FirstFlightHoldUntilUs;

    public int CryptoRetransmissions;
}
