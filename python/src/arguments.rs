//! Python arguments read into the engine's settings: sizes, how query text is parsed, the
//! default operator. One place, so that every method reads them alike and refuses them with
//! the same message.

use apcache_index::query::DefaultOperator;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

/// A byte size from Python: an int, or text in the command line's grammar (`"256MiB"`).
pub(crate) fn size_arg(value: &Bound<'_, PyAny>, what: &str) -> PyResult<u64> {
    if let Ok(bytes) = value.extract::<u64>() {
        return Ok(bytes);
    }
    let text: String = value.extract().map_err(|_| {
        PyTypeError::new_err(format!(
            "{what} is a number of bytes or a size such as \"256MiB\""
        ))
    })?;
    apcache_tier::cgroup::parse_size(&text)
        .map_err(|e| PyValueError::new_err(format!("{what}: {e}")))
}

/// How query text is read.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Parse {
    Plain,
    Lucene,
}

pub(crate) fn parse_arg(text: &str) -> PyResult<Parse> {
    match text {
        "plain" => Ok(Parse::Plain),
        "lucene" => Ok(Parse::Lucene),
        other => Err(PyValueError::new_err(format!(
            "parse={other:?}: \"plain\" (a bag of words) or \"lucene\" (query syntax)"
        ))),
    }
}

pub(crate) fn default_op_arg(text: &str) -> PyResult<DefaultOperator> {
    match text {
        "or" | "OR" => Ok(DefaultOperator::Or),
        "and" | "AND" => Ok(DefaultOperator::And),
        other => Err(PyValueError::new_err(format!(
            "default_op={other:?}: \"or\" or \"and\""
        ))),
    }
}
