package dev.apcache.lucenepeer;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.stream.Stream;
import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.NumericDocValuesField;
import org.apache.lucene.document.StoredField;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.LogByteSizeMergePolicy;
import org.apache.lucene.index.SerialMergeScheduler;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.FSDirectory;
import org.apache.lucene.util.Version;

/**
 * The {@code index} command: builds a single-segment index of a corpus file in line order.
 *
 * <p>One thread does everything (documents are added by the caller's thread and merges run on it
 * through {@link SerialMergeScheduler}), with a 256 MB RAM buffer and {@code forceMerge(1)} at the
 * end. The merge policy only merges adjacent segments, so internal doc ids equal line numbers.
 * Segments are written without compound files, so an input that fits in one flushed segment needs
 * no final merge.
 */
final class Indexer {
  private static final double RAM_BUFFER_MB = 256;

  private Indexer() {}

  /**
   * Indexes the first {@code maxDocs} documents of {@code input}; with {@code store}, the text
   * (title + " " + body) is also kept as a stored field, Lucene's default stored-fields format
   * (for comparing the size of apcache's document store).
   */
  static void run(
      Path input, Path indexDir, long maxDocs, boolean positions, boolean store, PrintWriter out)
      throws IOException {
    IndexWriterConfig config = writerConfig(Schema.analyzer());

    Field text =
        new Field(Schema.TEXT, "", positions ? Schema.TEXT_TYPE_WITH_POSITIONS : Schema.TEXT_TYPE);
    NumericDocValuesField idValue = new NumericDocValuesField(Schema.ID, 0L);
    StoredField idStored = new StoredField(Schema.ID, 0L);
    Document doc = new Document();
    doc.add(text);
    doc.add(idValue);
    doc.add(idStored);
    StoredField textStored = new StoredField(Schema.STORED_TEXT, "");
    if (store) {
      doc.add(textStored);
    }

    long start = System.nanoTime();
    long docs = 0;
    long mergeStart;
    Files.createDirectories(indexDir);
    try (Directory dir = FSDirectory.open(indexDir);
        IndexWriter writer = new IndexWriter(dir, config);
        Corpus corpus = new Corpus(input)) {
      for (String t; docs < maxDocs && (t = corpus.nextText()) != null; docs++) {
        text.setStringValue(t);
        textStored.setStringValue(t);
        idValue.setLongValue(docs);
        idStored.setLongValue(docs);
        writer.addDocument(doc);
      }
      writer.flush();
      mergeStart = System.nanoTime();
      writer.forceMerge(1);
      writer.commit();
    }
    out.println(summary(docs, start, mergeStart, System.nanoTime(), indexDir, ""));
  }

  /**
   * The writer every index command uses: one thread (merges too), adjacent merges only, so that
   * internal doc ids follow the order documents are added in; it (re)creates the index.
   */
  static IndexWriterConfig writerConfig(Analyzer analyzer) {
    return new IndexWriterConfig(analyzer)
        .setOpenMode(IndexWriterConfig.OpenMode.CREATE)
        .setSimilarity(Schema.similarity())
        .setRAMBufferSizeMB(RAM_BUFFER_MB)
        .setUseCompoundFile(false)
        .setMergeScheduler(new SerialMergeScheduler())
        .setMergePolicy(new LogByteSizeMergePolicy());
  }

  /**
   * The JSON line an index command prints at the end, times from {@link System#nanoTime}, with
   * {@code moreFields} (",\"name\":value..." or "") before the closing brace.
   */
  static String summary(
      long docs, long start, long mergeStart, long end, Path indexDir, String moreFields)
      throws IOException {
    double seconds = (end - start) / 1e9;
    return String.format(
        Locale.ROOT,
        "{\"docs\":%d,\"seconds\":%.3f,\"docs_per_s\":%.1f,\"merge_seconds\":%.3f,"
            + "\"index_bytes\":%d,\"lucene\":%s%s}",
        docs,
        seconds,
        docs / seconds,
        (end - mergeStart) / 1e9,
        directoryBytes(indexDir),
        Json.string(Version.LATEST.toString()),
        moreFields);
  }

  private static long directoryBytes(Path dir) throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      long total = 0;
      for (Path p : (Iterable<Path>) files::iterator) {
        if (Files.isRegularFile(p)) {
          total += Files.size(p);
        }
      }
      return total;
    }
  }
}
