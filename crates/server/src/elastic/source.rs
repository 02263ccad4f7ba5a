//! `_source` filtering as Elasticsearch does it: `false` (no `_source`), a field or a list of
//! fields to keep, or `{"includes": [...], "excludes": [...]}`; in the URL, `_source`,
//! `_source_includes` and `_source_excludes`.
//!
//! Fields are dotted paths into the document (`author.name`), and `*` in a pattern matches any
//! run of characters, dots included. A pattern that names an object keeps all of it; one that
//! names a field inside an object keeps that object with only the named field. Excludes win
//! over includes. A name that is in no document is not an error: it keeps nothing, as in
//! Elasticsearch.

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::api_error::ApiError;

/// Which parts of `_source` a hit returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceFilter {
    /// Whether hits carry `_source` at all.
    pub enabled: bool,
    /// Patterns of the fields to keep (all when empty).
    includes: Vec<String>,
    /// Patterns of the fields to leave out.
    excludes: Vec<String>,
}

impl Default for SourceFilter {
    fn default() -> SourceFilter {
        SourceFilter::ALL
    }
}

/// A list of patterns: a string (comma-separated) or an array of strings.
fn patterns(value: &Value, what: &str) -> Result<Vec<String>, ApiError> {
    match value {
        Value::String(s) => Ok(split(s)),
        Value::Array(items) => items
            .iter()
            .map(|item| {
                item.as_str().map(str::to_owned).ok_or_else(|| {
                    ApiError::illegal(format!("{what} must list field names as strings"))
                })
            })
            .collect(),
        _ => Err(ApiError::illegal(format!(
            "{what} must be a field name or a list of them"
        ))),
    }
}

fn split(text: &str) -> Vec<String> {
    text.split(',')
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(str::to_owned)
        .collect()
}

impl SourceFilter {
    /// The whole `_source`.
    pub const ALL: SourceFilter = SourceFilter {
        enabled: true,
        includes: Vec::new(),
        excludes: Vec::new(),
    };

    /// Reads a body's `_source`.
    pub fn parse(value: &Value) -> Result<SourceFilter, ApiError> {
        match value {
            Value::Bool(enabled) => Ok(SourceFilter {
                enabled: *enabled,
                ..SourceFilter::ALL
            }),
            Value::String(_) | Value::Array(_) => Ok(SourceFilter {
                includes: patterns(value, "_source")?,
                ..SourceFilter::ALL
            }),
            Value::Object(object) => {
                let mut filter = SourceFilter::ALL;
                for (key, value) in object {
                    match key.as_str() {
                        "includes" | "include" => filter.includes = patterns(value, key)?,
                        "excludes" | "exclude" => filter.excludes = patterns(value, key)?,
                        other => {
                            return Err(ApiError::parsing(format!(
                            "[_source] does not support [{other}]: it takes includes and excludes"
                        )))
                        }
                    }
                }
                Ok(filter)
            }
            _ => Err(ApiError::illegal(
                "_source must be true, false, a list of fields or {\"includes\", \"excludes\"}",
            )),
        }
    }

    /// Reads the URL's `_source`, `_source_includes` and `_source_excludes`; `None` when none
    /// is there.
    pub fn from_url(url: &HashMap<String, String>) -> Option<SourceFilter> {
        let source = url.get("_source");
        let includes = url.get("_source_includes");
        let excludes = url.get("_source_excludes");
        if source.is_none() && includes.is_none() && excludes.is_none() {
            return None;
        }
        let mut filter = match source.map(String::as_str) {
            None | Some("true") => SourceFilter::ALL,
            Some("false") => SourceFilter {
                enabled: false,
                ..SourceFilter::ALL
            },
            Some(list) => SourceFilter {
                includes: split(list),
                ..SourceFilter::ALL
            },
        };
        if let Some(list) = includes {
            filter.includes = split(list);
        }
        if let Some(list) = excludes {
            filter.excludes = split(list);
        }
        Some(filter)
    }

    /// `source` filtered.
    pub fn apply(&self, source: Value) -> Value {
        if self.includes.is_empty() && self.excludes.is_empty() {
            return source;
        }
        match source {
            Value::Object(object) => {
                Value::Object(self.object(object, "", self.includes.is_empty()))
            }
            other => other,
        }
    }

    /// The fields of `object` (at `prefix`) that pass; `kept` when an enclosing object is
    /// included whole.
    fn object(&self, object: Map<String, Value>, prefix: &str, kept: bool) -> Map<String, Value> {
        let mut out = Map::new();
        for (key, value) in object {
            let path = if prefix.is_empty() {
                key.clone()
            } else {
                format!("{prefix}.{key}")
            };
            if let Some(value) = self.value(value, &path, kept) {
                out.insert(key, value);
            }
        }
        out
    }

    fn value(&self, value: Value, path: &str, kept: bool) -> Option<Value> {
        if self.excludes.iter().any(|p| matches(p, path)) {
            return None;
        }
        let included = kept || self.includes.iter().any(|p| matches(p, path));
        let inside = included || self.includes.iter().any(|p| may_match_below(p, path));
        if !inside {
            return None;
        }
        match value {
            Value::Object(object) => {
                let filtered = self.object(object, path, included);
                // An object kept only for the fields inside it goes when none is.
                (included || !filtered.is_empty()).then_some(Value::Object(filtered))
            }
            Value::Array(items) => {
                let kept_items: Vec<Value> = items
                    .into_iter()
                    .filter_map(|item| match item {
                        Value::Object(object) => {
                            let filtered = self.object(object, path, included);
                            (included || !filtered.is_empty()).then_some(Value::Object(filtered))
                        }
                        other => included.then_some(other),
                    })
                    .collect();
                (included || !kept_items.is_empty()).then_some(Value::Array(kept_items))
            }
            other => included.then_some(other),
        }
    }
}

/// Whether `pattern` (with `*` for any run of characters) matches all of `path`.
fn matches(pattern: &str, path: &str) -> bool {
    let Some((first, rest)) = pattern.split_once('*') else {
        return pattern == path;
    };
    let Some(mut tail) = path.strip_prefix(first) else {
        return false;
    };
    let mut pieces: Vec<&str> = rest.split('*').collect();
    let last = pieces.pop().unwrap_or("");
    for piece in pieces {
        match tail.find(piece) {
            Some(at) => tail = &tail[at + piece.len()..],
            None => return false,
        }
    }
    tail.len() >= last.len() && tail.ends_with(last)
}

/// Whether `pattern` may match a field below the object at `path`.
fn may_match_below(pattern: &str, path: &str) -> bool {
    let below = format!("{path}.");
    match pattern.split_once('*') {
        None => pattern.starts_with(&below),
        // The literal start of the pattern must agree with the path as far as both go.
        Some((first, _)) => first.starts_with(&below) || below.starts_with(first),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn doc() -> Value {
        json!({"title": "T", "size": 3, "author": {"name": "N", "age": 40},
               "tags": [{"k": "a", "v": 1}, {"k": "b", "v": 2}]})
    }

    fn filtered(spec: Value) -> Value {
        SourceFilter::parse(&spec).unwrap().apply(doc())
    }

    #[test]
    fn includes_keep_fields_objects_and_fields_inside_objects() {
        assert_eq!(filtered(json!(["title"])), json!({"title": "T"}));
        assert_eq!(
            filtered(json!("author")),
            json!({"author": {"name": "N", "age": 40}})
        );
        assert_eq!(
            filtered(json!(["author.name", "size"])),
            json!({"size": 3, "author": {"name": "N"}})
        );
        assert_eq!(
            filtered(json!(["tags.k"])),
            json!({"tags": [{"k": "a"}, {"k": "b"}]})
        );
        assert_eq!(
            filtered(json!(["au*"])),
            json!({"author": {"name": "N", "age": 40}})
        );
        assert_eq!(
            filtered(json!(["*.name"])),
            json!({"author": {"name": "N"}})
        );
        assert_eq!(filtered(json!(["nope"])), json!({}));
        assert_eq!(filtered(json!(true)), doc());
    }

    #[test]
    fn excludes_win_over_includes() {
        assert_eq!(
            filtered(json!({"includes": ["author"], "excludes": ["author.age"]})),
            json!({"author": {"name": "N"}})
        );
        assert_eq!(
            filtered(json!({"excludes": ["tags", "author"]})),
            json!({"title": "T", "size": 3})
        );
        assert!(SourceFilter::parse(&json!({"include": "a", "other": 1})).is_err());
        assert!(SourceFilter::parse(&json!(3)).is_err());
    }

    #[test]
    fn url_parameters_read_like_the_body() {
        let url: HashMap<String, String> =
            [("_source_excludes".to_string(), "size,tags".to_string())].into();
        let filter = SourceFilter::from_url(&url).unwrap();
        assert_eq!(
            filter.apply(doc()),
            json!({"title": "T", "author": {"name": "N", "age": 40}})
        );
        let off: HashMap<String, String> = [("_source".to_string(), "false".to_string())].into();
        assert!(!SourceFilter::from_url(&off).unwrap().enabled);
        assert_eq!(SourceFilter::from_url(&HashMap::new()), None);
    }
}
