package dev.apcache.lucenepeer;

import java.io.Closeable;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Reads apcache's corpus format: one document per line, {@code title<TAB>body}, UTF-8.
 *
 * <p>Lines end at {@code "\n"} or {@code "\r\n"}, never at a lone {@code '\r'} (as with Rust's
 * {@code str::lines}), so that line numbers, and therefore document ids, match apcache's. A line
 * without a TAB is a body with an empty title. The text indexed and analyzed for a document is
 * always {@code title + " " + body}.
 */
final class Corpus implements Closeable {
  private final Reader reader;
  private final char[] buf = new char[1 << 16];
  private final StringBuilder line = new StringBuilder();
  private int pos;
  private int limit;

  Corpus(Path file) throws IOException {
    reader = new InputStreamReader(Files.newInputStream(file), StandardCharsets.UTF_8);
  }

  /** Returns the next document's text (title + " " + body), or null at the end of the input. */
  String nextText() throws IOException {
    String l = nextLine();
    if (l == null) {
      return null;
    }
    int tab = l.indexOf('\t');
    return tab < 0 ? " " + l : l.substring(0, tab) + " " + l.substring(tab + 1);
  }

  private String nextLine() throws IOException {
    line.setLength(0);
    while (true) {
      if (pos == limit) {
        limit = reader.read(buf);
        pos = 0;
        if (limit <= 0) {
          limit = 0;
          return line.length() == 0 ? null : line.toString();
        }
      }
      int start = pos;
      while (pos < limit && buf[pos] != '\n') {
        pos++;
      }
      line.append(buf, start, pos - start);
      if (pos < limit) {
        pos++; // the '\n'
        return withoutCr();
      }
    }
  }

  /** The current line without the '\r' of a "\r\n" line end. */
  private String withoutCr() {
    int n = line.length();
    return n > 0 && line.charAt(n - 1) == '\r' ? line.substring(0, n - 1) : line.toString();
  }

  @Override
  public void close() throws IOException {
    reader.close();
  }
}
