package dev.apcache.lucenepeer;

import java.io.BufferedWriter;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Command-line entry point of lucene-peer, apcache's reference peer built on Lucene 9.12.
 *
 * <p>Dispatches to the {@code index}, {@code search}, {@code tokens}, {@code serve-stdin} and
 * {@code bench} commands over apcache's title/body corpus, and to {@code index-json}, {@code
 * search-json} and {@code serve-json} over JSON documents under an Elasticsearch mapping (see
 * README.md). Everything printed goes to stdout as UTF-8; usage errors exit with status 2, bad
 * input (a mapping or document that cannot be indexed) with status 1 and a one-line message.
 */
public final class LucenePeer {
  private static final String USAGE =
      String.join(
          "\n",
          "usage: java -jar lucene-peer.jar COMMAND ...",
          "  index <input-file> <index-dir> [--docs N] [--positions] [--store]",
          "  search <index-dir> <queries-file> [-k 10] [--count]",
          "  tokens <input-file> [--docs N]",
          "  serve-stdin <index-dir>",
          "  bench <index-dir> <queries-file> [-k 10] [--count] [--warmup R] [--repeat R]"
              + " [--paced]",
          "  index-json <input.jsonl> <index-dir> <mapping.json> [--id-field id]",
          "  search-json <index-dir> <mapping.json> <queries.jsonl>",
          "  serve-json <index-dir> <mapping.json>");

  private LucenePeer() {}

  public static void main(String[] argv) throws Exception {
    if (argv.length == 0 || argv[0].equals("-h") || argv[0].equals("--help")) {
      System.err.println(USAGE);
      System.exit(argv.length == 0 ? 2 : 0);
    }
    String[] rest = java.util.Arrays.copyOfRange(argv, 1, argv.length);
    OutputStreamWriter stdout = new OutputStreamWriter(System.out, StandardCharsets.UTF_8);
    PrintWriter out = new PrintWriter(new BufferedWriter(stdout, 1 << 16));
    try {
      switch (argv[0]) {
        case "index" -> {
          Args a = Args.parse(rest, 2, Set.of("--docs"), Set.of("--positions", "--store"));
          long docs = a.longOpt("--docs", Long.MAX_VALUE);
          Indexer.run(
              Path.of(a.pos(0)),
              Path.of(a.pos(1)),
              docs,
              a.flag("--positions"),
              a.flag("--store"),
              out);
        }
        case "search" -> {
          // --count is accepted so that search and bench take the same options; search always
          // counts exactly.
          Args a = Args.parse(rest, 2, Set.of("-k"), Set.of("--count"));
          QueryCommands.search(Path.of(a.pos(0)), Path.of(a.pos(1)), a.intOpt("-k", 10), out);
        }
        case "tokens" -> {
          Args a = Args.parse(rest, 1, Set.of("--docs"), Set.of());
          Tokens.run(Path.of(a.pos(0)), a.longOpt("--docs", Long.MAX_VALUE), out);
        }
        case "serve-stdin" -> {
          Args a = Args.parse(rest, 1, Set.of(), Set.of());
          QueryCommands.serveStdin(Path.of(a.pos(0)), out);
        }
        case "bench" -> {
          Args a =
              Args.parse(
                  rest, 2, Set.of("-k", "--warmup", "--repeat"), Set.of("--count", "--paced"));
          QueryCommands.bench(
              Path.of(a.pos(0)),
              Path.of(a.pos(1)),
              a.intOpt("-k", 10),
              a.flag("--count"),
              a.intOpt("--warmup", 1),
              a.intOpt("--repeat", 10),
              a.flag("--paced"),
              out);
        }
        case "index-json" -> {
          Args a = Args.parse(rest, 3, Set.of("--id-field"), Set.of());
          JsonIndexer.run(
              Path.of(a.pos(0)),
              Path.of(a.pos(1)),
              Path.of(a.pos(2)),
              a.stringOpt("--id-field", "id"),
              out);
        }
        case "search-json" -> {
          Args a = Args.parse(rest, 3, Set.of(), Set.of());
          JsonSearch.run(Path.of(a.pos(0)), Path.of(a.pos(1)), Path.of(a.pos(2)), out);
        }
        case "serve-json" -> {
          Args a = Args.parse(rest, 2, Set.of(), Set.of());
          JsonServe.run(Path.of(a.pos(0)), Path.of(a.pos(1)), out);
        }
        default -> throw new UsageException("unknown command: " + argv[0]);
      }
    } catch (UsageException e) {
      System.err.println("lucene-peer: " + e.getMessage() + "\n" + USAGE);
      System.exit(2);
    } catch (IllegalArgumentException e) {
      out.flush();
      System.err.println("lucene-peer: " + e.getMessage());
      System.exit(1);
    } finally {
      out.flush();
    }
  }

  /** A command line that does not match {@link #USAGE}. */
  static final class UsageException extends RuntimeException {
    UsageException(String message) {
      super(message);
    }
  }

  /** The positional arguments and {@code --options} of one command. */
  private static final class Args {
    private final List<String> positional = new ArrayList<>();
    private final Map<String, String> options = new HashMap<>();

    static Args parse(String[] argv, int positionals, Set<String> valued, Set<String> flags) {
      Args a = new Args();
      for (int i = 0; i < argv.length; i++) {
        String s = argv[i];
        if (valued.contains(s)) {
          if (i + 1 == argv.length) {
            throw new UsageException(s + " needs a value");
          }
          a.options.put(s, argv[++i]);
        } else if (flags.contains(s)) {
          a.options.put(s, "");
        } else if (s.startsWith("-")) {
          throw new UsageException("unknown option: " + s);
        } else {
          a.positional.add(s);
        }
      }
      if (a.positional.size() != positionals) {
        throw new UsageException(
            "expected " + positionals + " positional arguments, got " + a.positional.size());
      }
      return a;
    }

    String pos(int i) {
      return positional.get(i);
    }

    String stringOpt(String name, String fallback) {
      return options.getOrDefault(name, fallback);
    }

    boolean flag(String name) {
      return options.containsKey(name);
    }

    long longOpt(String name, long fallback) {
      String v = options.get(name);
      try {
        long n = v == null ? fallback : Long.parseLong(v);
        if (n < 0) {
          throw new UsageException(name + " must not be negative");
        }
        return n;
      } catch (NumberFormatException e) {
        throw new UsageException(name + " needs an integer, got " + v);
      }
    }

    int intOpt(String name, int fallback) {
      long n = longOpt(name, fallback);
      if (n > Integer.MAX_VALUE) {
        throw new UsageException(name + " is too large");
      }
      return (int) n;
    }
  }
}
