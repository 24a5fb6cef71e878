using System;
using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Hosting;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.DependencyInjection.Extensions;
using QuicManaged.AspNetCore;

namespace Microsoft.AspNetCore.Hosting;

/// <summary>Switches Kestrel's HTTP/3 to QuicManaged's managed QUIC (no libmsquic needed).</summary>
public static class WebHostBuilderQuicManagedExtensions
{
    /// <summary>
    /// Serves Kestrel's HTTP/3 endpoints over QuicManaged instead of System.Net.Quic (msquic). Replaces any other
    /// multiplexed transport registered so far (Kestrel registers its msquic one when libmsquic loads). Endpoints enable
    /// HTTP/3 as usual: <c>ListenOptions.Protocols = HttpProtocols.Http1AndHttp2AndHttp3</c> with <c>UseHttps(...)</c>.
    /// </summary>
    public static IWebHostBuilder UseQuicManaged(this IWebHostBuilder hostBuilder)
    {
        ArgumentNullException.ThrowIfNull(hostBuilder);
        return hostBuilder.ConfigureServices(services =>
        {
            services.RemoveAll<IMultiplexedConnectionListenerFactory>();
            services.AddSingleton<IMultiplexedConnectionListenerFactory, QuicManagedTransportFactory>();
        });
    }

    /// <summary>As <see cref="UseQuicManaged(IWebHostBuilder)"/>, with transport options.</summary>
    public static IWebHostBuilder UseQuicManaged(this IWebHostBuilder hostBuilder, Action<QuicManagedTransportOptions> configureOptions)
    {
        ArgumentNullException.ThrowIfNull(configureOptions);
        return hostBuilder.UseQuicManaged().ConfigureServices(services => services.Configure(configureOptions));
    }
}
