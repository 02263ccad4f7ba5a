package dev.apcache.lucenepeer;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.lucene.document.Document;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.FSDirectory;

/**
 * The {@code index-json} command: indexes JSON lines (one document per line) under an
 * Elasticsearch mapping, see {@link DocumentMapper}.
 *
 * <p>Written like {@code index} ({@link Indexer#writerConfig}): one thread adds the documents in
 * input order and {@code forceMerge(1)} leaves one segment, so that Lucene's doc ids are the input
 * order, which breaks ties in sorted results as apcache's document order does. Blank lines are
 * skipped, and so are bad lines, as apcache skips them: a line that is not a JSON object, or a
 * document that does not fit the mapping (a second document with an id already taken among
 * them); each is reported on stderr with its line number and reason, and counted in the summary
 * ({@code "bad_lines"}). A mapping the peer cannot follow stops the command before it starts.
 */
final class JsonIndexer {
  private JsonIndexer() {}

  static void run(Path input, Path indexDir, Path mappingFile, String idField, PrintWriter out)
      throws IOException {
    DocumentMapper mapper = new DocumentMapper(JsonMapping.read(mappingFile), idField);
    long start = System.nanoTime();
    long docs = 0;
    long badLines = 0;
    long mergeStart;
    Files.createDirectories(indexDir);
    try (Directory dir = FSDirectory.open(indexDir);
        IndexWriter writer = new IndexWriter(dir, Indexer.writerConfig(new GapAnalyzer()));
        BufferedReader in = Files.newBufferedReader(input, StandardCharsets.UTF_8)) {
      long lineNumber = 0;
      for (String line; (line = in.readLine()) != null; ) {
        lineNumber++;
        if (line.isBlank()) {
          continue;
        }
        Document doc;
        try {
          doc = mapper.map(JsonNodes.parse(line));
        } catch (RuntimeException e) {
          badLines++;
          System.err.println(
              "index-json: " + input + ":" + lineNumber + ": skipped: " + e.getMessage());
          continue;
        }
        try {
          writer.addDocument(doc);
        } catch (RuntimeException | IOException e) {
          writer.rollback(); // no partial index: close() would commit what was added
          throw e;
        }
        docs++;
      }
      writer.flush();
      mergeStart = System.nanoTime();
      writer.forceMerge(1);
      writer.commit();
    }
    out.println(
        Indexer.summary(
            docs, start, mergeStart, System.nanoTime(), indexDir, ",\"bad_lines\":" + badLines));
  }
}
