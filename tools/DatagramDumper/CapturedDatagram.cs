namespace QuicManaged.Tools.DatagramDumper;

/// <summary>One UDP payload from an input source. <see cref="TimestampUs"/> and the endpoints are null when the
/// source does not know them (hex, samples); <see cref="Note"/> carries a problem the source met (a malformed capture
/// record, a line that is not hex), shown in place of or before the datagram.</summary>
internal sealed record CapturedDatagram(long? TimestampUs, string? Source, string? Destination, byte[] Data, string? Note = null);
