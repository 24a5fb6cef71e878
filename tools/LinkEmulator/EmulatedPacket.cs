namespace QuicManaged.Tools.LinkEmulator;

/// <summary>A packet held by the emulator until its release time. Instances and buffers are pooled by <see cref="LinkDirection"/>.</summary>
internal sealed class EmulatedPacket
{
    public byte[] Buffer = Array.Empty<byte>();
    public int Length;
    public long ArrivalUs;
    public long ReleaseUs;
}
