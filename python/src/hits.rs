//! [`Hit`]: one ranked document as Python sees it, and the stored documents hits are made of.
//!
//! A hit carries what every index has (its id, number and score, the stored title and body)
//! and, for an index of JSON documents, the document itself (`_id`, `_source`), as
//! Elasticsearch's hits do; a search sorted by fields adds each hit's sort values.

use apcache_index::search::{IndexReader, SearchResult, SortedResult};
use apcache_index::segment::StoredDocument;
use pyo3::exceptions::PyKeyError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde_json::Value;

use crate::errors::index_error;
use crate::json_values::to_python;
use crate::sort_keys::Sort;

/// One ranked document.
#[pyclass(module = "apcache", frozen)]
#[derive(Clone)]
pub(crate) struct Hit {
    /// The document's id: the one given to `IndexWriter.add`, else its number in input
    /// order (as `apcache search` prints it).
    #[pyo3(get)]
    pub(crate) id: String,
    /// The index's number of the document (from 0, in input order).
    #[pyo3(get)]
    pub(crate) doc: u32,
    /// The BM25 score (NaN when a search sorted by fields did not compute it).
    #[pyo3(get)]
    pub(crate) score: f32,
    /// The stored title (None when the search asked for no fields).
    #[pyo3(get)]
    pub(crate) title: Option<String>,
    /// The stored body (None when the search asked for no fields).
    #[pyo3(get)]
    pub(crate) body: Option<String>,
    /// The id again, as Elasticsearch names it, for an index of JSON documents (else None).
    #[pyo3(get, name = "_id")]
    pub(crate) json_id: Option<String>,
    /// The JSON document as given, without its `_id` (None for title/body documents, or when
    /// the search asked for no fields).
    pub(crate) source: Option<Value>,
    /// The hit's value of each sort key, when the search sorted by fields (None otherwise).
    pub(crate) sort: Option<Vec<Value>>,
}

#[pymethods]
impl Hit {
    /// The JSON document as given (a dict), without its `_id`; None for title/body documents
    /// or when the search asked for no fields.
    #[getter(_source)]
    fn source_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match &self.source {
            Some(source) => to_python(py, source),
            None => Ok(py.None().into_bound(py)),
        }
    }

    /// The hit's value of each sort key, first key first, when the search sorted by fields: a
    /// keyword's string, a number, a date's milliseconds since the epoch, a boolean, the
    /// score, the document's number; None where the document has no value. None when the
    /// search was not sorted by fields.
    #[getter(sort)]
    fn sort_values<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match &self.sort {
            Some(values) => to_python(py, &Value::Array(values.clone())),
            None => Ok(py.None().into_bound(py)),
        }
    }

    fn __repr__(&self) -> String {
        // JSON documents without a title show their id alone.
        match self.title.as_ref().filter(|title| !title.is_empty()) {
            Some(title) => format!(
                "Hit(id={:?}, score={}, title={:?})",
                self.id, self.score, title
            ),
            None => format!("Hit(id={:?}, score={})", self.id, self.score),
        }
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        // Scores by their bits: two hits of a sort that computed none (NaN) are equal.
        other.extract::<Hit>().is_ok_and(|o| {
            o.id == self.id
                && o.doc == self.doc
                && o.score.to_bits() == self.score.to_bits()
                && o.title == self.title
                && o.body == self.body
                && o.json_id == self.json_id
                && o.source == self.source
                && o.sort == self.sort
        })
    }

    /// The hit as a dict (`id`, `doc`, `score`, `title`, `body`, and `_id`, `_source` and
    /// `sort` where the hit has them).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        dict.set_item("id", &self.id)?;
        dict.set_item("doc", self.doc)?;
        dict.set_item("score", self.score)?;
        dict.set_item("title", &self.title)?;
        dict.set_item("body", &self.body)?;
        if self.json_id.is_some() {
            dict.set_item("_id", &self.json_id)?;
        }
        if self.source.is_some() {
            dict.set_item("_source", self.source_dict(py)?)?;
        }
        if self.sort.is_some() {
            dict.set_item("sort", self.sort_values(py)?)?;
        }
        Ok(dict)
    }
}

/// Whether `reader` holds JSON documents (each field under its own name), whose hits carry
/// `_id` and `_source`, rather than title/body documents (tab-separated, or added to an
/// `IndexWriter` as `(id, title, body)`), whose text is one field.
pub(crate) fn holds_json_documents(reader: &IndexReader) -> bool {
    !reader.mapping().joined_text()
}

/// The stored document `doc`; a `KeyError` when there is none.
pub(crate) fn stored_document(reader: &IndexReader, doc: u32) -> PyResult<StoredDocument> {
    let Some((segment, local)) = reader.locate(doc) else {
        return Err(PyKeyError::new_err(format!("no document {doc}")));
    };
    segment.stored(local).map_err(index_error)
}

/// `_source` of a stored document: the JSON document as given, without a top-level `_id`
/// (Elasticsearch keeps the id beside the source, never in it).
pub(crate) fn source_of(stored: &StoredDocument) -> Value {
    let mut source = stored.source_json();
    if let Value::Object(object) = &mut source {
        // Shifting, not swapping, the keys after it: `_source` keeps the document's order.
        object.shift_remove("_id");
    }
    source
}

/// The hit of document `doc`, its stored fields read when `fields` is set.
fn hit(
    reader: &IndexReader,
    doc: u32,
    score: f32,
    fields: bool,
    sort: Option<Vec<Value>>,
) -> PyResult<Hit> {
    let id = reader.document_id(doc).map_err(index_error)?;
    let json = holds_json_documents(reader);
    let (title, body, source) = if fields {
        let stored = stored_document(reader, doc)?;
        let source = json.then(|| source_of(&stored));
        (Some(stored.title), Some(stored.body), source)
    } else {
        (None, None, None)
    };
    Ok(Hit {
        json_id: json.then(|| id.clone()),
        id,
        doc,
        score,
        title,
        body,
        source,
        sort,
    })
}

/// The hits of a ranked search, best first.
pub(crate) fn ranked_hits(
    reader: &IndexReader,
    result: &SearchResult,
    fields: bool,
) -> PyResult<Vec<Hit>> {
    result
        .hits
        .iter()
        .map(|h| hit(reader, h.doc, h.score, fields, None))
        .collect()
}

/// The hits of a search sorted by `sort`, in its order, each with its sort values.
pub(crate) fn sorted_hits(
    reader: &IndexReader,
    result: &SortedResult,
    sort: &Sort,
    fields: bool,
) -> PyResult<Vec<Hit>> {
    result
        .hits
        .iter()
        .map(|h| {
            let score = h.score.unwrap_or(f32::NAN);
            hit(reader, h.doc, score, fields, Some(sort.shown(&h.values)))
        })
        .collect()
}
