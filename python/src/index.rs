//! [`Index`]: an index opened for searching, a `apcache_tier` serving stack and live service,
//! as `apcache serve` and `apcache search --topics` are, assembled from the same
//! `ServingConfig`. Queries run on the service's query threads with the GIL released.

use std::path::PathBuf;
use std::sync::Arc;

use apcache_index::analyzer::{Analyzer, AnalyzerConfig};
use apcache_index::format::FileKind;
use apcache_index::highlight::{HighlightOptions, Highlighter};
use apcache_index::query::{parse_query_in, Query};
use apcache_index::search::{
    CollectionStats, Norms, Scoring, SearchOptions, SearchResult, Searcher,
};
use apcache_index::Manifest;
use apcache_tier::loader::LoaderKind;
use apcache_tier::region::TierSpec;
use apcache_tier::serving::{run_batch, LiveConfig, LiveError, LiveRequest, LiveService};
use apcache_tier::stack::{ServingConfig, ServingStack};
use apcache_tier::ServingMode;
use pyo3::exceptions::{PyKeyError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use crate::arguments::{default_op_arg, parse_arg, size_arg};
use crate::collection_stats::{stats_arg, stats_dict};
use crate::errors::{
    index_error, live_error, parse_error, query_error, stack_error, ApcacheError, IndexError,
};
use crate::hits::{
    holds_json_documents, ranked_hits, sorted_hits, source_of, stored_document, Hit,
};
use crate::json_values::to_python;
use crate::query_batch::query_pairs;
use crate::query_reading::{default_fields_arg, QueryReading};
use crate::sort_keys::sort_arg;

/// Requests a batch keeps admitted per query thread (as `apcache serve`'s queue).
const WINDOW_PER_THREAD: usize = 8;

/// The cache size of a cache mode given without `cache_size` (as the command line's default).
const DEFAULT_CACHE_BYTES: u64 = 256 << 20;

/// An index opened for searching: a serving stack and a fixed pool of query threads.
#[pyclass(module = "apcache")]
pub(crate) struct Index {
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

    /// How this index reads query text, with `parse`, `default_op` and `default_field` as a
    /// method's arguments give them.
    fn reading(
        &self,
        parse: &str,
        default_op: &str,
        default_field: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<QueryReading<'_>> {
        let mapping = self.stack.reader.mapping();
        Ok(QueryReading {
            analyzer: &self.analyzer,
            mapping,
            parse: parse_arg(parse)?,
            default_op: default_op_arg(default_op)?,
            default_fields: default_fields_arg(default_field, mapping)?,
        })
    }

    /// `query` read as `reading` says, narrowed by `filter` when one is given.
    fn request_query(
        &self,
        py: Python<'_>,
        reading: &QueryReading<'_>,
        query: &str,
        filter: Option<&str>,
    ) -> PyResult<Query> {
        let query = reading.read(py, query)?;
        match filter {
            Some(filter) => reading.filtered(py, query, filter),
            None => Ok(query),
        }
    }

    /// `(total, exact, hits)` of `query`: ranked by score on the query threads, or, with a
    /// `sort`, in its order (every match visited, on this thread without the GIL; the total
    /// is then exact).
    #[allow(clippy::too_many_arguments)]
    fn hits_of(
        &self,
        py: Python<'_>,
        query: Query,
        k: usize,
        count: bool,
        fields: bool,
        sort: Option<&Bound<'_, PyAny>>,
        collection: Option<CollectionStats>,
    ) -> PyResult<(u64, bool, Vec<Hit>)> {
        let reader = &self.stack.reader;
        let Some(sort) = sort.filter(|s| !s.is_none()) else {
            let result = self
                .run(py, vec![query], search_options(k, count), None, collection)?
                .pop()
                .expect("one answer");
            let hits = ranked_hits(reader, &result, fields)?;
            return Ok((result.total_hits, result.total_hits_exact, hits));
        };
        let sort = sort_arg(sort, reader.mapping())?;
        if collection.is_some() {
            return Err(PyValueError::new_err(
                "stats and sort: a search sorted by fields reads the index's own statistics",
            ));
        }
        self.service()?;
        let result = py
            .allow_threads(|| Searcher::new(reader).search_sorted(&query, &sort.keys, k, None))
            .map_err(index_error)?;
        let hits = sorted_hits(reader, &result, &sort, fields)?;
        Ok((result.total_hits, true, hits))
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
    /// collection's statistics) instead of the index's own when given. `filter` (query
    /// syntax) narrows the matches without adding to their scores; `sort` orders them by
    /// fields instead of by score (`["size:desc", "name"]`, `[("size", "desc")]`; keyword,
    /// number, date and boolean fields, `_score`, `_doc`; documents without a value last);
    /// `default_field` names the text fields words without a field search (`["title^3",
    /// "summary"]`; default: every text field).
    #[pyo3(signature = (query, k=10, *, parse="lucene", default_op="or", fields=true, stats=None, filter=None, sort=None, default_field=None))]
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
        filter: Option<&str>,
        sort: Option<&Bound<'_, PyAny>>,
        default_field: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Vec<Hit>> {
        let collection = stats.map(stats_arg).transpose()?;
        let reading = self.reading(parse, default_op, default_field)?;
        let query = self.request_query(py, &reading, query, filter)?;
        let (_, _, hits) = self.hits_of(py, query, k, false, fields, sort, collection)?;
        Ok(hits)
    }

    /// The best `k` documents and the number of matches in one evaluation: `(total, exact,
    /// hits)`. `total` is exact when `count` is true, else a lower bound (`exact` says
    /// which), as `apcache serve`'s search with and without `count`.
    /// `filter`, `sort` and `default_field` as `search` takes them; sorted by fields, the
    /// total is always exact.
    #[pyo3(signature = (query, k=10, *, count=true, parse="lucene", default_op="or", fields=true, stats=None, filter=None, sort=None, default_field=None))]
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
        filter: Option<&str>,
        sort: Option<&Bound<'_, PyAny>>,
        default_field: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<(u64, bool, Vec<Hit>)> {
        let collection = stats.map(stats_arg).transpose()?;
        let reading = self.reading(parse, default_op, default_field)?;
        let query = self.request_query(py, &reading, query, filter)?;
        self.hits_of(py, query, k, count, fields, sort, collection)
    }

    /// The number of documents matching `query` (and `filter`, when given), counted exactly.
    #[pyo3(signature = (query, *, parse="lucene", default_op="or", filter=None, default_field=None))]
    fn count(
        &self,
        py: Python<'_>,
        query: &str,
        parse: &str,
        default_op: &str,
        filter: Option<&str>,
        default_field: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<u64> {
        let reading = self.reading(parse, default_op, default_field)?;
        let query = self.request_query(py, &reading, query, filter)?;
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
        let query = self.reading(parse, default_op, None)?.read(py, query)?;
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
        let reading = self.reading(parse, default_op, None)?;
        let pairs = query_pairs(queries)?;
        let parsed = pairs
            .iter()
            .map(|(qid, text)| {
                reading.read(py, text).map_err(|e| {
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
            out.set_item(qid, ranked_hits(&self.stack.reader, result, fields)?)?;
        }
        Ok(out)
    }

    /// The stored document with this id (an external id, or the document's number as an
    /// int), as a dict with `id`, `doc`, `title` and `body`, and for an index of JSON
    /// documents `_id` and `_source` (the document as given).
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
        let reader = &self.stack.reader;
        let stored = stored_document(reader, doc)?;
        let id = reader.document_id(doc).map_err(index_error)?;
        let dict = PyDict::new(py);
        dict.set_item("id", &id)?;
        dict.set_item("doc", doc)?;
        dict.set_item("title", &stored.title)?;
        dict.set_item("body", &stored.body)?;
        if holds_json_documents(reader) {
            dict.set_item("_id", id)?;
            dict.set_item("_source", to_python(py, &source_of(&stored))?)?;
        }
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
        let query = self.reading(parse, default_op, None)?.read(py, query)?;
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
        dict.set_item(
            "mapping",
            py.import("json")?.call_method1("loads", (mapping,))?,
        )?;
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
        self.stack.reader.max_doc() as usize
    }

    fn __repr__(&self) -> String {
        format!(
            "Index({:?}, mode={:?}, documents={})",
            self.stack.dir.display().to_string(),
            self.stack.config.mode.name(),
            self.stack.reader.max_doc()
        )
    }
}
