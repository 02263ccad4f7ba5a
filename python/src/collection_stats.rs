//! Collection statistics in and out of Python: what `Index.collection_stats` returns and
//! `search(..., stats=)` takes, so that shards of one collection score alike.

use std::collections::BTreeMap;

use apcache_index::search::{CollectionStats, TextFieldStats};
use pyo3::exceptions::{PyKeyError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// Collection statistics from Python: a dict with `doc_count`, `total_tokens`, `doc_freqs`
/// (`{term: documents}`) and, optionally, `fields` (`{text field: {"documents": n, "tokens":
/// n}}`, what BM25 needs of each named text field), as `Index.collection_stats` returns (or
/// their sums).
pub(crate) fn stats_arg(stats: &Bound<'_, PyAny>) -> PyResult<CollectionStats> {
    let dict = stats.downcast::<PyDict>().map_err(|_| {
        PyTypeError::new_err("stats is a dict with doc_count, total_tokens and doc_freqs")
    })?;
    let field = |name: &str| -> PyResult<Bound<'_, PyAny>> {
        dict.get_item(name)?
            .ok_or_else(|| PyKeyError::new_err(format!("stats has no {name:?}")))
    };
    let number = |name: &str| -> PyResult<u64> {
        field(name)?.extract().map_err(|_| {
            PyTypeError::new_err(format!("stats[{name:?}] is a whole number of at least 0"))
        })
    };
    let doc_freqs: BTreeMap<String, u64> = field("doc_freqs")?
        .extract()
        .map_err(|_| PyTypeError::new_err("stats[\"doc_freqs\"] is a dict {term: documents}"))?;
    let fields = match dict.get_item("fields")? {
        None => BTreeMap::new(),
        Some(fields) => fields_arg(&fields)?,
    };
    Ok(CollectionStats {
        doc_count: number("doc_count")?,
        total_tokens: number("total_tokens")?,
        doc_freqs,
        fields,
    })
}

/// `stats["fields"]`: `{field: {"documents": n, "tokens": n}}`.
fn fields_arg(fields: &Bound<'_, PyAny>) -> PyResult<BTreeMap<String, TextFieldStats>> {
    let shape = || {
        PyTypeError::new_err(
            "stats[\"fields\"] is a dict {text field: {\"documents\": n, \"tokens\": n}}",
        )
    };
    let fields: BTreeMap<String, BTreeMap<String, u64>> = fields.extract().map_err(|_| shape())?;
    fields
        .into_iter()
        .map(|(name, figures)| {
            let figure = |key: &str| figures.get(key).copied().ok_or_else(shape);
            Ok((
                name,
                TextFieldStats {
                    documents: figure("documents")?,
                    tokens: figure("tokens")?,
                },
            ))
        })
        .collect()
}

/// `stats` as the dict [`stats_arg`] reads.
pub(crate) fn stats_dict<'py>(
    py: Python<'py>,
    stats: &CollectionStats,
) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item("doc_count", stats.doc_count)?;
    dict.set_item("total_tokens", stats.total_tokens)?;
    let doc_freqs = PyDict::new(py);
    for (term, df) in &stats.doc_freqs {
        doc_freqs.set_item(term, df)?;
    }
    dict.set_item("doc_freqs", doc_freqs)?;
    let fields = PyDict::new(py);
    for (name, field) in &stats.fields {
        let figures = PyDict::new(py);
        figures.set_item("documents", field.documents)?;
        figures.set_item("tokens", field.tokens)?;
        fields.set_item(name, figures)?;
    }
    dict.set_item("fields", fields)?;
    Ok(dict)
}
