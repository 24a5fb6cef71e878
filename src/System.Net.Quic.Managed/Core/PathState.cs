using System.Collections.Generic;
using System.Net.Quic.Managed.Recovery;

namespace System.Net.Quic.Managed.Core;

/// <summary>
/// The path the connection uses (RFC 9000 §9): the peer's address and the one before a change, the local path
/// (socket), address validation (anti-amplification limit, path validator, challenges and responses owed), the
/// client's migration and preferred-address state, ECN validation and marking, path MTU discovery and the datagram
/// size, and the pacer. After quinn-proto's connection/paths.rs PathData; owned by one connection, written on its
/// thread only.
/// </summary>
internal sealed class PathState
{
    public NetworkAddress Remote;

    public NetworkAddress PreviousRemote;

    public AntiAmplificationLimit Amplification;

    public PathValidator? Validator;

    public bool ChallengePending;

    public Queue<ulong> Responses = new();

    public byte LocalPath;

    public byte PreviousLocalPath;

    public byte ReceiveLocalPath;

    public NetworkAddress PreferredAddress;

    public bool PreferredAddressHandled;

    public bool MigratedToPreferredAddress;

    public bool ClientMigrationPending;

    public EcnValidator Ecn = null!; // set by the connection's constructor

    public EcnCodepoint ReceiveEcn;

    public bool SendingEcnMarked;

    public long AckedEcnMarked;

    public PathMtuDiscovery Pmtu = null!; // set by the connection's constructor

    public int MaxDatagramSize;

    public Pacer Pacer = null!; // set by the connection's constructor

    public long PacingBlockedUntilUs = long.MaxValue;
}
