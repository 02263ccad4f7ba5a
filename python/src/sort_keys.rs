//! [`Sort`]: the `sort` argument of `Index.search`, resolved against the index's mapping, and
//! each hit's sort values as Python objects.
//!
//! The same keys as the command line's `--sort` and the native API's `sort` (`field`,
//! `field:asc`, `field:desc`, `_score`, `_doc`; the score descends by default, everything else
//! ascends; documents without a value last), read here rather than borrowed from the server
//! crate, which the bindings do not depend on. Values come back as Python writes them: a
//! keyword's string, an integer, a double, a date's milliseconds since the epoch, `True` or
//! `False`, and `None` where a document has no value (where Elasticsearch writes the
//! substitute that sorts it last, Python has `None`).

use apcache_index::columns::sortable_to_double;
use apcache_index::schema::{FieldType, Mapping};
use apcache_index::search::{SortBy, SortKey, SortValue};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyString, PyTuple};
use serde_json::{json, Value};

/// How a key's values are shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum KeyKind {
    Score,
    Doc,
    /// Integers and dates (milliseconds): a numeric column's values as they are.
    Integer,
    /// Booleans, kept as 0 and 1.
    Boolean,
    /// Doubles (and floats), kept in sortable form.
    Double,
    Keyword,
}

/// The keys of a sort, each with how its values are shown.
#[derive(Debug, Clone, Default)]
pub(crate) struct Sort {
    /// The keys, first to last, as the searcher takes them.
    pub(crate) keys: Vec<SortKey>,
    kinds: Vec<KeyKind>,
}

/// The sort `value` asks for: a str (`"size:desc,package"`), or a list whose items are
/// `"name"`, `"name:asc"`, `"name:desc"` or `(name, "asc" | "desc")`.
pub(crate) fn sort_arg(value: &Bound<'_, PyAny>, mapping: &Mapping) -> PyResult<Sort> {
    let mut sort = Sort::default();
    if let Ok(text) = value.downcast::<PyString>() {
        let text: String = text.extract()?;
        for spec in text.split(',') {
            sort.push_spec(spec, mapping)?;
        }
    } else {
        let items = value.try_iter().map_err(|_| shape_error())?;
        for item in items {
            let item = item?;
            if let Ok(spec) = item.downcast::<PyString>() {
                sort.push_spec(&spec.extract::<String>()?, mapping)?;
            } else if let Ok(pair) = item.downcast::<PyTuple>() {
                let (name, order): (String, String) = pair.extract().map_err(|_| shape_error())?;
                sort.push(&name, Some(descending_arg(&name, &order)?), mapping)?;
            } else {
                return Err(shape_error());
            }
        }
    }
    if sort.keys.is_empty() {
        return Err(PyValueError::new_err("sort names no key"));
    }
    Ok(sort)
}

fn shape_error() -> PyErr {
    PyTypeError::new_err(
        "sort is a list of keys, each \"field\", \"field:asc\", \"field:desc\" or (field, \
         \"asc\" | \"desc\"), or one str of them separated by commas",
    )
}

fn descending_arg(name: &str, order: &str) -> PyResult<bool> {
    match order.to_ascii_lowercase().as_str() {
        "asc" => Ok(false),
        "desc" => Ok(true),
        _ => Err(PyValueError::new_err(format!(
            "sort [{name}]: the order is \"asc\" or \"desc\", not {order:?}"
        ))),
    }
}

impl Sort {
    /// Adds the key `spec` names: `name`, `name:asc` or `name:desc` (blank: nothing).
    fn push_spec(&mut self, spec: &str, mapping: &Mapping) -> PyResult<()> {
        let spec = spec.trim();
        if spec.is_empty() {
            return Ok(());
        }
        match spec.rsplit_once(':') {
            Some((name, order)) => self.push(name, Some(descending_arg(name, order)?), mapping),
            None => self.push(spec, None, mapping),
        }
    }

    /// Adds the key `name` (`_score`, `_doc` or a field of `mapping`), descending when
    /// `descending` says so or, without an order, when it is the score.
    fn push(&mut self, name: &str, descending: Option<bool>, mapping: &Mapping) -> PyResult<()> {
        let (by, kind) = match name {
            "_score" => (SortBy::Score, KeyKind::Score),
            "_doc" => (SortBy::Doc, KeyKind::Doc),
            field => match mapping.resolve(field).map(|f| f.field_type.into_owned()) {
                None => {
                    return Err(PyValueError::new_err(format!(
                        "sort: the index has no field [{field}] to sort on"
                    )))
                }
                Some(FieldType::Text(options)) => {
                    let instead = match &options.keyword {
                        Some((sub, _)) => format!("; its keyword sub-field [{field}.{sub}] is"),
                        None => String::new(),
                    };
                    return Err(PyValueError::new_err(format!(
                        "sort: [{field}] is a text field, which cannot be sorted on (a keyword, \
                         number, date or boolean field can{instead})"
                    )));
                }
                Some(FieldType::Keyword(_)) => {
                    (SortBy::Keywords(field.to_owned()), KeyKind::Keyword)
                }
                Some(FieldType::Double { .. }) => {
                    (SortBy::Numbers(field.to_owned()), KeyKind::Double)
                }
                Some(FieldType::Boolean) => (SortBy::Numbers(field.to_owned()), KeyKind::Boolean),
                Some(FieldType::Integer(_) | FieldType::Date(_)) => {
                    (SortBy::Numbers(field.to_owned()), KeyKind::Integer)
                }
            },
        };
        self.keys.push(SortKey {
            by,
            descending: descending.unwrap_or(kind == KeyKind::Score),
            missing_first: false,
        });
        self.kinds.push(kind);
        Ok(())
    }

    /// A hit's values, one per key, as JSON values Python gets (`null` where it has none).
    pub(crate) fn shown(&self, values: &[SortValue]) -> Vec<Value> {
        values
            .iter()
            .zip(&self.kinds)
            .map(|(value, kind)| match (value, kind) {
                (SortValue::Missing, _) => Value::Null,
                (SortValue::Number(n), KeyKind::Double) => json!(sortable_to_double(*n)),
                (SortValue::Number(n), KeyKind::Boolean) => json!(*n != 0),
                (SortValue::Number(n), _) => json!(n),
                (SortValue::Keyword(k), _) => json!(k),
                (SortValue::Score(s), _) => json!(s),
                (SortValue::Doc(d), _) => json!(d),
            })
            .collect()
    }
}
