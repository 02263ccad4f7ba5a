//! [`IndexWriter`]: documents added from Python, spooled, and built into an index.
//!
//! Why a spool: the indexer takes its documents from an input it reads in batches on its own
//! thread, and `add_many` must not hold a corpus in memory; a JSON-lines file the indexer
//! reads back keeps memory flat at the cost of writing the text once more. It is removed at
//! `commit` or when the writer is dropped.
//!
//! A JSON document is mapped when it is added, by a [`Mapper`] like the one the build reads
//! the spool with, so that a document that does not fit the mapping (a word where a number is
//! mapped, an id given twice) is refused by the `add` that gave it, with the field and the
//! reason, and never reaches the spool. The build then reads exactly the documents that
//! passed, in the same order, and infers the same mapping; should it refuse one all the same,
//! `commit` raises a `ValueError` naming it and commits nothing.

use std::collections::HashSet;
use std::io::{BufWriter, Write};
use std::path::PathBuf;

use apcache_codec::CodecKind;
use apcache_index::analyzer::{AnalyzerConfig, Stemming, StopWords};
use apcache_index::indexer::{build_index, IndexOptions};
use apcache_index::ingest::{BadLinePolicy, IngestError, Input, InputFormat, ReaderOptions};
use apcache_index::schema::{Mapper, Mapping};
use apcache_index::IndexError as EngineIndexError;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde_json::Value;

use crate::arguments::size_arg;
use crate::document_form::{id_text, is_title_body_dict, title_body_of_dict, DocumentForm};
use crate::errors::{index_error, IndexError};
use crate::json_values::document_line;

/// Builds an index from documents added one at a time or from an iterable.
#[pyclass(module = "apcache")]
pub(crate) struct IndexWriter {
    path: PathBuf,
    options: IndexOptions,
    spool: Option<BufWriter<tempfile::NamedTempFile>>,
    /// Documents added: the next one's number.
    added: usize,
    /// The ids of title/body documents, to refuse one given twice (a run would name two
    /// documents alike); JSON documents' ids are the mapper's to check.
    seen: HashSet<String>,
    /// The form of the documents, once the writer's arguments or its first document said.
    form: Option<DocumentForm>,
    /// The mapping JSON documents are indexed under (`None`: inferred from them).
    mapping: Option<Mapping>,
    /// The field whose value is a JSON document's id when it has no `_id`.
    id_field: Option<String>,
    /// JSON documents mapped as they are added, as the build will map them.
    mapper: Option<Mapper>,
    committed: usize,
    overwrite: bool,
}

impl IndexWriter {
    fn spool(&mut self) -> PyResult<&mut BufWriter<tempfile::NamedTempFile>> {
        if self.spool.is_none() {
            let parent = match self.path.parent() {
                Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                _ => PathBuf::from("."),
            };
            let file = tempfile::Builder::new()
                .prefix(".apcache-spool-")
                .suffix(".jsonl")
                .tempfile_in(&parent)
                .map_err(|e| {
                    IndexError::new_err(format!(
                        "cannot create the document spool in {}: {e}",
                        parent.display()
                    ))
                })?;
            self.spool = Some(BufWriter::with_capacity(1 << 20, file));
        }
        Ok(self.spool.as_mut().expect("just made"))
    }

    /// Records that a document of form `given` is being added: the first decides the
    /// writer's form, a later one of the other form is refused.
    fn take_form(&mut self, given: DocumentForm) -> PyResult<()> {
        match self.form {
            Some(form) => form.admit(given),
            None => {
                self.form = Some(given);
                Ok(())
            }
        }
    }

    fn write_line(&mut self, line: &str) -> PyResult<()> {
        let spool = self.spool()?;
        spool
            .write_all(line.as_bytes())
            .and_then(|()| spool.write_all(b"\n"))
            .map_err(|e| IndexError::new_err(format!("cannot write the document spool: {e}")))
    }

    /// Adds a JSON document, once its mapper has taken it.
    fn add_json(&mut self, document: &Bound<'_, PyAny>) -> PyResult<()> {
        if !document.is_instance_of::<PyDict>() {
            return Err(PyTypeError::new_err(
                "a document is a dict (a JSON object), or the older (id, title, body)",
            ));
        }
        let line = document_line(document)?;
        let value: Value = serde_json::from_str(&line)
            .map_err(|e| PyValueError::new_err(format!("a document must be JSON: {e}")))?;
        let number = self.added;
        let (mapping, id_field) = (&self.mapping, &self.id_field);
        let mapper = self.mapper.get_or_insert_with(|| {
            Mapper::new(mapping.clone().unwrap_or_default(), id_field.clone())
        });
        mapper.map(&value).map_err(|error| {
            let id = stated_id(&value, mapper.id_field())
                .map(|id| format!(" (_id {id:?})"))
                .unwrap_or_default();
            PyValueError::new_err(format!("document {number}{id} refused: {error}"))
        })?;
        self.write_line(&line)?;
        self.added += 1;
        Ok(())
    }

    fn add_one(&mut self, id: String, title: &str, body: &str) -> PyResult<()> {
        apcache_index::schema::check_id(&id).map_err(|e| PyValueError::new_err(e.to_string()))?;
        if self.seen.contains(&id) {
            return Err(PyValueError::new_err(format!(
                "document id {id:?} was already added (ids name one document each)"
            )));
        }
        let line = serde_json::json!({"_id": id, "title": title, "body": body}).to_string();
        self.write_line(&line)?;
        self.seen.insert(id);
        self.added += 1;
        Ok(())
    }

    /// Adds one item of `add_many`: a dict (a JSON document, or an older-form dict in a writer
    /// of that form or as its first document) or an `(id, title, body)` tuple.
    fn add_item(&mut self, item: &Bound<'_, PyAny>) -> PyResult<()> {
        if let Ok(dict) = item.downcast::<PyDict>() {
            let title_body = match self.form {
                Some(form) => form == DocumentForm::TitleBody,
                None => is_title_body_dict(dict),
            };
            if !title_body {
                self.take_form(DocumentForm::Json)?;
                return self.add_json(item);
            }
            self.take_form(DocumentForm::TitleBody)?;
            let (id, title, body) = title_body_of_dict(dict)?;
            return self.add_one(id_text(&id)?, &title, &body);
        }
        self.take_form(DocumentForm::TitleBody)?;
        let (id, title, body): (Bound<'_, PyAny>, String, String) =
            item.extract().map_err(|_| {
                PyTypeError::new_err(
                    "each document is a dict (a JSON document) or an (id, title, body) tuple",
                )
            })?;
        self.add_one(id_text(&id)?, &title, &body)
    }

    /// The options of this writer's build: the mapping and ids of its documents' form.
    fn build_options(&self) -> IndexOptions {
        let mut options = self.options.clone();
        match self.form {
            Some(DocumentForm::Json) => {
                options.mapping.clone_from(&self.mapping);
                options.id_field.clone_from(&self.id_field);
            }
            // Documents are a title and a body, and their ids.
            Some(DocumentForm::TitleBody) | None => {
                options.mapping = Some(Mapping::title_body());
            }
        }
        // A second commit replaces what this writer committed before.
        options.force = self.overwrite || self.committed > 0;
        options
    }
}

/// The id a refused JSON document states, for the message: its `_id`, else its id field's
/// value.
fn stated_id(document: &Value, id_field: Option<&str>) -> Option<String> {
    let object = document.as_object()?;
    match object.get("_id").or_else(|| object.get(id_field?))? {
        Value::String(id) => Some(id.clone()),
        Value::Number(id) => Some(id.to_string()),
        _ => None,
    }
}

/// The mapping argument: a dict in Elasticsearch's JSON form (`{"properties": {...}}`).
fn mapping_arg(mapping: &Bound<'_, PyAny>) -> PyResult<Mapping> {
    if !mapping.is_instance_of::<PyDict>() {
        return Err(PyTypeError::new_err(
            "mapping is a dict in Elasticsearch's form: {\"properties\": {\"field\": {\"type\": \"text\"}}}",
        ));
    }
    let json: Value = serde_json::from_str(&document_line(mapping)?)
        .map_err(|e| PyValueError::new_err(format!("mapping: {e}")))?;
    Mapping::from_json(&json).map_err(|e| PyValueError::new_err(format!("mapping: {e}")))
}

#[pymethods]
impl IndexWriter {
    #[new]
    #[pyo3(signature = (path, codec="pfor-delta-simd", threads=2, positions=true, memory_budget=None, stop_words=false, stem=false, overwrite=false, mapping=None, id_field=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        path: PathBuf,
        codec: &str,
        threads: usize,
        positions: bool,
        memory_budget: Option<&Bound<'_, PyAny>>,
        stop_words: bool,
        stem: bool,
        overwrite: bool,
        mapping: Option<&Bound<'_, PyAny>>,
        id_field: Option<String>,
    ) -> PyResult<IndexWriter> {
        let mapping = mapping
            .filter(|m| !m.is_none())
            .map(mapping_arg)
            .transpose()?;
        // Either argument is about JSON documents: the writer takes them from the start.
        let form = (mapping.is_some() || id_field.is_some()).then_some(DocumentForm::Json);
        let codec: CodecKind = codec
            .parse()
            .map_err(|e| PyValueError::new_err(format!("codec={codec:?}: {e}")))?;
        if threads == 0 {
            return Err(PyValueError::new_err("threads must be at least 1"));
        }
        let memory_budget = match memory_budget {
            Some(v) => usize::try_from(size_arg(v, "memory_budget")?)
                .map_err(|_| PyValueError::new_err("memory_budget is too large"))?,
            None => 256 << 20,
        };
        Ok(IndexWriter {
            path,
            options: IndexOptions {
                codec,
                threads,
                memory_budget,
                analyzer: AnalyzerConfig {
                    stop_words: if stop_words {
                        StopWords::English
                    } else {
                        StopWords::None
                    },
                    stemming: if stem {
                        Stemming::SnowballEnglish
                    } else {
                        Stemming::None
                    },
                },
                reader: ReaderOptions {
                    format: InputFormat::JsonLines,
                    bad_lines: BadLinePolicy::Reject,
                    // The spool is documents this writer wrote: a refused one is named at
                    // commit, never taken for a file that is not a corpus.
                    refuse_non_documents: false,
                    ..ReaderOptions::default()
                },
                positions,
                ..IndexOptions::default()
            },
            spool: None,
            added: 0,
            seen: HashSet::new(),
            form,
            mapping,
            id_field,
            mapper: None,
            committed: 0,
            overwrite,
        })
    }

    /// Adds one document: a dict, indexed as a JSON document (its id is its `_id`, else its
    /// `id_field`), or, in the older form, `add(id, title, body)`. A JSON document that does
    /// not fit the mapping is refused here with a `ValueError` naming the field and why.
    #[pyo3(signature = (document=None, title=None, body=None, *, id=None))]
    fn add(
        &mut self,
        document: Option<&Bound<'_, PyAny>>,
        title: Option<&str>,
        body: Option<&str>,
        id: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        if title.is_none() && body.is_none() && id.is_none() {
            let document = document.ok_or_else(|| {
                PyTypeError::new_err("add takes a document (a dict) or an id, a title and a body")
            })?;
            self.take_form(DocumentForm::Json)?;
            return self.add_json(document);
        }
        let id = match (document, id) {
            (Some(id), None) | (None, Some(id)) => id,
            _ => return Err(PyTypeError::new_err("add(id, title, body) takes one id")),
        };
        let (Some(title), Some(body)) = (title, body) else {
            return Err(PyTypeError::new_err(
                "add(id, title, body) takes an id, a title and a body",
            ));
        };
        self.take_form(DocumentForm::TitleBody)?;
        self.add_one(id_text(id)?, title, body)
    }

    /// Adds every document of `documents`, read one at a time: dicts (JSON documents) or
    /// `(id, title, body)` tuples, as `add` takes them. Returns how many were added; the
    /// first refused stops it with its error, those before it added.
    fn add_many(&mut self, documents: &Bound<'_, PyAny>) -> PyResult<usize> {
        if documents.is_instance_of::<PyDict>() {
            // One document, whose keys would be taken for documents.
            return Err(PyTypeError::new_err(
                "add_many takes an iterable of documents; add takes one",
            ));
        }
        let mut added = 0;
        for item in documents.try_iter()? {
            self.add_item(&item?)?;
            added += 1;
        }
        Ok(added)
    }

    /// Builds the index from every document added so far and commits it.
    fn commit<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let Some(spool) = self.spool.as_mut() else {
            return Err(IndexError::new_err(
                "nothing to commit: no document was added",
            ));
        };
        spool
            .flush()
            .map_err(|e| IndexError::new_err(format!("cannot write the document spool: {e}")))?;
        let spool_path = spool.get_ref().path().to_path_buf();
        let options = self.build_options();
        let path = self.path.clone();
        let report = py.allow_threads(|| -> Result<_, EngineIndexError> {
            build_index(vec![Input::Path(spool_path)], &path, &options, |_, _| {})
        });
        let report = report.map_err(|error| match error {
            // The engine's message names the command line's --force.
            EngineIndexError::IndexExists(dir) => IndexError::new_err(format!(
                "{} already holds an index; pass overwrite=True to IndexWriter to replace it",
                dir.display()
            )),
            // A document `add` took and the build refused (the two map documents alike, so
            // this is not expected): nothing is committed.
            EngineIndexError::Ingest(IngestError::BadLine(bad)) => PyValueError::new_err(format!(
                "document {} refused at commit, nothing committed: {}",
                bad.line.saturating_sub(1),
                bad.reason
            )),
            other => index_error(other),
        })?;
        self.committed = self.added;
        let dict = PyDict::new(py);
        dict.set_item("documents", report.documents)?;
        dict.set_item("segments", report.segments)?;
        dict.set_item("postings", report.postings)?;
        dict.set_item("seconds", report.total_seconds)?;
        dict.set_item("codec", report.codec.to_string())?;
        Ok(dict)
    }

    fn __len__(&self) -> usize {
        self.added
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    /// Commits what was added unless the block raised.
    #[pyo3(signature = (exc_type, _exc_value, _traceback))]
    fn __exit__(
        &mut self,
        py: Python<'_>,
        exc_type: &Bound<'_, PyAny>,
        _exc_value: &Bound<'_, PyAny>,
        _traceback: &Bound<'_, PyAny>,
    ) -> PyResult<bool> {
        if exc_type.is_none() && self.added > self.committed {
            self.commit(py)?;
        }
        Ok(false)
    }
}
