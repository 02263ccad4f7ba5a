package dev.apcache.lucenepeer;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonPrimitive;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field.Store;
import org.apache.lucene.document.KeywordField;
import org.apache.lucene.document.LongField;
import org.apache.lucene.document.TextField;

/**
 * Turns one JSON document into the Lucene {@link Document} that {@code index-json} adds, under a
 * {@link JsonMapping}, the way apcache maps documents (its {@code schema::Mapper}), so that both
 * index the same values.
 *
 * <ul>
 *   <li>text: {@link TextField} (positions, norms), analyzed by the writer's {@link GapAnalyzer};
 *       its keyword sub-field, if any, as for keyword below under {@code name.sub};
 *   <li>keyword: {@link KeywordField} (a term and SortedSet doc values) unless longer than {@code
 *       ignore_above} characters or than one Lucene term;
 *   <li>long and integer: {@link LongField} (a point and SortedNumeric doc values).
 * </ul>
 *
 * <p>Values are coerced as Elasticsearch and apcache coerce them: a number or boolean where text
 * or a keyword is mapped is its JSON text; a fractional number or a string holding a number where
 * an integer is mapped is truncated. An array gives one Lucene field per element (nested arrays
 * are flattened), JSON null gives none. Each document's id is its {@code "_id"} key, or else the
 * value of the id field, stored and indexed as the keyword {@code _id}; ids are unique.
 */
final class DocumentMapper {
  /** Elasticsearch's limit on an id, in UTF-8 bytes. */
  private static final int MAX_ID_BYTES = 512;

  private static final BigDecimal MAX_INT_DIGITS = BigDecimal.TEN.pow(19);

  private final JsonMapping mapping;
  private final String idField;
  private final Set<String> ids = new HashSet<>();

  DocumentMapper(JsonMapping mapping, String idField) {
    this.mapping = mapping;
    this.idField = idField;
  }

  /** Maps {@code json}; a document that does not fit the mapping is refused whole. */
  Document map(JsonElement json) {
    if (!json.isJsonObject()) {
      throw new IllegalArgumentException("a document is a JSON object");
    }
    JsonObject object = json.getAsJsonObject();
    Document doc = new Document();
    String id = null;
    for (Map.Entry<String, JsonElement> e : object.entrySet()) {
      String name = e.getKey();
      if (name.equals(JsonMapping.ID)) {
        id = id(e.getValue());
        continue;
      }
      if (name.startsWith("_")) {
        throw new IllegalArgumentException("field [" + name + "]: metadata fields are refused");
      }
      // A dotted key would name an object's field or a sub-field: neither is a document key here.
      JsonMapping.Field field = name.contains(".") ? null : mapping.get(name);
      if (field == null) {
        if (mapping.dynamic() == JsonMapping.Dynamic.IGNORE) {
          continue;
        }
        throw new IllegalArgumentException(
            "field [" + name + "] is not in the mapping (\"dynamic\": \"strict\")");
      }
      add(doc, name, field, e.getValue());
    }
    if (id == null && idField != null && object.has(idField)) {
      id = id(object.get(idField));
    }
    if (id == null) {
      throw new IllegalArgumentException("the document has no \"_id\" nor \"" + idField + "\"");
    }
    if (!ids.add(id)) {
      throw new IllegalArgumentException("duplicate id " + Json.string(id));
    }
    doc.add(new KeywordField(JsonMapping.ID, id, Store.YES));
    return doc;
  }

  private static void add(Document doc, String name, JsonMapping.Field field, JsonElement value) {
    if (value.isJsonNull()) {
      return;
    }
    if (value.isJsonArray()) {
      for (JsonElement v : (JsonArray) value) {
        add(doc, name, field, v);
      }
      return;
    }
    if (value.isJsonObject()) {
      throw bad(name, "an object where a " + kindName(field) + " is mapped");
    }
    JsonPrimitive p = value.getAsJsonPrimitive();
    switch (field.kind()) {
      case TEXT -> {
        String text = p.getAsString();
        doc.add(new TextField(name, text, Store.NO));
        if (field.sub() != null && field.sub().keeps(text)) {
          doc.add(new KeywordField(name + "." + field.subName(), text, Store.NO));
        }
      }
      case KEYWORD -> {
        String text = p.getAsString();
        if (field.keeps(text)) {
          doc.add(new KeywordField(name, text, Store.NO));
        }
      }
      case LONG, INTEGER -> doc.add(new LongField(name, integer(name, field, p), Store.NO));
    }
  }

  /**
   * An integer field's value: a JSON integer, a fractional number truncated toward zero, or a
   * string holding either; in the range of the field's type.
   */
  private static long integer(String name, JsonMapping.Field field, JsonPrimitive p) {
    BigDecimal number = null;
    if (p.isNumber() || p.isString()) {
      try {
        number = new BigDecimal(p.getAsString().trim());
      } catch (NumberFormatException e) {
        // not a number: refused below
      }
    }
    if (number == null) {
      throw bad(name, p + " is not an integer");
    }
    // Checked before truncating: setScale(0) on 1e999999999 would build a billion-digit number.
    if (number.abs().compareTo(MAX_INT_DIGITS) >= 0) {
      throw bad(name, p + " is out of range for " + kindName(field));
    }
    long v;
    try {
      v = number.setScale(0, RoundingMode.DOWN).longValueExact();
    } catch (ArithmeticException e) {
      throw bad(name, p + " is out of range for " + kindName(field));
    }
    if (field.kind() == JsonMapping.Kind.INTEGER && (int) v != v) {
      throw bad(name, p + " is out of range for integer");
    }
    return v;
  }

  /** An id: a JSON string or number, not empty, at most 512 bytes, one word. */
  private static String id(JsonElement value) {
    if (!value.isJsonPrimitive() || value.getAsJsonPrimitive().isBoolean()) {
      throw new IllegalArgumentException("id " + value + " is not a string or a number");
    }
    String id = value.getAsString();
    if (id.isEmpty()) {
      throw new IllegalArgumentException("an id cannot be empty");
    }
    if (id.getBytes(java.nio.charset.StandardCharsets.UTF_8).length > MAX_ID_BYTES) {
      throw new IllegalArgumentException("an id is at most " + MAX_ID_BYTES + " bytes");
    }
    if (id.codePoints().anyMatch(c -> Character.isWhitespace(c) || Character.isISOControl(c))) {
      throw new IllegalArgumentException(
          "id " + Json.string(id) + " has whitespace in it; ids are single words");
    }
    return id;
  }

  private static String kindName(JsonMapping.Field field) {
    return field.kind().name().toLowerCase(java.util.Locale.ROOT);
  }

  private static IllegalArgumentException bad(String field, String reason) {
    return new IllegalArgumentException("field [" + field + "]: " + reason);
  }
}
