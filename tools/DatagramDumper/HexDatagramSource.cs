namespace QuicManaged.Tools.DatagramDumper;

/// <summary>Datagrams as hex text, one per line. Blank lines and everything after '#' are ignored.</summary>
internal sealed class HexDatagramSource : IDatagramSource
{
    private readonly string _text;

    public HexDatagramSource(string text) => _text = text;

    public IEnumerable<CapturedDatagram> Read()
    {
        string[] lines = _text.Split('\n');
        for (int i = 0; i < lines.Length; i++)
        {
            string line = lines[i];
            int hash = line.IndexOf('#');
            if (hash >= 0) line = line.Substring(0, hash);
            if (string.IsNullOrWhiteSpace(line)) continue;
            if (HexText.TryParse(line, out byte[] bytes))
            {
                yield return new CapturedDatagram(null, null, null, bytes);
            }
            else
            {
                yield return new CapturedDatagram(null, null, null, [], $"line {i + 1}: not valid hex, skipped");
            }
        }
    }
}
