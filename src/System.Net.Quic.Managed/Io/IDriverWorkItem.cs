namespace System.Net.Quic.Managed.Io;

/// <summary>Work the application hands to a <see cref="UdpDriver"/>: it runs on the driver's thread, the only one that touches the core.</summary>
internal interface IDriverWorkItem
{
    void Execute(long nowUs);
}
