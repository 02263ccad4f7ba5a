package dev.apcache.lucenepeer;

import static dev.apcache.lucenepeer.JsonNodes.has;

import com.google.gson.JsonObject;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.StoredFields;
import org.apache.lucene.search.FieldDoc;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.store.FSDirectory;

/**
 * The {@code search-json} command: runs {@link JsonQueries} requests against an {@code
 * index-json} index, one JSON line out per line in, for apcache's agreement tests.
 *
 * <p>A request is {@code {"query": Q, "sort": [..], "k": 10}} ("sort" and "k" optional; a
 * "class" label, which apcache's generated queries carry, is ignored). The answer is {@code
 * {"count": N, "hits": [{"id": .., "score": .., "sort": [..]}, ..]}}: the exact number of
 * matches ({@link IndexSearcher#count}) and the top k, by score (ties to the lower doc id) or by
 * the sort ({@link JsonSort}). Scores print as {@link Float#toString}, which reads back as the
 * same float; under a sort without {@code _score} Lucene computes none and they print as null. A
 * request that fails prints {@code {"error": ..}} and the next one runs.
 *
 * <p>Single-threaded, with BM25(1.2, 0.75) and no query cache, like {@code search}.
 */
final class JsonSearch {
  /** A request's keys; {@code "class"} is a label for the reader (the query's kind), ignored. */
  private static final Set<String> REQUEST_KEYS = Set.of("query", "sort", "k", "class");

  private final IndexSearcher searcher;
  private final JsonMapping mapping;
  private final JsonQueries queries;

  private JsonSearch(IndexSearcher searcher, JsonMapping mapping) {
    this.searcher = searcher;
    this.mapping = mapping;
    this.queries = new JsonQueries(mapping);
  }

  static void run(Path indexDir, Path mappingFile, Path requestsFile, PrintWriter out)
      throws IOException {
    JsonMapping mapping = JsonMapping.read(mappingFile);
    try (DirectoryReader reader = DirectoryReader.open(FSDirectory.open(indexDir))) {
      IndexSearcher searcher = new IndexSearcher(reader);
      searcher.setSimilarity(Schema.similarity());
      searcher.setQueryCache(null);
      JsonSearch search = new JsonSearch(searcher, mapping);
      for (String line : Files.readAllLines(requestsFile, StandardCharsets.UTF_8)) {
        String answer;
        try {
          answer = search.answer(line);
        } catch (Exception e) {
          answer = error(e);
        }
        out.println(answer);
      }
    }
  }

  private String answer(String line) throws IOException {
    JsonObject request = JsonNodes.object(JsonNodes.parse(line), "a request", REQUEST_KEYS);
    Query query = queries.parse(JsonNodes.required(request, "query", "a request"));
    long k = has(request, "k") ? JsonNodes.integer(request.get("k"), "k") : 10;
    if (k < 0 || k > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("k must be a non-negative int, not " + k);
    }
    JsonSort sort = has(request, "sort") ? JsonSort.parse(request.get("sort"), mapping) : null;
    int count = searcher.count(query);
    ScoreDoc[] hits = new ScoreDoc[0];
    if (k > 0) {
      TopDocs top =
          sort == null
              ? searcher.search(query, (int) k)
              : searcher.search(query, (int) k, sort.sort(), sort.needsScores());
      hits = top.scoreDocs;
    }
    StoredFields stored = searcher.storedFields();
    StringBuilder b = new StringBuilder("{\"count\":").append(count).append(",\"hits\":[");
    for (int i = 0; i < hits.length; i++) {
      ScoreDoc hit = hits[i];
      String id = stored.document(hit.doc, Set.of(JsonMapping.ID)).get(JsonMapping.ID);
      b.append(i == 0 ? "" : ",").append("{\"id\":").append(id == null ? "null" : Json.string(id));
      b.append(",\"score\":").append(Json.number(hit.score));
      if (sort != null) {
        b.append(",\"sort\":").append(sort.values((FieldDoc) hit, searcher.getIndexReader()));
      }
      b.append('}');
    }
    return b.append("]}").toString();
  }

  static String error(Exception e) {
    // The first line only, as the other commands print errors.
    String message =
        e.getMessage() == null ? e.toString() : e.getMessage().lines().findFirst().orElse("");
    return "{\"error\":" + Json.string(message) + "}";
  }
}
