using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using static System.Net.Quic.Managed.Io.LinuxUdpInterop;

namespace System.Net.Quic.Managed.Io;

/// <summary>
/// The memory one recvmmsg call fills: message buffers, iovecs, address and control space, and the mmsghdr array pointing
/// at them, all on the pinned object heap so the pointers stay valid without pinning per call. One set per thread and
/// shape, shared by every socket that thread receives on: a driver consumes a batch (the core copies what it keeps, a
/// datagram handed to another worker is copied) before its thread's next receive call, so sockets never need their own.
/// A client process with hundreds of connections on a few loop threads then holds a few sets instead of 256 KiB per
/// connection, and short-lived connections allocate none.
/// </summary>
internal sealed unsafe class RecvMmsgBufferSet
{
    public const int NameSize = 128; // sizeof(struct sockaddr_storage)
    public const int ControlSize = 64; // room for CMSG_SPACE(sizeof(int)) with margin

    [ThreadStatic]
    private static RecvMmsgBufferSet? t_coalescing;

    [ThreadStatic]
    private static RecvMmsgBufferSet? t_single;

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

    /// <summary>The calling thread's set of this shape (created on its first receive).</summary>
    public static RecvMmsgBufferSet ForCurrentThread(int slots, int slotSize, bool coalescing)
    {
        RecvMmsgBufferSet? set = coalescing ? t_coalescing : t_single;
        if (set is not null && set.Slots == slots && set.SlotSize == slotSize) return set;
        set = new RecvMmsgBufferSet(slots, slotSize);
        if (coalescing) t_coalescing = set;
        else t_single = set;
        return set;
    }
}
