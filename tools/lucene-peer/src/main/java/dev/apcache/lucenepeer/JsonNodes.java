package dev.apcache.lucenepeer;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import com.google.gson.JsonPrimitive;
import com.google.gson.Strictness;
import com.google.gson.stream.JsonReader;
import com.google.gson.stream.JsonToken;
import java.io.IOException;
import java.io.StringReader;
import java.math.BigDecimal;
import java.util.Set;
import java.util.TreeSet;

/**
 * Strict reading of the JSON that {@code search-json} takes: every object's keys are checked
 * against the ones its node allows, and values against the type they need, with an error that
 * says where. A typo then fails loudly instead of quietly changing the query compared.
 */
final class JsonNodes {
  private static final String GSON_LENIENCY_HINT =
      "Use JsonReader.setStrictness(Strictness.LENIENT) to accept malformed JSON";

  private JsonNodes() {}

  /**
   * Parses one JSON value, strictly (RFC 8259, as serde_json reads it on apcache's side; Gson's
   * default is lenient: unquoted names, single quotes, NaN), the whole text or an error.
   */
  static JsonElement parse(String text) {
    if (text.isBlank()) {
      throw new IllegalArgumentException("not JSON: an empty line"); // Gson would read null
    }
    try {
      JsonReader reader = new JsonReader(new StringReader(text));
      reader.setStrictness(Strictness.STRICT);
      JsonElement json = JsonParser.parseReader(reader);
      if (reader.peek() != JsonToken.END_DOCUMENT) {
        throw new IllegalArgumentException("not JSON: more after the value");
      }
      return json;
    } catch (IOException | JsonParseException e) {
      // A StringReader does not fail: an IOException is the MalformedJsonException of peek(),
      // which JsonParser wraps; its message suggests leniency, then a URL.
      Throwable cause = e.getCause() == null ? e : e.getCause();
      String message = String.valueOf(cause.getMessage()).lines().findFirst().orElse("");
      message = message.replace(GSON_LENIENCY_HINT, "malformed JSON");
      throw new IllegalArgumentException("not JSON: " + message, e);
    }
  }

  /** {@code json} as an object whose keys are among {@code allowed}. */
  static JsonObject object(JsonElement json, String what, Set<String> allowed) {
    if (json == null || !json.isJsonObject()) {
      throw new IllegalArgumentException(what + " must be an object, not " + json);
    }
    JsonObject o = json.getAsJsonObject();
    for (String key : o.keySet()) {
      if (!allowed.contains(key)) {
        throw new IllegalArgumentException(
            what + ": unknown key \"" + key + "\" (expected " + new TreeSet<>(allowed) + ")");
      }
    }
    return o;
  }

  /** The value of {@code key}; absent or null is an error. */
  static JsonElement required(JsonObject o, String key, String what) {
    JsonElement v = o.get(key);
    if (v == null || v.isJsonNull()) {
      throw new IllegalArgumentException(what + " needs \"" + key + "\"");
    }
    return v;
  }

  /** Whether {@code key} is there and not null. */
  static boolean has(JsonObject o, String key) {
    return o.has(key) && !o.get(key).isJsonNull();
  }

  static String string(JsonElement v, String what) {
    if (!v.isJsonPrimitive() || !v.getAsJsonPrimitive().isString()) {
      throw new IllegalArgumentException(what + " must be a string, not " + v);
    }
    return v.getAsString();
  }

  /** A string, number or boolean as text (a number as it is written). */
  static String scalar(JsonElement v, String what) {
    if (!v.isJsonPrimitive()) {
      throw new IllegalArgumentException(what + " must be a string or a number, not " + v);
    }
    return v.getAsString();
  }

  /** An integer: a JSON number with no fraction (or a string holding one), in long's range. */
  static long integer(JsonElement v, String what) {
    try {
      JsonPrimitive p = v.getAsJsonPrimitive();
      if (p.isNumber() || p.isString()) {
        return new BigDecimal(p.getAsString().trim()).longValueExact();
      }
    } catch (RuntimeException e) {
      // refused below
    }
    throw new IllegalArgumentException(what + " must be an integer (64 bits), not " + v);
  }

  static float number(JsonElement v, String what) {
    if (!v.isJsonPrimitive() || !v.getAsJsonPrimitive().isNumber()) {
      throw new IllegalArgumentException(what + " must be a number, not " + v);
    }
    return v.getAsFloat();
  }

  /** A JSON array, or a lone element as a list of one (as Elasticsearch takes bool clauses). */
  static JsonArray list(JsonElement v) {
    if (v.isJsonArray()) {
      return v.getAsJsonArray();
    }
    JsonArray one = new JsonArray();
    one.add(v);
    return one;
  }
}
