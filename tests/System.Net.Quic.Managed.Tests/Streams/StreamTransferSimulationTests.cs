using System.Net.Quic.Managed.Streams;
using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Tests.Streams;

/// <summary>
/// Two stream tables wired back to back the way a connection core would use them, over a lossy, reordering,
/// duplicating "network" of frames: many unidirectional streams (more than the stream limit), small flow-control
/// windows, loss of data and of every control frame. Checks byte-exact delivery, bounded memory, stream release and
/// MAX_STREAMS churn.
/// </summary>
public class StreamTransferSimulationTests
{
    private enum Kind { Stream, StreamDataBlocked, DataBlocked, StreamsBlocked, MaxStreamData, MaxData, MaxStreams }

    private sealed class Frame
    {
        public Kind Kind;
        public long Id;
        public long Offset;
        public byte[] Data = Array.Empty<byte>();
        public bool Fin;
        public long Value;
    }

    private sealed class Network
    {
        private readonly Random _random;
        private readonly List<(long Time, Frame Frame, bool ToServer, bool Deliver, bool Ack)> _events = new();

        public Network(Random random) => _random = random;

        public int Pending => _events.Count;

        // A frame is delivered (possibly twice, in any order) and acknowledged later, or lost and reported lost.
        public void Send(long now, Frame frame, bool toServer, double lossRate)
        {
            if (_random.NextDouble() < lossRate)
            {
                _events.Add((now + 3, frame, toServer, false, false));
                return;
            }

            long delivery = now + _random.Next(1, 4);
            _events.Add((delivery, frame, toServer, true, false));
            if (_random.Next(20) == 0)
            {
                _events.Add((delivery + _random.Next(0, 3), frame, toServer, true, false)); // duplicate
            }

            _events.Add((delivery + _random.Next(1, 3), frame, toServer, false, true));
        }

        public List<(Frame Frame, bool ToServer, bool Deliver, bool Ack)> Due(long now)
        {
            var due = new List<(Frame, bool, bool, bool)>();
            for (int i = 0; i < _events.Count; i++)
            {
                if (_events[i].Time <= now)
                {
                    due.Add((_events[i].Frame, _events[i].ToServer, _events[i].Deliver, _events[i].Ack));
                    _events.RemoveAt(i--);
                }
            }

            // Shuffle: deliveries within a tick arrive in any order.
            for (int i = due.Count - 1; i > 0; i--)
            {
                int j = _random.Next(i + 1);
                (due[i], due[j]) = (due[j], due[i]);
            }

            return due;
        }
    }

    [Theory]
    [InlineData(1, 0.0)]
    [InlineData(2, 0.1)]
    [InlineData(3, 0.3)]
    public void ManyStreamsOverLossyNetworkDeliverExactly(int seed, double lossRate)
    {
        var random = new Random(seed);
        const int streamCount = 12;
        const int window = 3000;
        var options = new StreamTableOptions
        {
            InitialMaxData = window * 3,
            MaxConnectionReceiveWindow = window * 12,
            InitialMaxStreamDataBidiLocal = window,
            InitialMaxStreamDataBidiRemote = window,
            InitialMaxStreamDataUni = window,
            MaxStreamReceiveWindow = window * 4,
            MaxStreamsBidi = 3,
            MaxStreamsUni = 3,
            MaxSendBufferPerStream = 4000,
            ChunkSize = 256,
        };
        var client = new StreamTable(isServer: false, options);
        var server = new StreamTable(isServer: true, options);
        Assert.Equal(TransportErrorCode.NoError, client.ApplyPeerTransportParameters(options.InitialMaxData, window, window, window, 3, 3, out _));
        Assert.Equal(TransportErrorCode.NoError, server.ApplyPeerTransportParameters(options.InitialMaxData, window, window, window, 3, 3, out _));

        var payloads = new byte[streamCount][];
        for (int i = 0; i < streamCount; i++)
        {
            payloads[i] = new byte[random.Next(0, 20000)];
            random.NextBytes(payloads[i]);
        }

        var written = new int[streamCount];
        var received = new List<byte>[streamCount];
        var done = new bool[streamCount];
        var clientStreams = new Dictionary<long, int>();
        var net = new Network(random);
        int opened = 0;
        int finished = 0;
        var packet = new byte[1200];
        var readBuffer = new byte[2000];
        long now = 0;
        int maxConcurrentServerStreams = 0;

        while (finished < streamCount)
        {
            now++;
            Assert.True(now < 20000, $"stalled: finished {finished}, opened {opened}, pending {net.Pending}");

            // Client application: open streams while allowed, write what fits.
            while (opened < streamCount && client.TryOpenLocalStream(unidirectional: true, out TransportStream? s))
            {
                Assert.Equal(StreamId.Make(opened, false, true), s.Id);
                clientStreams[s.Id] = opened;
                received[opened] = new List<byte>();
                opened++;
            }

            if (client.LocalUniLimit.NeedsStreamsBlocked)
            {
                long limit = client.LocalUniLimit.MaxStreams;
                client.LocalUniLimit.OnStreamsBlockedSent(limit);
                net.Send(now, new Frame { Kind = Kind.StreamsBlocked, Value = limit }, true, lossRate);
            }

            foreach (TransportStream s in client.Streams)
            {
                int i = clientStreams[s.Id];
                if (s.Send!.State is SendStreamState.Ready or SendStreamState.Send && !s.Send.Buffer.IsFinRequested)
                {
                    int n = Math.Min(random.Next(0, 3000), payloads[i].Length - written[i]);
                    written[i] += s.Send.Write(payloads[i].AsSpan(written[i], n), written[i] + n == payloads[i].Length);
                    client.RefreshSendable(s);
                }

                Assert.True(s.Send.Buffer.AllocatedBytes <= options.MaxSendBufferPerStream + (2 * options.ChunkSize));
            }

            // Client packet building: round robin, at most one visit per queued stream.
            int visits = client.SendableCount;
            for (int v = 0; v < visits && client.TryDequeueSendable(out TransportStream? s); v++)
            {
                SendStream send = s.Send!;
                if (send.NeedsStreamDataBlocked)
                {
                    long limit = send.BlockedLimit;
                    send.OnStreamDataBlockedSent(limit);
                    net.Send(now, new Frame { Kind = Kind.StreamDataBlocked, Id = s.Id, Value = limit }, true, lossRate);
                }

                int room = random.Next(1, packet.Length);
                if (send.TryTakeNextToSend(packet.AsSpan(0, room), out long off, out int len, out bool fin))
                {
                    net.Send(now, new Frame { Kind = Kind.Stream, Id = s.Id, Offset = off, Data = packet.AsSpan(0, len).ToArray(), Fin = fin }, true, lossRate);
                }

                client.RefreshSendable(s);
            }

            if (client.ConnectionSendCredit.NeedsBlockedFrame && client.HasSendableStreams)
            {
                long limit = client.ConnectionSendCredit.MaxData;
                client.ConnectionSendCredit.OnBlockedFrameSent(limit);
                net.Send(now, new Frame { Kind = Kind.DataBlocked, Value = limit }, true, lossRate);
            }

            // Server application: accept and read a random amount from every stream.
            while (server.TryAcceptIncomingStream(out _))
            {
            }

            maxConcurrentServerStreams = Math.Max(maxConcurrentServerStreams, server.Count);
            var toRelease = new List<TransportStream>();
            foreach (TransportStream s in server.Streams)
            {
                ReceiveStream r = s.Receive!;
                int i = (int)StreamId.Index(s.Id);
                int n = r.Read(readBuffer.AsSpan(0, random.Next(0, readBuffer.Length)), out bool fin, out bool reset);
                Assert.False(reset);
                received[i].AddRange(readBuffer.AsSpan(0, n).ToArray());
                Assert.True(r.Buffer.BufferedBytes <= r.Window.MaxData - r.Buffer.ReadOffset);
                Assert.True(r.Buffer.AllocatedBytes <= options.MaxStreamReceiveWindow + (2 * options.ChunkSize));
                if (fin)
                {
                    Assert.Equal(payloads[i], received[i].ToArray());
                    Assert.False(done[i]);
                    done[i] = true;
                    finished++;
                    toRelease.Add(s);
                }
                else
                {
                    server.RefreshSendable(s);
                }
            }

            foreach (TransportStream s in toRelease)
            {
                Assert.True(server.TryRelease(s));
            }

            // Server packet building: flow-control and stream-limit updates.
            visits = server.SendableCount;
            for (int v = 0; v < visits && server.TryDequeueSendable(out TransportStream? s); v++)
            {
                if (s.Receive!.NeedsMaxStreamData)
                {
                    long max = s.Receive.CommitMaxStreamData(now * 1000, smoothedRttUs: 3000);
                    net.Send(now, new Frame { Kind = Kind.MaxStreamData, Id = s.Id, Value = max }, false, lossRate);
                }
            }

            if (server.NeedsMaxData)
            {
                net.Send(now, new Frame { Kind = Kind.MaxData, Value = server.CommitMaxData(now * 1000, 3000) }, false, lossRate);
            }

            if (server.RemoteUniLimit.NeedsMaxStreams)
            {
                net.Send(now, new Frame { Kind = Kind.MaxStreams, Value = server.RemoteUniLimit.CommitMaxStreams() }, false, lossRate);
            }

            // Network events.
            foreach (var (f, toServer, deliver, ack) in net.Due(now))
            {
                string? reason;
                if (deliver && toServer)
                {
                    TransportErrorCode error = f.Kind switch
                    {
                        Kind.Stream => server.OnStreamFrame(f.Id, f.Offset, f.Data, f.Fin, out reason),
                        Kind.StreamDataBlocked => server.OnStreamDataBlockedFrame(f.Id, f.Value, out reason),
                        Kind.StreamsBlocked => server.OnStreamsBlockedFrame(true, f.Value, out reason),
                        _ => Nothing(() => server.OnDataBlockedFrame(f.Value), out reason),
                    };
                    Assert.True(error == TransportErrorCode.NoError, $"{f.Kind} {f.Id}: {error} {reason}");
                }
                else if (deliver)
                {
                    TransportErrorCode error = f.Kind switch
                    {
                        Kind.MaxStreamData => client.OnMaxStreamDataFrame(f.Id, f.Value, out reason),
                        Kind.MaxStreams => client.OnMaxStreamsFrame(true, f.Value, out reason),
                        _ => Nothing(() => client.OnMaxDataFrame(f.Value), out reason),
                    };
                    Assert.True(error == TransportErrorCode.NoError, $"{f.Kind}: {error} {reason}");
                }
                else if (toServer)
                {
                    // Fate of a client frame, reported to the client.
                    TransportStream? s = null;
                    if (f.Kind is Kind.Stream or Kind.StreamDataBlocked && !client.TryGetStream(f.Id, out s))
                    {
                        Assert.True(ack || f.Kind == Kind.StreamDataBlocked, "loss reported for a released stream's data");
                        continue;
                    }

                    switch (f.Kind)
                    {
                        case Kind.Stream when ack:
                            s!.Send!.OnStreamFrameAcked(f.Offset, f.Data.Length, f.Fin);
                            if (s.IsClosed)
                            {
                                Assert.True(client.TryRelease(s));
                            }

                            break;
                        case Kind.Stream:
                            s!.Send!.OnStreamFrameLost(f.Offset, f.Data.Length, f.Fin);
                            client.RefreshSendable(s);
                            break;
                        case Kind.StreamDataBlocked when !ack:
                            s!.Send!.OnStreamDataBlockedLost(f.Value);
                            client.RefreshSendable(s);
                            break;
                        case Kind.DataBlocked when !ack:
                            client.ConnectionSendCredit.OnBlockedFrameLost(f.Value);
                            break;
                        case Kind.StreamsBlocked when !ack:
                            client.LocalUniLimit.OnStreamsBlockedLost(f.Value);
                            break;
                    }
                }
                else if (!ack)
                {
                    // A server control frame was lost: repeat it if it still matters.
                    switch (f.Kind)
                    {
                        case Kind.MaxStreamData when server.TryGetStream(f.Id, out TransportStream? s):
                            s.Receive!.OnMaxStreamDataLost(f.Value);
                            server.RefreshSendable(s);
                            break;
                        case Kind.MaxData:
                            server.OnMaxDataLost(f.Value);
                            break;
                        case Kind.MaxStreams:
                            server.RemoteUniLimit.OnMaxStreamsLost(f.Value);
                            break;
                    }
                }
            }
        }

        Assert.Equal(streamCount, server.RemoteUniLimit.OpenedCount);
        Assert.Equal(streamCount, server.RemoteUniLimit.ClosedCount);
        Assert.True(maxConcurrentServerStreams <= 3);
        Assert.Equal(0, server.Count);
        long total = 0;
        foreach (byte[] p in payloads) total += p.Length;
        Assert.Equal(total, server.ConnectionReceiveWindow.Received);
        Assert.Equal(total, server.ConnectionReceiveWindow.Consumed);
        Assert.Equal(total, client.ConnectionSendCredit.Sent);
    }

    private static TransportErrorCode Nothing(Action action, out string? reason)
    {
        action();
        reason = null;
        return TransportErrorCode.NoError;
    }
}
