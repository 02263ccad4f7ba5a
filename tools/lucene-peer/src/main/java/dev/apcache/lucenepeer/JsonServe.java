package dev.apcache.lucenepeer;

import static dev.apcache.lucenepeer.JsonNodes.has;

import com.google.gson.JsonObject;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Set;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.search.TopFieldCollectorManager;
import org.apache.lucene.search.TopScoreDocCollectorManager;
import org.apache.lucene.store.FSDirectory;

/**
 * The {@code serve-json} command: {@link JsonQueries} requests from stdin against an {@code
 * index-json} index, one answer line each, flushed at once, so that a client can time each round
 * trip as the search-benchmark-game times its engines.
 *
 * <p>A request is {@code {"query": Q, "sort": [..], "k": 10, "count": true}} ("class" is a label,
 * ignored). With {@code "count"} the answer's count is exact (every match is collected, nothing
 * skipped); without it Lucene may skip documents that cannot enter the top k, as {@code
 * IndexSearcher.search(query, k)} does, and the answer's count is the number of hits. {@code "k":
 * 0} counts only. The answer is {@code {"count": N, "hits": H}}; a request that fails gets {@code
 * {"error": ..}}.
 *
 * <p>Single-threaded, with BM25(1.2, 0.75) and no query cache, like {@code search-json}.
 */
final class JsonServe {
  private static final Set<String> REQUEST_KEYS = Set.of("query", "sort", "k", "count", "class");

  private final IndexSearcher searcher;
  private final JsonMapping mapping;
  private final JsonQueries queries;

  private JsonServe(IndexSearcher searcher, JsonMapping mapping) {
    this.searcher = searcher;
    this.mapping = mapping;
    this.queries = new JsonQueries(mapping);
  }

  static void run(Path indexDir, Path mappingFile, PrintWriter out) throws IOException {
    JsonMapping mapping = JsonMapping.read(mappingFile);
    BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    try (DirectoryReader reader = DirectoryReader.open(FSDirectory.open(indexDir))) {
      IndexSearcher searcher = new IndexSearcher(reader);
      searcher.setSimilarity(Schema.similarity());
      searcher.setQueryCache(null);
      JsonServe serve = new JsonServe(searcher, mapping);
      for (String line; (line = in.readLine()) != null; ) {
        String answer;
        try {
          answer = serve.answer(line);
        } catch (Exception e) {
          answer = JsonSearch.error(e);
        }
        out.println(answer);
        out.flush();
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
    boolean count = has(request, "count") && request.get("count").getAsBoolean();
    JsonSort sort = has(request, "sort") ? JsonSort.parse(request.get("sort"), mapping) : null;
    if (k == 0) {
      return answer(searcher.count(query), 0);
    }
    int n = (int) k;
    TopDocs top;
    if (sort == null) {
      top =
          count
              ? searcher.search(query, new TopScoreDocCollectorManager(n, Integer.MAX_VALUE))
              : searcher.search(query, n);
    } else {
      top =
          count
              ? searcher.search(
                  query, new TopFieldCollectorManager(sort.sort(), n, null, Integer.MAX_VALUE))
              : searcher.search(query, n, sort.sort());
    }
    int hits = top.scoreDocs.length;
    return answer(count ? Hits.total(top.totalHits) : hits, hits);
  }

  private static String answer(long count, int hits) {
    return "{\"count\":" + count + ",\"hits\":" + hits + "}";
  }
}
