package dev.apcache.lucenepeer;

import static dev.apcache.lucenepeer.JsonNodes.has;
import static dev.apcache.lucenepeer.JsonNodes.object;
import static dev.apcache.lucenepeer.JsonNodes.required;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.apache.lucene.index.DocValues;
import org.apache.lucene.index.IndexReader;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.ReaderUtil;
import org.apache.lucene.search.FieldDoc;
import org.apache.lucene.search.Sort;
import org.apache.lucene.search.SortField;
import org.apache.lucene.search.SortedNumericSelector;
import org.apache.lucene.search.SortedNumericSortField;
import org.apache.lucene.search.SortedSetSelector;
import org.apache.lucene.search.SortedSetSortField;
import org.apache.lucene.util.BytesRef;

/**
 * A {@code search-json} sort: keys {@code {"field": F, "order": "asc"|"desc", "mode":
 * "min"|"max"}}, {@code {"field": "_score"}} or {@code {"field": "_doc"}}, ending with the doc id
 * as the last tie-break (so ties go to the earlier document, as in apcache).
 *
 * <p>As in Elasticsearch and apcache, a document without a value sorts last whatever the order,
 * and a multi-valued field sorts by its least value ascending and its greatest descending (the
 * default {@code mode}; Lucene's own default is the least value in both orders). Long fields sort
 * by their SortedNumeric doc values, keyword fields by their SortedSet doc values (byte order).
 */
final class JsonSort {
  private enum By {
    LONG,
    KEYWORD,
    SCORE,
    DOC
  }

  /** One key: what it sorts by, and on which field. */
  private record Key(By by, String field, boolean reverse, boolean max) {
    SortField sortField() {
      return switch (by) {
        case LONG -> {
          SortedNumericSortField s =
              new SortedNumericSortField(
                  field,
                  SortField.Type.LONG,
                  reverse,
                  max ? SortedNumericSelector.Type.MAX : SortedNumericSelector.Type.MIN);
          s.setMissingValue(reverse ? Long.MIN_VALUE : Long.MAX_VALUE);
          yield s;
        }
        case KEYWORD -> {
          SortedSetSortField s =
              new SortedSetSortField(
                  field, reverse, max ? SortedSetSelector.Type.MAX : SortedSetSelector.Type.MIN);
          s.setMissingValue(reverse ? SortField.STRING_FIRST : SortField.STRING_LAST);
          yield s;
        }
        case SCORE ->
            reverse ? new SortField(null, SortField.Type.SCORE, true) : SortField.FIELD_SCORE;
        case DOC -> reverse ? new SortField(null, SortField.Type.DOC, true) : SortField.FIELD_DOC;
      };
    }
  }

  private final List<Key> keys;
  private final Sort sort;

  private JsonSort(List<Key> keys) {
    this.keys = keys;
    SortField[] fields = new SortField[keys.size() + 1];
    for (int i = 0; i < keys.size(); i++) {
      fields[i] = keys.get(i).sortField();
    }
    fields[keys.size()] = SortField.FIELD_DOC;
    this.sort = new Sort(fields);
  }

  /** The sort a request's {@code "sort"} array asks for. */
  static JsonSort parse(JsonElement json, JsonMapping mapping) {
    if (!json.isJsonArray()) {
      throw new IllegalArgumentException("sort must be an array, not " + json);
    }
    List<Key> keys = new ArrayList<>();
    for (JsonElement k : json.getAsJsonArray()) {
      JsonObject o = object(k, "sort key", Set.of("field", "order", "mode"));
      String field = JsonNodes.string(required(o, "field", "sort key"), "sort.field");
      By by =
          switch (field) {
            case "_score" -> By.SCORE;
            case "_doc" -> By.DOC;
            default -> {
              JsonMapping.Field f = mapping.get(field);
              if (f == null) {
                throw new IllegalArgumentException(
                    "sort: field [" + field + "] is not in the mapping");
              }
              if (f.kind() == JsonMapping.Kind.TEXT) {
                throw new IllegalArgumentException("sort: [" + field + "] is a text field");
              }
              yield f.numeric() ? By.LONG : By.KEYWORD;
            }
          };
      // _score sorts best first unless told otherwise; fields and _doc ascending.
      String order = by == By.SCORE ? "desc" : "asc";
      if (has(o, "order")) {
        order = JsonNodes.string(o.get("order"), "sort.order");
      }
      boolean descending =
          switch (order) {
            case "asc" -> false;
            case "desc" -> true;
            default -> throw new IllegalArgumentException("sort.order must be asc or desc");
          };
      boolean max = descending;
      if (has(o, "mode")) {
        max =
            switch (JsonNodes.string(o.get("mode"), "sort.mode")) {
              case "min" -> false;
              case "max" -> true;
              default -> throw new IllegalArgumentException("sort.mode must be min or max");
            };
      }
      // SCORE's natural order is descending: Lucene's "reverse" is then ascending.
      boolean reverse = by == By.SCORE ? !descending : descending;
      keys.add(new Key(by, field, reverse, max));
    }
    return new JsonSort(keys);
  }

  Sort sort() {
    return sort;
  }

  /** Whether a key is the score, so that hits need their scores. */
  boolean needsScores() {
    return keys.stream().anyMatch(k -> k.by() == By.SCORE);
  }

  /**
   * A hit's sort values as a JSON array: longs as integers, keywords as strings, a missing value
   * as null (told apart from the missing-value sentinels by the doc values themselves), the score
   * as a float, the doc id as an integer; the final doc-id tie-break is left out.
   */
  String values(FieldDoc hit, IndexReader reader) throws IOException {
    StringBuilder b = new StringBuilder("[");
    for (int i = 0; i < keys.size(); i++) {
      Key key = keys.get(i);
      Object v = hit.fields[i];
      b.append(i == 0 ? "" : ",");
      switch (key.by()) {
        case LONG -> b.append(hasValue(reader, key.field(), hit.doc) ? v.toString() : "null");
        case KEYWORD -> b.append(v == null ? "null" : Json.string(((BytesRef) v).utf8ToString()));
        case SCORE -> b.append(Json.number((Float) v));
        case DOC -> b.append(v);
      }
    }
    return b.append(']').toString();
  }

  private static boolean hasValue(IndexReader reader, String field, int doc) throws IOException {
    List<LeafReaderContext> leaves = reader.leaves();
    LeafReaderContext leaf = leaves.get(ReaderUtil.subIndex(doc, leaves));
    return DocValues.getSortedNumeric(leaf.reader(), field).advanceExact(doc - leaf.docBase);
  }
}
