using System.Net.Security;
using static System.Net.Quic.Managed.Tests.Api.QuicApiTestEnvironment;

namespace System.Net.Quic.Managed.Tests.Api;

/// <summary>The listener's ConnectionOptionsCallback sees the client's SNI, as System.Net.Quic's does.</summary>
public class ConnectionOptionsCallbackTests
{
    [Theory]
    [InlineData("localhost")]
    [InlineData("sni-check.example")]
    public async Task CallbackSeesTheTargetHostNameOfTheClient(string targetHost)
    {
        var seen = new TaskCompletionSource<string>(TaskCreationOptions.RunContinuationsAsynchronously);
        QuicListenerOptions listenerOptions = ListenerOptions(IPAddress.Loopback);
        Func<QuicConnection, SslClientHelloInfo, CancellationToken, ValueTask<QuicServerConnectionOptions>> inner = listenerOptions.ConnectionOptionsCallback;
        listenerOptions.ConnectionOptionsCallback = (connection, hello, token) =>
        {
            seen.TrySetResult(hello.ServerName);
            return inner(connection, hello, token);
        };
        await using QuicListener listener = await QuicListener.ListenAsync(listenerOptions, QuicProvider.Managed);

        QuicClientConnectionOptions client = ClientOptions(listener.LocalEndPoint);
        client.ClientAuthenticationOptions.TargetHost = targetHost;
        // The test certificate names "localhost" only; the other name needs the check waived to complete the handshake.
        if (targetHost != "localhost") client.ClientAuthenticationOptions.RemoteCertificateValidationCallback = (_, _, _, _) => true;
        var (clientConnection, serverConnection) = await ConnectPairAsync(QuicProvider.Managed, listener, client);
        await using (clientConnection)
        await using (serverConnection)
        {
            Assert.Equal(targetHost, await seen.Task.WaitAsync(TimeSpan.FromSeconds(10)));
            Assert.Equal(targetHost, serverConnection.TargetHostName);
        }
    }
}
