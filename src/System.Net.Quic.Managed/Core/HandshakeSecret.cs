using System.Net.Quic.Managed.Tls;
using System.Net.Security;

namespace System.Net.Quic.Managed.Core;

/// <summary>A traffic secret the handshake made known: for one level, one direction (RFC 9001 §4.1.4).</summary>
internal readonly record struct HandshakeSecret(EncryptionLevel Level, bool ForSending, TlsCipherSuite CipherSuite, byte[] Secret);
