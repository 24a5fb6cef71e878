using System.Net.Quic.Managed.Io;
using System.Runtime.InteropServices;

namespace System.Net.Quic.Managed.Tests.Io;

/// <summary>Builds recvmmsg control data (cmsg lists) for the tests of the GRO and ECN readers.</summary>
internal static class ControlData
{
    /// <summary>One cmsg of <paramref name="level"/>/<paramref name="type"/> carrying <paramref name="data"/>, laid out as
    /// CMSG_SPACE does; <paramref name="declaredLength"/> overrides cmsg_len to build malformed lists.</summary>
    public static byte[] Cmsg(int level, int type, ReadOnlySpan<byte> data, int declaredLength = -1)
    {
        int header = IntPtr.Size + 8;
        int aligned = (header + IntPtr.Size - 1) & ~(IntPtr.Size - 1);
        byte[] buffer = new byte[LinuxUdpInterop.CmsgSpace(data.Length)];
        long length = declaredLength >= 0 ? declaredLength : aligned + data.Length;
        if (IntPtr.Size == 8) MemoryMarshal.Write(buffer, in length);
        else MemoryMarshal.Write(buffer, (uint)length);
        MemoryMarshal.Write(buffer.AsSpan(IntPtr.Size), in level);
        MemoryMarshal.Write(buffer.AsSpan(IntPtr.Size + 4), in type);
        data.CopyTo(buffer.AsSpan(aligned));
        return buffer;
    }
}
