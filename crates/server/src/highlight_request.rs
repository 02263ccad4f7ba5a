//! The `highlight` part of a search, in Elasticsearch's shape:
//!
//! ```json
//! "highlight": {"pre_tags": ["<em>"], "post_tags": ["</em>"], "fragment_size": 100,
//!               "number_of_fragments": 5, "fields": {"body": {}, "title": {"number_of_fragments": 0}}}
//! ```
//!
//! Options at the top apply to every field, a field's own override them; `fields` is an
//! object or a list of one-key objects, its names `body`, `title` or `*` (both). A hit's
//! `highlight` lists, per field that has marked words, its fragments
//! ([`apcache_index::highlight`]).

use apcache_index::analyzer::Analyzer;
use apcache_index::highlight::{HighlightOptions, Highlighter};
use apcache_index::query::Query;
use serde_json::{json, Map, Value};

use crate::api_error::ApiError;

/// Which stored fields to highlight, each with its options.
#[derive(Debug, Clone, Default)]
pub struct HighlightRequest {
    fields: Vec<(&'static str, HighlightOptions)>,
}

/// The most fragments a field may ask for.
const MAX_FRAGMENTS: u64 = 100;

fn options_over(base: &HighlightOptions, value: &Value) -> Result<HighlightOptions, ApiError> {
    let Value::Object(map) = value else {
        return Err(ApiError::illegal("highlight options must be an object"));
    };
    let mut options = base.clone();
    for (key, v) in map {
        match key.as_str() {
            "pre_tags" | "post_tags" => {
                let tag = match v {
                    Value::Array(tags) => tags.first().and_then(Value::as_str),
                    Value::String(tag) => Some(tag.as_str()),
                    _ => None,
                }
                .ok_or_else(|| ApiError::illegal(format!("[{key}] must be a list of strings")))?;
                if key == "pre_tags" {
                    options.pre_tag = tag.to_string();
                } else {
                    options.post_tag = tag.to_string();
                }
            }
            "fragment_size" => {
                options.fragment_size = v
                    .as_u64()
                    .filter(|&n| n > 0 && n <= 100_000)
                    .ok_or_else(|| ApiError::illegal("[fragment_size] must be 1 to 100000"))?
                    as usize;
            }
            "number_of_fragments" => {
                options.number_of_fragments =
                    v.as_u64().filter(|&n| n <= MAX_FRAGMENTS).ok_or_else(|| {
                        ApiError::illegal(format!(
                            "[number_of_fragments] must be 0 to {MAX_FRAGMENTS}"
                        ))
                    })? as usize;
            }
            // Accepted and ignored: the one highlighter apcache has.
            "type" | "order" | "require_field_match" | "encoder" | "fields" => {}
            other => {
                return Err(ApiError::illegal(format!(
                    "unknown highlight option [{other}]"
                )))
            }
        }
    }
    Ok(options)
}

impl HighlightRequest {
    /// Parses a request body's `highlight` value.
    pub fn parse(value: &Value) -> Result<HighlightRequest, ApiError> {
        let base = options_over(&HighlightOptions::default(), value)?;
        let mut named: Vec<(String, Value)> = Vec::new();
        match value.get("fields") {
            Some(Value::Object(fields)) => {
                named.extend(fields.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
            Some(Value::Array(list)) => {
                for item in list {
                    let Some(object) = item.as_object().filter(|o| o.len() == 1) else {
                        return Err(ApiError::illegal(
                            "highlight fields as a list take one-key objects",
                        ));
                    };
                    named.extend(object.iter().map(|(k, v)| (k.clone(), v.clone())));
                }
            }
            None => return Err(ApiError::illegal("highlight needs [fields]")),
            Some(_) => return Err(ApiError::illegal("highlight [fields] must be an object")),
        }
        let mut fields = Vec::new();
        for (name, value) in named {
            let options = options_over(&base, &value)?;
            let targets: &[&'static str] = match name.as_str() {
                "body" => &["body"],
                "title" => &["title"],
                "*" => &["title", "body"],
                other => {
                    return Err(ApiError::illegal(format!(
                        "unknown highlight field [{other}]: the fields are title and body"
                    )))
                }
            };
            for &target in targets {
                fields.retain(|(f, _)| *f != target);
                fields.push((target, options.clone()));
            }
        }
        Ok(HighlightRequest { fields })
    }

    /// The highlight of the whole body with the default options (the native API's
    /// `highlight=true`).
    pub fn body() -> HighlightRequest {
        HighlightRequest {
            fields: vec![("body", HighlightOptions::default())],
        }
    }

    /// A hit's `highlight` object: per field, its fragments (fields without a marked word
    /// left out).
    pub fn of_hit(&self, query: &Query, analyzer: &Analyzer, title: &str, body: &str) -> Value {
        let highlighter = Highlighter::new(query);
        let mut out = Map::new();
        for (field, options) in &self.fields {
            let text = if *field == "title" { title } else { body };
            let fragments = highlighter.fragments(text, analyzer, options);
            if !fragments.is_empty() {
                out.insert((*field).to_string(), json!(fragments));
            }
        }
        Value::Object(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use apcache_index::query::{parse_query, DefaultOperator};

    #[test]
    fn elasticsearch_highlight_bodies_parse_and_mark() {
        let request = HighlightRequest::parse(&json!({
            "pre_tags": ["["], "post_tags": ["]"],
            "fields": {"body": {"number_of_fragments": 0}, "title": {}}
        }))
        .unwrap();
        let analyzer = Analyzer::default();
        let query = parse_query("river -arno", &analyzer, DefaultOperator::Or).unwrap();
        let got = request.of_hit(&query, &analyzer, "Rivers", "The River Arno is a river.");
        assert_eq!(got, json!({"body": ["The [River] Arno is a [river]."]}));
        assert!(HighlightRequest::parse(&json!({"fields": {"abstract": {}}})).is_err());
        assert!(
            HighlightRequest::parse(&json!({"fields": {"body": {"fragment_size": 0}}})).is_err()
        );
        assert!(HighlightRequest::parse(&json!({"fields": [{"body": {}}, {"title": {}}]})).is_ok());
        assert!(HighlightRequest::parse(&json!({"pre_tags": ["<b>"]})).is_err());
    }
}
