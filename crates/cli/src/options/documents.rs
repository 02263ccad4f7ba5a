//! Where documents come from when a command is given none: the bundled sample.

use std::path::PathBuf;

use anyhow::Context;
use apcache_index::ingest::{Document, DocumentReader, Input, ReaderOptions};

/// The bundled sample corpus (English Wikipedia, `title<TAB>body`), the default input of the
/// commands that read documents.
pub fn default_sample() -> PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/enwiki-sample.tsv")
}

/// Reads at most `limit` documents of `inputs` (for benchmarks that index them from memory).
pub fn load_documents(inputs: &[PathBuf], limit: usize) -> anyhow::Result<Vec<Document>> {
    let inputs = inputs.iter().map(|p| Input::from_arg(p.clone()));
    let mut reader =
        DocumentReader::new(inputs, ReaderOptions::default()).context("cannot open the input")?;
    let mut documents = Vec::new();
    while documents.len() < limit {
        match reader.next_document().context("cannot read the input")? {
            Some(doc) => documents.push(doc),
            None => break,
        }
    }
    Ok(documents)
}

/// Reads at most `limit` documents of `inputs` as `title body` texts (for benchmarks that
/// need only text).
pub fn read_documents(inputs: &[PathBuf], limit: usize) -> anyhow::Result<Vec<String>> {
    Ok(load_documents(inputs, limit)?
        .into_iter()
        .map(|doc| format!("{} {}", doc.title, doc.body))
        .collect())
}
