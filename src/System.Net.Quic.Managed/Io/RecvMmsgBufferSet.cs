using System.Collections.Concurrent;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Threading;
using static System.Net.Quic.Managed.Io.LinuxUdpInterop;

namespace System.Net.Quic.Managed.Io;

/// <summary>
/// The memory one recvmmsg call fills: message buffers, iovecs, address and control space, and the mmsghdr array pointing
/// at them, all on the pinned object heap so the pointers stay valid without pinning per call. Sets are pooled: a client
/// opens a socket (and a driver) per connection, and pinned-heap arrays are only collected with gen 2, so renting instead
/// of allocating keeps handshake-heavy workloads from piling up 256 KiB per short-lived connection.
/// </summary>
internal sealed unsafe class RecvMmsgBufferSet
{
    public const int NameSize = 128; // sizeof(struct sockaddr_storage)
    public const int ControlSize = 64; // room for CMSG_SPACE(sizeof(int)) with margin

    /// <summary>
    /// Sets kept for reuse per kind; more returned than this are left to the GC. Each client connection has its own
    /// socket and set: with 8, a burst of 16 concurrent connects allocated (pinned) about half of them anew, ~256 KB
    /// each. 32 keeps such bursts allocation-free for at most ~8 MB per kind held after the connections are gone.
    /// </summary>
    private const int MaxPooledPerKind = 32;

    private static readonly ConcurrentQueue<RecvMmsgBufferSet>[] s_pools = [new(), new()];
    private static readonly int[] s_pooledCounts = new int[2];

    private readonly byte[] _data;
    private readonly byte[] _names;
    private readonly byte[] _control;
    private readonly IoVec[] _iov;
    private readonly MMsgHdr[] _messages;

    private RecvMmsgBufferSet(int slots, int slotSize)
    {
        Slots = slots;
        SlotSize = slotSize;
        _data = GC.AllocateUninitializedArray<byte>(slots * slotSize, pinned: true);
        _names = GC.AllocateArray<byte>(slots * NameSize, pinned: true);
        _control = GC.AllocateArray<byte>(slots * ControlSize, pinned: true);
        _iov = GC.AllocateArray<IoVec>(slots, pinned: true);
        _messages = GC.AllocateArray<MMsgHdr>(slots, pinned: true);
        Messages = (MMsgHdr*)Unsafe.AsPointer(ref MemoryMarshal.GetArrayDataReference(_messages));
        byte* data = (byte*)Unsafe.AsPointer(ref MemoryMarshal.GetArrayDataReference(_data));
        byte* names = (byte*)Unsafe.AsPointer(ref MemoryMarshal.GetArrayDataReference(_names));
        byte* control = (byte*)Unsafe.AsPointer(ref MemoryMarshal.GetArrayDataReference(_control));
        IoVec* iov = (IoVec*)Unsafe.AsPointer(ref MemoryMarshal.GetArrayDataReference(_iov));
        for (int i = 0; i < slots; i++)
        {
            iov[i].Base = data + (long)i * slotSize;
            iov[i].Length = (nuint)slotSize;
            ref MsgHdr header = ref Messages[i].Header;
            header.Name = names + i * NameSize;
            header.Iov = iov + i;
            header.IovLength = 1;
            header.Control = control + i * ControlSize;
        }
    }

    public int Slots { get; }

    public int SlotSize { get; }

    /// <summary>The mmsghdr array to hand to recvmmsg.</summary>
    public MMsgHdr* Messages { get; }

    public ref MMsgHdr Message(int index) => ref _messages[index];

    public Span<byte> Data(int index, int length) => _data.AsSpan(index * SlotSize, length);

    public ReadOnlySpan<byte> Name(int index, int length) => _names.AsSpan(index * NameSize, length);

    public ReadOnlySpan<byte> Control(int index, int length) => _control.AsSpan(index * ControlSize, length);

    /// <summary>A pooled set of this shape, or a new one.</summary>
    public static RecvMmsgBufferSet Rent(int slots, int slotSize, bool coalescing)
    {
        int kind = coalescing ? 1 : 0;
        if (s_pools[kind].TryDequeue(out RecvMmsgBufferSet? set))
        {
            Interlocked.Decrement(ref s_pooledCounts[kind]);
            if (set.Slots == slots && set.SlotSize == slotSize) return set;
        }
        return new RecvMmsgBufferSet(slots, slotSize);
    }

    /// <summary>Gives the set back; the caller must not touch it (or hand its pointers to the kernel) afterwards.</summary>
    public static void Return(RecvMmsgBufferSet set, bool coalescing)
    {
        int kind = coalescing ? 1 : 0;
        if (Interlocked.Increment(ref s_pooledCounts[kind]) <= MaxPooledPerKind) s_pools[kind].Enqueue(set);
        else Interlocked.Decrement(ref s_pooledCounts[kind]);
    }
}
