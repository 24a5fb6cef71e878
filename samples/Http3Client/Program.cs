// HttpClient over HTTP/3 with QuicManaged (no libmsquic): `Http3Client https://127.0.0.1:5443/hello`.
// Accepts any server certificate (the sample server's is self-signed): a sample, not a pattern for production.
using System.Net;
using System.Net.Security;
using QuicManaged.Http;

var handler = new QuicManagedHttpHandler
{
    SslOptions = new SslClientAuthenticationOptions { RemoteCertificateValidationCallback = (_, _, _, _) => true },
};
using var client = new HttpClient(handler) { DefaultRequestVersion = HttpVersion.Version30, DefaultVersionPolicy = HttpVersionPolicy.RequestVersionExact };
using HttpResponseMessage response = await client.GetAsync(new Uri(args.Length > 0 ? args[0] : "https://127.0.0.1:5443/hello"));
Console.WriteLine($"HTTP/{response.Version} {(int)response.StatusCode}");
Console.WriteLine(await response.Content.ReadAsStringAsync());
