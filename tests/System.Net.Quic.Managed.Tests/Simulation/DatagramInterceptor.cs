namespace System.Net.Quic.Managed.Tests.Simulation;

/// <summary>
/// Called for every datagram entering a link, before any random impairment. It may edit
/// <see cref="InterceptedDatagram.Data"/> in place (or <see cref="InterceptedDatagram.Resize"/> it) and returns what to do.
/// The <paramref name="datagram"/> object is reused: do not keep it after returning (copy with ToArray()).
/// </summary>
internal delegate InterceptAction DatagramInterceptor(InterceptedDatagram datagram);
