using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Core;

/// <summary>
/// What one sent packet carried that matters when it is acknowledged or lost (RFC 9000 §13.3: retransmission is per
/// frame, with current values, never per packet), in typed fields (the model is quinn-proto's <c>SentFrames</c>):
/// the largest packet number its ACK acknowledged, the connection-level control frames (<see cref="Retransmits"/>),
/// CRYPTO ranges, the stream frames per scheduler visit, DATAGRAM numbers and the frames never repeated. The writers
/// fill it; <c>Connection.OnPacketAcked</c> and <c>Connection.OnPacketLost</c> read it. Reused through
/// <see cref="SentFramesPool"/>: the lists keep their arrays, so recording a packet does not allocate in steady state.
/// </summary>
internal sealed class SentFrames
{
    /// <summary>The largest packet number the packet's ACK frame acknowledged: once that is acknowledged, older ranges need not be sent again.</summary>
    public long? LargestAcknowledged;

    public Retransmits Retransmits;

    public ReusableList<SentCryptoRange> Crypto;

    /// <summary>Per scheduler visit of a stream, in order.</summary>
    public ReusableList<SentStreamFrames> Streams;

    /// <summary>The STREAM ranges of all visits (each visit has a contiguous run).</summary>
    public ReusableList<SentStreamRange> StreamRanges;

    /// <summary>The connection's numbers of the DATAGRAM frames (RFC 9221): never repeated, the outcome is reported.</summary>
    public ReusableList<long> Datagrams;

    /// <summary>The DATAGRAM frames were written before the STREAM frames (the connection alternates the two).</summary>
    public bool DatagramsFirst;

    /// <summary>PATH_RESPONSE frames: never retransmitted (RFC 9000 §8.2.2); a new PATH_CHALLENGE gets a new response.</summary>
    public int PathResponses;

    /// <summary>Frames a test wrote verbatim: nothing to repeat.</summary>
    public bool RawForTesting;

    /// <summary>PING (also the probe of an otherwise empty packet): nothing to repeat.</summary>
    public bool Ping;

    public bool IsEmpty => LargestAcknowledged is null && Retransmits.IsEmpty && Crypto.Count == 0 && Streams.Count == 0
        && Datagrams.Count == 0 && PathResponses == 0 && !RawForTesting && !Ping;

    /// <summary>The record of the stream frames of one scheduler visit, started on first use (<paramref name="visit"/> -1 until then).</summary>
    public ref SentStreamFrames StreamVisit(ref int visit, long streamId)
    {
        if (visit < 0)
        {
            visit = Streams.Count;
            Streams.Add(new SentStreamFrames(streamId, StreamRanges.Count));
        }
        return ref Streams[visit];
    }

    /// <summary>A STREAM frame of the visit <paramref name="visit"/> of stream <paramref name="streamId"/>.</summary>
    public void AddStreamRange(ref int visit, long streamId, long offset, int length, bool fin)
    {
        StreamVisit(ref visit, streamId).RangeCount++;
        StreamRanges.Add(new SentStreamRange(offset, length, fin));
    }

    /// <summary>A DATAGRAM frame of the connection's number <paramref name="number"/>.</summary>
    public void AddDatagram(long number)
    {
        if (Datagrams.Count == 0 && Streams.Count == 0) DatagramsFirst = true;
        Datagrams.Add(number);
    }

    /// <summary>
    /// The RFC 9000 frame types recorded, in the order the connection writes them, as many as fit in
    /// <paramref name="types"/>; returns how many. PING stands for the frames without a type of their own here
    /// (verbatim test frames, DATAGRAM).
    /// </summary>
    public int GetFrameTypes(Span<ulong> types)
    {
        int n = 0;
        if (LargestAcknowledged is not null) Put(types, ref n, FrameType.Ack);
        if (RawForTesting) Put(types, ref n, FrameType.Ping);
        ref readonly Retransmits r = ref Retransmits;
        if (r.HandshakeDone) Put(types, ref n, FrameType.HandshakeDone);
        for (int i = 0; i < PathResponses; i++) Put(types, ref n, FrameType.PathResponse);
        if (r.PathChallenge) Put(types, ref n, FrameType.PathChallenge);
        if (r.NewToken) Put(types, ref n, FrameType.NewToken);
        if (r.MaxData is not null) Put(types, ref n, FrameType.MaxData);
        if (r.MaxStreamsBidirectional is not null) Put(types, ref n, FrameType.MaxStreamsBidirectional);
        if (r.MaxStreamsUnidirectional is not null) Put(types, ref n, FrameType.MaxStreamsUnidirectional);
        if (r.StreamsBlockedBidirectional is not null) Put(types, ref n, FrameType.StreamsBlockedBidirectional);
        if (r.StreamsBlockedUnidirectional is not null) Put(types, ref n, FrameType.StreamsBlockedUnidirectional);
        if (r.DataBlocked is not null) Put(types, ref n, FrameType.DataBlocked);
        for (int i = 0; i < r.NewConnectionIds.Count; i++) Put(types, ref n, FrameType.NewConnectionId);
        for (int i = 0; i < r.RetireConnectionIds.Count; i++) Put(types, ref n, FrameType.RetireConnectionId);
        for (int i = 0; i < Crypto.Count; i++) Put(types, ref n, FrameType.Crypto);
        if (DatagramsFirst) PutDatagrams(types, ref n);
        foreach (ref readonly SentStreamFrames visit in Streams.Items)
        {
            if (visit.ResetStream) Put(types, ref n, FrameType.ResetStream);
            if (visit.StopSending) Put(types, ref n, FrameType.StopSending);
            if (visit.MaxStreamData is not null) Put(types, ref n, FrameType.MaxStreamData);
            if (visit.DataBlocked is not null) Put(types, ref n, FrameType.StreamDataBlocked);
            for (int i = 0; i < visit.RangeCount; i++) Put(types, ref n, FrameType.Stream);
        }
        if (!DatagramsFirst) PutDatagrams(types, ref n);
        if (Ping) Put(types, ref n, FrameType.Ping);
        return n;

        void PutDatagrams(Span<ulong> types, ref int n)
        {
            for (int i = 0; i < Datagrams.Count; i++) Put(types, ref n, FrameType.Ping);
        }

        static void Put(Span<ulong> types, ref int n, FrameType type)
        {
            if (n < types.Length) types[n++] = (ulong)type;
        }
    }

    public void Clear()
    {
        LargestAcknowledged = null;
        Retransmits.Clear();
        Crypto.Clear();
        Streams.Clear();
        StreamRanges.Clear();
        Datagrams.Clear();
        DatagramsFirst = false;
        PathResponses = 0;
        RawForTesting = false;
        Ping = false;
    }
}
