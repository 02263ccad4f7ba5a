package dev.apcache.lucenepeer;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.TopDocs;

/**
 * The query-side commands: {@code search} (results, for correctness), {@code bench} (latencies)
 * and {@code serve-stdin} (the search-benchmark-game protocol). All run on a single thread.
 *
 * <p>Query files hold one query per line in classic Lucene syntax. {@code search} and {@code
 * bench} print one JSON line per query line, in order; a query that fails to parse or to run
 * prints {@code {"query":...,"error":...}} instead.
 */
final class QueryCommands {
  /** A serve-stdin command: what to compute, and for how many top hits. */
  private record Command(PeerSearcher.Op op, int k) {}

  private static final Map<String, Command> COMMANDS =
      Map.of(
          "COUNT", new Command(PeerSearcher.Op.COUNT, 0),
          "TOP_10", new Command(PeerSearcher.Op.TOP_K, 10),
          "TOP_100", new Command(PeerSearcher.Op.TOP_K, 100),
          "TOP_1000", new Command(PeerSearcher.Op.TOP_K, 1000),
          "TOP_10_COUNT", new Command(PeerSearcher.Op.TOP_K_COUNT, 10),
          "TOP_100_COUNT", new Command(PeerSearcher.Op.TOP_K_COUNT, 100),
          "TOP_1000_COUNT", new Command(PeerSearcher.Op.TOP_K_COUNT, 1000));

  /** How long {@code bench} warms the JIT up before its own warmup rounds. */
  private static final long JIT_WARMUP_NANOS = 1_000_000_000L;

  private QueryCommands() {}

  /**
   * Prints each query's exact hit count and top {@code k} hits. A hit's doc is its "id" field,
   * which {@link PeerSearcher#open} checked to equal the internal doc id.
   */
  static void search(Path indexDir, Path queriesFile, int k, PrintWriter out) throws IOException {
    requirePositive(k);
    try (PeerSearcher searcher = PeerSearcher.open(indexDir)) {
      for (String q : readQueries(queriesFile)) {
        String json;
        try {
          TopDocs top = searcher.topK(searcher.parse(q), k);
          StringBuilder b = new StringBuilder();
          b.append("{\"query\":").append(Json.string(q));
          b.append(",\"total_hits\":").append(Hits.total(top.totalHits)).append(",\"hits\":[");
          for (int i = 0; i < top.scoreDocs.length; i++) {
            ScoreDoc sd = top.scoreDocs[i];
            b.append(i == 0 ? "" : ",").append("{\"doc\":").append(sd.doc);
            b.append(",\"score\":").append(sd.score).append('}');
          }
          json = b.append("]}").toString();
        } catch (Exception e) {
          json = error(q, e);
        }
        out.println(json);
      }
    }
  }

  /**
   * Times each query: untimed JIT warmup rounds for at least {@link #JIT_WARMUP_NANOS} (at least
   * one round), then {@code warmup} more untimed rounds, then {@code repeat} timed rounds; each
   * round runs every query once, in file order. What is timed is the top-{@code k} search, with an
   * exact count when {@code count}, or counting only when {@code k} is 0; parsing is not timed.
   * The total_hits printed is always exact (counted outside the timing).
   *
   * <p>With {@code paced}, another process sets the pace, so that it can time other engines
   * between Lucene's rounds: after the JIT warmup the tool prints {@code {"ready":true}}, then
   * before each round (warmup rounds included) waits for a line on stdin, and after it prints
   * {@code {"round":R}}. The per-query lines follow the last round as without pacing.
   */
  static void bench(
      Path indexDir,
      Path queriesFile,
      int k,
      boolean count,
      int warmup,
      int repeat,
      boolean paced,
      PrintWriter out)
      throws IOException {
    BufferedReader pacer =
        paced ? new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)) : null;
    PeerSearcher.Op op =
        k == 0
            ? PeerSearcher.Op.COUNT
            : count ? PeerSearcher.Op.TOP_K_COUNT : PeerSearcher.Op.TOP_K;
    List<String> texts = readQueries(queriesFile);
    int n = texts.size();
    Query[] queries = new Query[n];
    String[] errors = new String[n];
    long[] totalHits = new long[n];
    long[][] nanos = new long[n][repeat];
    long sink = 0; // keeps results alive, so the JIT cannot drop the work
    try (PeerSearcher searcher = PeerSearcher.open(indexDir)) {
      for (int i = 0; i < n; i++) {
        try {
          queries[i] = searcher.parse(texts.get(i));
          totalHits[i] = searcher.count(queries[i]);
          sink += searcher.run(queries[i], op, k); // also finds queries that fail to run
        } catch (Exception e) {
          errors[i] = error(texts.get(i), e);
        }
      }
      long jitRounds = 0;
      for (long start = System.nanoTime(); System.nanoTime() - start < JIT_WARMUP_NANOS; ) {
        for (int i = 0; i < n; i++) {
          if (errors[i] == null) {
            sink += searcher.run(queries[i], op, k);
          }
        }
        jitRounds++;
      }
      System.err.printf(
          Locale.ROOT,
          "bench: %d queries, %s k=%d, %d JIT warmup + %d warmup rounds, %d timed rounds%n",
          n, op, k, jitRounds + 1, warmup, repeat);
      if (paced) {
        out.println("{\"ready\":true}");
        out.flush();
      }
      for (int round = -warmup; round < repeat; round++) {
        if (paced && pacer.readLine() == null) {
          throw new IOException("bench --paced: standard input closed before round " + round);
        }
        for (int i = 0; i < n; i++) {
          if (errors[i] == null) {
            long start = System.nanoTime();
            sink += searcher.run(queries[i], op, k);
            long elapsed = System.nanoTime() - start;
            if (round >= 0) {
              nanos[i][round] = elapsed;
            }
          }
        }
        if (paced) {
          out.println("{\"round\":" + round + "}");
          out.flush();
        }
      }
    }
    for (int i = 0; i < n; i++) {
      if (errors[i] != null) {
        out.println(errors[i]);
        continue;
      }
      StringBuilder b = new StringBuilder("{\"query\":").append(Json.string(texts.get(i)));
      b.append(",\"latencies_us\":[");
      for (int r = 0; r < repeat; r++) {
        b.append(r == 0 ? "" : ",").append(String.format(Locale.ROOT, "%.3f", nanos[i][r] / 1e3));
      }
      out.println(b.append("],\"total_hits\":").append(totalHits[i]).append('}'));
    }
    System.err.println("bench: done (checksum " + sink + ")");
  }

  /**
   * Answers {@code COMMAND<TAB>query} lines from stdin, one line each, flushed: COUNT, TOP_10,
   * TOP_100, TOP_1000, TOP_10_COUNT, TOP_100_COUNT, TOP_1000_COUNT; anything else, or a query that
   * does not parse or run, gets UNSUPPORTED (with the reason on stderr).
   */
  static void serveStdin(Path indexDir, PrintWriter out) throws IOException {
    BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    try (PeerSearcher searcher = PeerSearcher.open(indexDir)) {
      for (String line; (line = in.readLine()) != null; ) {
        out.println(answer(searcher, line));
        out.flush();
      }
    }
  }

  private static String answer(PeerSearcher searcher, String line) {
    int tab = line.indexOf('\t');
    Command command = tab < 0 ? null : COMMANDS.get(line.substring(0, tab));
    if (command == null) {
      return "UNSUPPORTED";
    }
    String query = line.substring(tab + 1);
    try {
      return Long.toString(searcher.run(searcher.parse(query), command.op(), command.k()));
    } catch (Exception e) {
      System.err.println("serve-stdin: " + error(query, e));
      return "UNSUPPORTED";
    }
  }

  private static List<String> readQueries(Path file) throws IOException {
    return Files.readAllLines(file, StandardCharsets.UTF_8);
  }

  private static String error(String query, Exception e) {
    // The first line only: parse errors go on to list every token the parser expected.
    String message =
        e.getMessage() == null ? e.toString() : e.getMessage().lines().findFirst().orElse("");
    return "{\"query\":" + Json.string(query) + ",\"error\":" + Json.string(message) + "}";
  }

  private static void requirePositive(int k) {
    if (k < 1) {
      throw new LucenePeer.UsageException("-k must be at least 1");
    }
  }
}
