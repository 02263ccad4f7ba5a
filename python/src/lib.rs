//! `apcache._apcache`: the Python bindings' native module, wrapped by the `apcache` package
//! (`python/apcache/__init__.py`), which adds the pure-Python helpers.
//!
//! Nothing here is an engine part: an [`IndexWriter`](writer::IndexWriter) spools documents to
//! a JSON-lines file and builds the index with `apcache_index::indexer::build_index`, as
//! `apcache index` does; an [`Index`](index::Index) is a `apcache_tier` serving stack and live
//! service, as `apcache serve` and `apcache search --topics` are, assembled from the same
//! `ServingConfig`. Every Rust error becomes a Python exception with the engine's message
//! (`QueryError`, `IndexError`, `TopicError`, all `ApcacheError`s); queries run on the
//! service's query threads with the GIL released.
//!
//! The modules, one concept each: [`index`] and [`writer`] are the two classes; [`hits`] is
//! what a search returns; [`query_reading`] turns query text (and a filter, and the default
//! fields) into a query and [`sort_keys`] a `sort` into the searcher's keys; [`json_values`]
//! carries JSON documents both ways and [`document_form`] tells a writer's two forms of
//! document apart; [`errors`] are the exceptions; [`arguments`],
//! [`collection_stats`] and [`query_batch`] read the other Python arguments; [`trec`] reads
//! topics and writes runs.

mod arguments;
mod collection_stats;
mod document_form;
mod errors;
mod hits;
mod index;
mod json_values;
mod query_batch;
mod query_reading;
mod sort_keys;
mod trec;
mod writer;

use pyo3::prelude::*;

use errors::{ApcacheError, IndexError, QueryError, TopicError};
use hits::Hit;
use index::Index;
use trec::{read_topics, write_trec_run};
use writer::IndexWriter;

/// `text` with every character of the query syntax escaped, so that it parses as plain
/// words (what an Elasticsearch `match` query's text becomes).
#[pyfunction]
fn escape_query(text: &str) -> String {
    apcache_index::query::escape(text)
}

/// The native module.
#[pymodule]
fn _apcache(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("ApcacheError", py.get_type::<ApcacheError>())?;
    m.add("IndexError", py.get_type::<IndexError>())?;
    m.add("QueryError", py.get_type::<QueryError>())?;
    // The class's default, for a QueryError made without one (as `QueryError("...")`).
    py.get_type::<QueryError>().setattr("position", py.None())?;
    m.add("TopicError", py.get_type::<TopicError>())?;
    m.add_class::<Hit>()?;
    m.add_class::<Index>()?;
    m.add_class::<IndexWriter>()?;
    m.add_function(wrap_pyfunction!(read_topics, m)?)?;
    m.add_function(wrap_pyfunction!(write_trec_run, m)?)?;
    m.add_function(wrap_pyfunction!(escape_query, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
