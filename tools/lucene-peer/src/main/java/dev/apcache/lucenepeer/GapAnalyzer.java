package dev.apcache.lucenepeer;

import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.DelegatingAnalyzerWrapper;

/**
 * {@link Schema#analyzer()} with a position gap of {@link #GAP} between the values of a
 * multi-valued text field, for {@code index-json}.
 *
 * <p>Lucene adds {@link #getPositionIncrementGap} after each value of a field in a document, so
 * that a phrase (within its slop) never runs from one array element into the next. Elasticsearch
 * sets the gap to 100 ({@code position_increment_gap}) and apcache does the same; Lucene's own
 * default is 0.
 */
final class GapAnalyzer extends DelegatingAnalyzerWrapper {
  /** Positions between two values of one field (Elasticsearch's position_increment_gap). */
  static final int GAP = 100;

  private final Analyzer delegate = Schema.analyzer();

  GapAnalyzer() {
    super(PER_FIELD_REUSE_STRATEGY);
  }

  @Override
  protected Analyzer getWrappedAnalyzer(String fieldName) {
    return delegate;
  }

  @Override
  public int getPositionIncrementGap(String fieldName) {
    return GAP;
  }

  @Override
  public void close() {
    delegate.close();
    super.close();
  }
}
