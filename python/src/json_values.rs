//! JSON values between Python and the engine: a document given as a dict becomes one JSON
//! line of the spool, and a stored document (`_source`) or a hit's sort values become
//! Python objects again.
//!
//! Documents go out through Python's own `json.dumps`, so that anything Python's JSON takes
//! (dict subclasses, tuples as arrays, ints of any size) is taken alike and anything it refuses
//! (a `datetime`, a NaN) is refused with its message. They come back by walking the engine's
//! `serde_json::Value`, whose objects keep the document's key order.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use serde_json::Value;

/// `document` as one line of JSON (no newline in it: `json.dumps` escapes them in strings).
pub(crate) fn document_line(document: &Bound<'_, PyAny>) -> PyResult<String> {
    let py = document.py();
    let options = PyDict::new(py);
    options.set_item("ensure_ascii", false)?;
    options.set_item("allow_nan", false)?;
    let line = py
        .import("json")?
        .call_method("dumps", (document,), Some(&options))
        .map_err(|e| PyValueError::new_err(format!("a document must be JSON: {}", e.value(py))))?;
    line.extract()
}

/// `value` as the Python object `json.loads` would make of it.
pub(crate) fn to_python<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => i.into_pyobject(py)?.into_any(),
            (None, Some(u)) => u.into_pyobject(py)?.into_any(),
            _ => n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any(),
        },
        Value::String(s) => s.into_pyobject(py)?.into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(to_python(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(object) => {
            let dict = PyDict::new(py);
            for (key, item) in object {
                dict.set_item(key, to_python(py, item)?)?;
            }
            dict.into_any()
        }
    })
}
