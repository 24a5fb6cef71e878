namespace QuicManaged.Tools.DatagramDumper;

/// <summary>A raw binary file holding exactly one datagram.</summary>
internal sealed class BinaryDatagramSource : IDatagramSource
{
    private readonly byte[] _data;

    public BinaryDatagramSource(byte[] data) => _data = data;

    public IEnumerable<CapturedDatagram> Read()
    {
        yield return new CapturedDatagram(null, null, null, _data);
    }
}
