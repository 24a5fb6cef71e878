using System.Collections.Generic;

namespace System.Net.Quic.Managed.Core;

/// <summary>
/// Unreliable datagrams of one connection (RFC 9221, after quinn-proto's connection/datagrams.rs): the bounded queues
/// out and in, the outcomes to report, and which of datagrams or stream data goes first in the next packet.
/// </summary>
internal sealed class DatagramState
{
    public Queue<(long Id, byte[] Data)> ToSend = new();

    public Queue<byte[]> Received = new();

    public Queue<DatagramOutcome> Outcomes = new();

    public long NextId;

    public bool First;

    public bool ReceivedEventPending;

    public bool OutcomeEventPending;
}
