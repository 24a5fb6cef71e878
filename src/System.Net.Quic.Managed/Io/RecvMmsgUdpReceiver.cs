using System.Net.Quic.Managed.Core;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using System.Threading;
using static System.Net.Quic.Managed.Io.LinuxUdpInterop;

namespace System.Net.Quic.Managed.Io;

/// <summary>
/// Linux receive path: one recvmmsg(2) call (MSG_DONTWAIT) fills up to <see cref="Capacity"/> messages. With UDP_GRO
/// (Linux 5.0+) the kernel also coalesces consecutive same-size datagrams of one flow into one message and reports the
/// segment size in a cmsg; on loopback a GSO send from the peer then arrives whole, one message for up to 64 datagrams.
/// Buffers, iovecs, names, control space and headers come from <see cref="RecvMmsgBufferSet"/> (pinned object heap, one set
/// per receiving thread).
/// </summary>
internal sealed unsafe class RecvMmsgUdpReceiver : UdpReceiver
{
    /// <summary>
    /// A coalesced message is at most one maximal UDP payload (the kernel stops GRO at 64 KiB). Four of them hold some 200
    /// full-size datagrams, more than the driver takes per wake-up, for 256 KiB per receiving thread.
    /// </summary>
    private const int CoalescingSlotSize = 65_536;
    private const int CoalescingSlots = 4;

    /// <summary>
    /// Without GRO a message is one datagram: 4 KiB covers every path MTU QUIC uses in practice; a larger datagram arrives
    /// truncated and is dropped, as if the path MTU were smaller (a PMTU probe that size is simply lost, RFC 9000 §14.4).
    /// </summary>
    private const int SingleSlotSize = MaxReceivableDatagram;
    private const int SingleSlots = 32;

    private readonly SafeHandle _socket;
    private RecvMmsgBufferSet? _buffers; // the receiving thread's set, from the last Receive call
    private int _released;
    private int _received;

    private RecvMmsgUdpReceiver(SafeHandle socket, bool coalescing)
    {
        _socket = socket;
        IsCoalescing = coalescing;
    }

    /// <summary>
    /// Sets the socket up for batching (UDP_GRO when the kernel has it) and checks that recvmmsg exists; null when libc,
    /// the call or the socket refuse, and the caller then uses <see cref="SocketUdpReceiver"/>.
    /// </summary>
    public static RecvMmsgUdpReceiver? TryCreate(Socket socket, bool enableCoalescing = true)
    {
        try
        {
            SafeHandle handle = socket.SafeHandle;
            // vlen 0 makes recvmmsg return at once without touching the queue: a probe that consumes nothing.
            if (ReceiveMessages(handle, null, 0, out int errno) < 0 && ToSocketError(errno) == SocketError.OperationNotSupported) return null;
            bool coalescing = enableCoalescing && TrySetInt(handle, SolUdp, UdpGro, 1, out _);
            return new RecvMmsgUdpReceiver(handle, coalescing);
        }
        catch (Exception e) when (e is DllNotFoundException or EntryPointNotFoundException or ObjectDisposedException)
        {
            return null;
        }
    }

    public override bool IsBatched => true;

    public override bool IsCoalescing { get; }

    public override int Capacity => IsCoalescing ? CoalescingSlots : SingleSlots;

    public override int MaxDatagramSize => IsCoalescing ? MaxUdpPayload : SingleSlotSize;

    public override int Receive(bool knownReadable, out SocketError error)
    {
        error = SocketError.Success;
        _received = 0;
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _released) != 0, this);
        RecvMmsgBufferSet buffers = IsCoalescing
            ? RecvMmsgBufferSet.ForCurrentThread(CoalescingSlots, CoalescingSlotSize, coalescing: true)
            : RecvMmsgBufferSet.ForCurrentThread(SingleSlots, SingleSlotSize, coalescing: false);
        _buffers = buffers;
        MMsgHdr* messages = buffers.Messages;
        for (int i = 0; i < buffers.Slots; i++)
        {
            // The kernel overwrites the lengths and flags with what it returned: reset them for every call.
            messages[i].Header.NameLength = RecvMmsgBufferSet.NameSize;
            messages[i].Header.ControlLength = RecvMmsgBufferSet.ControlSize;
            messages[i].Header.Flags = 0;
            messages[i].Length = 0;
        }
        for (int attempt = 0; ; attempt++)
        {
            int count = ReceiveMessages(_socket, messages, buffers.Slots, out int errno);
            if (count >= 0)
            {
                _received = count;
                return count;
            }
            if (errno == EIntr && attempt < 3) continue;
            if (errno != EAgain) error = ToSocketError(errno);
            return 0;
        }
    }

    public override bool TryGetMessage(int index, out Span<byte> data, out NetworkAddress remote, out int segmentSize, out byte ecn)
    {
        if ((uint)index >= (uint)_received || _buffers is not { } buffers) throw new ArgumentOutOfRangeException(nameof(index));
        ref MMsgHdr message = ref buffers.Message(index);
        segmentSize = 0;
        ecn = 0;
        data = default;
        remote = default;
        if ((message.Header.Flags & MsgTrunc) != 0 || message.Length > (uint)buffers.SlotSize)
        {
            TruncatedMessages++;
            return false;
        }
        int nameLength = (int)Math.Min(message.Header.NameLength, (uint)RecvMmsgBufferSet.NameSize);
        if (!TryReadAddress(buffers.Name(index, nameLength), out remote)) return false;
        data = buffers.Data(index, (int)message.Length);
        // One walk over the control data: the GRO segment size (used only when coalescing is on) and the ECN bits.
        int controlLength = (int)Math.Min(message.Header.ControlLength, (nuint)RecvMmsgBufferSet.ControlSize);
        ReadControlMessages(buffers.Control(index, controlLength), out int groSegmentSize, out ecn);
        if (IsCoalescing && groSegmentSize < data.Length) segmentSize = groSegmentSize;
        return true;
    }

    /// <summary>No receive runs any more (the driver thread ended or never started): the thread's buffers are not ours.</summary>
    public override void Release()
    {
        Volatile.Write(ref _released, 1);
        _buffers = null;
        _received = 0;
    }

    /// <summary>Turns UDP_GRO off again, before the driver hands the socket to the portable receiver (which cannot split).</summary>
    public void StopCoalescing()
    {
        if (IsCoalescing) TrySetInt(_socket, SolUdp, UdpGro, 0, out _);
    }
}
