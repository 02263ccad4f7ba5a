//! [`DocumentForm`]: the two forms of document an `IndexWriter` takes, and which one a given
//! item is.
//!
//! A JSON document is a dict, indexed under the writer's mapping (or one inferred from the
//! documents): each field under its own name, its id its `_id` or its id field. The older form
//! is a title and a body with an id, given as `add(id, title, body)`, an `(id, title, body)`
//! tuple, or a dict of only `id`, `title` and `body` (or `contents`); its text is one field,
//! as a tab-separated corpus's is. The two build different indexes, so one writer takes one
//! form: the writer's arguments (`mapping`, `id_field`) or its first document decide which.

use pyo3::exceptions::{PyKeyError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyString};

/// The form of a writer's documents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DocumentForm {
    /// Dicts, indexed as JSON documents.
    Json,
    /// An id, a title and a body.
    TitleBody,
}

impl DocumentForm {
    /// Refuses a document of form `given` in a writer whose documents are of form `self`.
    pub(crate) fn admit(self, given: DocumentForm) -> PyResult<()> {
        match (self, given) {
            (DocumentForm::Json, DocumentForm::TitleBody) => Err(PyValueError::new_err(
                "this writer holds JSON documents (dicts): an (id, title, body) document cannot \
                 join them; use one form per writer",
            )),
            (DocumentForm::TitleBody, DocumentForm::Json) => Err(PyValueError::new_err(
                "this writer holds (id, title, body) documents: a JSON document cannot join \
                 them; use one form per writer (a writer made with mapping= or id_field= takes \
                 JSON documents from the start)",
            )),
            _ => Ok(()),
        }
    }
}

/// The keys of a dict of the older form.
const TITLE_BODY_KEYS: [&str; 4] = ["id", "title", "body", "contents"];

/// Whether `dict` is a title/body document in the older form: an `id` and nothing but
/// `title`, `body` or `contents` beside it.
pub(crate) fn is_title_body_dict(dict: &Bound<'_, PyDict>) -> bool {
    dict.contains("id").unwrap_or(false)
        && dict.keys().iter().all(|key| {
            key.extract::<String>()
                .is_ok_and(|key| TITLE_BODY_KEYS.contains(&key.as_str()))
        })
}

/// The id, title and body of an older-form dict: `id`, `title` (empty when absent) and `body`
/// (or `contents`).
pub(crate) fn title_body_of_dict<'py>(
    dict: &Bound<'py, PyDict>,
) -> PyResult<(Bound<'py, PyAny>, String, String)> {
    let id = dict
        .get_item("id")?
        .ok_or_else(|| PyKeyError::new_err("a document dict needs an \"id\""))?;
    let title = match dict.get_item("title")? {
        Some(t) => t.extract()?,
        None => String::new(),
    };
    let body = match dict.get_item("body")?.or(dict.get_item("contents")?) {
        Some(b) => b.extract()?,
        None => {
            return Err(PyKeyError::new_err(
                "a document dict needs a \"body\" (or \"contents\")",
            ))
        }
    };
    Ok((id, title, body))
}

/// An older-form document's id as text: a str, or an int in its decimal spelling.
pub(crate) fn id_text(id: &Bound<'_, PyAny>) -> PyResult<String> {
    // bool is a subclass of int: True would pass as the id "True".
    if id.is_instance_of::<PyBool>() {
        return Err(PyTypeError::new_err(
            "a document id is a str or an int, not a bool",
        ));
    }
    if id.is_instance_of::<PyString>() {
        return id.extract();
    }
    if id.extract::<i64>().is_ok() {
        return Ok(id.str()?.to_string());
    }
    Err(PyTypeError::new_err("a document id is a str or an int"))
}
