#:property ImplicitUsings=enable
// Prints what a portable PDB (or an assembly's embedded PDB) carries for debugging from a package: the number of
// source documents, how many have their source embedded, whether SourceLink JSON is present, and the first document's
// path (a CI build maps paths to /_/). Usage: dotnet run inspect-pdb.cs -- FILE.pdb|FILE.dll
using System.Reflection.Metadata;
using System.Reflection.PortableExecutable;

string path = args[0];
using FileStream file = File.OpenRead(path);
MetadataReaderProvider provider;
PEReader? pe = null;
if (path.EndsWith(".dll", StringComparison.OrdinalIgnoreCase))
{
    pe = new PEReader(file);
    DebugDirectoryEntry embedded = pe.ReadDebugDirectory().FirstOrDefault(e => e.Type == DebugDirectoryEntryType.EmbeddedPortablePdb);
    if (embedded.DataSize == 0) { Console.WriteLine("no embedded PDB"); return 1; }
    provider = pe.ReadEmbeddedPortablePdbDebugDirectoryData(embedded);
}
else
{
    provider = MetadataReaderProvider.FromPortablePdbStream(file);
}
using (provider)
{
    MetadataReader reader = provider.GetMetadataReader();
    var embeddedSource = new Guid("0E8A571B-6926-466E-B4AD-8AB04611F5FE");
    var sourceLink = new Guid("CC110556-A091-4D38-9FEC-25AB9A351A6A");
    int documents = 0, withSource = 0;
    string first = "";
    foreach (DocumentHandle h in reader.Documents)
    {
        documents++;
        if (first.Length == 0) first = reader.GetString(reader.GetDocument(h).Name);
        foreach (CustomDebugInformationHandle c in reader.GetCustomDebugInformation(h))
        {
            if (reader.GetGuid(reader.GetCustomDebugInformation(c).Kind) == embeddedSource) { withSource++; break; }
        }
    }
    bool hasSourceLink = reader.CustomDebugInformation.Any(c => reader.GetGuid(reader.GetCustomDebugInformation(c).Kind) == sourceLink);
    Console.WriteLine($"documents={documents} embedded-sources={withSource} sourcelink={(hasSourceLink ? "yes" : "no")} first={first}");
}
pe?.Dispose();
return 0;
