//! The many queries `Index.batch_search` takes, read into `(qid, text)` pairs.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

/// `(qid, text)` pairs from a mapping `{qid: text}` or an iterable of pairs (or of texts,
/// numbered from 0).
pub(crate) fn query_pairs(queries: &Bound<'_, PyAny>) -> PyResult<Vec<(String, String)>> {
    let mut pairs = Vec::new();
    if let Ok(mapping) = queries.downcast::<PyDict>() {
        for (qid, text) in mapping.iter() {
            pairs.push((qid.str()?.to_string(), query_text(&text)?));
        }
        return Ok(pairs);
    }
    if queries.is_instance_of::<PyString>() {
        return Err(PyTypeError::new_err(
            "batch_search takes many queries: a dict {qid: text} or (qid, text) pairs",
        ));
    }
    for (i, item) in queries.try_iter()?.enumerate() {
        let item = item?;
        if item.is_instance_of::<PyString>() {
            pairs.push((i.to_string(), item.extract()?));
            continue;
        }
        let (qid, text): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item
            .extract()
            .map_err(|_| PyTypeError::new_err("each query is a text or a (qid, text) pair"))?;
        pairs.push((qid.str()?.to_string(), query_text(&text)?));
    }
    Ok(pairs)
}

fn query_text(text: &Bound<'_, PyAny>) -> PyResult<String> {
    text.extract()
        .map_err(|_| PyTypeError::new_err("a query's text is a str"))
}
