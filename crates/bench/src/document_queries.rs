//! Queries over JSON documents under a mapping (Debian's package index), generated from the
//! documents with a seed, in a small JSON form both engines read: apcache through
//! [`to_query`], Lucene through `tools/lucene-peer`'s `search-json`.
//!
//! Words come from the documents' own text, analyzed as the index analyzes it, so that a query
//! finds something; filter values from their keyword fields; range bounds from their numbers.
//! The classes are the ones a document application runs: text on one field and on several
//! (summed, or the best field's score as `multi_match` takes it, with boosts), text with a
//! keyword filter, with a range, with existence and exclusions, phrases, filters alone, and
//! sorts by a number and by a keyword.
//!
//! ```text
//! query:  {"term": {"field", "value"}}          a word of a text field, or a keyword value
//!         {"phrase": {"field", "terms", "slop"}}
//!         {"range": {"field", "gte"?, "lte"?}}  a long field
//!         {"exists": {"field"}}
//!         {"bool": {"must"?, "should"?, "must_not"?, "filter"?}}
//!         {"dis_max": {"queries", "tie_breaker"}}
//!         {"boost": {"query", "factor"}}
//!         {"all": {}}
//! line:   {"class", "query", "sort"?: [{"field", "order"}], "k"}
//! ```

use apcache_index::analyzer::Analyzer;
use apcache_index::query::{
    exists_query, range_query, BoolQuery, DisMaxQuery, Factor, PhraseQuery, Query, RangeEnd,
};
use apcache_index::schema::{field_terms, FieldType, Mapping};
use apcache_index::search::{SortBy, SortKey};
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{json, Value};

/// The query classes, in the order [`generate`] emits them.
pub const CLASSES: [&str; 10] = [
    "text-one-field",
    "text-fields-summed",
    "text-fields-best",
    "text-phrase",
    "text-keyword-filter",
    "text-range",
    "text-exists-not",
    "filter-only",
    "sort-number",
    "sort-keyword",
];

/// Hits compared per query.
pub const K: usize = 10;

/// One generated query.
#[derive(Debug, Clone)]
pub struct DocumentQuery {
    /// Its class (one of [`CLASSES`]).
    pub class: &'static str,
    /// The query in the JSON form of the module documentation.
    pub query: Value,
    /// Sort keys (`field`, `order`); empty: by score.
    pub sort: Vec<(String, bool)>,
}

impl DocumentQuery {
    /// The line of a queries file.
    pub fn to_line(&self) -> Value {
        let mut line = json!({"class": self.class, "query": self.query, "k": K});
        if !self.sort.is_empty() {
            line["sort"] = self
                .sort
                .iter()
                .map(|(field, descending)| {
                    json!({"field": field, "order": if *descending { "desc" } else { "asc" }})
                })
                .collect();
        }
        line
    }

    /// The sort as apcache's keys, missing values last.
    pub fn sort_keys(&self, mapping: &Mapping) -> Result<Vec<SortKey>, String> {
        self.sort
            .iter()
            .map(|(field, descending)| {
                let by = match mapping.resolve(field).map(|f| f.field_type.into_owned()) {
                    Some(FieldType::Keyword(_)) => SortBy::Keywords(field.clone()),
                    Some(FieldType::Integer(_) | FieldType::Double { .. } | FieldType::Date(_)) => {
                        SortBy::Numbers(field.clone())
                    }
                    _ => return Err(format!("cannot sort by [{field}]")),
                };
                Ok(SortKey {
                    by,
                    descending: *descending,
                    missing_first: false,
                })
            })
            .collect()
    }
}

/// The text fields words are drawn from, the keyword fields filters are, and the long fields
/// ranges and sorts are.
struct Fields {
    text: Vec<&'static str>,
    keyword: Vec<&'static str>,
    long: &'static str,
    sort_number: &'static str,
    sort_keyword: &'static str,
    exists: Vec<&'static str>,
}

/// The fields of Debian's package index that queries use.
fn debian_fields() -> Fields {
    Fields {
        text: vec!["summary", "description"],
        keyword: vec!["section", "priority", "architecture", "tags"],
        long: "installed_size",
        sort_number: "size",
        sort_keyword: "package",
        exists: vec!["homepage", "tags", "depends"],
    }
}

/// A document's analyzed words of a text field.
fn words(document: &Value, field: &str, analyzer: &Analyzer) -> Vec<String> {
    match document.get(field) {
        Some(Value::String(text)) => analyzer.tokens(text),
        _ => Vec::new(),
    }
}

/// A document's values of a keyword field.
fn keywords(document: &Value, field: &str) -> Vec<String> {
    match document.get(field) {
        Some(Value::String(v)) => vec![v.clone()],
        Some(Value::Array(values)) => values
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    }
}

fn term(field: &str, value: &str) -> Value {
    json!({"term": {"field": field, "value": value}})
}

fn bool_query(
    must: Vec<Value>,
    should: Vec<Value>,
    must_not: Vec<Value>,
    filter: Vec<Value>,
) -> Value {
    let mut body = serde_json::Map::new();
    for (key, list) in [
        ("must", must),
        ("should", should),
        ("must_not", must_not),
        ("filter", filter),
    ] {
        if !list.is_empty() {
            body.insert(key.into(), Value::Array(list));
        }
    }
    json!({"bool": body})
}

/// Generates `per_class` queries of each class of [`CLASSES`] from Debian package documents,
/// deterministically from `seed`.
pub fn generate(
    documents: &[Value],
    analyzer: &Analyzer,
    seed: u64,
    per_class: usize,
) -> Vec<DocumentQuery> {
    let fields = debian_fields();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::with_capacity(per_class * CLASSES.len());
    // A document with words in `field`, and some of its words.
    let pick_words = |rng: &mut ChaCha8Rng, field: &str, n: usize| -> (usize, Vec<String>) {
        loop {
            let d = rng.random_range(0..documents.len());
            let words = words(&documents[d], field, analyzer);
            if words.len() >= n {
                let chosen: Vec<String> = words.choose_multiple(rng, n).cloned().collect();
                return (d, chosen);
            }
        }
    };
    for class in CLASSES {
        for _ in 0..per_class {
            let text_field = *fields.text.choose(&mut rng).expect("text fields");
            let (query, sort) = match class {
                "text-one-field" => {
                    let n = rng.random_range(1..=3);
                    let (_, chosen) = pick_words(&mut rng, text_field, n);
                    let clauses: Vec<Value> = chosen.iter().map(|w| term(text_field, w)).collect();
                    let query = if rng.random_bool(0.5) {
                        bool_query(Vec::new(), clauses, Vec::new(), Vec::new())
                    } else {
                        bool_query(clauses, Vec::new(), Vec::new(), Vec::new())
                    };
                    (query, Vec::new())
                }
                "text-fields-summed" | "text-fields-best" => {
                    let n = rng.random_range(1..=2);
                    let (_, chosen) = pick_words(&mut rng, "summary", n);
                    let boost = [1.0f32, 2.0, 3.0][rng.random_range(0..3)];
                    let per_word: Vec<Value> = chosen
                        .iter()
                        .map(|w| {
                            let summary = if boost == 1.0 {
                                term("summary", w)
                            } else {
                                json!({"boost": {"query": term("summary", w), "factor": boost}})
                            };
                            let queries = vec![summary, term("description", w)];
                            if class == "text-fields-summed" {
                                bool_query(Vec::new(), queries, Vec::new(), Vec::new())
                            } else {
                                let tie = [0.0f32, 0.3][rng.random_range(0..2)];
                                json!({"dis_max": {"queries": queries, "tie_breaker": tie}})
                            }
                        })
                        .collect();
                    (
                        bool_query(Vec::new(), per_word, Vec::new(), Vec::new()),
                        Vec::new(),
                    )
                }
                "text-phrase" => loop {
                    let d = rng.random_range(0..documents.len());
                    let words = words(&documents[d], "description", analyzer);
                    if words.len() < 3 {
                        continue;
                    }
                    let at = rng.random_range(0..words.len() - 1);
                    let slop = [0u32, 0, 1, 2][rng.random_range(0..4)];
                    break (
                        json!({"phrase": {"field": "description", "terms": [words[at], words[at + 1]], "slop": slop}}),
                        Vec::new(),
                    );
                },
                "text-keyword-filter" => {
                    let (d, chosen) = pick_words(&mut rng, text_field, 1);
                    let keyword_field = *fields.keyword.choose(&mut rng).expect("keyword fields");
                    let values = keywords(&documents[d], keyword_field);
                    let filter = match values.choose(&mut rng) {
                        Some(value) => term(keyword_field, value),
                        None => json!({"exists": {"field": keyword_field}}),
                    };
                    (
                        bool_query(
                            vec![term(text_field, &chosen[0])],
                            Vec::new(),
                            Vec::new(),
                            vec![filter],
                        ),
                        Vec::new(),
                    )
                }
                "text-range" => {
                    let (d, chosen) = pick_words(&mut rng, text_field, 1);
                    let value = documents[d][fields.long].as_i64().unwrap_or(100);
                    let range = match rng.random_range(0..3) {
                        0 => {
                            json!({"range": {"field": fields.long, "gte": value / 2, "lte": value.saturating_mul(2)}})
                        }
                        1 => json!({"range": {"field": fields.long, "gte": value}}),
                        _ => json!({"range": {"field": fields.long, "lte": value}}),
                    };
                    (
                        bool_query(
                            vec![term(text_field, &chosen[0])],
                            Vec::new(),
                            Vec::new(),
                            vec![range],
                        ),
                        Vec::new(),
                    )
                }
                "text-exists-not" => {
                    let (d, chosen) = pick_words(&mut rng, "description", 2);
                    let exists = *fields.exists.choose(&mut rng).expect("fields");
                    let section = keywords(&documents[d], "section");
                    let excluded = match section.first() {
                        Some(s) if rng.random_bool(0.5) => term("section", s),
                        _ => term("priority", "optional"),
                    };
                    (
                        bool_query(
                            Vec::new(),
                            chosen.iter().map(|w| term("description", w)).collect(),
                            vec![excluded],
                            vec![json!({"exists": {"field": exists}})],
                        ),
                        Vec::new(),
                    )
                }
                "filter-only" => {
                    let d = rng.random_range(0..documents.len());
                    let keyword_field = *fields.keyword.choose(&mut rng).expect("keyword fields");
                    let filter = match keywords(&documents[d], keyword_field).choose(&mut rng) {
                        Some(value) => term(keyword_field, value),
                        None => json!({"exists": {"field": keyword_field}}),
                    };
                    let value = documents[d][fields.long].as_i64().unwrap_or(100);
                    let range = json!({"range": {"field": fields.long, "gte": value / 4}});
                    (
                        bool_query(Vec::new(), Vec::new(), Vec::new(), vec![filter, range]),
                        vec![(fields.sort_number.to_owned(), rng.random_bool(0.5))],
                    )
                }
                "sort-number" | "sort-keyword" => {
                    let n = rng.random_range(1..=2);
                    let (_, chosen) = pick_words(&mut rng, text_field, n);
                    let clauses: Vec<Value> = chosen.iter().map(|w| term(text_field, w)).collect();
                    let field = if class == "sort-number" {
                        fields.sort_number
                    } else {
                        fields.sort_keyword
                    };
                    (
                        bool_query(Vec::new(), clauses, Vec::new(), Vec::new()),
                        vec![(field.to_owned(), rng.random_bool(0.5))],
                    )
                }
                other => unreachable!("class {other}"),
            };
            out.push(DocumentQuery { class, query, sort });
        }
    }
    out
}

/// The apcache query of a query in the JSON form, on the fields of `mapping`: filters score
/// nothing (Lucene's `FILTER` clauses), ranges and existence are column and term queries.
pub fn to_query(value: &Value, mapping: &Mapping) -> Result<Query, String> {
    let object = value.as_object().ok_or("a query is an object")?;
    let (kind, body) = object.iter().next().ok_or("an empty query")?;
    let text = |key: &str| -> Result<&str, String> {
        body[key]
            .as_str()
            .ok_or_else(|| format!("[{kind}] needs [{key}]"))
    };
    let list = |key: &str| -> Result<Vec<Query>, String> {
        match &body[key] {
            Value::Null => Ok(Vec::new()),
            Value::Array(items) => items.iter().map(|q| to_query(q, mapping)).collect(),
            other => Err(format!("[{key}] is a list, not {other}")),
        }
    };
    Ok(match kind.as_str() {
        "term" => {
            let field = text("field")?;
            let value = text("value")?;
            match mapping.resolve(field).map(|f| f.field_type.into_owned()) {
                Some(FieldType::Text(_)) => Query::Term(field_terms::text_term(field, value)),
                Some(FieldType::Keyword(_)) => Query::Term(field_terms::keyword_term(field, value)),
                _ => return Err(format!("[term] on [{field}]")),
            }
        }
        "phrase" => {
            let field = text("field")?;
            let terms = body["terms"]
                .as_array()
                .ok_or("[phrase] needs [terms]")?
                .iter()
                .enumerate()
                .map(|(i, t)| {
                    t.as_str()
                        .map(|t| (i as u32, field_terms::text_term(field, t)))
                        .ok_or("a phrase's terms are strings")
                })
                .collect::<Result<Vec<_>, _>>()?;
            let slop = body["slop"].as_u64().unwrap_or(0) as u32;
            Query::Phrase(PhraseQuery { terms, slop })
        }
        "range" => {
            let field = text("field")?;
            let end = |key: &str| match &body[key] {
                Value::Null => RangeEnd::unbounded(),
                value => RangeEnd {
                    value: Some(value.to_string()),
                    inclusive: true,
                },
            };
            range_query(mapping, field, &end("gte"), &end("lte")).map_err(|e| e.to_string())?
        }
        "exists" => exists_query(mapping, text("field")?).map_err(|e| e.to_string())?,
        "bool" => {
            let mut must = list("must")?;
            must.extend(
                list("filter")?
                    .into_iter()
                    .map(|f| Query::Filter(Box::new(f))),
            );
            Query::Bool(BoolQuery {
                must,
                should: list("should")?,
                must_not: list("must_not")?,
            })
        }
        "dis_max" => Query::DisMax(DisMaxQuery {
            queries: list("queries")?,
            tie_breaker: body["tie_breaker"]
                .as_f64()
                .and_then(|t| Factor::new(t as f32))
                .ok_or("[dis_max] needs [tie_breaker]")?,
        }),
        "boost" => Query::Boost(
            Box::new(to_query(&body["query"], mapping)?),
            body["factor"]
                .as_f64()
                .and_then(|f| Factor::new(f as f32))
                .ok_or("[boost] needs [factor]")?,
        ),
        "all" => Query::All,
        other => return Err(format!("unknown query [{other}]")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_read_into_apcache_queries() {
        let mapping = Mapping::from_json(&json!({"properties": {
            "summary": {"type": "text"}, "description": {"type": "text"},
            "section": {"type": "keyword"}, "size": {"type": "long"}}}))
        .unwrap();
        let query = json!({"bool": {
            "should": [{"dis_max": {"queries": [
                {"boost": {"query": {"term": {"field": "summary", "value": "game"}}, "factor": 2.0}},
                {"term": {"field": "description", "value": "game"}}], "tie_breaker": 0.3}}],
            "filter": [{"term": {"field": "section", "value": "games"}},
                       {"range": {"field": "size", "gte": 10}}],
            "must_not": [{"phrase": {"field": "description", "terms": ["a", "b"], "slop": 1}}]
        }});
        assert_eq!(
            to_query(&query, &mapping).unwrap().to_string(),
            "+#(section:games) +#(size:[10 TO 9223372036854775807]) \
             -description:\"a b\"~1 (summary:game^2 | description:game)~0.3"
        );
        assert!(to_query(&json!({"wildcard": {}}), &mapping).is_err());
    }

    #[test]
    fn generation_is_deterministic_and_covers_every_class() {
        let documents: Vec<Value> = (0..50)
            .map(|i| {
                let section = ["games", "net"][i % 2];
                json!({"id": format!("p{i}"), "section": section,
                       "priority": "optional", "architecture": "amd64", "tags": ["a::b"],
                       "installed_size": i * 10, "size": i * 100, "package": format!("p{i}"),
                       "summary": format!("tool number {i} for games"),
                       "description": format!("a long description of tool {i} with words")})
            })
            .collect();
        let analyzer = Analyzer::default();
        let a = generate(&documents, &analyzer, 7, 3);
        let b = generate(&documents, &analyzer, 7, 3);
        assert_eq!(a.len(), 3 * CLASSES.len());
        let lines = |q: &[DocumentQuery]| {
            q.iter()
                .map(|q| q.to_line().to_string())
                .collect::<Vec<_>>()
        };
        assert_eq!(lines(&a), lines(&b));
        for class in CLASSES {
            assert!(a.iter().any(|q| q.class == class));
        }
    }
}
