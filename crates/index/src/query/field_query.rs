//! Clauses on the fields of a mapping: a value, a range or existence, turned into the
//! [`Query`] the index answers (keyword terms, column ranges, existence terms).
//!
//! Values are read as their field's type reads them: a keyword as it is (no analysis), an
//! integer or a double as a number, a date in the field's date format, a boolean as `true` or
//! `false`. A value the type cannot read is an error that names the field, never a query that
//! silently matches nothing. A `term` on a text field indexed under its own name is the word as
//! given; under a mapping that joins its text fields ([`Mapping::joined_text`]) a clause on
//! one text field is refused by name.

use std::ops::Bound;

use serde_json::Value;

use super::ast::{Query, RangeBounds, RangeQuery};
use super::error::QueryError;
use crate::schema::{field_terms, FieldType, Mapping, ID_FIELD};

/// One end of a range as written: a value, or `None` for `*` (unbounded), and whether the
/// value itself is included.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RangeEnd {
    /// The value as text, `None` for no bound.
    pub value: Option<String>,
    /// Whether the value is in the range (`[`, `]`, `gte`, `lte`).
    pub inclusive: bool,
}

impl RangeEnd {
    /// No bound (`*`).
    pub fn unbounded() -> RangeEnd {
        RangeEnd {
            value: None,
            inclusive: true,
        }
    }
}

/// The field `name` as a filter or sort names it: a field of the mapping that is not text.
fn exact_field<'m>(
    mapping: &'m Mapping,
    name: &str,
) -> Result<std::borrow::Cow<'m, FieldType>, QueryError> {
    let resolved = mapping
        .resolve(name)
        .ok_or_else(|| QueryError::UnknownField {
            field: name.to_owned(),
        })?;
    if let FieldType::Text(_) = resolved.field_type.as_ref() {
        let field = name.to_owned();
        return Err(if mapping.joined_text() {
            QueryError::TextFieldUnsupported { field }
        } else {
            QueryError::TextFieldNotExact { field }
        });
    }
    Ok(resolved.field_type)
}

fn invalid(field: &str, value: &str, reason: impl Into<String>) -> QueryError {
    QueryError::InvalidFieldValue {
        field: field.to_owned(),
        value: value.to_owned(),
        reason: reason.into(),
    }
}

/// Documents whose `field` holds `value` (Elasticsearch's `term`): a keyword term, or a
/// range of one value over a numeric column. `_id` is the document id.
pub fn term_query(mapping: &Mapping, field: &str, value: &str) -> Result<Query, QueryError> {
    if field == ID_FIELD {
        return Ok(Query::Term(field_terms::keyword_term(ID_FIELD, value)));
    }
    // A text field indexed under its own name holds its words as terms: the value is one,
    // unanalyzed, as Elasticsearch's `term` on a text field takes it.
    if let Some(resolved) = mapping.resolve(field) {
        if matches!(resolved.field_type.as_ref(), FieldType::Text(_)) && !mapping.joined_text() {
            return Ok(Query::Term(field_terms::text_term(field, value)));
        }
    }
    let field_type = exact_field(mapping, field)?;
    if let FieldType::Keyword(_) = field_type.as_ref() {
        return Ok(Query::Term(field_terms::keyword_term(field, value)));
    }
    let (lower, upper) = number_range(
        field,
        &field_type,
        &RangeEnd {
            value: Some(value.to_owned()),
            inclusive: true,
        },
        &RangeEnd {
            value: Some(value.to_owned()),
            inclusive: true,
        },
    )?;
    Ok(Query::Range(RangeQuery {
        field: field.to_owned(),
        bounds: RangeBounds::Numbers { lower, upper },
    }))
}

/// Documents with a value of the keyword field `field` that starts with `prefix`
/// (Elasticsearch's `prefix` on a keyword): the values from `prefix` up to, not including, the
/// first string after all of them in byte order, read from the field's column.
pub fn prefix_query(mapping: &Mapping, field: &str, prefix: &str) -> Result<Query, QueryError> {
    let field_type = exact_field(mapping, field)?;
    if !matches!(field_type.as_ref(), FieldType::Keyword(_)) {
        return Err(invalid(
            field,
            prefix,
            "not a keyword field: prefixes match keywords",
        ));
    }
    Ok(Query::Range(RangeQuery {
        field: field.to_owned(),
        bounds: RangeBounds::Keywords {
            lower: Bound::Included(prefix.to_owned()),
            upper: after_prefix(prefix).map_or(Bound::Unbounded, Bound::Excluded),
        },
    }))
}

/// The least string greater than every string that starts with `prefix` (its last character
/// that can be incremented, incremented, the rest dropped); `None` when there is none (an empty
/// prefix, or one of only the greatest character). UTF-8's byte order is code point order, so
/// the bound holds in the byte order keyword columns compare in.
fn after_prefix(prefix: &str) -> Option<String> {
    let mut chars: Vec<char> = prefix.chars().collect();
    while let Some(last) = chars.pop() {
        let next = (u32::from(last) + 1..=u32::from(char::MAX)).find_map(char::from_u32);
        if let Some(next) = next {
            chars.push(next);
            return Some(chars.into_iter().collect());
        }
    }
    None
}

/// Documents whose `field` holds a value between `lower` and `upper` (Elasticsearch's
/// `range`, Lucene's `field:[a TO b]`).
pub fn range_query(
    mapping: &Mapping,
    field: &str,
    lower: &RangeEnd,
    upper: &RangeEnd,
) -> Result<Query, QueryError> {
    let field_type = exact_field(mapping, field)?;
    let bounds = match field_type.as_ref() {
        FieldType::Keyword(_) => {
            let bound = |end: &RangeEnd| match (&end.value, end.inclusive) {
                (None, _) => Bound::Unbounded,
                (Some(v), true) => Bound::Included(v.clone()),
                (Some(v), false) => Bound::Excluded(v.clone()),
            };
            RangeBounds::Keywords {
                lower: bound(lower),
                upper: bound(upper),
            }
        }
        numeric => {
            let (lower, upper) = number_range(field, numeric, lower, upper)?;
            RangeBounds::Numbers { lower, upper }
        }
    };
    Ok(Query::Range(RangeQuery {
        field: field.to_owned(),
        bounds,
    }))
}

/// Documents with a value of `field` (Elasticsearch's `exists`, Lucene's `_exists_:field`).
pub fn exists_query(mapping: &Mapping, field: &str) -> Result<Query, QueryError> {
    if mapping.resolve(field).is_none() {
        return Err(QueryError::UnknownField {
            field: field.to_owned(),
        });
    }
    Ok(Query::Term(field_terms::exists_term(field)))
}

/// The inclusive bounds, as the column keeps values, of a range over a numeric field; lower
/// above upper when nothing can match.
fn number_range(
    field: &str,
    field_type: &FieldType,
    lower: &RangeEnd,
    upper: &RangeEnd,
) -> Result<(i64, i64), QueryError> {
    let low = match &lower.value {
        None => i64::MIN,
        Some(v) => {
            let (value, exact) = column_value(field, field_type, v, Rounding::Up)?;
            if lower.inclusive || !exact {
                value
            } else {
                value.saturating_add(1)
            }
        }
    };
    let high = match &upper.value {
        None => i64::MAX,
        Some(v) => {
            let (value, exact) = column_value(field, field_type, v, Rounding::Down)?;
            if upper.inclusive || !exact {
                value
            } else {
                value.saturating_sub(1)
            }
        }
    };
    // An exact bound excluded at the end of the range leaves nothing.
    if (!lower.inclusive && low == i64::MIN && lower.value.is_some())
        || (!upper.inclusive && high == i64::MAX && upper.value.is_some())
    {
        return Ok((1, 0));
    }
    Ok((low, high))
}

/// Which way a value that falls between two column values goes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Rounding {
    Up,
    Down,
}

/// `text` as the column of a field of `field_type` keeps it, and whether it is exactly such a
/// value (a fraction bounding an integer field is not: it rounds inwards).
fn column_value(
    field: &str,
    field_type: &FieldType,
    text: &str,
    rounding: Rounding,
) -> Result<(i64, bool), QueryError> {
    match field_type {
        FieldType::Integer(width) => {
            if let Ok(value) = text.trim().parse::<i64>() {
                return Ok((value, true));
            }
            let number: f64 = text
                .trim()
                .parse()
                .ok()
                .filter(|v: &f64| v.is_finite())
                .ok_or_else(|| {
                    invalid(
                        field,
                        text,
                        format!("not a number (the field is {})", width.name()),
                    )
                })?;
            let rounded = match rounding {
                Rounding::Up => number.ceil(),
                Rounding::Down => number.floor(),
            };
            let clamped = rounded.clamp(i64::MIN as f64, i64::MAX as f64) as i64;
            Ok((clamped, rounded == number))
        }
        FieldType::Double { .. } => {
            let number: f64 = text
                .trim()
                .parse()
                .ok()
                .filter(|v: &f64| !v.is_nan())
                .ok_or_else(|| invalid(field, text, "not a number (the field is double)"))?;
            Ok((crate::columns::double_to_sortable(number), true))
        }
        FieldType::Date(format) => {
            if text.starts_with("now") || text.contains("||") {
                return Err(invalid(
                    field,
                    text,
                    "date math, which is not supported; give a date",
                ));
            }
            let millis = format
                .read(&Value::String(text.to_owned()))
                .map_err(|_| invalid(field, text, format!("not a date in the format {format}")))?;
            Ok((millis, true))
        }
        FieldType::Boolean => match text {
            "true" => Ok((1, true)),
            "false" => Ok((0, true)),
            _ => Err(invalid(field, text, "not a boolean (true or false)")),
        },
        FieldType::Keyword(_) | FieldType::Text(_) => unreachable!("not a numeric field"),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn mapping() -> Mapping {
        Mapping::from_json(&json!({"properties": {
            "size": {"type": "long"}, "section": {"type": "keyword"}, "score": {"type": "double"},
            "day": {"type": "date"}, "free": {"type": "boolean"}, "summary": {"type": "text"}
        }}))
        .unwrap()
    }

    fn numbers(query: Query) -> (i64, i64) {
        match query {
            Query::Range(RangeQuery {
                bounds: RangeBounds::Numbers { lower, upper },
                ..
            }) => (lower, upper),
            other => panic!("{other:?}"),
        }
    }

    fn end(value: &str, inclusive: bool) -> RangeEnd {
        RangeEnd {
            value: Some(value.into()),
            inclusive,
        }
    }

    #[test]
    fn values_read_as_their_field_types() {
        let m = mapping();
        assert_eq!(
            term_query(&m, "section", "games").unwrap(),
            Query::Term(field_terms::keyword_term("section", "games"))
        );
        assert_eq!(numbers(term_query(&m, "size", "42").unwrap()), (42, 42));
        assert_eq!(numbers(term_query(&m, "free", "true").unwrap()), (1, 1));
        assert_eq!(
            numbers(term_query(&m, "day", "1970-01-02").unwrap()),
            (86_400_000, 86_400_000)
        );
        // A fraction on an integer field matches nothing.
        let (low, high) = numbers(term_query(&m, "size", "4.5").unwrap());
        assert!(low > high);
    }

    #[test]
    fn exclusive_and_fractional_bounds_round_inwards() {
        let m = mapping();
        assert_eq!(
            numbers(range_query(&m, "size", &end("10", false), &end("20", false)).unwrap()),
            (11, 19)
        );
        assert_eq!(
            numbers(range_query(&m, "size", &end("9.5", false), &end("20.5", true)).unwrap()),
            (10, 20)
        );
        assert_eq!(
            numbers(range_query(&m, "size", &RangeEnd::unbounded(), &end("3", true)).unwrap()),
            (i64::MIN, 3)
        );
        let (low, high) =
            numbers(range_query(&m, "score", &end("1.5", false), &RangeEnd::unbounded()).unwrap());
        assert_eq!(low, crate::columns::double_to_sortable(1.5) + 1);
        assert_eq!(high, i64::MAX);
    }

    #[test]
    fn unknown_fields_text_fields_and_unreadable_values_are_refused_by_name() {
        let m = mapping();
        assert!(matches!(
            term_query(&m, "nope", "x"),
            Err(QueryError::UnknownField { .. })
        ));
        let within = |value: &str| match prefix_query(&m, "section", "ga").unwrap() {
            Query::Range(RangeQuery {
                bounds: RangeBounds::Keywords { lower, upper },
                ..
            }) => std::ops::RangeBounds::contains(&(lower, upper), &value.to_owned()),
            other => panic!("a keyword range, not {other:?}"),
        };
        assert!(within("ga") && within("games") && within("ga\u{10FFFF}x"));
        assert!(!within("g") && !within("gb") && !within("fz"));
        assert_eq!(after_prefix("a\u{10FFFF}"), Some("b".into()));
        assert_eq!(after_prefix("\u{D7FF}"), Some("\u{E000}".into()));
        assert_eq!(after_prefix(""), None);
        assert!(prefix_query(&m, "size", "1").is_err());
        assert_eq!(
            term_query(&m, "summary", "x"),
            Ok(Query::Term(field_terms::text_term("summary", "x")))
        );
        assert!(matches!(
            range_query(
                &m,
                "summary",
                &RangeEnd::unbounded(),
                &RangeEnd::unbounded()
            ),
            Err(QueryError::TextFieldNotExact { .. })
        ));
        assert!(matches!(
            term_query(&m, "size", "big"),
            Err(QueryError::InvalidFieldValue { .. })
        ));
        assert!(matches!(
            term_query(&m, "free", "yes"),
            Err(QueryError::InvalidFieldValue { .. })
        ));
        assert!(matches!(
            range_query(&m, "day", &end("now-1d", true), &RangeEnd::unbounded()),
            Err(QueryError::InvalidFieldValue { .. })
        ));
        assert!(exists_query(&m, "summary").is_ok());
        assert!(exists_query(&m, "nope").is_err());
    }
}
