using System.Net.Quic.Managed.Crypto;

namespace System.Net.Quic.Managed.Core;

/// <summary>
/// Version negotiation state of one connection (RFC 9000 §6, RFC 9368): the version the connection started in, the
/// versions it announces, the Initial keys of the original version kept during a compatible upgrade, and the bits
/// left for greasing the QUIC bit (RFC 9287).
/// </summary>
internal sealed class VersionState
{
    public uint Original;

    public uint[] Available = Array.Empty<uint>();

    public PacketProtectionKeys? OriginalInitialReceiveKeys;

    public ulong GreaseBits;

    public int GreaseBitsLeft;
}
