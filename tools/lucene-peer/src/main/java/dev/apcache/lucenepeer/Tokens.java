package dev.apcache.lucenepeer;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;

/**
 * The {@code tokens} command: prints the analyzed tokens of each document, space-separated, one
 * line per document, so that apcache can check that its analyzer agrees with Lucene's.
 */
final class Tokens {
  private Tokens() {}

  static void run(Path input, long maxDocs, PrintWriter out) throws IOException {
    try (Analyzer analyzer = Schema.analyzer();
        Corpus corpus = new Corpus(input)) {
      String t;
      for (long docs = 0; docs < maxDocs && (t = corpus.nextText()) != null; docs++) {
        try (TokenStream ts = analyzer.tokenStream(Schema.TEXT, t)) {
          CharTermAttribute term = ts.addAttribute(CharTermAttribute.class);
          ts.reset();
          boolean first = true;
          while (ts.incrementToken()) {
            if (!first) {
              out.append(' ');
            }
            out.append(term);
            first = false;
          }
          ts.end();
        }
        out.append('\n');
      }
    }
  }
}
