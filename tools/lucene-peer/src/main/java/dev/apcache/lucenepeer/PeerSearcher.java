package dev.apcache.lucenepeer;

import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Path;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.DocValues;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.NumericDocValues;
import org.apache.lucene.queryparser.classic.ParseException;
import org.apache.lucene.queryparser.classic.QueryParser;
import org.apache.lucene.search.DocIdSetIterator;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.search.TopScoreDocCollectorManager;
import org.apache.lucene.store.FSDirectory;

/**
 * An index built by {@link Indexer}, opened for single-threaded searching with BM25(1.2, 0.75).
 *
 * <p>Opening checks that every internal doc id equals the document's {@code "id"} (its line
 * number), so hits can be reported by internal doc id. The query cache is off, so that repeated
 * benchmark rounds measure query evaluation rather than cached filters.
 */
final class PeerSearcher implements Closeable {
  /** What a query run computes; the names follow the search-benchmark-game's commands. */
  enum Op {
    /** The exact number of matching documents. */
    COUNT,
    /** The top k by score; Lucene may skip non-competitive documents, so no exact count. */
    TOP_K,
    /** The top k by score and the exact number of matching documents. */
    TOP_K_COUNT
  }

  private final DirectoryReader reader;
  private final IndexSearcher searcher;
  private final QueryParser parser = new QueryParser(Schema.TEXT, Schema.analyzer());

  private PeerSearcher(DirectoryReader reader) {
    this.reader = reader;
    this.searcher = new IndexSearcher(reader);
    searcher.setSimilarity(Schema.similarity());
    searcher.setQueryCache(null);
  }

  static PeerSearcher open(Path indexDir) throws IOException {
    DirectoryReader reader = DirectoryReader.open(FSDirectory.open(indexDir));
    try {
      checkIds(reader);
      return new PeerSearcher(reader);
    } catch (RuntimeException | IOException e) {
      reader.close();
      throw e;
    }
  }

  /** Parses classic query syntax (default operator OR) against the {@code "text"} field. */
  Query parse(String query) throws ParseException {
    return parser.parse(query);
  }

  /** The top {@code k} hits (ties: lower doc id first), with an exact total hit count. */
  TopDocs topK(Query query, int k) throws IOException {
    TopDocs top = searcher.search(query, new TopScoreDocCollectorManager(k, Integer.MAX_VALUE));
    assert Hits.exact(top.totalHits);
    return top;
  }

  int count(Query query) throws IOException {
    return searcher.count(query);
  }

  /**
   * Runs {@code op} and returns what the search-benchmark-game protocol prints for it: the exact
   * count for {@link Op#COUNT} and {@link Op#TOP_K_COUNT}, the number of hits collected for {@link
   * Op#TOP_K}.
   */
  long run(Query query, Op op, int k) throws IOException {
    return switch (op) {
      case COUNT -> searcher.count(query);
      case TOP_K -> searcher.search(query, k).scoreDocs.length;
      case TOP_K_COUNT -> Hits.total(topK(query, k).totalHits);
    };
  }

  private static void checkIds(DirectoryReader reader) throws IOException {
    if (reader.hasDeletions()) {
      throw new IllegalStateException("index has deletions; rebuild it with the index command");
    }
    for (LeafReaderContext leaf : reader.leaves()) {
      NumericDocValues ids = DocValues.getNumeric(leaf.reader(), Schema.ID);
      int seen = 0;
      for (int d = ids.nextDoc(); d != DocIdSetIterator.NO_MORE_DOCS; d = ids.nextDoc()) {
        if (ids.longValue() != leaf.docBase + d) {
          throw new IllegalStateException(
              "internal doc " + (leaf.docBase + d) + " has id " + ids.longValue());
        }
        seen++;
      }
      if (seen != leaf.reader().maxDoc()) {
        throw new IllegalStateException("some documents have no \"id\" doc value");
      }
    }
  }

  @Override
  public void close() throws IOException {
    reader.close();
  }
}
