using static System.Net.Quic.Managed.Tests.Api.QuicApiTestEnvironment;
using System.Net.Quic.Managed.Bridge;

namespace System.Net.Quic.Managed.Tests.Api;

/// <summary>
/// The provider choice: per-instance <see cref="QuicProvider"/> wins over the AppContext switch, which wins
/// over DOTNET_SYSTEM_NET_QUIC_PROVIDER; read once; an unusable provider throws PlatformNotSupportedException.
/// </summary>
public class ProviderSwitchTests
{
    [Theory]
    [InlineData(null, false, "Managed")]
    [InlineData("", false, "Managed")]
    [InlineData("managed", true, "Managed")]
    [InlineData("MANAGED", true, "Managed")]
    [InlineData("msquic", true, "MsQuic")]
    [InlineData(" MsQuic ", true, "MsQuic")]
    [InlineData("quic-go", false, "Managed")]
    [InlineData("msquic2", false, "Managed")]
    public void ParsesTheSwitchValue(string? value, bool recognized, string expected)
    {
        Assert.Equal(recognized, QuicProviderSelection.TryParse(value, out QuicProvider provider));
        Assert.Equal(expected, provider.ToString());
    }

    [Theory]
    // Nothing set: managed.
    [InlineData(null, null, null, QuicProvider.Managed)]
    // The environment variable alone decides.
    [InlineData(null, null, "msquic", QuicProvider.MsQuic)]
    [InlineData(null, null, "managed", QuicProvider.Managed)]
    // The AppContext switch wins over the environment variable, both ways.
    [InlineData(null, "managed", "msquic", QuicProvider.Managed)]
    [InlineData(null, "msquic", "managed", QuicProvider.MsQuic)]
    [InlineData(null, "msquic", null, QuicProvider.MsQuic)]
    // The per-instance choice wins over both, both ways.
    [InlineData(QuicProvider.Managed, "msquic", "msquic", QuicProvider.Managed)]
    [InlineData(QuicProvider.MsQuic, "managed", "managed", QuicProvider.MsQuic)]
    [InlineData(QuicProvider.MsQuic, null, null, QuicProvider.MsQuic)]
    // An unrecognized value is ignored: the next source decides.
    [InlineData(null, "typo", "msquic", QuicProvider.MsQuic)]
    [InlineData(null, "", "msquic", QuicProvider.MsQuic)]
    [InlineData(null, "typo", "typo", QuicProvider.Managed)]
    public void PerInstanceWinsOverAppContextWhichWinsOverEnvironment(QuicProvider? perInstance, string? appContext, string? environment, QuicProvider expected)
        => Assert.Equal(expected, QuicProviderSelection.Resolve(perInstance, appContext, environment));

    [Theory]
    [InlineData(null)]
    [InlineData("")]
    [InlineData("  ")]
    [InlineData("managed")]
    [InlineData(" MsQuic ")]
    public void ARecognizedOrAbsentValueGivesNoWarning(string? value)
        => Assert.Null(QuicProviderSelection.IgnoredValueWarning(QuicProviderSelection.EnvironmentVariable, value, QuicProvider.Managed));

    [Fact]
    public void ATypoIsReportedWithTheVariableTheValueAndTheProviderUsed()
    {
        string? warning = QuicProviderSelection.IgnoredValueWarning(QuicProviderSelection.EnvironmentVariable, "msqiuc", QuicProvider.Managed);
        Assert.Equal("warning: QuicManaged: DOTNET_SYSTEM_NET_QUIC_PROVIDER='msqiuc' is not a QUIC provider (expected 'managed' or 'msquic'); it is ignored and the Managed provider is used.", warning);
    }

    [Fact]
    public void TheProcessDefaultIsReadOnce()
    {
        QuicProvider before = QuicProviderSelection.Default;
        string other = before == QuicProvider.Managed ? "msquic" : "managed";
        // The AppContext switch outranks the environment variable, so setting it to the other value would change the
        // answer of any later read. It must not: the default was fixed at first use.
        object? saved = AppContext.GetData(QuicProviderSelection.AppContextSwitch);
        AppContext.SetData(QuicProviderSelection.AppContextSwitch, other);
        try
        {
            Assert.Equal(before, QuicProviderSelection.Default);
            Assert.Equal(QuicProviderSelection.IsSupported(before), QuicConnection.IsSupported);
            Assert.Equal(QuicProviderSelection.IsSupported(before), QuicListener.IsSupported);
        }
        finally
        {
            AppContext.SetData(QuicProviderSelection.AppContextSwitch, saved);
        }
    }

    [Fact]
    public void TheProcessDefaultFollowsTheSourcesOfThisProcess()
    {
        // Whatever this test process was started with, the default is Resolve() of those sources.
        QuicProvider expected = QuicProviderSelection.Resolve(null,
            AppContext.GetData(QuicProviderSelection.AppContextSwitch)?.ToString(),
            Environment.GetEnvironmentVariable(QuicProviderSelection.EnvironmentVariable));
        Assert.Equal(expected, QuicProviderSelection.Default);
    }

    [Fact]
    public void ManagedProviderIsAlwaysSupported()
    {
        Assert.True(QuicConnection.IsProviderSupported(QuicProvider.Managed));
        Assert.True(QuicListener.IsProviderSupported(QuicProvider.Managed));
    }

    [Fact]
    public void MsQuicProviderSupportFollowsSystemNetQuic()
    {
        bool platform = System.Net.Quic.QuicConnection.IsSupported && System.Net.Quic.QuicListener.IsSupported;
        Assert.Equal(platform, QuicConnection.IsProviderSupported(QuicProvider.MsQuic));
        Assert.Equal(platform, QuicListener.IsProviderSupported(QuicProvider.MsQuic));
    }

    [Fact]
    public void AnUndefinedProviderValueIsRejected()
    {
        var client = ClientOptions(new IPEndPoint(IPAddress.Loopback, 443));
        Assert.False(QuicConnection.IsProviderSupported((QuicProvider)7));
        var e = Assert.Throws<ArgumentOutOfRangeException>(() => QuicConnection.ConnectAsync(client, (QuicProvider)7));
        Assert.Equal("provider", e.ParamName);
        Assert.Throws<ArgumentOutOfRangeException>(() => QuicListener.ListenAsync(ListenerOptions(IPAddress.Loopback), (QuicProvider)7));
    }

    [SkippableFact]
    public void MsQuicProviderWithoutLibMsQuicThrowsPlatformNotSupportedWithTheReason()
    {
        Skip.If(QuicConnection.IsProviderSupported(QuicProvider.MsQuic), "libmsquic is loadable here: the unsupported path cannot be exercised");
        var client = ClientOptions(new IPEndPoint(IPAddress.Loopback, 443));
        var e = Assert.Throws<PlatformNotSupportedException>(() => QuicConnection.ConnectAsync(client, QuicProvider.MsQuic));
        Assert.Contains("libmsquic", e.Message);
        Assert.Contains(QuicProviderSelection.EnvironmentVariable, e.Message);
        Assert.Contains(QuicProviderSelection.AppContextSwitch, e.Message);
        var listen = Assert.Throws<PlatformNotSupportedException>(() => QuicListener.ListenAsync(ListenerOptions(IPAddress.Loopback), QuicProvider.MsQuic));
        Assert.Contains("libmsquic", listen.Message);
        // Options are still validated first, as on the managed provider.
        Assert.Throws<ArgumentNullException>(() => QuicConnection.ConnectAsync(null!, QuicProvider.MsQuic));
    }

    [Fact]
    public async Task BothProvidersCanBeChosenInOneProcess()
    {
        // The managed provider is chosen explicitly regardless of the process default; a connection works end to end.
        await using QuicListener listener = await QuicListener.ListenAsync(ListenerOptions(IPAddress.Loopback), QuicProvider.Managed);
        Assert.IsType<ManagedListener>(listener.Impl);
        var (client, server) = await ConnectPairAsync(QuicProvider.Managed, listener);
        await using (client)
        await using (server)
        {
            Assert.IsType<ManagedConnection>(client.Impl);
        }
    }

    [Fact]
    public async Task EnabledSslProtocolsWithoutTls13IsRejected()
    {
        var options = ClientOptions(new IPEndPoint(IPAddress.Loopback, 443));
        options.ClientAuthenticationOptions.EnabledSslProtocols = System.Security.Authentication.SslProtocols.Tls12;
        await Assert.ThrowsAsync<ArgumentException>(() => QuicConnection.ConnectAsync(options, QuicProvider.Managed).AsTask());
        // The System.Net.Quic-shaped overload (no provider) still binds without ambiguity and validates the same way.
        await Assert.ThrowsAsync<ArgumentException>(() => QuicConnection.ConnectAsync(options).AsTask());
    }
}
