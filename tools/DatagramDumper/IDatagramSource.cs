namespace QuicManaged.Tools.DatagramDumper;

/// <summary>Where datagrams come from: hex text, a binary file, an embedded sample, a pcap/pcapng capture, and later
/// EventPipe traces. Sources report their own format problems as <see cref="CapturedDatagram.Note"/> rather than
/// throwing, so one bad record never hides the rest of a capture.</summary>
internal interface IDatagramSource
{
    IEnumerable<CapturedDatagram> Read();
}
