package dev.apcache.lucenepeer;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * The fields of JSON documents and their types, read from an Elasticsearch mapping ({@code
 * {"dynamic": "strict", "properties": {"title": {"type": "text"}, ...}}}, optionally under {@code
 * "mappings"}), for {@code index-json} and {@code search-json}.
 *
 * <p>Only what apcache's agreement tests need: the types {@code text}, {@code keyword} (with {@code
 * ignore_above}), {@code long} and {@code integer}, and a text field's one keyword sub-field
 * ({@code "fields": {"keyword": {"type": "keyword"}}}, indexed as {@code name.keyword}). Anything
 * else is refused by name rather than ignored, as apcache does: a mapping that asked for something
 * the peer silently left out would make the two disagree for a reason nobody looks for.
 */
final class JsonMapping {
  /** The field that holds each document's id (stored, and indexed as a keyword). */
  static final String ID = "_id";

  /** Lucene's limit for one indexed term, in UTF-8 bytes: longer keyword values are skipped. */
  static final int MAX_KEYWORD_BYTES = 32766;

  /** The types the peer supports; {@code integer} is a {@code long} limited to 32 bits. */
  enum Kind {
    TEXT,
    KEYWORD,
    LONG,
    INTEGER
  }

  /**
   * One field: its kind, a keyword's {@code ignore_above} (in characters, that is code points, as
   * apcache counts them; {@code Integer.MAX_VALUE} when absent), and a text field's keyword
   * sub-field's name (or null) and spec.
   */
  record Field(Kind kind, int ignoreAbove, String subName, Field sub) {
    boolean numeric() {
      return kind == Kind.LONG || kind == Kind.INTEGER;
    }

    /** Whether a keyword value is indexed: not above {@code ignore_above}, and one Lucene term. */
    boolean keeps(String value) {
      return value.codePointCount(0, value.length()) <= ignoreAbove && fitsOneTerm(value);
    }
  }

  /** What happens to a document field the mapping does not name. */
  enum Dynamic {
    /** Refuse the document ({@code "strict"}). */
    STRICT,
    /** Leave the field out ({@code false}). */
    IGNORE
  }

  private final Map<String, Field> fields;
  private final Dynamic dynamic;

  private JsonMapping(Map<String, Field> fields, Dynamic dynamic) {
    this.fields = fields;
    this.dynamic = dynamic;
  }

  static JsonMapping read(Path file) throws IOException {
    try {
      return parse(JsonNodes.parse(Files.readString(file, StandardCharsets.UTF_8)));
    } catch (RuntimeException e) { // also a "type" that is not a string, from Gson
      throw new IllegalArgumentException("mapping " + file + ": " + e.getMessage(), e);
    }
  }

  static JsonMapping parse(JsonElement json) {
    if (!json.isJsonObject()) {
      throw new IllegalArgumentException("a mapping is a JSON object");
    }
    JsonObject root = json.getAsJsonObject();
    if (root.size() == 1 && root.has("mappings") && root.get("mappings").isJsonObject()) {
      root = root.getAsJsonObject("mappings");
    }
    // Without "dynamic" Elasticsearch infers types for new fields; the peer cannot, so it asks
    // for a mapping that says what to do with them.
    Dynamic dynamic = null;
    for (Map.Entry<String, JsonElement> e : root.entrySet()) {
      switch (e.getKey()) {
        case "properties" -> {}
        case "dynamic" -> {
          String d = e.getValue().isJsonPrimitive() ? e.getValue().getAsString() : "";
          dynamic =
              switch (d) {
                case "strict" -> Dynamic.STRICT;
                case "false" -> Dynamic.IGNORE;
                default ->
                    throw new IllegalArgumentException(
                        "\"dynamic\": "
                            + e.getValue()
                            + " is not supported (the peer takes \"strict\" or false)");
              };
        }
        case "_source" -> {
          if (!e.getValue().toString().equals("{\"enabled\":true}")) {
            throw new IllegalArgumentException("unsupported mapping parameter: _source");
          }
        }
        default ->
            throw new IllegalArgumentException("unsupported mapping parameter: " + e.getKey());
      }
    }
    if (dynamic == null) {
      throw new IllegalArgumentException(
          "the mapping must say \"dynamic\": \"strict\" or false (the peer infers no types)");
    }
    JsonElement properties = root.get("properties");
    if (properties == null || !properties.isJsonObject()) {
      throw new IllegalArgumentException("the mapping needs \"properties\", an object");
    }
    Map<String, Field> fields = new LinkedHashMap<>();
    for (Map.Entry<String, JsonElement> e : properties.getAsJsonObject().entrySet()) {
      String name = e.getKey();
      if (name.isEmpty() || name.startsWith("_") || name.contains(".")) {
        throw new IllegalArgumentException(
            "field [" + name + "]: names are not empty, do not start with '_' nor contain '.'");
      }
      Field f = field(name, e.getValue(), true);
      fields.put(name, f);
      if (f.subName() != null) {
        fields.put(name + "." + f.subName(), f.sub());
      }
    }
    return new JsonMapping(fields, dynamic);
  }

  /** What queries and sorts see of {@link #ID}: a keyword. */
  private static final Field ID_FIELD = new Field(Kind.KEYWORD, Integer.MAX_VALUE, null, null);

  /**
   * The field named {@code name} ({@code maintainer.keyword} for a sub-field, {@code _id} as a
   * keyword), or null.
   */
  Field get(String name) {
    return name.equals(ID) ? ID_FIELD : fields.get(name);
  }

  Dynamic dynamic() {
    return dynamic;
  }

  private static Field field(String path, JsonElement json, boolean topLevel) {
    if (!json.isJsonObject()) {
      throw new IllegalArgumentException("field [" + path + "]: a field's mapping is an object");
    }
    JsonObject spec = json.getAsJsonObject();
    if (spec.has("properties") || !spec.has("type")) {
      throw new IllegalArgumentException(
          "field [" + path + "]: objects are not supported, a field needs a \"type\"");
    }
    String type = spec.get("type").getAsString();
    Kind kind =
        switch (type) {
          case "text" -> Kind.TEXT;
          case "keyword" -> Kind.KEYWORD;
          case "long" -> Kind.LONG;
          case "integer" -> Kind.INTEGER;
          default ->
              throw new IllegalArgumentException(
                  "field ["
                      + path
                      + "]: type \""
                      + type
                      + "\" is not supported (text, keyword, long, integer)");
        };
    Set<String> allowed =
        switch (kind) {
          case TEXT -> topLevel ? Set.of("type", "fields") : Set.of("type");
          case KEYWORD -> Set.of("type", "ignore_above");
          default -> Set.of("type");
        };
    for (String parameter : spec.keySet()) {
      if (!allowed.contains(parameter)) {
        throw new IllegalArgumentException(
            "field [" + path + "]: unsupported parameter \"" + parameter + "\" for " + type);
      }
    }
    int ignoreAbove = Integer.MAX_VALUE;
    if (spec.has("ignore_above")) {
      JsonElement v = spec.get("ignore_above");
      try {
        ignoreAbove = v.getAsJsonPrimitive().getAsBigDecimal().intValueExact();
      } catch (RuntimeException e) {
        ignoreAbove = -1;
      }
      if (ignoreAbove < 0) {
        throw new IllegalArgumentException(
            "field [" + path + "]: ignore_above must be a non-negative integer, not " + v);
      }
    }
    String subName = null;
    Field sub = null;
    if (spec.has("fields")) {
      JsonElement subs = spec.get("fields");
      if (!subs.isJsonObject() || subs.getAsJsonObject().size() > 1) {
        throw new IllegalArgumentException(
            "field [" + path + "]: \"fields\" must be an object with one keyword sub-field");
      }
      for (Map.Entry<String, JsonElement> e : subs.getAsJsonObject().entrySet()) {
        subName = e.getKey();
        sub = field(path + "." + subName, e.getValue(), false);
        if (sub.kind() != Kind.KEYWORD || subName.isEmpty() || subName.contains(".")) {
          throw new IllegalArgumentException(
              "field [" + path + "." + subName + "]: a text field's sub-field is a keyword");
        }
      }
    }
    return new Field(kind, ignoreAbove, subName, sub);
  }

  private static boolean fitsOneTerm(String s) {
    // A UTF-16 unit is at most 3 UTF-8 bytes: most values need no encoding to tell.
    return (long) s.length() * 3 <= MAX_KEYWORD_BYTES
        || s.getBytes(StandardCharsets.UTF_8).length <= MAX_KEYWORD_BYTES;
  }
}
