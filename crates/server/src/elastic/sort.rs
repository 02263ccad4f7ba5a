//! Elasticsearch's `sort` in a search body: a key or a list of keys, each `"field"`,
//! `{"field": "desc"}` or `{"field": {"order": "desc", "missing": "_first"}}`, where a field is
//! a keyword, numeric, date or boolean field of the mapping, `_score` or `_doc`. Options that
//! would change the order in ways apcache does not implement (`mode` other than the default,
//! a custom `missing` value, `unmapped_type`, `format`, `nested`, scripts) are refused by name.

use apcache_index::schema::Mapping;
use serde_json::{Map, Value};

use crate::api_error::ApiError;
use crate::sort_keys::{Missing, Sort};

/// The sort of a body's `sort` value.
pub fn parse(value: &Value, mapping: &Mapping) -> Result<Sort, ApiError> {
    let mut sort = Sort::default();
    match value {
        Value::Array(keys) => {
            for key in keys {
                push(&mut sort, key, mapping)?;
            }
        }
        key => push(&mut sort, key, mapping)?,
    }
    if sort.keys.is_empty() {
        return Err(ApiError::parsing("[sort] names no key"));
    }
    Ok(sort)
}

fn order(value: &Value, field: &str) -> Result<bool, ApiError> {
    match value.as_str().map(str::to_ascii_lowercase).as_deref() {
        Some("asc") => Ok(false),
        Some("desc") => Ok(true),
        _ => Err(ApiError::parsing(format!(
            "[sort] [{field}]: order must be asc or desc, not {value}"
        ))),
    }
}

fn push(sort: &mut Sort, key: &Value, mapping: &Mapping) -> Result<(), ApiError> {
    match key {
        Value::String(field) => sort.push(mapping, field, None, Missing::Last),
        Value::Object(object) => {
            let mut entries = object.iter();
            let (Some((field, spec)), None) = (entries.next(), entries.next()) else {
                return Err(ApiError::parsing(
                    "[sort] each key is an object with one field (list several keys in an array)",
                ));
            };
            match spec {
                Value::String(_) => {
                    sort.push(mapping, field, Some(order(spec, field)?), Missing::Last)
                }
                Value::Object(options) => options_key(sort, field, options, mapping),
                other => Err(ApiError::parsing(format!(
                    "[sort] [{field}] takes an order or an object of options, not {other}"
                ))),
            }
        }
        other => Err(ApiError::parsing(format!(
            "[sort] keys are field names or objects, not {other}"
        ))),
    }
}

fn options_key(
    sort: &mut Sort,
    field: &str,
    options: &Map<String, Value>,
    mapping: &Mapping,
) -> Result<(), ApiError> {
    let descending = options.get("order").map(|o| order(o, field)).transpose()?;
    let mut missing = Missing::Last;
    for (option, value) in options {
        match option.as_str() {
            "order" => {}
            "missing" => {
                missing = match value.as_str() {
                    Some("_last") => Missing::Last,
                    Some("_first") => Missing::First,
                    _ => {
                        return Err(ApiError::parsing(format!(
                            "[sort] [{field}]: missing {value} is not supported; it takes \
                             _first or _last"
                        )))
                    }
                }
            }
            "mode" => {
                // The default: the least value ascending, the greatest descending.
                let default = if descending == Some(true) {
                    "max"
                } else {
                    "min"
                };
                if value.as_str() != Some(default) {
                    return Err(ApiError::parsing(format!(
                        "[sort] [{field}]: mode {value} is not supported; a field with several \
                         values sorts by its least ascending and its greatest descending"
                    )));
                }
            }
            other => {
                return Err(ApiError::parsing(format!(
                    "[sort] [{field}] option [{other}] is not supported; the options are order, \
                     missing (_first or _last) and mode"
                )))
            }
        }
    }
    sort.push(mapping, field, descending, missing)
}

#[cfg(test)]
mod tests {
    use apcache_index::search::SortBy;
    use serde_json::json;

    use super::*;

    fn mapping() -> Mapping {
        Mapping::from_json(&json!({"properties": {
            "size": {"type": "long"}, "tag": {"type": "keyword"}, "summary": {"type": "text"}
        }}))
        .unwrap()
    }

    #[test]
    fn every_elasticsearch_form_reads() {
        let sort = parse(
            &json!(["size", {"tag": "desc"}, {"size": {"order": "desc", "missing": "_first", "mode": "max"}}, "_score", {"_doc": "asc"}]),
            &mapping(),
        )
        .unwrap();
        let keys: Vec<(SortBy, bool, bool)> = sort
            .keys
            .iter()
            .map(|k| (k.by.clone(), k.descending, k.missing_first))
            .collect();
        assert_eq!(
            keys,
            [
                (SortBy::Numbers("size".into()), false, false),
                (SortBy::Keywords("tag".into()), true, false),
                (SortBy::Numbers("size".into()), true, true),
                (SortBy::Score, true, false),
                (SortBy::Doc, false, false),
            ]
        );
        assert!(parse(&json!("_score"), &mapping()).unwrap().is_relevance());
    }

    #[test]
    fn what_apcache_cannot_do_is_refused_by_name() {
        for (spec, named) in [
            (json!({"size": {"mode": "avg"}}), "mode"),
            (json!({"size": {"missing": 0}}), "missing"),
            (json!({"size": {"unmapped_type": "long"}}), "unmapped_type"),
            (json!({"size": "sideways"}), "order"),
            (json!("summary"), "keyword"),
            (json!("nope"), "nope"),
            (json!([]), "no key"),
        ] {
            let error = parse(&spec, &mapping()).unwrap_err();
            assert!(error.reason.contains(named), "{spec}: {}", error.reason);
        }
    }
}
