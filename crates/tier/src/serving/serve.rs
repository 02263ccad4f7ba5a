//! Running a queue of queries in one of the four modes.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use apcache_index::format::{FileKind, HEADER_LEN};
use apcache_index::query::Query;
use apcache_index::search::{
    IndexReader, PostingsSource, QueryTerms, SearchOptions, SearchStats, Searcher,
};
use serde::Serialize;

use super::cached_evaluation::evaluate_and_cache;
use super::mode::ServingMode;
use super::pipeline::{Pipeline, Prepared};
use super::sources::{CacheSource, HitCounters};
use super::staging::{warm_positions, CacheJob, Staging};
use crate::cache_error::CacheError;
use crate::loader::{open_loader, Emulation, LoaderKind, LoaderOptions, StorageLoader};
use crate::postings_cache::{CacheCounters, Ensured, PostingsCache, Prefetch};
use crate::result_cache::ResultCache;

/// The most queries the `hybrid-prefetch` worker prepares ahead of the query threads: not a
/// tuning knob (the cache's rule decides how far it runs), a bound on the DRAM its prepared
/// queries take.
pub const MAX_PREPARED_AHEAD: usize = 4096;

/// Hybrid-mode jobs waiting for the worker, at most (a full queue drops new jobs).
const JOB_QUEUE: usize = 1024;

/// How to serve a queue of queries.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct ServeConfig {
    /// The configuration.
    pub mode: ServingMode,
    /// Query threads.
    pub threads: usize,
    /// What each query asks for.
    pub search: SearchOptions,
    /// Bytes per read when `base-prefetch` warms the page cache (the original study's small
    /// buffer).
    pub warm_read: usize,
    /// An emulated slow device under `base-prefetch`'s reads (the cache modes' loaders carry
    /// their own).
    #[serde(skip)]
    pub warm_emulation: Option<Emulation>,
}

/// One query's answer and cost.
#[derive(Debug, Clone, Serialize)]
pub struct QueryOutcome {
    /// From the moment a thread took the query to its answer.
    pub latency_ns: u64,
    /// Matches.
    pub total_hits: u64,
    /// The best documents, best first.
    pub docs: Vec<u32>,
    /// Decoding work.
    pub stats: SearchStats,
    /// Whether the result cache answered it.
    pub from_result_cache: bool,
}

/// A sample of how far the worker runs ahead of the query threads.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct LookaheadSample {
    /// Seconds since the run started.
    pub at_s: f64,
    /// Queries prepared but not yet taken by a query thread.
    pub ahead: i64,
    /// Segments in the adaptive window (0 outside `hybrid-prefetch`).
    pub window_segments: u64,
}

/// What a run measured.
#[derive(Debug, Clone, Serialize)]
pub struct ServeReport {
    /// The mode run.
    pub mode: String,
    /// Per query, in queue order.
    pub outcomes: Vec<QueryOutcome>,
    /// Wall time of the whole queue.
    pub wall_s: f64,
    /// Term reads served from the tier.
    pub cache_hits: u64,
    /// Term reads that had to come from storage (the original study's misses).
    pub cache_misses: u64,
    /// Of those, the reads a query thread made from storage itself (in `hybrid-prefetch`, a
    /// term evicted or bypassed before its query read it).
    pub query_misses: u64,
    /// Bytes the storage loaders read (cache fills, page-cache warming).
    pub loader_bytes: u64,
    /// Bytes the process read from the storage layer (`/proc/self/io` `read_bytes`: page-cache
    /// misses and direct I/O), when the kernel reports it.
    pub storage_read_bytes: Option<u64>,
    /// How far ahead the worker ran, over time.
    pub lookahead: Vec<LookaheadSample>,
    /// The cache's counters over the run (cache modes).
    pub cache: Option<CacheCounters>,
    /// Queries the result cache answered.
    pub result_cache_hits: u64,
}

impl ServeReport {
    /// Queries per second over the run.
    pub fn qps(&self) -> f64 {
        self.outcomes.len() as f64 / self.wall_s.max(1e-9)
    }

    /// Misses over term reads.
    pub fn miss_rate(&self) -> f64 {
        let total = self.cache_hits + self.cache_misses;
        if total == 0 {
            0.0
        } else {
            self.cache_misses as f64 / total as f64
        }
    }
}

/// An index served in one mode: the reader, its cache and the loaders, reused across runs.
pub struct Server<'r> {
    reader: &'r IndexReader,
    cache: Option<&'r PostingsCache>,
    /// Answers repeated queries before evaluation, when given.
    result_cache: Option<&'r ResultCache>,
    /// Per index segment: reads postings through a small buffer (`base-prefetch`).
    warmers: Vec<Box<dyn StorageLoader>>,
    config: ServeConfig,
}

/// The postings file of every segment of the index in `dir`.
pub fn postings_paths(
    dir: &Path,
    reader: &IndexReader,
) -> Result<Vec<std::path::PathBuf>, CacheError> {
    reader
        .segments()
        .iter()
        .map(|segment| {
            let meta = segment.meta();
            let file = meta.file(FileKind::Postings).ok_or_else(|| {
                CacheError::Config(format!("segment {} lists no postings file", meta.name))
            })?;
            Ok(meta.directory(dir).join(&file.name))
        })
        .collect()
}

impl<'r> Server<'r> {
    /// A server for the index in `dir`, open as `reader`; `cache` is required by the cache
    /// modes.
    pub fn new(
        dir: &Path,
        reader: &'r IndexReader,
        cache: Option<&'r PostingsCache>,
        config: ServeConfig,
    ) -> Result<Server<'r>, CacheError> {
        if config.mode.uses_cache() && cache.is_none() {
            return Err(CacheError::Config(format!(
                "mode {} needs a postings cache",
                config.mode
            )));
        }
        if config.threads == 0 {
            return Err(CacheError::Config("at least one query thread".into()));
        }
        let mut warmers = Vec::new();
        if let ServingMode::BasePrefetch { lookahead } = config.mode {
            if lookahead == 0 {
                return Err(CacheError::Config("lookahead must be at least 1".into()));
            }
            let options = LoaderOptions {
                chunk: config.warm_read.max(512),
                emulation: config.warm_emulation,
                ..LoaderOptions::default()
            };
            for path in postings_paths(dir, reader)? {
                warmers.push(open_loader(LoaderKind::Pread, &path, &options)?);
            }
        }
        Ok(Server {
            reader,
            cache,
            result_cache: None,
            warmers,
            config,
        })
    }

    /// Puts `result_cache` in front of evaluation: a query it holds is answered from it, any
    /// other is evaluated and offered to it.
    pub fn with_result_cache(mut self, result_cache: Option<&'r ResultCache>) -> Server<'r> {
        self.result_cache = result_cache;
        self
    }

    /// Serves `queries` once.
    pub fn run(&self, queries: &[Query]) -> Result<ServeReport, CacheError> {
        let n = queries.len();
        let pipeline = Pipeline::new(n);
        let counters = HitCounters::default();
        let outcomes: Mutex<Vec<Option<QueryOutcome>>> = Mutex::new(vec![None; n]);
        let samples = Mutex::new(Vec::new());
        let error: Mutex<Option<CacheError>> = Mutex::new(None);
        let loader_before = self.loader_bytes();
        let cache_before = self.cache.map(|c| c.counters());
        let io_before = read_bytes();
        let started = Instant::now();
        let (job_tx, job_rx) = crossbeam_channel::bounded(JOB_QUEUE);
        let fail = |e: CacheError| {
            error.lock().expect("error lock").get_or_insert(e);
            pipeline.fail();
        };
        let worker_done = AtomicU64::new(0);
        let (pipeline_ref, counters_ref, samples_ref, outcomes_ref) =
            (&pipeline, &counters, &samples, &outcomes);
        let fail = &fail;
        std::thread::scope(|scope| {
            let (pipeline, counters, samples, outcomes) =
                (pipeline_ref, counters_ref, samples_ref, outcomes_ref);
            match self.config.mode {
                ServingMode::Base => {}
                ServingMode::BasePrefetch { lookahead } => {
                    scope.spawn(move || {
                        if let Err(e) =
                            self.warm_ahead(queries, lookahead, pipeline, samples, started)
                        {
                            fail(e);
                        }
                    });
                }
                ServingMode::HybridPrefetch => {
                    scope.spawn(move || {
                        if let Err(e) =
                            self.cache_ahead(queries, pipeline, counters, samples, started)
                        {
                            fail(e);
                        }
                    });
                }
                ServingMode::Hybrid => {
                    let rx = job_rx.clone();
                    let done = &worker_done;
                    scope.spawn(move || {
                        if let Err(e) = self.cache_on_demand(rx, done) {
                            fail(e);
                        }
                    });
                }
            }
            let job_tx = &job_tx;
            let threads: Vec<_> = (0..self.config.threads)
                .map(|_| {
                    scope.spawn(|| {
                        if let Err(e) =
                            self.query_thread(queries, pipeline, counters, job_tx, outcomes)
                        {
                            fail(e);
                        }
                    })
                })
                .collect();
            for t in threads {
                let _ = t.join();
            }
            // Query threads are done: the hybrid worker drains what is queued and stops.
            worker_done.store(1, Ordering::Release);
            pipeline.fail();
        });
        drop(job_tx);
        let wall_s = started.elapsed().as_secs_f64();
        if let Some(e) = error.into_inner().expect("error lock") {
            return Err(e);
        }
        let outcomes = outcomes
            .into_inner()
            .expect("outcomes lock")
            .into_iter()
            .map(|o| o.ok_or_else(|| CacheError::Config("a query was not run".into())))
            .collect::<Result<Vec<_>, _>>()?;
        let cache = self.cache.map(|c| {
            let (after, before) = (c.counters(), cache_before.unwrap_or_default());
            CacheCounters {
                terms_loaded: after.terms_loaded - before.terms_loaded,
                bytes_loaded: after.bytes_loaded - before.bytes_loaded,
                evictions: after.evictions - before.evictions,
                waits: after.waits - before.waits,
                bypassed: after.bypassed - before.bypassed,
                positions_loaded: after.positions_loaded - before.positions_loaded,
            }
        });
        let result_cache_hits = outcomes.iter().filter(|o| o.from_result_cache).count() as u64;
        Ok(ServeReport {
            mode: self.config.mode.to_string(),
            outcomes,
            wall_s,
            cache_hits: counters.hits.load(Ordering::Relaxed),
            cache_misses: counters.misses.load(Ordering::Relaxed),
            query_misses: counters.query_misses.load(Ordering::Relaxed),
            loader_bytes: self.loader_bytes() - loader_before,
            storage_read_bytes: io_before
                .zip(read_bytes())
                .map(|(b, a)| a.saturating_sub(b)),
            lookahead: samples.into_inner().expect("samples lock"),
            cache,
            result_cache_hits,
        })
    }

    /// What reads postings from storage for the worker: the cache's loaders, or
    /// `base-prefetch`'s page-cache warmers; `None` in `base`.
    pub fn loader_description(&self) -> Option<String> {
        match self.cache {
            Some(cache) => cache.loader_description(),
            None => self.warmers.first().map(|l| l.describe()),
        }
    }

    fn loader_bytes(&self) -> u64 {
        let warm: u64 = self.warmers.iter().map(|l| l.stats().bytes_read).sum();
        warm + self.cache.map_or(0, |c| c.loader_bytes())
    }

    /// A query thread: takes queries in order, waits for their preparation where a worker
    /// prepares them, runs them.
    fn query_thread(
        &self,
        queries: &[Query],
        pipeline: &Pipeline,
        counters: &HitCounters,
        jobs: &crossbeam_channel::Sender<CacheJob>,
        outcomes: &Mutex<Vec<Option<QueryOutcome>>>,
    ) -> Result<(), CacheError> {
        let searcher = Searcher::new(self.reader);
        let mut own_terms = QueryTerms::default();
        let generation = self.reader.generation();
        while let Some(j) = pipeline.take(queries.len()) {
            let start = Instant::now();
            let options = &self.config.search;
            // The query as asked has its evaluated form's key; the form is built on a miss.
            let cached = self.result_cache.map(|cache| {
                let key = cache.key(generation, &queries[j], options);
                match cache.get(&key) {
                    Some(hit) => (cache, None, key, Some(hit)),
                    None => {
                        let query = cache.evaluated_form(&queries[j]);
                        let hit = cache.get_approximate(generation, &query, options);
                        (cache, Some(query), key, hit)
                    }
                }
            });
            let hit = cached.as_ref().and_then(|(_, _, _, hit)| hit.as_ref());
            let hit_ns = hit.map(|_| start.elapsed().as_nanos() as u64);
            let query = cached
                .as_ref()
                .and_then(|(_, query, _, _)| query.as_ref())
                .unwrap_or(&queries[j]);
            let prepared = match self.config.mode {
                ServingMode::Base | ServingMode::Hybrid => None,
                _ => match pipeline.wait_prepared(j) {
                    Some(p) => Some(p),
                    None => return Ok(()),
                },
            };
            if let (Some(hit), Some(latency_ns)) = (hit, hit_ns) {
                // The worker prepared it all the same (it does not see the result cache):
                // release what it reserved.
                if let (Some(cache), Some(p)) = (self.cache, &prepared) {
                    cache.finish_query(j as u64, &p.reserved);
                }
                outcomes.lock().expect("outcomes lock")[j] = Some(QueryOutcome {
                    latency_ns,
                    total_hits: hit.total_hits,
                    docs: hit.hits.iter().map(|h| h.doc).collect(),
                    stats: SearchStats::default(),
                    from_result_cache: true,
                });
                continue;
            }
            let terms = match &prepared {
                Some(p) if !p.is_nothing() => &p.terms,
                _ => {
                    own_terms.resolve_into(self.reader, query)?;
                    &own_terms
                }
            };
            let source = self.cache.map(|cache| CacheSource {
                cache,
                counters,
                jobs: (self.config.mode == ServingMode::Hybrid).then_some(jobs),
                count_hits: self.config.mode == ServingMode::Hybrid,
            });
            let source = source.as_ref().map(|s| s as &dyn PostingsSource);
            let result = match &cached {
                Some((cache, _, key, _)) => evaluate_and_cache(
                    &searcher, generation, query, terms, options, source, cache, key,
                )?,
                None => searcher.search_resolved(query, terms, options, source)?,
            };
            let latency_ns = start.elapsed().as_nanos() as u64;
            if let (Some(cache), Some(p), ServingMode::HybridPrefetch) =
                (self.cache, &prepared, self.config.mode)
            {
                cache.finish_query(j as u64, &p.reserved);
            }
            outcomes.lock().expect("outcomes lock")[j] = Some(QueryOutcome {
                latency_ns,
                total_hits: result.total_hits,
                docs: result.hits.iter().map(|h| h.doc).collect(),
                stats: result.stats,
                from_result_cache: false,
            });
        }
        Ok(())
    }

    /// Whether the result cache will answer `query` (its worker then prepares nothing for it;
    /// should the entry leave before the query runs, the query thread resolves the terms).
    fn answered_from_result_cache(&self, query: &Query) -> bool {
        self.result_cache.is_some_and(|cache| {
            let key = cache.key(self.reader.generation(), query, &self.config.search);
            cache.holds(&key)
        })
    }

    /// `base-prefetch`'s worker: resolves queued queries' terms and reads their postings
    /// through a small buffer, at most `lookahead` queries ahead of the query threads.
    fn warm_ahead(
        &self,
        queries: &[Query],
        lookahead: usize,
        pipeline: &Pipeline,
        samples: &Mutex<Vec<LookaheadSample>>,
        started: Instant,
    ) -> Result<(), CacheError> {
        for (j, query) in queries.iter().enumerate() {
            {
                let mut state = pipeline.lock();
                while !state.failed && j >= state.started + lookahead {
                    state = pipeline.wait(state);
                }
                if state.failed {
                    return Ok(());
                }
            }
            if self.answered_from_result_cache(query) {
                pipeline.publish(j, Prepared::nothing());
                self.sample(pipeline, samples, started);
                continue;
            }
            let terms = QueryTerms::resolve(self.reader, query)?;
            for (_, entries) in terms.iter() {
                for (segment, entry) in entries.iter().enumerate() {
                    if let Some(entry) = entry {
                        let start = HEADER_LEN as u64 + entry.info.postings_offset;
                        self.warmers[segment]
                            .read_range(start, entry.info.postings_bytes(), &mut |_, _| {})
                            .map_err(|source| CacheError::Load {
                                file: format!("index segment {segment}"),
                                source,
                            })?;
                    }
                }
            }
            warm_positions(self.reader, query, &terms)?;
            pipeline.publish(j, Prepared::new(terms, Vec::new()));
            self.sample(pipeline, samples, started);
        }
        Ok(())
    }

    /// `hybrid-prefetch`'s worker: resolves queued queries' terms and copies their postings
    /// into the cache, as far ahead as the cache's adaptive rule lets it.
    fn cache_ahead(
        &self,
        queries: &[Query],
        pipeline: &Pipeline,
        counters: &HitCounters,
        samples: &Mutex<Vec<LookaheadSample>>,
        started: Instant,
    ) -> Result<(), CacheError> {
        let cache = self.cache.expect("checked at creation");
        let mut staging = Staging::default();
        for (j, query) in queries.iter().enumerate() {
            {
                let mut state = pipeline.lock();
                while !state.failed && j >= state.started + MAX_PREPARED_AHEAD {
                    state = pipeline.wait(state);
                }
                if state.failed {
                    return Ok(());
                }
            }
            if self.answered_from_result_cache(query) {
                pipeline.publish(j, Prepared::nothing());
                self.sample(pipeline, samples, started);
                continue;
            }
            let terms = QueryTerms::resolve(self.reader, query)?;
            let prefetch = Prefetch {
                query: j as u64,
                adaptive: true,
            };
            let reserved =
                staging.stage_query(cache, self.reader, query, &terms, Some(prefetch), |e| {
                    match e {
                        Ensured::Hit(_) => counters.hits.fetch_add(1, Ordering::Relaxed),
                        Ensured::Loaded(_) => counters.misses.fetch_add(1, Ordering::Relaxed),
                        // The query thread counts the miss when it reads storage.
                        Ensured::Bypassed | Ensured::Inline => 0,
                    };
                })?;
            pipeline.publish(j, Prepared::new(terms, reserved));
            self.sample(pipeline, samples, started);
        }
        Ok(())
    }

    /// `hybrid`'s worker: caches the terms queries missed, until the query threads are done
    /// and the queue is empty.
    fn cache_on_demand(
        &self,
        jobs: crossbeam_channel::Receiver<CacheJob>,
        done: &AtomicU64,
    ) -> Result<(), CacheError> {
        let cache = self.cache.expect("checked at creation");
        let mut staging = Staging::default();
        loop {
            match jobs.recv_timeout(Duration::from_millis(5)) {
                Ok(job) => {
                    staging.ensure(cache, self.reader, job, None)?;
                }
                Err(_) if done.load(Ordering::Acquire) == 1 => return Ok(()),
                Err(_) => {}
            }
        }
    }

    fn sample(&self, pipeline: &Pipeline, samples: &Mutex<Vec<LookaheadSample>>, started: Instant) {
        let state = pipeline.lock();
        let ahead = state.prepared_upto as i64 - state.started as i64;
        drop(state);
        let window_segments = self.cache.map_or(0, |c| c.window().0);
        samples.lock().expect("samples lock").push(LookaheadSample {
            at_s: started.elapsed().as_secs_f64(),
            ahead,
            window_segments,
        });
    }
}

/// `read_bytes` of `/proc/self/io`: bytes this process caused to be fetched from storage.
fn read_bytes() -> Option<u64> {
    let io = std::fs::read_to_string("/proc/self/io").ok()?;
    io.lines()
        .find_map(|l| l.strip_prefix("read_bytes:"))
        .and_then(|v| v.trim().parse().ok())
}

/// Serves `queries` once in `config.mode` (a [`Server`] built and run once).
pub fn serve(
    dir: &Path,
    reader: &IndexReader,
    cache: Option<&PostingsCache>,
    queries: &[Query],
    config: ServeConfig,
) -> Result<ServeReport, CacheError> {
    Server::new(dir, reader, cache, config)?.run(queries)
}
