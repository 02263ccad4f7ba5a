package dev.apcache.lucenepeer;

import static dev.apcache.lucenepeer.JsonNodes.has;
import static dev.apcache.lucenepeer.JsonNodes.object;
import static dev.apcache.lucenepeer.JsonNodes.required;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.lucene.document.LongField;
import org.apache.lucene.index.Term;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.BoostQuery;
import org.apache.lucene.search.DisjunctionMaxQuery;
import org.apache.lucene.search.FieldExistsQuery;
import org.apache.lucene.search.MatchAllDocsQuery;
import org.apache.lucene.search.MatchNoDocsQuery;
import org.apache.lucene.search.PhraseQuery;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.TermQuery;

/**
 * The query language of {@code search-json}: a JSON tree that names Lucene's queries directly,
 * so that apcache's agreement tests say exactly which Lucene query a result comes from (no query
 * parser, no analysis: text terms come already analyzed).
 *
 * <p>Each node is an object with one key: {@code term}, {@code phrase}, {@code range}, {@code
 * exists}, {@code bool}, {@code dis_max}, {@code boost} or {@code all}; README.md lists their
 * arguments. Fields must be in the mapping (or be {@code _id}), and a node must suit its field's
 * type (a phrase needs a text field, a range a long one): a mistake is an error rather than a
 * query that quietly matches nothing.
 */
final class JsonQueries {
  private final JsonMapping mapping;

  JsonQueries(JsonMapping mapping) {
    this.mapping = mapping;
  }

  Query parse(JsonElement json) {
    if (json == null || !json.isJsonObject() || json.getAsJsonObject().size() != 1) {
      throw new IllegalArgumentException("a query is an object with one key, not " + json);
    }
    Map.Entry<String, JsonElement> node = json.getAsJsonObject().entrySet().iterator().next();
    JsonElement body = node.getValue();
    return switch (node.getKey()) {
      case "term" -> term(object(body, "term", Set.of("field", "value")));
      case "phrase" -> phrase(object(body, "phrase", Set.of("field", "terms", "slop")));
      case "range" -> range(object(body, "range", Set.of("field", "gte", "gt", "lte", "lt")));
      case "exists" -> exists(object(body, "exists", Set.of("field")));
      case "bool" -> bool(object(body, "bool", Set.of("must", "should", "must_not", "filter")));
      case "dis_max" -> disMax(object(body, "dis_max", Set.of("queries", "tie_breaker")));
      case "boost" -> boost(object(body, "boost", Set.of("query", "factor")));
      case "all" -> {
        object(body, "all", Set.of());
        yield new MatchAllDocsQuery();
      }
      default -> throw new IllegalArgumentException("unknown query \"" + node.getKey() + "\"");
    };
  }

  /**
   * {@link TermQuery} on a text or keyword field, the value taken as it is (a text field's value
   * is an analyzed word); on a long field {@link LongField#newExactQuery}, which scores 1 (the
   * field has no terms).
   */
  private Query term(JsonObject o) {
    String field = JsonNodes.string(required(o, "field", "term"), "term.field");
    JsonMapping.Field f = field(field, "term");
    JsonElement value = required(o, "value", "term");
    if (f.numeric()) {
      return LongField.newExactQuery(field, JsonNodes.integer(value, "term.value"));
    }
    return new TermQuery(new Term(field, JsonNodes.scalar(value, "term.value")));
  }

  /** {@link PhraseQuery} of consecutive positions, within {@code slop} (default 0). */
  private Query phrase(JsonObject o) {
    String field = JsonNodes.string(required(o, "field", "phrase"), "phrase.field");
    if (field(field, "phrase").kind() != JsonMapping.Kind.TEXT) {
      throw new IllegalArgumentException("phrase: [" + field + "] is not a text field");
    }
    JsonElement terms = required(o, "terms", "phrase");
    if (!terms.isJsonArray()) {
      throw new IllegalArgumentException("phrase.terms must be an array of strings");
    }
    List<String> words = new ArrayList<>();
    for (JsonElement t : terms.getAsJsonArray()) {
      words.add(JsonNodes.string(t, "phrase.terms[]"));
    }
    long slop = has(o, "slop") ? JsonNodes.integer(o.get("slop"), "phrase.slop") : 0;
    if (slop < 0 || slop > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("phrase.slop must be a non-negative int, not " + slop);
    }
    return new PhraseQuery((int) slop, field, words.toArray(new String[0]));
  }

  /**
   * {@link LongField#newRangeQuery} on a long field; an absent (or null) bound is unbounded.
   * {@code gt} and {@code lt} are {@code gte} and {@code lte} one further in.
   */
  private Query range(JsonObject o) {
    String field = JsonNodes.string(required(o, "field", "range"), "range.field");
    if (!field(field, "range").numeric()) {
      throw new IllegalArgumentException("range: [" + field + "] is not a long field");
    }
    long lower = Long.MIN_VALUE;
    long upper = Long.MAX_VALUE;
    if (has(o, "gte")) {
      lower = Math.max(lower, JsonNodes.integer(o.get("gte"), "range.gte"));
    }
    if (has(o, "lte")) {
      upper = Math.min(upper, JsonNodes.integer(o.get("lte"), "range.lte"));
    }
    if (has(o, "gt")) {
      long gt = JsonNodes.integer(o.get("gt"), "range.gt");
      if (gt == Long.MAX_VALUE) {
        return new MatchNoDocsQuery("range: gt Long.MAX_VALUE");
      }
      lower = Math.max(lower, gt + 1);
    }
    if (has(o, "lt")) {
      long lt = JsonNodes.integer(o.get("lt"), "range.lt");
      if (lt == Long.MIN_VALUE) {
        return new MatchNoDocsQuery("range: lt Long.MIN_VALUE");
      }
      upper = Math.min(upper, lt - 1);
    }
    return LongField.newRangeQuery(field, lower, upper);
  }

  /** {@link FieldExistsQuery}: norms for a text field, doc values for the others. */
  private Query exists(JsonObject o) {
    String field = JsonNodes.string(required(o, "field", "exists"), "exists.field");
    field(field, "exists");
    return new FieldExistsQuery(field);
  }

  /**
   * {@link BooleanQuery} with the clauses in the order the JSON gives them (Lucene's default of
   * no minimum number of SHOULD clauses when there is a MUST or FILTER one). As in Lucene, and
   * unlike Elasticsearch, a bool of must_not clauses only, or of none, matches nothing.
   */
  private Query bool(JsonObject o) {
    BooleanQuery.Builder b = new BooleanQuery.Builder();
    for (Map.Entry<String, JsonElement> e : o.entrySet()) {
      BooleanClause.Occur occur =
          switch (e.getKey()) {
            case "must" -> BooleanClause.Occur.MUST;
            case "should" -> BooleanClause.Occur.SHOULD;
            case "must_not" -> BooleanClause.Occur.MUST_NOT;
            default -> BooleanClause.Occur.FILTER;
          };
      if (e.getValue().isJsonNull()) {
        continue;
      }
      for (JsonElement clause : JsonNodes.list(e.getValue())) {
        b.add(parse(clause), occur);
      }
    }
    return b.build();
  }

  /** {@link DisjunctionMaxQuery}; {@code tie_breaker} defaults to 0. */
  private Query disMax(JsonObject o) {
    List<Query> queries = new ArrayList<>();
    for (JsonElement q : JsonNodes.list(required(o, "queries", "dis_max"))) {
      queries.add(parse(q));
    }
    float tieBreaker =
        has(o, "tie_breaker") ? JsonNodes.number(o.get("tie_breaker"), "dis_max.tie_breaker") : 0f;
    return new DisjunctionMaxQuery(queries, tieBreaker);
  }

  private Query boost(JsonObject o) {
    Query q = parse(required(o, "query", "boost"));
    return new BoostQuery(q, JsonNodes.number(required(o, "factor", "boost"), "boost.factor"));
  }

  private JsonMapping.Field field(String name, String what) {
    JsonMapping.Field f = mapping.get(name);
    if (f == null) {
      throw new IllegalArgumentException(what + ": field [" + name + "] is not in the mapping");
    }
    return f;
  }
}
