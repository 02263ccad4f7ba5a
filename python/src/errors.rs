//! The exceptions apcache raises and the engine's errors turned into them.
//!
//! Every Rust error becomes a Python exception with the engine's message, so that a caller
//! catches `apcache.ApcacheError` (or one of its kinds) and reads what the command line would
//! have printed; settings that are simply wrong stay Python's `ValueError`.

use apcache_index::query::QueryError as EngineQueryError;
use apcache_index::IndexError as EngineIndexError;
use apcache_tier::serving::LiveError;
use apcache_tier::stack::StackError;
use apcache_trec::TopicError as EngineTopicError;
use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;

pyo3::create_exception!(
    apcache,
    ApcacheError,
    PyException,
    "The base of every error apcache raises."
);
pyo3::create_exception!(
    apcache,
    IndexError,
    ApcacheError,
    "An index that cannot be opened, read or built (missing, damaged, locked, an old format). \
     Not Python's builtin IndexError: refer to it as apcache.IndexError."
);
pyo3::create_exception!(
    apcache,
    QueryError,
    ApcacheError,
    "A query that cannot be parsed. `position` is the byte of the query it points at (the \
     message names it too), or None when it points at none."
);
pyo3::create_exception!(
    apcache,
    TopicError,
    ApcacheError,
    "A topic file that cannot be read (the message gives the line)."
);

pub(crate) fn index_error(error: EngineIndexError) -> PyErr {
    IndexError::new_err(error.to_string())
}

pub(crate) fn stack_error(error: StackError) -> PyErr {
    match error {
        StackError::Index(e) => index_error(e),
        StackError::Config(message) => PyValueError::new_err(message),
        other => ApcacheError::new_err(other.to_string()),
    }
}

pub(crate) fn live_error(error: LiveError) -> PyErr {
    match error {
        LiveError::Index(e) => index_error(e),
        other => ApcacheError::new_err(other.to_string()),
    }
}

/// A `QueryError` with `message` and the byte the engine's error points at (`position`,
/// None when it points at none), set on the instance so that it survives pickling (Ray
/// carries a shard's error back to the caller so).
pub(crate) fn query_error(py: Python<'_>, message: String, position: Option<usize>) -> PyErr {
    let error = QueryError::new_err(message);
    if let Err(failed) = error.value(py).setattr("position", position) {
        return failed;
    }
    error
}

/// The engine's parse error of `text`, as `QueryError`: its message followed by the query.
pub(crate) fn parse_error(py: Python<'_>, error: &EngineQueryError, text: &str) -> PyErr {
    query_error(py, format!("{error} (in {text:?})"), error.position())
}

pub(crate) fn topic_error(error: EngineTopicError) -> PyErr {
    match error {
        EngineTopicError::Io { .. } => {
            PyErr::new::<pyo3::exceptions::PyOSError, _>(error.to_string())
        }
        other => TopicError::new_err(other.to_string()),
    }
}
