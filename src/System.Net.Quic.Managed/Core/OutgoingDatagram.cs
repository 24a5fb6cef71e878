namespace System.Net.Quic.Managed.Core;

/// <summary>
/// Describes what <see cref="IDatagramEndpoint.TrySend"/> wrote: <see cref="Length"/> bytes to
/// <see cref="Remote"/>, made of datagrams of <see cref="SegmentSize"/> bytes each (the last may be shorter),
/// so the I/O layer can hand the whole run to the kernel at once (UDP GSO) or split it. <see cref="Ecn"/> is the ECN
/// codepoint (RFC 3168: the low two bits of the TOS / Traffic Class byte) every datagram of the run is to be sent with.
/// <see cref="LocalPath"/> names the local socket to send from (0: the endpoint's own; others: see Connection.Migration.cs).
/// </summary>
internal readonly record struct OutgoingDatagram(int Length, NetworkAddress Remote, int SegmentSize, byte Ecn = 0, byte LocalPath = 0);
