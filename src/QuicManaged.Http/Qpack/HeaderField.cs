namespace QuicManaged.Http.Qpack;

/// <summary>One field line: lowercase name and value, as ASCII/Latin-1 text.</summary>
internal readonly record struct HeaderField(string Name, string Value)
{
    /// <summary>RFC 9114 §4.2.2: a field's size is its name and value lengths plus 32.</summary>
    public long Size => Name.Length + Value.Length + 32L;
}
