using QuicManaged.Http.Qpack;

namespace System.Net.Quic.Managed.Tests.Http3;

public class QpackStaticTableTests
{
    // RFC 9204 Appendix A rows.
    [Theory]
    [InlineData(0, ":authority", "")]
    [InlineData(1, ":path", "/")]
    [InlineData(17, ":method", "GET")]
    [InlineData(23, ":scheme", "https")]
    [InlineData(25, ":status", "200")]
    [InlineData(27, ":status", "404")]
    [InlineData(31, "accept-encoding", "gzip, deflate, br")]
    [InlineData(57, "strict-transport-security", "max-age=31536000; includesubdomains")]
    [InlineData(63, ":status", "100")]
    [InlineData(85, "content-security-policy", "script-src 'none'; object-src 'none'; base-uri 'none'")]
    [InlineData(94, "upgrade-insecure-requests", "1")]
    [InlineData(98, "x-frame-options", "sameorigin")]
    public void Entries_MatchRfc9204AppendixA(int index, string name, string value)
    {
        Assert.Equal(new HeaderField(name, value), QpackStaticTable.Get(index));
    }

    [Fact]
    public void HasExactly99Entries()
    {
        Assert.Equal(99, QpackStaticTable.Count);
        Assert.Throws<IndexOutOfRangeException>(() => QpackStaticTable.Get(99));
    }

    [Fact]
    public void Find_PrefersExactMatchThenFirstName()
    {
        QpackStaticTable.Find(":status", "404", out int exact, out int name);
        Assert.Equal(27, exact);
        Assert.Equal(24, name);

        QpackStaticTable.Find(":status", "418", out exact, out name);
        Assert.Equal(-1, exact);
        Assert.Equal(24, name);

        QpackStaticTable.Find("x-custom", "1", out exact, out name);
        Assert.Equal(-1, exact);
        Assert.Equal(-1, name);
    }
}
