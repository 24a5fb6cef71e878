namespace System.Net.Quic.Managed.Tls;

/// <summary>
/// Tracks which extension types a message carried, so a duplicate is detected (RFC 8446 §4.2: "There MUST NOT be
/// more than one extension of the same type in a given extension block") without allocating per extension.
/// </summary>
internal struct ExtensionSet
{
    private ulong _low;   // types 0..63
    private ulong _high;  // types 64..127; anything larger (GREASE, private use) goes to the list
    private System.Collections.Generic.List<ushort>? _other;

    /// <summary>Records <paramref name="type"/>; returns false if it was already present.</summary>
    public bool TryAdd(ushort type)
    {
        if (type < 64)
        {
            ulong bit = 1UL << type;
            if ((_low & bit) != 0) return false;
            _low |= bit;
            return true;
        }
        if (type < 128)
        {
            ulong bit = 1UL << (type - 64);
            if ((_high & bit) != 0) return false;
            _high |= bit;
            return true;
        }
        _other ??= new System.Collections.Generic.List<ushort>();
        if (_other.Contains(type)) return false;
        _other.Add(type);
        return true;
    }

    public readonly bool Contains(ExtensionType type)
    {
        ushort t = (ushort)type;
        if (t < 64) return (_low & (1UL << t)) != 0;
        if (t < 128) return (_high & (1UL << (t - 64))) != 0;
        return _other != null && _other.Contains(t);
    }
}
