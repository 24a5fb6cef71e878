using System.Collections.Generic;
using System.Net.Quic.Managed.Core;
using System.Net.Quic.Managed.Io;
using System.Net.Quic.Managed.Tls;
using System.Net.Security;
using System.Net.Sockets;

namespace System.Net.Quic.Managed;

/// <summary>
/// One bound UDP port shared by every managed listener on it, as msquic shares a binding: listeners with disjoint ALPN
/// lists listen on the same address and port, and each new client goes to the first listener that has an application
/// protocol in common with its ClientHello (RFC 7301). A second listener with an ALPN already taken on the port fails
/// with <see cref="QuicError.AlpnInUse"/>. The port is the endpoint's connection factory and routes to the listeners.
/// </summary>
internal sealed class ListenerPort : IServerConnectionFactory
{
    private static readonly Dictionary<IPEndPoint, ListenerPort> s_ports = new();

    private readonly IPEndPoint _key;
    // Copy-on-write: read on the driver thread, replaced under s_ports' lock.
    private volatile ManagedListener[] _listeners = Array.Empty<ManagedListener>();

    private ListenerPort(IPEndPoint key) => _key = key;

    public ManagedDriverHost Host { get; private set; } = null!;

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
                shared.Host.AddReference();
                ManagedListener joined = create(shared.Host, shared);
                shared._listeners = [.. shared._listeners, joined];
                return joined;
            }

            Socket socket = UdpSocketFactory.Bind(options.ListenEndPoint);
            var key = (IPEndPoint)socket.LocalEndPoint!;
            var port = new ListenerPort(key);
            uint[]? versions = QuicProtocolVersions.ToWire(options.ProtocolVersions);
            var endpoint = new Endpoint(new EndpointOptions
            {
                IsServer = true,
                LocalName = key.ToString(),
                RequireRetry = options.RequireRetry,
                SupportedVersions = versions ?? new[] { Wire.QuicVersion.V1, Wire.QuicVersion.V2 },
                PreferredVersions = versions,
            }, port);
            port.Host = new ManagedDriverHost(socket, endpoint, $"QuicManaged listener {key}") { Listeners = port };
            ManagedListener first = create(port.Host, port);
            port._listeners = [first];
            s_ports[key] = port;
            port.Host.Start();
            return first;
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
    }

    /// <summary>Driver thread: the first listener sharing an ALPN with the client (any listener when the ALPN is not known yet).</summary>
    public IncomingDecision Decide(in IncomingConnectionRequest request)
    {
        ManagedListener[] listeners = _listeners;
        if (listeners.Length == 0) return IncomingDecision.Drop;
        if (listeners.Length == 1 || request.ApplicationProtocols is not { } offered) return listeners[0].Decide(request);
        foreach (ManagedListener listener in listeners)
        {
            foreach (byte[] protocol in offered)
            {
                if (listener.Accepts(protocol)) return listener.Decide(request);
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

    /// <summary>Driver thread, after each step: the endpoint's new connections, each paired with the object created for it.</summary>
    public void OnStep()
    {
        while (Host.Endpoint.TryAccept(out Connection core, out object? owner))
        {
            if (owner is not ManagedConnection connection) continue;
            connection.AttachServer(core);
            Host.Add(connection);
        }
    }
}
