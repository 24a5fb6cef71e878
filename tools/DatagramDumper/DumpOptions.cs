namespace QuicManaged.Tools.DatagramDumper;

/// <summary>Decoding hints and output filters for <see cref="DatagramFormatter"/>.</summary>
internal sealed class DumpOptions
{
    /// <summary>DCID length for short headers whose connection IDs were not learned from long headers (--cid-len).</summary>
    public int? CidLength { get; init; }

    /// <summary>The client's original DCID, for server Initials when the client's first Initial is missing (--odcid).</summary>
    public byte[]? OriginalDcid { get; init; }

    /// <summary>Only packets whose DCID or SCID equals this are shown (--cid).</summary>
    public byte[]? CidFilter { get; init; }

    /// <summary>Only frames of this family are shown (--frame), a <see cref="QuicNames.FrameFilterNames"/> value.</summary>
    public string? FrameFilter { get; init; }
}
