namespace System.Net.Quic.Managed.Core;

/// <summary>Supplies a new server connection's options and TLS engine; returning false refuses the connection.</summary>
internal interface IServerConnectionFactory
{
    bool TryCreate(in IncomingConnectionRequest request, out ConnectionOptions options, out ICryptoHandshake handshake);
}
