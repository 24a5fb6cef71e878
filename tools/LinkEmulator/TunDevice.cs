using System.Runtime.InteropServices;
using System.Text;

namespace QuicManaged.Tools.LinkEmulator;

/// <summary>A non-blocking TUN device (IFF_TUN | IFF_NO_PI): each read/write is one raw IP packet.</summary>
internal sealed unsafe class TunDevice : IDisposable
{
    private TunDevice(string name, int fd)
    {
        Name = name;
        Fd = fd;
    }

    public string Name { get; }

    public int Fd { get; private set; }

    public static TunDevice Create(string name)
    {
        byte[] nameBytes = Encoding.ASCII.GetBytes(name);
        if (nameBytes.Length == 0 || nameBytes.Length > 15)
        {
            throw new ArgumentException("TUN device names are 1 to 15 ASCII characters.", nameof(name));
        }

        int fd = LibC.Open("/dev/net/tun", LibC.O_RDWR | LibC.O_NONBLOCK | LibC.O_CLOEXEC);
        if (fd < 0)
        {
            throw new IOException($"open /dev/net/tun failed: errno {Marshal.GetLastPInvokeError()}");
        }

        LibC.IfReq request = default;
        for (int i = 0; i < nameBytes.Length; i++)
        {
            request.Name[i] = nameBytes[i];
        }

        request.Flags = LibC.IFF_TUN | LibC.IFF_NO_PI;
        if (LibC.Ioctl(fd, LibC.TUNSETIFF, &request) < 0)
        {
            int errno = Marshal.GetLastPInvokeError();
            LibC.Close(fd);
            throw new IOException($"ioctl TUNSETIFF {name} failed: errno {errno}");
        }

        return new TunDevice(name, fd);
    }

    /// <summary>Reads one packet; returns 0 when none is waiting.</summary>
    public int Read(Span<byte> buffer)
    {
        fixed (byte* p = buffer)
        {
            while (true)
            {
                nint n = LibC.Read(Fd, p, (nuint)buffer.Length);
                if (n >= 0)
                {
                    return (int)n;
                }

                int errno = Marshal.GetLastPInvokeError();
                if (errno == LibC.EINTR)
                {
                    continue;
                }

                if (errno == LibC.EAGAIN)
                {
                    return 0;
                }

                throw new IOException($"read {Name} failed: errno {errno}");
            }
        }
    }

    /// <summary>Writes one packet; false when the kernel refused it.</summary>
    public bool Write(ReadOnlySpan<byte> packet)
    {
        fixed (byte* p = packet)
        {
            while (true)
            {
                nint n = LibC.Write(Fd, p, (nuint)packet.Length);
                if (n == packet.Length)
                {
                    return true;
                }

                if (n < 0 && Marshal.GetLastPInvokeError() == LibC.EINTR)
                {
                    continue;
                }

                return false;
            }
        }
    }

    public void Dispose()
    {
        if (Fd >= 0)
        {
            LibC.Close(Fd);
            Fd = -1;
        }
    }
}
