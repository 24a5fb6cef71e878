using System.Net.Quic.Managed.Io;
using System.Runtime.InteropServices;

namespace System.Net.Quic.Managed.Tests.Io;

/// <summary>The ECN bits read from recvmmsg control data (IP_TOS / IPV6_TCLASS cmsgs), from well-formed and hostile buffers.</summary>
public class EcnControlDataTests
{
    [Fact]
    public void EcnBitsAreReadFromTosAndTrafficClass()
    {
        Assert.Equal(0b10, LinuxUdpInterop.ReadEcn(ControlData.Cmsg(0, 1, new byte[] { 0x02 })));
        Assert.Equal(0b11, LinuxUdpInterop.ReadEcn(ControlData.Cmsg(0, 1, new byte[] { 0xbb }))); // DSCP bits are not ECN
        Assert.Equal(0b01, LinuxUdpInterop.ReadEcn(ControlData.Cmsg(41, 67, BitConverter.GetBytes(0x29))));
        // After a UDP_GRO cmsg.
        byte[] both = [.. ControlData.Cmsg(17, 104, BitConverter.GetBytes(1350)), .. ControlData.Cmsg(0, 1, new byte[] { 0x03 })];
        Assert.Equal(0b11, LinuxUdpInterop.ReadEcn(both));
        Assert.Equal(1350, LinuxUdpInterop.ReadGroSegmentSize(both));
        // None: Not-ECT.
        Assert.Equal(0, LinuxUdpInterop.ReadEcn(ControlData.Cmsg(17, 104, BitConverter.GetBytes(1350))));
        Assert.Equal(0, LinuxUdpInterop.ReadEcn([]));
    }

    [Fact]
    public void MalformedControlDataYieldsNotEctAndNeverReadsPastTheBuffer()
    {
        byte[] good = ControlData.Cmsg(41, 67, BitConverter.GetBytes(0x02));
        for (int cut = 0; cut < good.Length; cut++)
        {
            byte ecn = LinuxUdpInterop.ReadEcn(good.AsSpan(0, cut));
            Assert.True(ecn == 0 || cut >= IntPtr.Size + 8 + 4, $"cut {cut} gave {ecn}");
        }
        Assert.Equal(0, LinuxUdpInterop.ReadEcn(ControlData.Cmsg(0, 1, new byte[] { 0x02 }, declaredLength: 0)));
        Assert.Equal(0, LinuxUdpInterop.ReadEcn(ControlData.Cmsg(0, 1, new byte[] { 0x02 }, declaredLength: 4096)));
        var random = new Random(1515);
        byte[] noise = new byte[64];
        for (int i = 0; i < 2000; i++)
        {
            random.NextBytes(noise);
            if (i % 2 == 0) MemoryMarshal.Write(noise, (long)random.Next(0, 80));
            Assert.InRange(LinuxUdpInterop.ReadEcn(noise.AsSpan(0, random.Next(0, 65))), 0, 3);
        }
    }
}
