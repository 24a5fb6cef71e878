using System.Net.Sockets;
using System.Runtime.InteropServices;

namespace System.Net.Quic.Managed.Io;

/// <summary>
/// How another thread wakes a driver thread sleeping in its wait: on Linux with the native poll, an eventfd (an 8-byte
/// write; the app thread that posted work does not pay for a datagram through the loopback stack); on the portable path,
/// an empty datagram to a loopback socket of the driver's own, which Socket.Select waits on.
/// </summary>
internal sealed class WakeSignal : IDisposable
{
    private readonly SafeHandle? _eventFd;
    private readonly Socket? _receiver;
    private readonly Socket? _sender;
    private readonly SocketAddress? _target;
    private readonly byte[] _drain = new byte[16];

    private WakeSignal(SafeHandle eventFd) => _eventFd = eventFd;

    private WakeSignal(Socket receiver, Socket sender, SocketAddress target)
    {
        _receiver = receiver;
        _sender = sender;
        _target = target;
    }

    /// <summary>Timers due sooner than this are not slept for: the poll looks and comes back (see <see cref="PollTimeoutUs"/>).</summary>
    public const int SpinBelowUs = 100;

    /// <summary>
    /// The timeout a driver passes to the native poll for a timer due in <paramref name="waitUs"/> microseconds: within
    /// <see cref="SpinBelowUs"/> it does not sleep (0: look and come back), beyond that it sleeps to the microsecond.
    /// Driver threads run with a minimal timer slack (<see cref="LinuxUdpInterop.TrySetMinimalTimerSlack"/>), so such a
    /// sleep ends a scheduler wake-up after its timeout rather than up to the default 50 us slack later; spinning
    /// through a millisecond instead, as an ACK delay would make it, costs a core.
    /// </summary>
    public static int PollTimeoutUs(int waitUs) => waitUs < 0 ? -1 : waitUs < SpinBelowUs ? 0 : waitUs;

    /// <summary>An eventfd when <paramref name="nativePoll"/> (the waiter uses <see cref="LinuxUdpInterop.Poll"/>) and the
    /// kernel has one; otherwise a loopback socket pair.</summary>
    public static WakeSignal Create(bool nativePoll)
    {
        if (nativePoll && LinuxUdpInterop.TryCreateEventFd() is { } eventFd) return new WakeSignal(eventFd);
        var receiver = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
        receiver.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        receiver.Blocking = false;
        var sender = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
        return new WakeSignal(receiver, sender, ((IPEndPoint)receiver.LocalEndPoint!).Serialize());
    }

    /// <summary>True for the eventfd (only a native poll can wait on it).</summary>
    public bool IsEventFd => _eventFd is not null;

    /// <summary>The descriptor a native poll waits on.</summary>
    public SafeHandle Handle => _eventFd ?? _receiver!.SafeHandle;

    /// <summary>The socket Socket.Select waits on (null for an eventfd).</summary>
    public Socket? Socket => _receiver;

    /// <summary>Any thread: wakes the waiter (a signal after disposal is ignored).</summary>
    public void Signal()
    {
        try
        {
            if (_eventFd is not null) LinuxUdpInterop.SignalEventFd(_eventFd);
            else _sender!.SendTo(ReadOnlySpan<byte>.Empty, SocketFlags.None, _target!);
        }
        catch (SocketException)
        {
            // The waiter also wakes on its timers; a lost wake-up only adds latency.
        }
        catch (ObjectDisposedException)
        {
            // The waiter is gone: nothing to wake.
        }
    }

    /// <summary>The waiting thread: takes every pending wake-up (non-blocking).</summary>
    public void Drain()
    {
        if (_eventFd is not null)
        {
            LinuxUdpInterop.DrainEventFd(_eventFd);
            return;
        }
        while (_receiver!.Receive(_drain, 0, _drain.Length, SocketFlags.None, out SocketError error) >= 0 && error == SocketError.Success)
        {
        }
    }

    public void Dispose()
    {
        _eventFd?.Dispose();
        _receiver?.Dispose();
        _sender?.Dispose();
    }
}
