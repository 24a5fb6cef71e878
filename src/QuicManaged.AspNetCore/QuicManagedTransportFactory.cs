using System;
using System.Net;
using System.Threading;
using System.Threading.Tasks;
using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;

namespace QuicManaged.AspNetCore;

/// <summary>
/// Kestrel's entry point to the transport: binds an HTTP/3 endpoint to a QuicManaged <c>QuicListener</c>. Kestrel hands
/// the endpoint's TLS configuration (certificate, ALPN "h3") over in a <see cref="TlsConnectionCallbackOptions"/> feature.
/// </summary>
internal sealed class QuicManagedTransportFactory : IMultiplexedConnectionListenerFactory, IConnectionListenerFactorySelector
{
    private readonly QuicManagedTransportOptions _options;
    private readonly ILogger _logger;

    public QuicManagedTransportFactory(ILoggerFactory loggerFactory, IOptions<QuicManagedTransportOptions> options)
    {
        ArgumentNullException.ThrowIfNull(loggerFactory);
        ArgumentNullException.ThrowIfNull(options);
        _options = options.Value;
        _logger = loggerFactory.CreateLogger("QuicManaged.AspNetCore");
    }

    public bool CanBind(EndPoint endpoint) => endpoint is IPEndPoint;

    public async ValueTask<IMultiplexedConnectionListener> BindAsync(EndPoint endpoint, IFeatureCollection? features = null, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(endpoint);
        TlsConnectionCallbackOptions tls = features?.Get<TlsConnectionCallbackOptions>()
            ?? throw new InvalidOperationException("HTTP/3 needs HTTPS: the endpoint has no TLS configuration (call ListenOptions.UseHttps).");
        if (tls.ApplicationProtocols is null || tls.ApplicationProtocols.Count == 0)
        {
            throw new InvalidOperationException("The endpoint's TLS configuration names no application protocol.");
        }

        var listener = new QuicManagedConnectionListener(_options, _logger, endpoint, tls);
        await listener.StartAsync(cancellationToken).ConfigureAwait(false);
        return listener;
    }
}
