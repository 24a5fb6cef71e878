using System.Runtime.InteropServices;

namespace QuicManaged.Tools.LinkEmulator;

/// <summary>The few libc calls needed to drive a TUN device (Linux x86-64/arm64 ABI).</summary>
internal static unsafe partial class LibC
{
    public const int O_RDWR = 0x2;
    public const int O_NONBLOCK = 0x800;
    public const int O_CLOEXEC = 0x80000;
    public const short POLLIN = 0x1;
    public const int EAGAIN = 11;
    public const int EINTR = 4;

    // linux/if_tun.h: _IOW('T', 202, int)
    public const uint TUNSETIFF = 0x400454ca;
    public const short IFF_TUN = 0x0001;
    public const short IFF_NO_PI = 0x1000;

    [StructLayout(LayoutKind.Sequential)]
    public struct PollFd
    {
        public int Fd;
        public short Events;
        public short REvents;
    }

    [StructLayout(LayoutKind.Sequential)]
    public struct TimeSpec
    {
        public long Seconds;
        public long Nanoseconds;
    }

    // struct ifreq: 16-byte name followed by a 24-byte union whose first member here is ifr_flags (short).
    [StructLayout(LayoutKind.Sequential, Size = 40)]
    public struct IfReq
    {
        public fixed byte Name[16];
        public short Flags;
    }

    [LibraryImport("libc", EntryPoint = "open", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    public static partial int Open(string path, int flags);

    [LibraryImport("libc", EntryPoint = "close", SetLastError = true)]
    public static partial int Close(int fd);

    [LibraryImport("libc", EntryPoint = "ioctl", SetLastError = true)]
    public static partial int Ioctl(int fd, nuint request, void* argument);

    [LibraryImport("libc", EntryPoint = "read", SetLastError = true)]
    public static partial nint Read(int fd, byte* buffer, nuint count);

    [LibraryImport("libc", EntryPoint = "write", SetLastError = true)]
    public static partial nint Write(int fd, byte* buffer, nuint count);

    [LibraryImport("libc", EntryPoint = "ppoll", SetLastError = true)]
    public static partial int PPoll(PollFd* fds, nuint count, TimeSpec* timeout, void* sigmask);
}
