package dev.apcache.lucenepeer;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import org.apache.lucene.search.TotalHits;

/**
 * A {@link TotalHits}' count and relation under Lucene 9 (public fields) and Lucene 10 (a record
 * with accessors), so that one source builds the peer against either.
 */
final class Hits {
  private static final MethodHandle VALUE;
  private static final MethodHandle RELATION;

  static {
    MethodHandles.Lookup lookup = MethodHandles.publicLookup();
    MethodHandle value;
    MethodHandle relation;
    try {
      value = lookup.findVirtual(TotalHits.class, "value", MethodType.methodType(long.class));
      relation =
          lookup.findVirtual(
              TotalHits.class, "relation", MethodType.methodType(TotalHits.Relation.class));
    } catch (ReflectiveOperationException lucene9) {
      try {
        value = lookup.findGetter(TotalHits.class, "value", long.class);
        relation = lookup.findGetter(TotalHits.class, "relation", TotalHits.Relation.class);
      } catch (ReflectiveOperationException e) {
        throw new ExceptionInInitializerError(e);
      }
    }
    VALUE = value;
    RELATION = relation;
  }

  private Hits() {}

  /** The hit count. */
  static long total(TotalHits hits) {
    try {
      return (long) VALUE.invokeExact(hits);
    } catch (Throwable e) {
      throw new IllegalStateException(e);
    }
  }

  /** Whether the count is exact. */
  static boolean exact(TotalHits hits) {
    try {
      return (TotalHits.Relation) RELATION.invokeExact(hits) == TotalHits.Relation.EQUAL_TO;
    } catch (Throwable e) {
      throw new IllegalStateException(e);
    }
  }
}
