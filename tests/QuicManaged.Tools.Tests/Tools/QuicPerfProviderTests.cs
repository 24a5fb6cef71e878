using QuicManaged.Tools.QuicPerf;
using QuicManaged.Tools.QuicPerf.Transport;

namespace System.Net.Quic.Managed.Tests.Tools;

/// <summary>QuicPerf picks its provider through the library's selection: --provider, else the library's default.</summary>
public class QuicPerfProviderTests
{
    [Fact]
    public void WithoutProviderTheLibrarysDefaultDecides()
    {
        // What DOTNET_SYSTEM_NET_QUIC_PROVIDER=msquic (or the AppContext switch) makes the library's default.
        Assert.True(PerfOptions.TryParse(Array.Empty<string>(), QuicProvider.MsQuic, out PerfOptions options, out _));
        Assert.Equal(PerfTransportKind.LibraryMsQuic, options.Provider);
        Assert.True(PerfOptions.TryParse(Array.Empty<string>(), QuicProvider.Managed, out options, out _));
        Assert.Equal(PerfTransportKind.Managed, options.Provider);
        // The one-argument overload asks the library (this test process has neither the variable nor the switch).
        Assert.True(PerfOptions.TryParse(Array.Empty<string>(), out options, out _));
        Assert.Equal(PerfTransport.FromLibraryProvider(QuicProviderSelection.Default), options.Provider);
    }

    [Fact]
    public async Task AnUnknownProviderValueIsReportedOnceOnStandardError()
    {
        var start = new global::System.Diagnostics.ProcessStartInfo("dotnet")
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
        };
        start.ArgumentList.Add(typeof(PerfOptions).Assembly.Location);
        start.ArgumentList.Add("-t");
        start.ArgumentList.Add("1");
        start.Environment[QuicProviderSelection.EnvironmentVariable] = "msqiuc";
        using global::System.Diagnostics.Process process = global::System.Diagnostics.Process.Start(start)!;
        Task<string> stdout = process.StandardOutput.ReadToEndAsync();
        string stderr = await process.StandardError.ReadToEndAsync();
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(60));
        await process.WaitForExitAsync(timeout.Token);
        string expected = QuicProviderSelection.IgnoredValueWarning(QuicProviderSelection.EnvironmentVariable, "msqiuc", QuicProvider.Managed)!;
        Assert.Equal(1, stderr.Split('\n').Count(line => line.TrimEnd() == expected));
        // The typo is ignored, not fatal: the run goes on with the managed provider.
        Assert.Equal(0, process.ExitCode);
        Assert.Contains("second 1:", await stdout, StringComparison.Ordinal);
    }

    [Fact]
    public void ExplicitProviderWinsOverTheLibrarysDefault()
    {
        Assert.True(PerfOptions.TryParse(new[] { "--provider", "managed" }, QuicProvider.MsQuic, out PerfOptions options, out _));
        Assert.Equal(PerfTransportKind.Managed, options.Provider);
        Assert.True(PerfOptions.TryParse(new[] { "--provider", "tcp-tls" }, QuicProvider.MsQuic, out options, out _));
        Assert.Equal(PerfTransportKind.TcpTls, options.Provider);
    }

    [Fact]
    public async Task ProviderMsQuicGoesThroughTheLibrarysSwitch()
    {
        Assert.True(PerfOptions.TryParse(new[] { "--provider", "msquic" }, QuicProvider.Managed, out PerfOptions options, out _));
        Assert.Equal(PerfTransportKind.LibraryMsQuic, options.Provider);
        Assert.Equal("msquic", PerfTransport.DisplayName(options.Provider));
        await using PerfTransport transport = PerfTransport.Create(options.Provider);
        ManagedQuicTransport library = Assert.IsType<ManagedQuicTransport>(transport);
        Assert.Equal(QuicProvider.MsQuic, library.Provider);
        Assert.Equal(PerfTransportKind.LibraryMsQuic, library.Kind);
        // Its availability is the library's answer for QuicProvider.MsQuic.
        Assert.Equal(QuicConnection.IsProviderSupported(QuicProvider.MsQuic), PerfTransport.IsAvailable(options.Provider, out string reason));
        Assert.Equal(QuicConnection.IsProviderSupported(QuicProvider.MsQuic), reason.Length == 0);

        // The inbox System.Net.Quic, bypassing the library, stays available under its own name.
        Assert.True(PerfOptions.TryParse(new[] { "--provider", "msquic-direct" }, QuicProvider.Managed, out options, out _));
        Assert.Equal(PerfTransportKind.MsQuic, options.Provider);
    }
}
