namespace System.Net.Quic.Managed.Tests.Simulation;

/// <summary>A simulated UDP address: host id (selects the link) and port (selects the endpoint on that host).</summary>
internal readonly struct SimAddress : IEquatable<SimAddress>
{
    public SimAddress(int host, int port)
    {
        Host = host;
        Port = port;
    }

    public int Host { get; }

    public int Port { get; }

    /// <summary>An IPv4 rendering (10.h.h.h:port) for code that wants an <see cref="IPEndPoint"/>.</summary>
    public IPEndPoint ToIPEndPoint()
        => new(new IPAddress(new byte[] { 10, (byte)(Host >> 16), (byte)(Host >> 8), (byte)Host }), Port);

    /// <summary>Inverse of <see cref="ToIPEndPoint"/> for 10.h.h.h IPv4 addresses.</summary>
    public static SimAddress FromIPEndPoint(IPEndPoint endPoint)
    {
        ArgumentNullException.ThrowIfNull(endPoint);
        Span<byte> bytes = stackalloc byte[16];
        if (!endPoint.Address.TryWriteBytes(bytes, out int written) || written != 4 || bytes[0] != 10)
        {
            throw new ArgumentException($"{endPoint} is not a simulated (10.x.y.z IPv4) address.", nameof(endPoint));
        }

        return new SimAddress((bytes[1] << 16) | (bytes[2] << 8) | bytes[3], endPoint.Port);
    }

    public bool Equals(SimAddress other) => Host == other.Host && Port == other.Port;

    public override bool Equals(object? obj) => obj is SimAddress other && Equals(other);

    public override int GetHashCode() => HashCode.Combine(Host, Port);

    public override string ToString() => $"h{Host}:{Port}";

    public static bool operator ==(SimAddress left, SimAddress right) => left.Equals(right);

    public static bool operator !=(SimAddress left, SimAddress right) => !left.Equals(right);
}
