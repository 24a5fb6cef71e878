using System.Buffers.Binary;
using System.Net.Sockets;
using System.Runtime.InteropServices;

namespace System.Net.Quic.Managed.Io;

/// <summary>
/// The only native calls of the library: Linux recvmmsg(2), setsockopt(2), ppoll(2), epoll(7) and eventfd(2) (with read/write/close
/// on it) from libc, through source-generated
/// [LibraryImport] stubs (no runtime marshalling, AOT-safe). The structures follow the kernel ABI (struct user_msghdr,
/// mmsghdr, iovec, cmsghdr) with pointer-sized fields as nint/nuint, so one layout serves every 32- and 64-bit Linux.
/// Constants and errno values are the asm-generic ones every architecture .NET runs on uses. Everything here is
/// called only after <see cref="OperatingSystem.IsLinux"/>; any failure to load or call makes the driver use the
/// portable Socket path instead (see <see cref="UdpReceiver.Create"/>).
/// </summary>
internal static unsafe partial class LinuxUdpInterop
{
    private const string Libc = "libc";

    public const int SolUdp = 17;

    /// <summary>UDP_GRO (Linux 5.0): deliver coalesced same-size datagrams in one buffer plus a cmsg with the segment size.</summary>
    public const int UdpGro = 104;

    public const int MsgDontWait = 0x40;
    public const int MsgTrunc = 0x20;
    public const int MsgCTrunc = 0x08;

    public const int AfInet = 2;
    public const int AfInet6 = 10;

    public const int EIntr = 4;
    public const int EAgain = 11;
    public const int ENoSys = 38;
    public const int ENetUnreach = 101;
    public const int ENoProtoOpt = 92;
    public const int EOpNotSupp = 95;
    public const int EConnRefused = 111;
    public const int EHostUnreach = 113;
    public const int EMsgSize = 90;
    public const int ENoBufs = 105;

    /// <summary>struct iovec.</summary>
    [StructLayout(LayoutKind.Sequential)]
    public struct IoVec
    {
        public byte* Base;
        public nuint Length;
    }

    /// <summary>struct user_msghdr (glibc's and musl's struct msghdr have the same layout on little-endian).</summary>
    [StructLayout(LayoutKind.Sequential)]
    public struct MsgHdr
    {
        public byte* Name;
        public uint NameLength;
        public IoVec* Iov;
        public nuint IovLength;
        public byte* Control;
        public nuint ControlLength;
        public int Flags;
    }

    /// <summary>struct mmsghdr: the header and the byte count the kernel received into it.</summary>
    [StructLayout(LayoutKind.Sequential)]
    public struct MMsgHdr
    {
        public MsgHdr Header;
        public uint Length;
    }

    /// <summary>struct pollfd.</summary>
    [StructLayout(LayoutKind.Sequential)]
    public struct PollFd
    {
        public int Fd;
        public short Events;
        public short ReturnedEvents;
    }

    private const short PollIn = 0x001;
    private const short PollErr = 0x008;
    private const short PollHup = 0x010;

    /// <summary>struct timespec (time_t and long are pointer-sized on every Linux ABI .NET runs on).</summary>
    [StructLayout(LayoutKind.Sequential)]
    private struct TimeSpec
    {
        public nint Seconds;
        public nint Nanoseconds;
    }

    [LibraryImport(Libc, EntryPoint = "ppoll", SetLastError = true)]
    private static partial int PPollNative(PollFd* fds, nuint count, TimeSpec* timeout, void* signalMask);

    /// <summary>poll(2) with a microsecond timeout (ppoll(2)): a timer due in 300 us sleeps 300 us instead of the zero-wait
    /// spin a millisecond timeout truncated to 0 gives. Negative: forever.</summary>
    private static int PollMicroseconds(PollFd* fds, nuint count, int timeoutUs)
    {
        if (timeoutUs < 0) return PPollNative(fds, count, null, null);
        TimeSpec timeout = new() { Seconds = timeoutUs / 1_000_000, Nanoseconds = timeoutUs % 1_000_000 * 1000 };
        return PPollNative(fds, count, &timeout, null);
    }

    private const int PrSetTimerSlack = 29; // PR_SET_TIMERSLACK
    private const int PrGetTimerSlack = 30; // PR_GET_TIMERSLACK

    [LibraryImport(Libc, EntryPoint = "prctl", SetLastError = true)]
    private static partial int PrctlNative(int option, nuint arg2, nuint arg3, nuint arg4, nuint arg5);

    /// <summary>
    /// prctl(PR_SET_TIMERSLACK, 1): the calling thread's timed waits end within a nanosecond of their timeout plus the
    /// scheduler's wake-up latency, instead of up to the default 50 us later (the kernel may defer a timer by its slack
    /// to batch wake-ups). False off Linux or where libc or the call is missing; the thread then keeps its slack.
    /// </summary>
    public static bool TrySetMinimalTimerSlack()
    {
        if (!OperatingSystem.IsLinux()) return false;
        try
        {
            return PrctlNative(PrSetTimerSlack, 1, 0, 0, 0) == 0;
        }
        catch (Exception e) when (e is DllNotFoundException or EntryPointNotFoundException)
        {
            return false;
        }
    }

    /// <summary>The calling thread's timer slack in nanoseconds (prctl(PR_GET_TIMERSLACK)), -1 where it cannot be read.</summary>
    public static long GetTimerSlackNs()
    {
        try
        {
            return PrctlNative(PrGetTimerSlack, 0, 0, 0, 0);
        }
        catch (Exception e) when (e is DllNotFoundException or EntryPointNotFoundException)
        {
            return -1;
        }
    }

    private const int EfdNonBlock = 0x800;   // O_NONBLOCK
    private const int EfdCloexec = 0x80000;  // O_CLOEXEC

    [LibraryImport(Libc, EntryPoint = "eventfd", SetLastError = true)]
    private static partial int EventFdNative(uint initialValue, int flags);

    [LibraryImport(Libc, EntryPoint = "write", SetLastError = true)]
    private static partial nint WriteNative(SafeHandle fd, void* buffer, nuint count);

    [LibraryImport(Libc, EntryPoint = "read", SetLastError = true)]
    private static partial nint ReadNative(SafeHandle fd, void* buffer, nuint count);

    [LibraryImport(Libc, EntryPoint = "close")]
    private static partial int CloseNative(nint fd);

    /// <summary>An eventfd(2) descriptor, closed once no call is using it (the marshaller holds a reference per call).</summary>
    private sealed class EventFdHandle : SafeHandle
    {
        public EventFdHandle(int fd)
            : base(-1, ownsHandle: true) => SetHandle(fd);

        public override bool IsInvalid => handle == -1;

        protected override bool ReleaseHandle() => CloseNative(handle) == 0;
    }

    /// <summary>A non-blocking eventfd(2) for waking a poll, or null when the kernel or libc does not provide one.</summary>
    public static SafeHandle? TryCreateEventFd()
    {
        try
        {
            int fd = EventFdNative(0, EfdNonBlock | EfdCloexec);
            return fd < 0 ? null : new EventFdHandle(fd);
        }
        catch (Exception e) when (e is DllNotFoundException or EntryPointNotFoundException)
        {
            return null;
        }
    }

    private const int EpollCtlAdd = 1;
    private const int EpollCtlDel = 2;
    private const uint EpollIn = 0x001;

    [LibraryImport(Libc, EntryPoint = "epoll_create1", SetLastError = true)]
    private static partial int EpollCreateNative(int flags);

    [LibraryImport(Libc, EntryPoint = "epoll_ctl", SetLastError = true)]
    private static partial int EpollCtlNative(SafeHandle epoll, int op, int fd, byte* ev);

    [LibraryImport(Libc, EntryPoint = "epoll_wait", SetLastError = true)]
    private static partial int EpollWaitNative(SafeHandle epoll, byte* events, int maxEvents, int timeoutMs);

    /// <summary>
    /// Bytes of one struct epoll_event: { uint32 events; uint64 data; } is packed on x86-64 (12 bytes, data at offset 4)
    /// and naturally aligned elsewhere (16 bytes, data at offset 8).
    /// </summary>
    public static readonly int EpollEventSize = RuntimeInformation.ProcessArchitecture == Architecture.X64 ? 12 : 16;

    private static readonly int EpollDataOffset = RuntimeInformation.ProcessArchitecture == Architecture.X64 ? 4 : 8;

    /// <summary>An epoll(7) instance (level-triggered readability of many sockets), or null where the kernel or libc has none.</summary>
    public static SafeHandle? TryCreateEpoll()
    {
        try
        {
            int fd = EpollCreateNative(EfdCloexec); // EPOLL_CLOEXEC == O_CLOEXEC
            return fd < 0 ? null : new EventFdHandle(fd);
        }
        catch (Exception e) when (e is DllNotFoundException or EntryPointNotFoundException)
        {
            return null;
        }
    }

    /// <summary>Watches <paramref name="socket"/> for readability (and errors, always reported); its descriptor comes back as the event's data.</summary>
    public static bool EpollAdd(SafeHandle epoll, SafeHandle socket)
    {
        byte* ev = stackalloc byte[16];
        int fd = (int)socket.DangerousGetHandle();
        *(uint*)ev = EpollIn;
        *(ulong*)(ev + EpollDataOffset) = (ulong)fd;
        return EpollCtlNative(epoll, EpollCtlAdd, fd, ev) == 0;
    }

    /// <summary>Stops watching the descriptor (before the socket closes).</summary>
    public static void EpollRemove(SafeHandle epoll, SafeHandle socket)
    {
        byte* ev = stackalloc byte[16]; // ignored by the kernel for EPOLL_CTL_DEL, but must not be null before Linux 2.6.9
        EpollCtlNative(epoll, EpollCtlDel, (int)socket.DangerousGetHandle(), ev);
    }

    /// <summary>
    /// The descriptors that are ready, without waiting (the caller waited on the epoll descriptor itself with
    /// <see cref="WaitReadable"/>, which has a microsecond timeout): their count, written into <paramref name="ready"/>.
    /// </summary>
    public static int EpollTakeReady(SafeHandle epoll, Span<byte> scratch, Span<int> ready)
    {
        int max = Math.Min(ready.Length, scratch.Length / EpollEventSize);
        fixed (byte* events = scratch)
        {
            int n = EpollWaitNative(epoll, events, max, 0);
            if (n < 0) return 0;
            for (int i = 0; i < n; i++) ready[i] = (int)*(ulong*)(events + i * EpollEventSize + EpollDataOffset);
            return n;
        }
    }

    /// <summary>Adds one to the eventfd's counter: a poll on it wakes up (one 8-byte write, no network stack).</summary>
    public static void SignalEventFd(SafeHandle eventFd)
    {
        ulong one = 1;
        WriteNative(eventFd, &one, sizeof(ulong)); // EAGAIN only when the counter is at its maximum: still readable
    }

    /// <summary>Resets the eventfd's counter (non-blocking: nothing to read is fine).</summary>
    public static void DrainEventFd(SafeHandle eventFd)
    {
        ulong value;
        ReadNative(eventFd, &value, sizeof(ulong));
    }

    [LibraryImport(Libc, EntryPoint = "recvmmsg", SetLastError = true)]
    private static partial int RecvMmsgNative(SafeHandle socket, MMsgHdr* messages, uint count, int flags, void* timeout);

    [LibraryImport(Libc, EntryPoint = "setsockopt", SetLastError = true)]
    private static partial int SetSockOptNative(SafeHandle socket, int level, int name, void* value, uint length);

    /// <summary>recvmmsg without waiting: the number of messages filled, or -1 with <paramref name="errno"/> set.</summary>
    public static int ReceiveMessages(SafeHandle socket, MMsgHdr* messages, int count, out int errno)
    {
        int received = RecvMmsgNative(socket, messages, (uint)count, MsgDontWait, null);
        errno = received < 0 ? Marshal.GetLastPInvokeError() : 0;
        return received;
    }

    /// <summary>
    /// Waits up to <paramref name="timeoutUs"/> microseconds (negative: forever) until <paramref name="first"/> or <paramref name="second"/> is
    /// readable or has an error pending (POLLERR: an ICMP error on a connected socket, which the next receive reports).
    /// One poll(2) call where Socket.Select builds and scans lists. False on a poll error other than EINTR.
    /// </summary>
    public static bool WaitReadable(SafeHandle first, SafeHandle second, int timeoutUs, out bool firstReady, out bool secondReady)
    {
        firstReady = secondReady = false;
        bool firstAdded = false, secondAdded = false;
        try
        {
            first.DangerousAddRef(ref firstAdded);
            second.DangerousAddRef(ref secondAdded);
            PollFd* fds = stackalloc PollFd[2];
            fds[0] = new PollFd { Fd = (int)first.DangerousGetHandle(), Events = PollIn };
            fds[1] = new PollFd { Fd = (int)second.DangerousGetHandle(), Events = PollIn };
            int result = PollMicroseconds(fds, 2, timeoutUs);
            if (result < 0) return Marshal.GetLastPInvokeError() == EIntr;
            firstReady = (fds[0].ReturnedEvents & (PollIn | PollErr | PollHup)) != 0;
            secondReady = (fds[1].ReturnedEvents & (PollIn | PollErr | PollHup)) != 0;
            return true;
        }
        finally
        {
            if (secondAdded) second.DangerousRelease();
            if (firstAdded) first.DangerousRelease();
        }
    }

    /// <summary>
    /// poll(2) on <paramref name="fds"/> (descriptors and events filled by the caller; <see cref="PollReadable"/> is the
    /// usual event set) for up to <paramref name="timeoutUs"/> microseconds (negative: forever): the number of ready
    /// entries, 0 on timeout or EINTR, -1 on another error.
    /// </summary>
    public static int Poll(Span<PollFd> fds, int timeoutUs)
    {
        fixed (PollFd* p = fds)
        {
            int result = PollMicroseconds(p, (nuint)fds.Length, timeoutUs);
            if (result < 0) return Marshal.GetLastPInvokeError() == EIntr ? 0 : -1;
            return result;
        }
    }

    /// <summary>Events that make a socket worth a receive call: data, or a pending error (POLLERR) or hang-up to fetch.</summary>
    public const short PollReadable = PollIn;

    /// <summary>True when a <see cref="Poll"/> result entry is ready for a receive.</summary>
    public static bool IsReady(in PollFd fd) => (fd.ReturnedEvents & (PollIn | PollErr | PollHup)) != 0;

    /// <summary>setsockopt with an int value; false (with <paramref name="errno"/>) when the kernel refused it.</summary>
    public static bool TrySetInt(SafeHandle socket, int level, int name, int value, out int errno)
    {
        int result = SetSockOptNative(socket, level, name, &value, sizeof(int));
        errno = result < 0 ? Marshal.GetLastPInvokeError() : 0;
        return result == 0;
    }

    /// <summary>The size of struct cmsghdr, which is also CMSG_ALIGN's unit times two: size_t length, int level, int type.</summary>
    private static int CmsgHeaderSize => IntPtr.Size + 8;

    private static int CmsgAlign(long length) => (int)((length + IntPtr.Size - 1) & ~(long)(IntPtr.Size - 1));

    /// <summary>CMSG_SPACE for a payload of <paramref name="dataLength"/> bytes.</summary>
    public static int CmsgSpace(int dataLength) => CmsgAlign(CmsgHeaderSize) + CmsgAlign(dataLength);

    /// <summary>
    /// The UDP_GRO segment size in the control data the kernel returned, or 0 when there is none (the buffer is one
    /// datagram).
    /// </summary>
    public static int ReadGroSegmentSize(ReadOnlySpan<byte> control)
    {
        ReadControlMessages(control, out int segmentSize, out _);
        return segmentSize;
    }

    /// <summary>
    /// The ECN bits (RFC 3168: the low two bits) of the TOS byte (IP_TOS cmsg, IP_RECVTOS) or Traffic Class
    /// (IPV6_TCLASS cmsg, IPV6_RECVTCLASS) in the control data the kernel returned; 0 (Not-ECT) when there is none.
    /// </summary>
    public static byte ReadEcn(ReadOnlySpan<byte> control)
    {
        ReadControlMessages(control, out _, out byte ecn);
        return ecn;
    }

    /// <summary>
    /// What a received message's control data says, in one walk: the UDP_GRO segment size (0: none, the buffer is one
    /// datagram) and the ECN bits of the TOS byte or Traffic Class (0, Not-ECT: none). Walks the cmsg list the way
    /// CMSG_FIRSTHDR/CMSG_NXTHDR do, but bounds-checks every header against <paramref name="control"/>, so a short,
    /// truncated or malformed list ends the walk (with what was found before it) instead of reading past it; the first
    /// message of each kind counts.
    /// </summary>
    public static void ReadControlMessages(ReadOnlySpan<byte> control, out int groSegmentSize, out byte ecn)
    {
        groSegmentSize = 0;
        ecn = 0;
        bool groFound = false, ecnFound = false;
        int headerSize = CmsgHeaderSize;
        int dataOffset = CmsgAlign(headerSize);
        int offset = 0;
        while (control.Length - offset >= headerSize && !(groFound && ecnFound))
        {
            ReadOnlySpan<byte> header = control.Slice(offset);
            long length = IntPtr.Size == 8 ? (long)Math.Min(ReadNativeUInt64(header), long.MaxValue) : ReadNativeUInt32(header);
            if (length < headerSize || length > control.Length - offset) return;
            int level = ReadNativeInt32(header.Slice(IntPtr.Size));
            int type = ReadNativeInt32(header.Slice(IntPtr.Size + 4));
            ReadOnlySpan<byte> data = header.Slice(Math.Min(dataOffset, (int)length), Math.Max(0, (int)length - dataOffset));
            if (!groFound && level == SolUdp && type == UdpGro && data.Length >= 2)
            {
                // The kernel writes an int (udp_cmsg_recv); accept a 16-bit value too, as some userspace stacks do.
                int size = data.Length >= 4 ? ReadNativeInt32(data) : ReadNativeUInt16(data);
                groSegmentSize = size > 0 ? size : 0;
                groFound = true;
            }
            // IPPROTO_IP/IP_TOS carries one byte; IPPROTO_IPV6/IPV6_TCLASS an int (native order: its low byte first on little-endian).
            else if (!ecnFound && level == 0 && type == 1 && data.Length >= 1)
            {
                ecn = (byte)(data[0] & 0b11);
                ecnFound = true;
            }
            else if (!ecnFound && level == 41 && type == 67 && data.Length >= 4)
            {
                ecn = (byte)(ReadNativeInt32(data) & 0b11);
                ecnFound = true;
            }
            int next = CmsgAlign(length);
            if (next <= 0 || next > control.Length - offset) return;
            offset += next;
        }
    }

    /// <summary>
    /// The peer address in a sockaddr_in/sockaddr_in6 the kernel filled (family in host order, port big-endian at
    /// byte 2, IPv4 address at 4, IPv6 address at 8). False for any other family or a short name.
    /// </summary>
    public static bool TryReadAddress(ReadOnlySpan<byte> name, out Core.NetworkAddress address)
    {
        address = default;
        if (name.Length < 8) return false;
        int family = ReadNativeUInt16(name);
        ushort port = BinaryPrimitives.ReadUInt16BigEndian(name.Slice(2));
        if (family == AfInet)
        {
            address = new Core.NetworkAddress(name.Slice(4, 4), port);
            return true;
        }
        if (family == AfInet6 && name.Length >= 24)
        {
            address = new Core.NetworkAddress(name.Slice(8, 16), port);
            return true;
        }
        return false;
    }

    public const int SolSocket = 1;

    /// <summary>SO_REUSEPORT (Linux 3.9): several sockets bind the same address and port; the kernel spreads datagrams over them.</summary>
    public const int SoReusePort = 15;

    /// <summary>SO_ATTACH_REUSEPORT_CBPF (Linux 4.5): a classic BPF program whose result picks the socket of the reuseport group.</summary>
    public const int SoAttachReusePortCbpf = 51;

    /// <summary>struct sock_filter: one classic BPF instruction.</summary>
    [StructLayout(LayoutKind.Sequential)]
    public struct SockFilter
    {
        public ushort Code;
        public byte JumpTrue;
        public byte JumpFalse;
        public uint K;

        public SockFilter(ushort code, byte jumpTrue, byte jumpFalse, uint k)
        {
            Code = code;
            JumpTrue = jumpTrue;
            JumpFalse = jumpFalse;
            K = k;
        }
    }

    /// <summary>struct sock_fprog.</summary>
    [StructLayout(LayoutKind.Sequential)]
    private struct SockFprog
    {
        public ushort Length;
        public SockFilter* Filter;
    }

    /// <summary>Sets SO_REUSEPORT on a socket not bound yet; false (with <paramref name="errno"/>) where the kernel has none.</summary>
    public static bool TrySetReusePort(SafeHandle socket, out int errno) => TrySetInt(socket, SolSocket, SoReusePort, 1, out errno);

    /// <summary>Attaches <paramref name="program"/> to the reuseport group of <paramref name="socket"/> (bound, SO_REUSEPORT set).</summary>
    public static bool TryAttachReusePortProgram(SafeHandle socket, ReadOnlySpan<SockFilter> program, out int errno)
    {
        fixed (SockFilter* filter = program)
        {
            var fprog = new SockFprog { Length = (ushort)program.Length, Filter = filter };
            int result = SetSockOptNative(socket, SolSocket, SoAttachReusePortCbpf, &fprog, (uint)sizeof(SockFprog));
            errno = result < 0 ? Marshal.GetLastPInvokeError() : 0;
            return result == 0;
        }
    }

    /// <summary>The SocketError the Socket class would have reported for this errno (what the driver's error hook expects).</summary>
    public static SocketError ToSocketError(int errno) => errno switch
    {
        EConnRefused => SocketError.ConnectionRefused,
        EHostUnreach => SocketError.HostUnreachable,
        ENetUnreach => SocketError.NetworkUnreachable,
        EMsgSize => SocketError.MessageSize,
        ENoBufs => SocketError.NoBufferSpaceAvailable,
        EAgain => SocketError.WouldBlock,
        EIntr => SocketError.Interrupted,
        ENoSys or EOpNotSupp or ENoProtoOpt => SocketError.OperationNotSupported,
        _ => SocketError.SocketError,
    };

    // Native byte order: the kernel writes these fields in host order.
    private static ulong ReadNativeUInt64(ReadOnlySpan<byte> s) => MemoryMarshal.Read<ulong>(s);

    private static uint ReadNativeUInt32(ReadOnlySpan<byte> s) => MemoryMarshal.Read<uint>(s);

    private static int ReadNativeInt32(ReadOnlySpan<byte> s) => MemoryMarshal.Read<int>(s);

    private static ushort ReadNativeUInt16(ReadOnlySpan<byte> s) => MemoryMarshal.Read<ushort>(s);
}
