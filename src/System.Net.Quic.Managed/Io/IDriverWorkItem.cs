namespace System.Net.Quic.Managed.Io;

/// <summary>Work the application hands to a <see cref="UdpDriver"/>: it runs on the driver's thread, the only one that touches the core.</summary>
internal interface IDriverWorkItem
{
    void Execute(long nowUs);

    /// <summary>
    /// The driver stopped before running this item (its socket and thread were released): called instead of
    /// <see cref="Execute"/>, on whichever thread noticed, so a waiter does not wait forever. Nothing by default.
    /// </summary>
    void Abandon()
    {
    }
}
