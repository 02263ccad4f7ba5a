//! The engine side of the protocol ([`super::request`]) for apcache and tantivy: a loop that
//! reads request lines from standard input and answers each at once, run by
//! `apcache-bench document-engine` in a process of its own (Lucene's is `lucene-peer
//! serve-json`). A request that fails gets an error line and the next one runs.

use std::io::{BufRead, Write};
use std::path::Path;

use apcache_index::schema::Mapping;
use apcache_index::search::{IndexReader, SearchOptions, Searcher};

use crate::document_queries::{to_query, DocumentQuery};
use crate::peers::tantivy_documents::TantivyDocuments;

use super::request::{Answer, Request};
use super::DocumentBenchError;

/// An engine that answers requests.
pub trait AnswersRequests {
    /// Answers one request.
    fn answer(&self, request: &Request) -> Result<Answer, String>;
}

/// apcache over an index directory.
pub struct ApcacheEngine {
    reader: IndexReader,
}

impl ApcacheEngine {
    /// Opens the index in `dir`.
    pub fn open(dir: &Path) -> Result<ApcacheEngine, DocumentBenchError> {
        Ok(ApcacheEngine {
            reader: IndexReader::open(dir)?,
        })
    }
}

impl AnswersRequests for ApcacheEngine {
    fn answer(&self, request: &Request) -> Result<Answer, String> {
        let mapping = self.reader.mapping();
        let query = to_query(&request.query, mapping)?;
        let searcher = Searcher::new(&self.reader);
        if request.sort.is_empty() {
            let options = SearchOptions {
                k: request.k,
                count: request.count,
                ..SearchOptions::default()
            };
            let result = searcher
                .search(&query, &options)
                .map_err(|e| e.to_string())?;
            Ok(answer(request, result.total_hits, result.hits.len()))
        } else {
            let keys = DocumentQuery {
                class: "",
                query: request.query.clone(),
                sort: request.sort.clone(),
            }
            .sort_keys(mapping)?;
            let result = if request.count {
                searcher.search_sorted(&query, &keys, request.k, None)
            } else {
                searcher.search_sorted_top(&query, &keys, request.k, None)
            }
            .map_err(|e| e.to_string())?;
            Ok(answer(request, result.total_hits, result.hits.len()))
        }
    }
}

/// The answer to `request` of a search that matched `total` (exact when counted) and returned
/// `hits`.
fn answer(request: &Request, total: u64, hits: usize) -> Answer {
    let hits = hits as u64;
    Answer {
        count: if request.count { total } else { hits },
        hits,
    }
}

/// tantivy over an index [`TantivyDocuments::build`] made.
pub struct TantivyEngine {
    index: TantivyDocuments,
}

impl TantivyEngine {
    /// Opens the index in `dir`, built under `mapping`.
    pub fn open(dir: &Path, mapping: &Mapping) -> Result<TantivyEngine, DocumentBenchError> {
        Ok(TantivyEngine {
            index: TantivyDocuments::open(dir, mapping)?,
        })
    }
}

impl AnswersRequests for TantivyEngine {
    fn answer(&self, request: &Request) -> Result<Answer, String> {
        let answer = self
            .index
            .search(&request.query, &request.sort, request.k, request.count)?;
        Ok(Answer {
            count: answer.count,
            hits: answer.hits as u64,
        })
    }
}

/// Answers every request line of `input` on `output`, each flushed at once, until `input`
/// ends.
pub fn serve(
    engine: &dyn AnswersRequests,
    input: impl BufRead,
    mut output: impl Write,
) -> std::io::Result<()> {
    for line in input.lines() {
        let line = line?;
        let answer = Request::parse(&line)
            .and_then(|request| engine.answer(&request))
            .map_or_else(|why| Answer::error_line(&why), |answer| answer.line());
        output.write_all(answer.as_bytes())?;
        output.write_all(b"\n")?;
        output.flush()?;
    }
    Ok(())
}
