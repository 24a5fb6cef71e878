// An ASP.NET Core minimal API served over HTTP/3 by QuicManaged (no libmsquic): `dotnet run -- [port]`.
// Prints "listening on https://127.0.0.1:PORT" and the certificate's SPKI hash (for Chromium's --ignore-certificate-errors-spki-list).
using System.Net;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using QuicManaged.Samples;

int port = args.Length > 0 ? int.Parse(args[0], System.Globalization.CultureInfo.InvariantCulture) : 5443;
using var certificate = SampleApp.CreateSelfSignedCertificate();
var builder = WebApplication.CreateSlimBuilder(args);
builder.WebHost.UseQuicManaged();                      // <- HTTP/3 over QuicManaged instead of msquic
builder.WebHost.ConfigureKestrel(kestrel => kestrel.Listen(IPAddress.Loopback, port, listen =>
{
    listen.Protocols = HttpProtocols.Http1AndHttp2AndHttp3; // Alt-Svc on HTTP/1.1 and HTTP/2 advertises h3
    listen.UseHttps(certificate);
}));
var app = builder.Build();
SampleApp.Map(app);
await app.StartAsync();
Console.WriteLine($"listening on https://127.0.0.1:{port}");
Console.WriteLine($"spki {SampleApp.SpkiSha256Base64(certificate)}");
await app.WaitForShutdownAsync();
