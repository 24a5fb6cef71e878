using System.Net.Quic.Managed.Streams;
using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Tests.Streams;

/// <summary>Once warmed up, moving data through a stream pair allocates nothing (pooled chunks, reused range storage).</summary>
public class SteadyStateAllocationTests
{
    [Fact]
    public void SendReceiveAckLoopDoesNotAllocate()
    {
        var connRecv = new ReceiveFlowWindow(1 << 20, 1 << 20);
        var connSend = new SendFlowCredit(long.MaxValue / 4);
        var receiver = new ReceiveStream(0, 64 * 1024, 64 * 1024, connRecv);
        var sender = new SendStream(0, long.MaxValue / 4, connSend, 64 * 1024);
        byte[] source = new byte[3000];
        new Random(1).NextBytes(source);
        byte[] packet = new byte[1200];
        byte[] sink = new byte[4096];
        long now = 0;

        void Round()
        {
            now += 100;
            sender.Write(source, fin: false);
            long firstOffset = -1;
            int firstLength = 0;
            while (sender.TryTakeNextToSend(packet, out long off, out int len, out bool fin))
            {
                if (firstOffset < 0)
                {
                    // Declare the first frame lost: the retransmission path (lost ranges first) runs every round too.
                    firstOffset = off;
                    firstLength = len;
                    sender.OnStreamFrameLost(off, len, fin);
                    continue;
                }

                // Not Assert.Equal here: xUnit's generic comparison allocates.
                if (receiver.OnStreamFrame(off, packet.AsSpan(0, len), fin, out _) != TransportErrorCode.NoError)
                {
                    throw new InvalidOperationException("unexpected stream error");
                }

                sender.OnStreamFrameAcked(off, len, fin);
            }

            while (receiver.Read(sink, out _, out _) > 0)
            {
            }

            if (receiver.NeedsMaxStreamData)
            {
                sender.OnMaxStreamData(receiver.CommitMaxStreamData(now, 1000));
            }

            if (connRecv.NeedsUpdate)
            {
                connSend.OnMaxDataReceived(connRecv.CommitUpdate(now, 1000));
            }
        }

        for (int i = 0; i < 500; i++)
        {
            Round();
        }

        long before = GC.GetAllocatedBytesForCurrentThread();
        for (int i = 0; i < 2000; i++)
        {
            Round();
        }

        long allocated = GC.GetAllocatedBytesForCurrentThread() - before;
        Assert.Equal(0, allocated);
        Assert.Equal(2500L * source.Length, receiver.Buffer.ReadOffset);
    }
}
