package dev.apcache.lucenepeer;

import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.CharArraySet;
import org.apache.lucene.analysis.standard.StandardAnalyzer;
import org.apache.lucene.document.FieldType;
import org.apache.lucene.index.IndexOptions;
import org.apache.lucene.search.similarities.BM25Similarity;
import org.apache.lucene.search.similarities.Similarity;

/**
 * The one index layout every command agrees on: field names, the analyzer and the similarity.
 *
 * <p>Field {@code "text"} holds title + " " + body, analyzed with {@link StandardAnalyzer} without
 * stop words, indexed with documents and frequencies (and positions with {@code index --positions},
 * for phrase queries), norms on, not stored.
 * Field {@code "id"} is the document's 0-based line number, as doc values and as a stored field.
 */
final class Schema {
  static final String TEXT = "text";
  static final String ID = "id";

  /** The stored copy of the text, with {@code index --store}. */
  static final String STORED_TEXT = "stored_text";

  /** BM25 parameters, shared by indexing (norms) and searching (scores). */
  static final float K1 = 1.2f;

  static final float B = 0.75f;

  static final FieldType TEXT_TYPE = textType(IndexOptions.DOCS_AND_FREQS);

  static final FieldType TEXT_TYPE_WITH_POSITIONS =
      textType(IndexOptions.DOCS_AND_FREQS_AND_POSITIONS);

  private Schema() {}

  static Analyzer analyzer() {
    return new StandardAnalyzer(CharArraySet.EMPTY_SET);
  }

  static Similarity similarity() {
    return new BM25Similarity(K1, B);
  }

  private static FieldType textType(IndexOptions options) {
    FieldType t = new FieldType();
    t.setIndexOptions(options);
    t.setTokenized(true);
    t.setOmitNorms(false);
    t.setStored(false);
    t.freeze();
    return t;
  }
}
