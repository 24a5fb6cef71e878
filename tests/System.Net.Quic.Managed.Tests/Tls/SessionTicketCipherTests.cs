using System.Net.Quic.Managed.Tls;
using System.Security.Cryptography;

namespace System.Net.Quic.Managed.Tests.Tls;

public class SessionTicketCipherTests
{
    [Fact]
    public void OneInstancePerThreadWhileTheKeyStaysTheSame()
    {
        byte[] key = new byte[32];
        key[0] = 1;
        AesGcm a = SessionTicketCipher.For(key, 16);
        Assert.Same(a, SessionTicketCipher.For((byte[])key.Clone(), 16)); // compared by content, not reference

        key[0] = 2; // a key changed in place is a different key
        AesGcm b = SessionTicketCipher.For(key, 16);
        Assert.NotSame(a, b);

        // The cached instance seals under the current key: a fresh AesGcm with that key opens it.
        byte[] nonce = new byte[12], plain = [1, 2, 3], sealedBytes = new byte[3], tag = new byte[16], opened = new byte[3];
        b.Encrypt(nonce, plain, sealedBytes, tag);
        using var fresh = new AesGcm(key, 16);
        fresh.Decrypt(nonce, sealedBytes, tag, opened);
        Assert.Equal(plain, opened);
    }

    [Fact]
    public async Task ThreadsDoNotShareAnInstance()
    {
        byte[] key = new byte[32];
        AesGcm here = SessionTicketCipher.For(key, 16);
        AesGcm there = await Task.Factory.StartNew(() => SessionTicketCipher.For(key, 16), TaskCreationOptions.LongRunning);
        Assert.NotSame(here, there);
    }
}
