//! `apcache._apcache`: the Python bindings' native module, wrapped by the `apcache` package
//! (`python/apcache/__init__.py`), which adds the pure-Python helpers.
//!
//! Nothing here is an engine part: an [`IndexWriter`] spools documents to a JSON-lines file
//! and builds the index with `apcache_index::indexer::build_index`, as `apcache index` does;
//! an [`Index`] is a `apcache_tier` serving stack and live service, as `apcache serve` and
//! `apcache search --topics` are, assembled from the same `ServingConfig`. Every Rust error
//! becomes a Python exception with the engine's message (`QueryError`, `IndexError`,
//! `TopicError`, all `ApcacheError`s); queries run on the service's query threads with the
//! GIL released.
//!
//! Why a spool: the indexer takes its documents from an input it reads in batches on its own
//! thread, and `add_many` must not hold a corpus in memory; a JSON-lines file the indexer
//! reads back keeps memory flat at the cost of writing the text once more. It is removed at
//! `commit` or when the writer is dropped.

use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::sync::Arc;

use apcache_codec::CodecKind;
use apcache_index::analyzer::{Analyzer, AnalyzerConfig, Stemming, StopWords};
use apcache_index::format::FileKind;
use apcache_index::highlight::{HighlightOptions, Highlighter};
use apcache_index::indexer::{build_index, IndexOptions};
use apcache_index::ingest::{BadLinePolicy, Input, InputFormat, ReaderOptions};
use apcache_index::plain_query::plain_query;
use apcache_index::query::{
    parse_query_in, DefaultOperator, Query, QueryError as EngineQueryError,
};
use apcache_index::search::{CollectionStats, Norms, Scoring, SearchOptions, SearchResult};
use apcache_index::{IndexError as EngineIndexError, Manifest};
use apcache_tier::loader::LoaderKind;
use apcache_tier::region::TierSpec;
use apcache_tier::serving::{run_batch, LiveConfig, LiveError, LiveRequest, LiveService};
use apcache_tier::stack::{ServingConfig, ServingStack, StackError};
use apcache_tier::ServingMode;
use apcache_trec::{RunWriter, TopicError as EngineTopicError, TopicFormat};
use pyo3::exceptions::{PyException, PyKeyError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyList, PyString, PyTuple};
use std::collections::{BTreeMap, HashSet};

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

/// Requests a batch keeps admitted per query thread (as `apcache serve`'s queue).
const WINDOW_PER_THREAD: usize = 8;

/// The cache size of a cache mode given without `cache_size` (as the command line's default).
const DEFAULT_CACHE_BYTES: u64 = 256 << 20;

fn index_error(error: EngineIndexError) -> PyErr {
    IndexError::new_err(error.to_string())
}

fn stack_error(error: StackError) -> PyErr {
    match error {
        StackError::Index(e) => index_error(e),
        StackError::Config(message) => PyValueError::new_err(message),
        other => ApcacheError::new_err(other.to_string()),
    }
}

fn live_error(error: LiveError) -> PyErr {
    match error {
        LiveError::Index(e) => index_error(e),
        other => ApcacheError::new_err(other.to_string()),
    }
}

/// A `QueryError` with `message` and the byte the engine's error points at (`position`,
/// None when it points at none), set on the instance so that it survives pickling (Ray
/// carries a shard's error back to the caller so).
fn query_error(py: Python<'_>, message: String, position: Option<usize>) -> PyErr {
    let error = QueryError::new_err(message);
    if let Err(failed) = error.value(py).setattr("position", position) {
        return failed;
    }
    error
}

/// The engine's parse error of `text`, as `QueryError`: its message followed by the query.
fn parse_error(py: Python<'_>, error: &EngineQueryError, text: &str) -> PyErr {
    query_error(py, format!("{error} (in {text:?})"), error.position())
}

fn topic_error(error: EngineTopicError) -> PyErr {
    match error {
        EngineTopicError::Io { .. } => {
            PyErr::new::<pyo3::exceptions::PyOSError, _>(error.to_string())
        }
        other => TopicError::new_err(other.to_string()),
    }
}

/// A byte size from Python: an int, or text in the command line's grammar (`"256MiB"`).
fn size_arg(value: &Bound<'_, PyAny>, what: &str) -> PyResult<u64> {
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
enum Parse {
    Plain,
    Lucene,
}

fn parse_arg(text: &str) -> PyResult<Parse> {
    match text {
        "plain" => Ok(Parse::Plain),
        "lucene" => Ok(Parse::Lucene),
        other => Err(PyValueError::new_err(format!(
            "parse={other:?}: \"plain\" (a bag of words) or \"lucene\" (query syntax)"
        ))),
    }
}

fn default_op_arg(text: &str) -> PyResult<DefaultOperator> {
    match text {
        "or" | "OR" => Ok(DefaultOperator::Or),
        "and" | "AND" => Ok(DefaultOperator::And),
        other => Err(PyValueError::new_err(format!(
            "default_op={other:?}: \"or\" or \"and\""
        ))),
    }
}

/// One ranked document.
#[pyclass(module = "apcache", frozen, get_all)]
#[derive(Clone)]
struct Hit {
    /// The document's id: the one given to `IndexWriter.add`, else its number in input
    /// order (as `apcache search` prints it).
    id: String,
    /// The index's number of the document (from 0, in input order).
    doc: u32,
    /// The BM25 score.
    score: f32,
    /// The stored title (None when the search asked for no fields).
    title: Option<String>,
    /// The stored body (None when the search asked for no fields).
    body: Option<String>,
}

#[pymethods]
impl Hit {
    fn __repr__(&self) -> String {
        match &self.title {
            Some(title) => format!(
                "Hit(id={:?}, score={}, title={:?})",
                self.id, self.score, title
            ),
            None => format!("Hit(id={:?}, score={})", self.id, self.score),
        }
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.extract::<Hit>().is_ok_and(|o| {
            o.id == self.id
                && o.doc == self.doc
                && o.score == self.score
                && o.title == self.title
                && o.body == self.body
        })
    }

    /// The hit as a dict (`id`, `doc`, `score`, `title`, `body`).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        dict.set_item("id", &self.id)?;
        dict.set_item("doc", self.doc)?;
        dict.set_item("score", self.score)?;
        dict.set_item("title", &self.title)?;
        dict.set_item("body", &self.body)?;
        Ok(dict)
    }
}

/// An index opened for searching: a serving stack and a fixed pool of query threads.
#[pyclass(module = "apcache")]
struct Index {
    stack: Arc<ServingStack>,
    service: Option<LiveService>,
    threads: usize,
    analyzer: Analyzer,
    /// Bytes of the files queries read, in the commit the index opened.
    search_bytes: u64,
    /// Bytes of the document store, in the commit the index opened.
    store_bytes: u64,
}

impl Index {
    fn service(&self) -> PyResult<&LiveService> {
        self.service
            .as_ref()
            .ok_or_else(|| ApcacheError::new_err("the index is closed"))
    }

    fn query(
        &self,
        py: Python<'_>,
        text: &str,
        parse: Parse,
        default_op: DefaultOperator,
    ) -> PyResult<Query> {
        match parse {
            Parse::Plain => Ok(plain_query(text, &self.analyzer)),
            Parse::Lucene => parse_query_in(text, &self.analyzer, default_op, self.stack.reader.mapping())
                .map(|(query, _)| query)
                .map_err(|e| parse_error(py, &e, text)),
        }
    }

    fn shown_id(&self, doc: u32) -> PyResult<String> {
        self.stack.reader.document_id(doc).map_err(index_error)
    }

    fn hits(&self, result: &SearchResult, fields: bool) -> PyResult<Vec<Hit>> {
        result
            .hits
            .iter()
            .map(|hit| {
                let (title, body) = if fields {
                    let (title, body) = self.stored(hit.doc)?;
                    (Some(title), Some(body))
                } else {
                    (None, None)
                };
                Ok(Hit {
                    id: self.shown_id(hit.doc)?,
                    doc: hit.doc,
                    score: hit.score,
                    title,
                    body,
                })
            })
            .collect()
    }

    fn stored(&self, doc: u32) -> PyResult<(String, String)> {
        let Some((segment, local)) = self.stack.reader.locate(doc) else {
            return Err(PyKeyError::new_err(format!("no document {doc}")));
        };
        let stored = segment.stored(local).map_err(index_error)?;
        Ok((stored.title, stored.body))
    }

    /// Runs `queries` on a pool of `threads` query threads (the index's own when `None`),
    /// without the GIL.
    fn run(
        &self,
        py: Python<'_>,
        queries: Vec<Query>,
        options: SearchOptions,
        threads: Option<usize>,
        collection: Option<CollectionStats>,
    ) -> PyResult<Vec<SearchResult>> {
        let own = self.service()?;
        let threads = threads.unwrap_or(self.threads);
        if threads == 0 {
            return Err(PyValueError::new_err("threads must be at least 1"));
        }
        let stack = self.stack.clone();
        let own_threads = self.threads;
        let answers = py.allow_threads(move || -> Result<_, LiveError> {
            let window = threads * WINDOW_PER_THREAD;
            let requests = queries.into_iter().map(|query| LiveRequest {
                query,
                options,
                deadline: None,
                collection: collection.clone(),
            });
            if threads == own_threads {
                return run_batch(own, requests, window);
            }
            let service = LiveService::start(
                stack,
                LiveConfig {
                    threads,
                    queue_depth: window,
                },
            )?;
            let answers = run_batch(&service, requests, window);
            service.shutdown();
            answers
        });
        answers
            .map_err(live_error)?
            .into_iter()
            .map(|answer| answer.map(|a| a.result).map_err(live_error))
            .collect()
    }
}

/// Collection statistics from Python: a dict with `doc_count`, `total_tokens` and
/// `doc_freqs` (`{term: documents}`), as `Index.collection_stats` returns (or their sums).
fn stats_arg(stats: &Bound<'_, PyAny>) -> PyResult<CollectionStats> {
    let dict = stats.downcast::<PyDict>().map_err(|_| {
        PyTypeError::new_err("stats is a dict with doc_count, total_tokens and doc_freqs")
    })?;
    let field = |name: &str| -> PyResult<Bound<'_, PyAny>> {
        dict.get_item(name)?
            .ok_or_else(|| PyKeyError::new_err(format!("stats has no {name:?}")))
    };
    let number = |name: &str| -> PyResult<u64> {
        field(name)?.extract().map_err(|_| {
            PyTypeError::new_err(format!("stats[{name:?}] is a whole number of at least 0"))
        })
    };
    let doc_freqs: BTreeMap<String, u64> = field("doc_freqs")?
        .extract()
        .map_err(|_| PyTypeError::new_err("stats[\"doc_freqs\"] is a dict {term: documents}"))?;
    Ok(CollectionStats {
        doc_count: number("doc_count")?,
        total_tokens: number("total_tokens")?,
        doc_freqs,
    })
}

fn stats_dict<'py>(py: Python<'py>, stats: &CollectionStats) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item("doc_count", stats.doc_count)?;
    dict.set_item("total_tokens", stats.total_tokens)?;
    let doc_freqs = PyDict::new(py);
    for (term, df) in &stats.doc_freqs {
        doc_freqs.set_item(term, df)?;
    }
    dict.set_item("doc_freqs", doc_freqs)?;
    Ok(dict)
}

fn search_options(k: usize, count: bool) -> SearchOptions {
    SearchOptions {
        k,
        count,
        scoring: Scoring::Bm25,
        norms: Norms::Lucene,
        pruning: true,
    }
}

#[pymethods]
impl Index {
    #[new]
    #[pyo3(signature = (path, mode=None, cache_size=None, tier_dir=None, memory_limit=None, threads=None, loader="direct"))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        path: PathBuf,
        mode: Option<&str>,
        cache_size: Option<&Bound<'_, PyAny>>,
        tier_dir: Option<PathBuf>,
        memory_limit: Option<&Bound<'_, PyAny>>,
        threads: Option<usize>,
        loader: &str,
    ) -> PyResult<Index> {
        let cache_bytes = cache_size.map(|v| size_arg(v, "cache_size")).transpose()?;
        let memory_limit = memory_limit
            .map(|v| size_arg(v, "memory_limit"))
            .transpose()?;
        // The command line's rules (crates/cli/src/options/serving.rs): a tier or a cache
        // size implies hybrid-prefetch; a cache mode without a size gets 256 MiB; in a cache
        // mode with a directory tier the metadata is placed in the tier too.
        let mode: ServingMode = match mode {
            Some(name) => name.parse().map_err(PyValueError::new_err)?,
            None if tier_dir.is_some() || cache_bytes.is_some() => ServingMode::HybridPrefetch,
            None => ServingMode::Base,
        };
        let tier = TierSpec::Directory(tier_dir.unwrap_or_else(|| PathBuf::from("/dev/shm")));
        let metadata_dir = match (&tier, mode.uses_cache()) {
            (TierSpec::Directory(dir), true) => Some(dir.clone()),
            _ => None,
        };
        let loader = match loader {
            "direct" => LoaderKind::Direct,
            "direct-pread" => LoaderKind::DirectPread,
            "pread" => LoaderKind::Pread,
            "mmap" => LoaderKind::Mmap,
            other => {
                return Err(PyValueError::new_err(format!(
                    "loader={other:?}: direct, direct-pread, pread or mmap"
                )))
            }
        };
        let config = ServingConfig {
            mode,
            cache_bytes: mode
                .uses_cache()
                .then(|| cache_bytes.unwrap_or(DEFAULT_CACHE_BYTES)),
            tier,
            loader,
            memory_limit,
            metadata_dir,
            ..ServingConfig::default()
        };
        let threads = threads.unwrap_or_else(|| {
            std::thread::available_parallelism().map_or(2, std::num::NonZero::get)
        });
        if threads == 0 {
            return Err(PyValueError::new_err("threads must be at least 1"));
        }
        if !path.join(apcache_index::manifest::MANIFEST).is_file() {
            return Err(IndexError::new_err(format!(
                "no index at {}: it has no MANIFEST (build one with apcache.IndexWriter or \
                 `apcache index`)",
                path.display()
            )));
        }
        py.allow_threads(move || -> PyResult<Index> {
            let stack =
                Arc::new(ServingStack::assemble(&path, &config, |_| {}).map_err(stack_error)?);
            let service = LiveService::start(
                stack.clone(),
                LiveConfig {
                    threads,
                    queue_depth: threads * WINDOW_PER_THREAD,
                },
            )
            .map_err(|e| ApcacheError::new_err(e.to_string()))?;
            // The opened commit's segments, as a manifest: its byte counts are `apcache
            // serve`'s (`GET /indexes`) and `apcache stats`'.
            let opened = Manifest {
                segments: stack
                    .reader
                    .segments()
                    .iter()
                    .map(|segment| segment.meta().clone())
                    .collect(),
                ..Manifest::new(AnalyzerConfig::default())
            };
            Ok(Index {
                analyzer: stack.reader.analyzer(),
                stack,
                service: Some(service),
                threads,
                search_bytes: opened.search_bytes(),
                store_bytes: opened.file_bytes(FileKind::Store),
            })
        })
    }

    /// The best `k` documents for `query`, best first; scored with `stats` (a whole sharded
    /// collection's statistics) instead of the index's own when given.
    #[pyo3(signature = (query, k=10, *, parse="lucene", default_op="or", fields=true, stats=None))]
    #[allow(clippy::too_many_arguments)]
    fn search(
        &self,
        py: Python<'_>,
        query: &str,
        k: usize,
        parse: &str,
        default_op: &str,
        fields: bool,
        stats: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Vec<Hit>> {
        let collection = stats.map(stats_arg).transpose()?;
        let query = self.query(py, query, parse_arg(parse)?, default_op_arg(default_op)?)?;
        let result = self
            .run(py, vec![query], search_options(k, false), None, collection)?
            .pop()
            .expect("one answer");
        self.hits(&result, fields)
    }

    /// The best `k` documents and the number of matches in one evaluation: `(total, exact,
    /// hits)`. `total` is exact when `count` is true, else a lower bound (`exact` says
    /// which), as `apcache serve`'s search with and without `count`.
    #[pyo3(signature = (query, k=10, *, count=true, parse="lucene", default_op="or", fields=true, stats=None))]
    #[allow(clippy::too_many_arguments)]
    fn search_with_total(
        &self,
        py: Python<'_>,
        query: &str,
        k: usize,
        count: bool,
        parse: &str,
        default_op: &str,
        fields: bool,
        stats: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<(u64, bool, Vec<Hit>)> {
        let collection = stats.map(stats_arg).transpose()?;
        let query = self.query(py, query, parse_arg(parse)?, default_op_arg(default_op)?)?;
        let result = self
            .run(py, vec![query], search_options(k, count), None, collection)?
            .pop()
            .expect("one answer");
        Ok((
            result.total_hits,
            result.total_hits_exact,
            self.hits(&result, fields)?,
        ))
    }

    /// The number of documents matching `query`, counted exactly.
    #[pyo3(signature = (query, *, parse="lucene", default_op="or"))]
    fn count(&self, py: Python<'_>, query: &str, parse: &str, default_op: &str) -> PyResult<u64> {
        let query = self.query(py, query, parse_arg(parse)?, default_op_arg(default_op)?)?;
        let result = self
            .run(py, vec![query], search_options(0, true), None, None)?
            .pop()
            .expect("one answer");
        Ok(result.total_hits)
    }

    /// This index's statistics for the terms of `query`: its documents, its tokens and each
    /// term's document frequency, as a dict (`doc_count`, `total_tokens`, `doc_freqs`). The
    /// sums of every shard's are what `search(..., stats=)` scores a shard with.
    #[pyo3(signature = (query, *, parse="lucene", default_op="or"))]
    fn collection_stats<'py>(
        &self,
        py: Python<'py>,
        query: &str,
        parse: &str,
        default_op: &str,
    ) -> PyResult<Bound<'py, PyDict>> {
        let query = self.query(py, query, parse_arg(parse)?, default_op_arg(default_op)?)?;
        let reader = &self.stack.reader;
        let stats = py
            .allow_threads(|| CollectionStats::of_query(reader, &query))
            .map_err(index_error)?;
        stats_dict(py, &stats)
    }

    /// `query` as the index parses it: `(canonical, notes)`, the query in canonical form (as
    /// `apcache serve` reports it) and what the analyzer changed or dropped in its words.
    #[pyo3(signature = (query, *, default_op="or"))]
    fn parse_query(
        &self,
        py: Python<'_>,
        query: &str,
        default_op: &str,
    ) -> PyResult<(String, Vec<String>)> {
        let (parsed, notes) = parse_query_in(
            query,
            &self.analyzer,
            default_op_arg(default_op)?,
            self.stack.reader.mapping(),
        )
        .map_err(|e| parse_error(py, &e, query))?;
        Ok((
            parsed.to_string(),
            notes.iter().map(ToString::to_string).collect(),
        ))
    }

    /// How many clauses `query` has as the server counts them against its limit: every term
    /// each time it is written, and every word of a phrase.
    #[pyo3(signature = (query, *, default_op="or"))]
    fn query_clauses(&self, py: Python<'_>, query: &str, default_op: &str) -> PyResult<usize> {
        let (parsed, _) = parse_query_in(
            query,
            &self.analyzer,
            default_op_arg(default_op)?,
            self.stack.reader.mapping(),
        )
        .map_err(|e| parse_error(py, &e, query))?;
        Ok(parsed.clauses())
    }

    /// The best `k` documents of each query, by query id.
    #[pyo3(signature = (queries, k=10, threads=None, *, parse="plain", default_op="or", fields=false))]
    #[allow(clippy::too_many_arguments)]
    fn batch_search<'py>(
        &self,
        py: Python<'py>,
        queries: &Bound<'py, PyAny>,
        k: usize,
        threads: Option<usize>,
        parse: &str,
        default_op: &str,
        fields: bool,
    ) -> PyResult<Bound<'py, PyDict>> {
        let (parse, default_op) = (parse_arg(parse)?, default_op_arg(default_op)?);
        let pairs = query_pairs(queries)?;
        let parsed = pairs
            .iter()
            .map(|(qid, text)| {
                self.query(py, text, parse, default_op).map_err(|e| {
                    let position = e.value(py).getattr("position").and_then(|p| p.extract());
                    query_error(
                        py,
                        format!("query {qid}: {}", e.value(py)),
                        position.unwrap_or(None),
                    )
                })
            })
            .collect::<PyResult<Vec<_>>>()?;
        let results = self.run(py, parsed, search_options(k, false), threads, None)?;
        let out = PyDict::new(py);
        for ((qid, _), result) in pairs.iter().zip(&results) {
            if out.contains(qid)? {
                return Err(PyValueError::new_err(format!(
                    "query id {qid:?} appears twice"
                )));
            }
            out.set_item(qid, self.hits(result, fields)?)?;
        }
        Ok(out)
    }

    /// The stored document with this id (an external id, or the document's number as an
    /// int), as a dict with `id`, `doc`, `title` and `body`.
    fn doc<'py>(&self, py: Python<'py>, id: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyDict>> {
        let doc: u32 = if let Ok(number) = id.extract::<u32>() {
            number
        } else {
            let id: String = id
                .extract()
                .map_err(|_| PyTypeError::new_err("a document id is a str (or an int number)"))?;
            self.stack
                .reader
                .doc_by_id(&id)
                .map_err(index_error)?
                .ok_or_else(|| PyKeyError::new_err(format!("no document with id {id:?}")))?
        };
        if u64::from(doc) >= self.stack.reader.max_doc() {
            return Err(PyKeyError::new_err(format!("no document {doc}")));
        }
        let (title, body) = self.stored(doc)?;
        let dict = PyDict::new(py);
        dict.set_item("id", self.shown_id(doc)?)?;
        dict.set_item("doc", doc)?;
        dict.set_item("title", title)?;
        dict.set_item("body", body)?;
        Ok(dict)
    }

    /// The terms the index's analyzer makes of `text`, in order.
    fn analyze(&self, text: &str) -> Vec<String> {
        self.analyzer.tokens(text)
    }

    /// The fragments of `text` with the words `query` matches marked, as `apcache serve`
    /// highlights a hit's field: `text` is analyzed with the index's analyzer, so a marked
    /// word is exactly a word indexed as one of the query's terms (an exact phrase marks only
    /// its occurrences; prohibited clauses mark nothing). Fragments of about `fragment_size`
    /// characters, cut at whitespace, the best `number_of_fragments` (most distinct marked
    /// words, then earliest) in text order; `number_of_fragments=0` returns the whole text,
    /// marked, as one fragment. Empty when nothing in `text` is marked.
    #[pyo3(signature = (query, text, *, pre_tag="<em>", post_tag="</em>", fragment_size=100, number_of_fragments=5, parse="lucene", default_op="or"))]
    #[allow(clippy::too_many_arguments)]
    fn highlight(
        &self,
        py: Python<'_>,
        query: &str,
        text: &str,
        pre_tag: &str,
        post_tag: &str,
        fragment_size: usize,
        number_of_fragments: usize,
        parse: &str,
        default_op: &str,
    ) -> PyResult<Vec<String>> {
        if fragment_size == 0 {
            return Err(PyValueError::new_err("fragment_size must be at least 1"));
        }
        let query = self.query(py, query, parse_arg(parse)?, default_op_arg(default_op)?)?;
        let options = HighlightOptions {
            pre_tag: pre_tag.to_owned(),
            post_tag: post_tag.to_owned(),
            fragment_size,
            number_of_fragments,
        };
        let analyzer = &self.analyzer;
        Ok(py.allow_threads(|| Highlighter::new(&query).fragments(text, analyzer, &options)))
    }

    /// Counts and settings of the index and its serving stack; `search_bytes` (the files
    /// queries read), `store_bytes` (the document store) and `cache_segments` (the postings
    /// cache's segments, 0 without one) are what `apcache serve` reports of an index.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let reader = &self.stack.reader;
        let dict = PyDict::new(py);
        dict.set_item("path", self.stack.dir.display().to_string())?;
        dict.set_item("documents", reader.max_doc())?;
        let mapping = serde_json::to_string(&reader.mapping().to_json())
            .map_err(|e| ApcacheError::new_err(e.to_string()))?;
        dict.set_item("mapping", py.import("json")?.call_method1("loads", (mapping,))?)?;
        dict.set_item("tokens", reader.total_tokens())?;
        dict.set_item("segments", reader.segments().len())?;
        dict.set_item("generation", reader.generation())?;
        dict.set_item("external_ids", reader.has_ids())?;
        dict.set_item("mode", self.stack.config.mode.name())?;
        dict.set_item("threads", self.threads)?;
        dict.set_item("cache_bytes", self.stack.config.cache_bytes)?;
        dict.set_item("cache_segments", self.stack.cache_segments().unwrap_or(0))?;
        dict.set_item("search_bytes", self.search_bytes)?;
        dict.set_item("store_bytes", self.store_bytes)?;
        dict.set_item("tier", self.stack.tier_description.clone())?;
        dict.set_item("dram", self.stack.dram_description.clone())?;
        dict.set_item("warnings", self.stack.warnings.clone())?;
        if let Some(service) = &self.service {
            let counters = service.counters();
            dict.set_item("queries", counters.admitted)?;
            dict.set_item("cache_hits", counters.cache_hits)?;
            dict.set_item("cache_misses", counters.cache_misses)?;
        }
        Ok(dict)
    }

    /// Stops the query threads; searching afterwards raises ApcacheError.
    fn close(&mut self, py: Python<'_>) {
        if let Some(service) = self.service.take() {
            py.allow_threads(move || service.shutdown());
        }
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&mut self, py: Python<'_>, _args: &Bound<'_, PyTuple>) -> bool {
        self.close(py);
        false
    }

    fn __len__(&self) -> usize {
        self.stack.reader.doc_count() as usize
    }

    fn __repr__(&self) -> String {
        format!(
            "Index({:?}, mode={:?}, documents={})",
            self.stack.dir.display().to_string(),
            self.stack.config.mode.name(),
            self.stack.reader.doc_count()
        )
    }
}

/// `(qid, text)` pairs from a mapping `{qid: text}` or an iterable of pairs (or of texts,
/// numbered from 0).
fn query_pairs(queries: &Bound<'_, PyAny>) -> PyResult<Vec<(String, String)>> {
    let mut pairs = Vec::new();
    if let Ok(mapping) = queries.downcast::<PyDict>() {
        for (qid, text) in mapping.iter() {
            pairs.push((qid.str()?.to_string(), query_text(&text)?));
        }
        return Ok(pairs);
    }
    if queries.is_instance_of::<PyString>() {
        return Err(PyTypeError::new_err(
            "batch_search takes many queries: a dict {qid: text} or (qid, text) pairs",
        ));
    }
    for (i, item) in queries.try_iter()?.enumerate() {
        let item = item?;
        if item.is_instance_of::<PyString>() {
            pairs.push((i.to_string(), item.extract()?));
            continue;
        }
        let (qid, text): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item
            .extract()
            .map_err(|_| PyTypeError::new_err("each query is a text or a (qid, text) pair"))?;
        pairs.push((qid.str()?.to_string(), query_text(&text)?));
    }
    Ok(pairs)
}

fn query_text(text: &Bound<'_, PyAny>) -> PyResult<String> {
    text.extract()
        .map_err(|_| PyTypeError::new_err("a query's text is a str"))
}

/// Builds an index from documents added one at a time or from an iterable.
#[pyclass(module = "apcache")]
struct IndexWriter {
    path: PathBuf,
    options: IndexOptions,
    spool: Option<BufWriter<tempfile::NamedTempFile>>,
    /// The ids in the order added: the documents' numbers are their positions.
    ids: Vec<String>,
    /// The same ids, to refuse one given twice (a run would name two documents alike).
    seen: HashSet<String>,
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

    fn add_one(&mut self, id: String, title: &str, body: &str) -> PyResult<()> {
        apcache_index::schema::check_id(&id).map_err(|e| PyValueError::new_err(e.to_string()))?;
        if self.seen.contains(&id) {
            return Err(PyValueError::new_err(format!(
                "document id {id:?} was already added (ids name one document each)"
            )));
        }
        let line = serde_json::json!({"_id": id, "title": title, "body": body}).to_string();
        let spool = self.spool()?;
        spool
            .write_all(line.as_bytes())
            .and_then(|()| spool.write_all(b"\n"))
            .map_err(|e| IndexError::new_err(format!("cannot write the document spool: {e}")))?;
        self.seen.insert(id.clone());
        self.ids.push(id);
        Ok(())
    }
}

fn id_text(id: &Bound<'_, PyAny>) -> PyResult<String> {
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

#[pymethods]
impl IndexWriter {
    #[new]
    #[pyo3(signature = (path, codec="pfor-delta-simd", threads=2, positions=true, memory_budget=None, stop_words=false, stem=false, overwrite=false))]
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
    ) -> PyResult<IndexWriter> {
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
                    ..ReaderOptions::default()
                },
                positions,
                // Documents are a title and a body, and their ids.
                mapping: Some(apcache_index::schema::Mapping::title_body()),
                ..IndexOptions::default()
            },
            spool: None,
            ids: Vec::new(),
            seen: HashSet::new(),
            committed: 0,
            overwrite,
        })
    }

    /// Adds one document.
    #[pyo3(signature = (id, title, body))]
    fn add(&mut self, id: &Bound<'_, PyAny>, title: &str, body: &str) -> PyResult<()> {
        self.add_one(id_text(id)?, title, body)
    }

    /// Adds every document of `documents`, read one at a time.
    fn add_many(&mut self, documents: &Bound<'_, PyAny>) -> PyResult<usize> {
        let mut added = 0;
        for item in documents.try_iter()? {
            let item = item?;
            let (id, title, body): (Bound<'_, PyAny>, String, String) =
                if let Ok(dict) = item.downcast::<PyDict>() {
                    let field =
                        |name: &str| -> PyResult<Option<Bound<'_, PyAny>>> { dict.get_item(name) };
                    let id = field("id")?
                        .ok_or_else(|| PyKeyError::new_err("a document dict needs an \"id\""))?;
                    let title = match field("title")? {
                        Some(t) => t.extract()?,
                        None => String::new(),
                    };
                    let body = match field("body")?.or(field("contents")?) {
                        Some(b) => b.extract()?,
                        None => {
                            return Err(PyKeyError::new_err(
                                "a document dict needs a \"body\" (or \"contents\")",
                            ))
                        }
                    };
                    (id, title, body)
                } else {
                    item.extract().map_err(|_| {
                        PyTypeError::new_err(
                            "each document is an (id, title, body) tuple or a dict with id, \
                             title and body",
                        )
                    })?
                };
            self.add_one(id_text(&id)?, &title, &body)?;
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
        let mut options = self.options.clone();
        // A second commit replaces what this writer committed before.
        options.force = self.overwrite || self.committed > 0;
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
            other => index_error(other),
        })?;
        self.committed = self.ids.len();
        let dict = PyDict::new(py);
        dict.set_item("documents", report.documents)?;
        dict.set_item("segments", report.segments)?;
        dict.set_item("postings", report.postings)?;
        dict.set_item("seconds", report.total_seconds)?;
        dict.set_item("codec", report.codec.to_string())?;
        Ok(dict)
    }

    fn __len__(&self) -> usize {
        self.ids.len()
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
        if exc_type.is_none() && self.ids.len() > self.committed {
            self.commit(py)?;
        }
        Ok(false)
    }
}

/// Reads a topic file: `{qid: query}` in file order.
#[pyfunction]
#[pyo3(signature = (path, format=None))]
fn read_topics<'py>(
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
fn write_trec_run(results: &Bound<'_, PyDict>, path: PathBuf, tag: &str) -> PyResult<u64> {
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
