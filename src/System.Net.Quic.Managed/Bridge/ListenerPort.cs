using System.Collections.Generic;
using System.Net.Quic.Managed.Core;
using System.Net.Quic.Managed.Io;
using System.Net.Quic.Managed.Tls;
using System.Net.Security;
using System.Net.Sockets;

namespace System.Net.Quic.Managed.Bridge;

/// <summary>
/// One bound UDP port shared by every managed listener on it, as msquic shares a binding: listeners with disjoint ALPN
/// lists listen on the same address and port, and each new client goes to the first listener that has an application
/// protocol in common with its ClientHello (RFC 7301). A second listener with an ALPN already taken on the port fails
/// with <see cref="QuicError.AlpnInUse"/>. The port is the endpoint's connection factory and routes to the listeners.
/// With <see cref="QuicListenerOptions.ListenerSockets"/> above 1 the port is several SO_REUSEPORT sockets, each with its own
/// driver and endpoint (a worker, <see cref="Hosts"/>); the listeners see one port, and each holds a reference on every worker.
/// </summary>
internal sealed class ListenerPort : IServerConnectionFactory
{
    private static readonly Dictionary<IPEndPoint, ListenerPort> s_ports = new();

    private readonly IPEndPoint _key;
    // Copy-on-write: read on the driver thread, replaced under s_ports' lock.
    private volatile ManagedListener[] _listeners = Array.Empty<ManagedListener>();

    private ListenerPort(IPEndPoint key) => _key = key;

    public ManagedDriverHost Host { get; private set; } = null!;

    /// <summary>Every worker of the port; <see cref="Host"/> is the first.</summary>
    public ManagedDriverHost[] Hosts { get; private set; } = [];

    /// <summary>Moves misdelivered datagrams between workers (null with one worker).</summary>
    public ListenerWorkerHandoff? Handoff { get; private set; }

    /// <summary>True when the kernel steers short headers to their worker (the reuseport program is attached).</summary>
    public bool KernelSteering { get; private set; }

    /// <summary>Adds a listener to the port its options name, binding the port if no managed listener has it yet.</summary>
    public static ManagedListener Listen(QuicListenerOptions options, Func<ManagedDriverHost, ListenerPort, ManagedListener> create)
    {
        lock (s_ports)
        {
            if (options.ListenEndPoint.Port != 0 && s_ports.TryGetValue(options.ListenEndPoint, out ListenerPort? shared))
            {
                foreach (ManagedListener other in shared._listeners)
                {
                    foreach (SslApplicationProtocol protocol in options.ApplicationProtocols)
                    {
                        if (other.ApplicationProtocols.Contains(protocol))
                        {
                            throw new QuicException(QuicError.AlpnInUse, null, null, $"Application protocol '{protocol}' is already in use on {options.ListenEndPoint}.", null);
                        }
                    }
                }
                foreach (ManagedDriverHost host in shared.Hosts) host.AddReference();
                ManagedListener joined = create(shared.Host, shared);
                shared._listeners = [.. shared._listeners, joined];
                return joined;
            }

            int requested = options.EffectiveListenerSockets;
            // A group spanning processes (ReusePortGroupSize): this listener's sockets are indices first.. of group.
            int group = options.EffectiveReusePortGroupSize;
            int firstWorker = options.EffectiveReusePortGroupIndex;
            bool steered = false;
            bool grouped = false;
            Socket[] sockets = group > 1
                ? ReusePortGroup.Bind(options.ListenEndPoint, requested, group, ListenerEndpointOptions.WorkerTagOffset(options, group), out steered, out grouped)
                : [UdpSocketFactory.Bind(options.ListenEndPoint)];
            if (!grouped)
            {
                group = 1; // no SO_REUSEPORT here: one ordinary socket, no worker tag
                firstWorker = 0;
            }
            var key = (IPEndPoint)sockets[0].LocalEndPoint!;
            var port = new ListenerPort(key) { KernelSteering = group > 1 && steered };
            port.Handoff = group > 1 ? new ListenerWorkerHandoff(firstWorker) : null;
            // A preferred address (RFC 9000 §9.6) is a second socket of the same endpoint: both drivers share one loop thread.
            Socket? preferredSocket = options.PreferredAddress is { } preferred && sockets.Length == 1 ? BindPreferred(preferred, sockets) : null;
            UdpDriverLoop? pathLoop = preferredSocket is null ? null : new UdpDriverLoop($"QuicManaged listener {key}");
            pathLoop?.Reserve();
            var hosts = new ManagedDriverHost[sockets.Length];
            for (int i = 0; i < hosts.Length; i++)
            {
                EndpointOptions endpointOptions = ListenerEndpointOptions.Create(options, key.ToString(), firstWorker + i, group, port.Handoff);
                var endpoint = new Endpoint(endpointOptions, hosts.Length == 1 ? port : new WorkerFactory(port, i));
                string name = hosts.Length == 1 ? $"QuicManaged listener {key}" : $"QuicManaged listener {key} #{i}";
                hosts[i] = new ManagedDriverHost(sockets[i], endpoint, name, sharedPort: group > 1, loop: pathLoop, multiPath: pathLoop is not null) { Listeners = port };
            }
            if (preferredSocket is not null) hosts[0].AddPath(1, preferredSocket);
            port.Hosts = hosts;
            port.Host = hosts[0];
            port.Handoff?.SetHosts(hosts);
            ManagedListener first = create(port.Host, port);
            port._listeners = [first];
            s_ports[key] = port;
            foreach (ManagedDriverHost host in hosts) host.Start();
            return first;
        }
    }

    /// <summary>The preferred address's socket; the listen socket is closed when it cannot be bound.</summary>
    private static Socket BindPreferred(IPEndPoint preferred, Socket[] sockets)
    {
        try
        {
            return UdpSocketFactory.Bind(preferred);
        }
        catch
        {
            foreach (Socket socket in sockets) socket.Dispose();
            throw;
        }
    }

    /// <summary>The listener stops taking connections; the port closes with its last listener.</summary>
    public void Remove(ManagedListener listener)
    {
        lock (s_ports)
        {
            var remaining = new List<ManagedListener>(_listeners);
            remaining.Remove(listener);
            _listeners = remaining.ToArray();
            if (remaining.Count == 0 && s_ports.TryGetValue(_key, out ListenerPort? registered) && registered == this) s_ports.Remove(_key);
        }
        // The listener releases its reference on the first worker itself; the port gives back the ones on the others.
        for (int i = 1; i < Hosts.Length; i++) Hosts[i].Release();
    }

    /// <summary>
    /// Driver thread: the first listener sharing an ALPN with the client (the first listener when the ALPN is not known
    /// yet). A client sharing none is refused here with no_application_protocol, before any connection object exists, as
    /// msquic does: no listener's AcceptConnectionAsync hears of it.
    /// </summary>
    public IncomingDecision Decide(in IncomingConnectionRequest request) => Decide(request, Host);

    /// <summary>As <see cref="Decide(in IncomingConnectionRequest)"/>, on the driver thread of worker <paramref name="host"/>.</summary>
    private IncomingDecision Decide(in IncomingConnectionRequest request, ManagedDriverHost host)
    {
        ManagedListener[] listeners = _listeners;
        if (listeners.Length == 0) return IncomingDecision.Drop;
        if (request.ApplicationProtocols is not { } offered) return listeners[0].Decide(request, host);
        foreach (ManagedListener listener in listeners)
        {
            foreach (byte[] protocol in offered)
            {
                if (listener.Accepts(protocol)) return listener.Decide(request, host);
            }
        }
        return IncomingDecision.Refuse(TlsAlert.NoApplicationProtocol.ToTransportErrorCode(), "no listener on this port takes the client's application protocols");
    }

    bool IServerConnectionFactory.TryCreate(in IncomingConnectionRequest request, out ConnectionOptions options, out ICryptoHandshake handshake)
        => throw new NotSupportedException();

    public void Abandon(object? owner)
    {
        if (owner is ManagedConnection { Listener: { } listener } connection) listener.Abandon(connection);
    }

    /// <summary>Driver thread of <paramref name="host"/>, after each step: its endpoint's new connections, each paired with the object created for it.</summary>
    public void OnStep(ManagedDriverHost host)
    {
        while (host.Endpoint.TryAccept(out Connection core, out object? owner))
        {
            if (owner is not ManagedConnection connection) continue;
            connection.AttachServer(core);
            host.Add(connection);
        }
    }

    /// <summary>The connection factory of worker <see cref="Worker"/>: decides on that worker's thread, for that worker's host.</summary>
    private sealed class WorkerFactory(ListenerPort port, int worker) : IServerConnectionFactory
    {
        public int Worker => worker;

        public IncomingDecision Decide(in IncomingConnectionRequest request) => port.Decide(request, port.Hosts[worker]);

        bool IServerConnectionFactory.TryCreate(in IncomingConnectionRequest request, out ConnectionOptions options, out ICryptoHandshake handshake)
            => throw new NotSupportedException();

        public void Abandon(object? owner) => port.Abandon(owner);
    }
}
