using System.Net.Quic.Managed.Crypto;
using System.Net.Quic.Managed.Tls;
using System.Security.Cryptography;

namespace System.Net.Quic.Managed.Tests.Tls;

/// <summary>
/// RFC 8448 §3 (Simple 1-RTT Handshake) and §4 (Resumed 0-RTT Handshake) reproduced through our key schedule
/// and transcript: the message bytes are fed in and every published secret must come out byte for byte.
/// </summary>
public class Rfc8448KeyScheduleTests
{
    private static byte[] H(string hex) => Convert.FromHexString(hex.Replace(" ", ""));

    // RFC 8448 §3 handshake messages.
    internal static readonly byte[] ClientHello = H("010000c00303cb34ecb1e78163ba1c38c6dacb196a6dffa21a8d9912ec18a2ef6283024dece7000006130113031302010000910000000b0009000006736572766572ff01000100000a00140012001d0017001800190100010101020103010400230000003300260024001d002099381de560e4bd43d23d8e435a7dbafeb3c06e51c13cae4d5413691e529aaf2c002b0003020304000d0020001e040305030603020308040805080604010501060102010402050206020202002d00020101001c00024001");
    internal static readonly byte[] ServerHello = H("020000560303a6af06a4121860dc5e6e60249cd34c95930c8ac5cb1434dac155772ed3e2692800130100002e00330024001d0020c9828876112095fe66762bdbf7c672e156d6cc253b833df1dd69b1b04e751f0f002b00020304");
    internal static readonly byte[] EncryptedExtensions = H("080000240022000a00140012001d00170018001901000101010201030104001c0002400100000000");
    internal static readonly byte[] Certificate = H("0b0001b9000001b50001b0308201ac30820115a003020102020102300d06092a864886f70d01010b0500300e310c300a06035504031303727361301e170d3136303733303031323335395a170d3236303733303031323335395a300e310c300a0603550403130372736130819f300d06092a864886f70d010101050003818d0030818902818100b4bb498f8279303d980836399b36c6988c0c68de55e1bdb826d3901a2461eafd2de49a91d015abbc9a95137ace6c1af19eaa6af98c7ced43120998e187a80ee0ccb0524b1b018c3e0b63264d449a6d38e22a5fda430846748030530ef0461c8ca9d9efbfae8ea6d1d03e2bd193eff0ab9a8002c47428a6d35a8d88d79f7f1e3f0203010001a31a301830090603551d1304023000300b0603551d0f0404030205a0300d06092a864886f70d01010b05000381810085aad2a0e5b9276b908c65f73a7267170618a54c5f8a7b337d2df7a594365417f2eae8f8a58c8f8172f9319cf36b7fd6c55b80f21a03015156726096fd335e5e67f2dbf102702e608ccae6bec1fc63a42a99be5c3eb7107c3c54e9b9eb2bd5203b1c3b84e0a8b2f759409ba3eac9d91d402dcc0cc8f8961229ac9187b42b4de10000");
    internal static readonly byte[] CertificateVerify = H("0f000084080400805a747c5d88fa9bd2e55ab085a61015b7211f824cd484145ab3ff52f1fda8477b0b7abc90db78e2d33a5c141a078653fa6bef780c5ea248eeaaa785c4f394cab6d30bbe8d4859ee511f602957b15411ac027671459e46445c9ea58c181e818e95b8c3fb0bf3278409d3be152a3da5043e063dda65cdf5aea20d53dfacd42f74f3");
    internal static readonly byte[] ServerFinished = H("140000209b9b141d906337fbd2cbdce71df4deda4ab42c309572cb7fffee5454b78f0718");
    internal static readonly byte[] ClientFinished = H("14000020a8ec436d677634ae525ac1fcebe11a039ec17694fac6e98527b642f2edd5ce61");

    private static byte[] Hash(TranscriptHash t)
    {
        byte[] h = new byte[32];
        t.GetHash(HashAlgorithmName.SHA256, h);
        return h;
    }

    private static byte[] Derive(KeySchedule ks, string label, byte[] transcriptHash)
    {
        byte[] s = new byte[32];
        ks.DeriveSecret(System.Text.Encoding.ASCII.GetBytes(label), transcriptHash, s);
        return s;
    }

    [Fact]
    public void Section3_SimpleOneRtt_AllSecretsAndFinished()
    {
        // {client}/{server} x25519 key pairs and the shared secret (RFC 8448 §3).
        byte[] clientPriv = H("49af42ba7f7994852d713ef2784bcbcaa7911de26adc5642cb634540e7ea5005");
        byte[] serverPub = H("c9828876112095fe66762bdbf7c672e156d6cc253b833df1dd69b1b04e751f0f");
        byte[] shared = new byte[32];
        Assert.True(X25519.TryComputeSharedSecret(clientPriv, serverPub, shared));
        Assert.Equal(H("8bd4054fb55b9d63fdfbacf9f04b9f0d35e6d63f537563efd46272900f89492d"), shared);

        var ks = new KeySchedule(HashAlgorithmName.SHA256);
        ks.InitializeEarlySecret(default);
        Assert.Equal(H("33ad0a1c607ec03b09e6cd9893680ce210adf300aa1f2660e1b22e10f170f92a"), ks.CurrentSecret.ToArray());

        ks.AdvanceToHandshakeSecret(shared);
        Assert.Equal(H("1dc826e93606aa6fdc0aadc12f741b01046aa6b99f691ed221a9f0ca043fbeac"), ks.CurrentSecret.ToArray());

        var transcript = new TranscriptHash();
        transcript.Append(ClientHello);
        transcript.Append(ServerHello);
        byte[] chsh = Hash(transcript);
        Assert.Equal(H("860c06edc07858ee8e78f0e7428c58edd6b43f2ca3e6e95f02ed063cf0e1cad8"), chsh);
        byte[] cHs = Derive(ks, "c hs traffic", chsh);
        byte[] sHs = Derive(ks, "s hs traffic", chsh);
        Assert.Equal(H("b3eddb126e067f35a780b3abf45e2d8f3b1a950738f52e9600746a0e27a55a21"), cHs);
        Assert.Equal(H("b67b7d690cc16c4e75e54213cb2d37b4e9c912bcded9105d42befd59d391ad38"), sHs);

        ks.AdvanceToMasterSecret();
        Assert.Equal(H("18df06843d13a08bf2a449844c5f8a478001bc4d4c627984d5a41da8d0402919"), ks.CurrentSecret.ToArray());

        transcript.Append(EncryptedExtensions);
        transcript.Append(Certificate);
        transcript.Append(CertificateVerify);
        byte[] serverVerify = new byte[32];
        KeySchedule.ComputeFinished(HashAlgorithmName.SHA256, sHs, Hash(transcript), serverVerify);
        Assert.Equal(ServerFinished.AsSpan(4).ToArray(), serverVerify);

        transcript.Append(ServerFinished);
        byte[] upToServerFinished = Hash(transcript);
        Assert.Equal(H("9e40646ce79a7f9dc05af8889bce6552875afa0b06df0087f792ebb7c17504a5"), Derive(ks, "c ap traffic", upToServerFinished));
        Assert.Equal(H("a11af9f05531f856ad47116b45a950328204b4f44bfb6b3a4b4f1f3fcb631643"), Derive(ks, "s ap traffic", upToServerFinished));
        Assert.Equal(H("fe22f881176eda18eb8f44529e6792c50c9a3f89452f68d8ae311b4309d3cf50"), Derive(ks, "exp master", upToServerFinished));

        byte[] clientVerify = new byte[32];
        KeySchedule.ComputeFinished(HashAlgorithmName.SHA256, cHs, upToServerFinished, clientVerify);
        Assert.Equal(H("a8ec436d677634ae525ac1fcebe11a039ec17694fac6e98527b642f2edd5ce61"), clientVerify);

        transcript.Append(ClientFinished);
        byte[] resMaster = Derive(ks, "res master", Hash(transcript));
        Assert.Equal(H("7df235f2031d2a051287d02b0241b0bfdaf86cc856231f2d5aba46c434ec196c"), resMaster);

        byte[] psk = new byte[32];
        KeySchedule.DeriveResumptionPsk(HashAlgorithmName.SHA256, resMaster, new byte[] { 0, 0 }, psk);
        Assert.Equal(H("4ecd0eb6ec3b4d87f5d6028f922ca4c5851a277fd41311c9e62d2c9492e1c4f3"), psk);
    }

    // RFC 8448 §4: the ClientHello up to (not including) the binders list, then the binders list itself.
    internal static readonly byte[] ResumedClientHelloPrefix = H("010001fc03031bc3ceb6bbe39cff938355b5a50adb6db21b7a6af649d7b4bc419d7876487d95000006130113031302010001cd0000000b0009000006736572766572ff01000100000a00140012001d00170018001901000101010201030104003300260024001d0020e4ffb68ac05f8d96c99da26698346c6be16482badddafe051a66b4f18d668f0b002a0000002b0003020304000d0020001e040305030603020308040805080604010501060102010402050206020202002d00020101001c0002400100150057000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000002900dd00b800b22c035d829359ee5ff7af4ec900000000262a6494dc486d2c8a34cb33fa90bf1b0070ad3c498883c9367c09a2be785abc55cd226097a3a982117283f82a03a143efd3ff5dd36d64e861be7fd61d2827db279cce145077d454a3664d4e6da4d29ee03725a6a4dafcd0fc67d2aea70529513e3da2677fa5906c5b3f7d8f92f228bda40dda721470f9fbf297b5aea617646fac5c03272e970727c621a79141ef5f7de6505e5bfbc388e93343694093934ae4d357fad6aacb");

    [Fact]
    public void Section4_ResumedZeroRtt_BinderEarlySecretAndEarlyTrafficSecret()
    {
        byte[] psk = H("4ecd0eb6ec3b4d87f5d6028f922ca4c5851a277fd41311c9e62d2c9492e1c4f3");
        var ks = new KeySchedule(HashAlgorithmName.SHA256);
        ks.InitializeEarlySecret(psk);
        Assert.Equal(H("9b2188e9b2fc6d64d71dc329900e20bb41915000f678aa839cbb797cb7d8332c"), ks.CurrentSecret.ToArray());

        byte[] binderKey = new byte[32];
        ks.DeriveBinderKey(external: false, binderKey);
        Assert.Equal(H("69fe131a3bbad5d63c64eebcc30e395b9d8107726a13d074e389dbc8a4e47256"), binderKey);

        var transcript = new TranscriptHash();
        byte[] partialHash = new byte[32];
        transcript.GetHash(HashAlgorithmName.SHA256, ResumedClientHelloPrefix, partialHash);
        Assert.Equal(H("63224b2e4573f2d3454ca84b9d009a04f6be9e05711a8396473aefa01e924a14"), partialHash);

        byte[] binder = new byte[32];
        KeySchedule.ComputeFinished(HashAlgorithmName.SHA256, binderKey, partialHash, binder);
        Assert.Equal(H("3add4fb2d8fdf822a0ca3cf7678ef5e88dae990141c5924d57bb6fa31b9e5f9d"), binder);

        transcript.Append(ResumedClientHelloPrefix);
        transcript.Append(H("002120"));
        transcript.Append(binder);
        Assert.Equal(H("3fbbe6a60deb66c30a32795aba0eff7eaa10105586e7be5c09678d63b6caab62"), Derive(ks, "c e traffic", Hash(transcript)));
    }

    [Fact]
    public void MessageHash_ReplacesClientHelloWithSyntheticMessage()
    {
        var t = new TranscriptHash();
        t.Append(ClientHello);
        byte[] chHash = SHA256.HashData(ClientHello);
        t.ReplaceWithMessageHash(HashAlgorithmName.SHA256);
        byte[] expected = SHA256.HashData([254, 0, 0, 32, .. chHash]);
        Assert.Equal(expected, Hash(t));
    }
}
