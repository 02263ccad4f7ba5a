//! TREC files: topics read into `{qid: query}`, results written as a run.

use std::io::BufWriter;
use std::path::PathBuf;

use apcache_trec::{RunWriter, TopicFormat};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::errors::topic_error;
use crate::hits::Hit;

/// Reads a topic file: `{qid: query}` in file order.
#[pyfunction]
#[pyo3(signature = (path, format=None))]
pub(crate) fn read_topics<'py>(
    py: Python<'py>,
    path: PathBuf,
    format: Option<&str>,
) -> PyResult<Bound<'py, PyDict>> {
    let format = format
        .map(|f| f.parse::<TopicFormat>().map_err(PyValueError::new_err))
        .transpose()?;
    let topics = apcache_trec::read_topics(&path, format).map_err(topic_error)?;
    let out = PyDict::new(py);
    for topic in topics {
        out.set_item(topic.id, topic.query)?;
    }
    Ok(out)
}

/// Writes `results` (`{qid: [Hit, ...]}`, as batch_search returns) as a TREC run.
#[pyfunction]
#[pyo3(signature = (results, path, tag="apcache"))]
pub(crate) fn write_trec_run(
    results: &Bound<'_, PyDict>,
    path: PathBuf,
    tag: &str,
) -> PyResult<u64> {
    let file = std::fs::File::create(&path).map_err(|e| {
        PyErr::new::<pyo3::exceptions::PyOSError, _>(format!(
            "cannot create {}: {e}",
            path.display()
        ))
    })?;
    let run_error = |e: apcache_trec::RunError| PyValueError::new_err(e.to_string());
    let mut run = RunWriter::new(BufWriter::new(file), tag).map_err(run_error)?;
    for (qid, hits) in results.iter() {
        let qid = qid.str()?.to_string();
        let hits = hits.downcast::<PyList>().map_err(|_| {
            PyTypeError::new_err(format!("the results of {qid} are not a list of Hit"))
        })?;
        let ranking = hits
            .iter()
            .map(|hit| {
                let hit: Hit = hit
                    .extract()
                    .map_err(|_| PyTypeError::new_err(format!("a result of {qid} is not a Hit")))?;
                Ok((hit.id, hit.score))
            })
            .collect::<PyResult<Vec<_>>>()?;
        run.write_topic(&qid, ranking).map_err(run_error)?;
    }
    let lines = run.lines();
    run.finish().map_err(run_error)?;
    Ok(lines)
}
