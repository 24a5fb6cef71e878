using System.Collections.Generic;
using System.Net.Quic.Managed.Io;
using System.Net.Sockets;

namespace System.Net.Quic.Managed.Bridge;

/// <summary>
/// Local paths beyond the first socket (RFC 9000 §9): a listener's preferred address, a client's migration socket. Each is a
/// <see cref="UdpDriver"/> of its own on the first driver's <see cref="UdpDriverLoop"/>, so every driver of the host runs on
/// the same thread and the core is never called concurrently. Only hosts whose driver runs on a loop have paths.
/// </summary>
internal sealed partial class ManagedDriverHost
{
    private readonly Dictionary<byte, UdpDriver> _pathDrivers = new();
    private readonly object _pathGate = new();

    /// <summary>The sockets by local path; null when this host has only its first socket (no loop to share).</summary>
    public LocalPathSockets? Paths { get; }

    /// <summary>
    /// Adds local path <paramref name="path"/> on <paramref name="socket"/> (bound): its datagrams reach the endpoint tagged
    /// with the path, and the core's datagrams for the path leave through it. Before <see cref="Start"/> or on the driver thread.
    /// </summary>
    public UdpDriver AddPath(byte path, Socket socket)
    {
        if (Paths is null || Driver.Loop is not { } loop) throw new InvalidOperationException("This host has no local paths.");
        var driver = new UdpDriver(socket, new LocalPathEndpoint(Endpoint, path, Paths), enableSegmentation: true,
            $"QuicManaged path {path} {socket.LocalEndPoint}", loop: loop);
        driver.StepCompleted = OnStep;
        driver.SocketErrorHandler = Driver.SocketErrorHandler;
        lock (_pathGate) _pathDrivers[path] = driver;
        Paths.Set(path, socket);
        loop.Reserve();
        driver.Start();
        return driver;
    }

    /// <summary>Driver thread: closes local path <paramref name="path"/> (its socket goes with its driver).</summary>
    public void RemovePath(byte path)
    {
        UdpDriver? driver;
        lock (_pathGate)
        {
            if (!_pathDrivers.Remove(path, out driver)) return;
        }
        Paths?.Remove(path);
        driver.Dispose();
    }

    /// <summary>The local endpoint of path <paramref name="path"/> (0: the first socket's).</summary>
    public IPEndPoint LocalEndPointOf(byte path)
    {
        if (path == 0) return Driver.LocalEndPoint;
        lock (_pathGate) return _pathDrivers.TryGetValue(path, out UdpDriver? driver) ? driver.LocalEndPoint : Driver.LocalEndPoint;
    }

    private void DisposePathDrivers()
    {
        UdpDriver[] drivers;
        lock (_pathGate)
        {
            drivers = [.. _pathDrivers.Values];
            _pathDrivers.Clear();
        }
        foreach (UdpDriver driver in drivers) driver.Dispose();
    }
}
