using System.Net.Security;
using static System.Net.Quic.Managed.Tests.Api.QuicApiTestEnvironment;

namespace System.Net.Quic.Managed.Tests.Api;

/// <summary>The QUIC_MANAGED_PROVIDER / AppContext switch and how each provider reports support.</summary>
public class ProviderSwitchTests
{
    [Theory]
    [InlineData(null, "Managed")]
    [InlineData("", "Managed")]
    [InlineData("managed", "Managed")]
    [InlineData("msquic", "MsQuic")]
    [InlineData(" MsQuic ", "MsQuic")]
    [InlineData("quic-go", "Managed")]
    public void ParsesTheSwitchValue(string? value, string expected)
        => Assert.Equal(expected, QuicProviderSelection.Parse(value).ToString());

    [Fact]
    public void ManagedProviderIsAlwaysSupportedAndIsTheDefaultWithoutTheSwitch()
    {
        Assert.True(QuicProviderSelection.IsSupported(QuicProviderKind.Managed));
        string? env = Environment.GetEnvironmentVariable(QuicProviderSelection.EnvironmentVariable);
        if (string.IsNullOrEmpty(env) && AppContext.GetData(QuicProviderSelection.AppContextSwitch) is null)
        {
            Assert.Equal(QuicProviderKind.Managed, QuicProviderSelection.Default);
            Assert.True(QuicConnection.IsSupported);
            Assert.True(QuicListener.IsSupported);
        }
    }

    [Fact]
    public void MsQuicProviderSupportFollowsSystemNetQuic()
        => Assert.Equal(System.Net.Quic.QuicConnection.IsSupported && System.Net.Quic.QuicListener.IsSupported,
            QuicProviderSelection.IsSupported(QuicProviderKind.MsQuic));

    [SkippableFact]
    public async Task MsQuicProviderWithoutLibMsQuicThrowsPlatformNotSupportedWithTheReason()
    {
        Skip.If(QuicProviderSelection.IsSupported(QuicProviderKind.MsQuic), "libmsquic is loadable here: the unsupported path cannot be exercised");
        var client = ClientOptions(new IPEndPoint(IPAddress.Loopback, 443));
        var e = Assert.Throws<PlatformNotSupportedException>(() => QuicConnection.ConnectAsync(client, QuicProviderKind.MsQuic, CancellationToken.None));
        Assert.Contains("libmsquic", e.Message);
        Assert.Contains(QuicProviderSelection.EnvironmentVariable, e.Message);
        var listen = Assert.Throws<PlatformNotSupportedException>(() => QuicListener.ListenAsync(ListenerOptions(IPAddress.Loopback), QuicProviderKind.MsQuic, CancellationToken.None));
        Assert.Contains("libmsquic", listen.Message);
        // Options are still validated first, as on the managed provider.
        Assert.Throws<ArgumentNullException>(() => QuicConnection.ConnectAsync(null!, QuicProviderKind.MsQuic, CancellationToken.None));
        await Task.CompletedTask;
    }

    [Fact]
    public async Task EnabledSslProtocolsWithoutTls13IsRejected()
    {
        var options = ClientOptions(new IPEndPoint(IPAddress.Loopback, 443));
        options.ClientAuthenticationOptions.EnabledSslProtocols = System.Security.Authentication.SslProtocols.Tls12;
        await Assert.ThrowsAsync<ArgumentException>(() => QuicConnection.ConnectAsync(options, QuicProviderKind.Managed, CancellationToken.None).AsTask());
    }
}
