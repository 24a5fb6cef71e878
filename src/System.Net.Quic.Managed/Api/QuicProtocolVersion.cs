using System.Collections.Generic;

namespace System.Net.Quic.Managed;

/// <summary>Extension beyond System.Net.Quic: the QUIC versions this library speaks (the value is the wire version).</summary>
public enum QuicProtocolVersion
{
    /// <summary>QUIC version 1 (RFC 9000), 0x00000001.</summary>
    Version1 = 0x00000001,

    /// <summary>QUIC version 2 (RFC 9369), 0x6b3343cf.</summary>
    Version2 = 0x6b3343cf,
}

/// <summary>Validation and mapping of the version lists in the options.</summary>
internal static class QuicProtocolVersions
{
    /// <summary>Null, or a non-empty list of distinct defined versions; anything else is an <see cref="ArgumentException"/>.</summary>
    public static void Validate(IList<QuicProtocolVersion>? versions, string argumentName, string propertyName)
    {
        if (versions is null) return;
        if (versions.Count == 0) throw new ArgumentException($"'{propertyName}' must be null or list at least one version.", argumentName);
        for (int i = 0; i < versions.Count; i++)
        {
            if (versions[i] is not (QuicProtocolVersion.Version1 or QuicProtocolVersion.Version2))
            {
                throw new ArgumentException($"'{propertyName}' contains {(int)versions[i]:x8}, which is not a QUIC version this library speaks (1 or 2).", argumentName);
            }
            for (int j = 0; j < i; j++)
            {
                if (versions[j] == versions[i]) throw new ArgumentException($"'{propertyName}' lists {versions[i]} twice.", argumentName);
            }
        }
    }

    public static uint[]? ToWire(IList<QuicProtocolVersion>? versions)
    {
        if (versions is null) return null;
        var wire = new uint[versions.Count];
        for (int i = 0; i < wire.Length; i++) wire[i] = (uint)versions[i];
        return wire;
    }
}
