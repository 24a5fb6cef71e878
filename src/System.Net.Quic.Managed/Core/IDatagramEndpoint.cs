namespace System.Net.Quic.Managed.Core;

/// <summary>
/// The sans-IO contract between the protocol core and whatever moves datagrams (the UDP driver in Io/,
/// or the simulated network in tests). Everything is single-threaded from the core's point of view:
/// the caller serialises calls. Time is a parameter, in microseconds since an arbitrary epoch.
/// </summary>
internal interface IDatagramEndpoint
{
    /// <summary>
    /// One UDP datagram arrived from <paramref name="remote"/>. The span is the caller's receive buffer and the
    /// core may modify it (header protection and decryption work in place); it is not used after the call returns.
    /// </summary>
    void Receive(Span<byte> datagram, in NetworkAddress remote, long nowUs);

    /// <summary>
    /// <see cref="Receive(Span{byte}, in NetworkAddress, long)"/> with the ECN bits of the datagram's IP header
    /// (RFC 3168: the low two bits of the TOS / Traffic Class byte; 0 when unknown). Endpoints without ECN ignore them.
    /// </summary>
    void Receive(Span<byte> datagram, in NetworkAddress remote, byte ecn, long nowUs) => Receive(datagram, remote, nowUs);

    /// <summary>
    /// <see cref="Receive(Span{byte}, in NetworkAddress, byte, long)"/> for a datagram that arrived on local path
    /// <paramref name="localPath"/> (another socket of the same endpoint: a server's preferred address, a migrating client).
    /// </summary>
    void Receive(Span<byte> datagram, in NetworkAddress remote, byte ecn, byte localPath, long nowUs) => Receive(datagram, remote, ecn, nowUs);

    /// <summary>
    /// Writes the next datagram(s) to send into <paramref name="buffer"/>; the caller keeps calling until it
    /// returns false. Several datagrams to the same address may be written back to back, all of
    /// <see cref="OutgoingDatagram.SegmentSize"/> bytes except the last.
    /// </summary>
    bool TrySend(Span<byte> buffer, long nowUs, out OutgoingDatagram datagram);

    /// <summary>The earliest time <see cref="OnTimeout"/> must be called, or long.MaxValue for none.</summary>
    long NextTimeoutUs { get; }

    /// <summary>Runs the timers due at <paramref name="nowUs"/>.</summary>
    void OnTimeout(long nowUs);

    /// <summary>
    /// True when the endpoint has work for the current step that no timer stands for (a connection waiting for a send
    /// attempt, events waiting to be drained): the caller steps again before it sleeps.
    /// </summary>
    bool HasPendingWork => false;
}
