//! The serving modes under live traffic: requests arrive one at a time, wait in a bounded
//! queue for one of a fixed pool of query threads, and, in the prefetching modes, are handed
//! to the worker the moment they are admitted, so their postings load into the tier (or the
//! page cache) while they wait. This is the design's workload-aware prefetching driven by real
//! requests rather than a file of queries.
//!
//! - Admission is bounded: at most `queue_depth` requests wait; one more is refused at once
//!   with [`LiveError::Overloaded`] (the server's 503), never queued without bound.
//! - Every request gets a sequence number in admission order; query threads take requests in
//!   that order and the worker prepares them in that order, as the batch pipeline does, so the
//!   adaptive lookahead's window means the same thing.
//! - A request carries a cancellation flag: its [`Ticket`] raises it when dropped (the client
//!   went away, or the server gave up at the deadline). A queued request whose flag is up is
//!   answered without running; a running one stops at its next block decode (see
//!   `apcache_index::search::CancelScope`).
//! - A panic while evaluating is caught, answered as [`LiveError::Panicked`] and counted; the
//!   thread goes on serving.

use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use apcache_index::format::HEADER_LEN;
use apcache_index::query::Query;
use apcache_index::search::{
    CancelScope, CollectionStats, IndexReader, PostingsSource, QueryTerms, SearchOptions,
    SearchResult, SearchStats, Searcher,
};
use apcache_index::IndexError;

use super::cached_evaluation::evaluate_and_cache;
use super::mode::ServingMode;
use super::pipeline::Prepared;
use super::serve::postings_paths;
use super::sources::{CacheSource, HitCounters};
use super::staging::{warm_positions, CacheJob, Staging};
use crate::cache_error::CacheError;
use crate::loader::{open_loader, LoaderKind, LoaderOptions, StorageLoader};
use crate::postings_cache::{CacheCounters, Ensured, Prefetch};
use crate::result_cache::{ResultCacheCounters, ResultKey};
use crate::stack::ServingStack;

/// Hybrid-mode jobs waiting for the worker, at most (a full queue drops new jobs).
const HYBRID_JOBS: usize = 1024;

/// Jobs in a row without a miss after which queued jobs skip the prefetch worker (until the
/// next miss). Prefetching saves a query at most the loads it would wait for; after this many
/// queries without one, the expected saving per query is below 1/`QUIET_JOBS` of a load
/// (about a microsecond for a load of a few hundred), well under what the hand-off to the
/// worker and back costs in thread wake-ups (tens of microseconds on a busy machine).
const QUIET_JOBS: u64 = 256;

/// How a live service runs.
#[derive(Debug, Clone, Copy)]
pub struct LiveConfig {
    /// Query threads (a fixed pool).
    pub threads: usize,
    /// Requests that may wait for a query thread; one more is refused.
    pub queue_depth: usize,
}

/// A request: a parsed query and what to compute.
#[derive(Debug, Clone)]
pub struct LiveRequest {
    /// The query.
    pub query: Query,
    /// Top k, counting, scoring.
    pub options: SearchOptions,
    /// When the answer stops being useful: a request still queued then is not run.
    pub deadline: Option<Instant>,
    /// Collection statistics to score with instead of the index's own: the sums over every
    /// shard of a sharded index, so that this shard's scores equal one index's
    /// ([`Searcher::with_collection_stats`]). Such a request bypasses the result cache, whose
    /// answers are scored with the index's own statistics.
    pub collection: Option<CollectionStats>,
}

/// A request's answer.
#[derive(Debug, Clone)]
pub struct LiveAnswer {
    /// The hits, the count and the work.
    pub result: SearchResult,
    /// Time from admission to a query thread taking it (waiting for its postings included).
    pub queued: Duration,
    /// Time spent evaluating.
    pub evaluated: Duration,
    /// Whether the answer came from the result cache (without evaluation).
    pub from_cache: bool,
    /// Whether the answer is approximate: the stored answer of a subset of the query's terms
    /// (`partial2` matching), not what evaluation would return.
    pub approximate: bool,
}

/// Why a request got no answer.
#[derive(Debug, thiserror::Error)]
pub enum LiveError {
    /// The queue is full.
    #[error("the request queue is full ({0} waiting); retry later")]
    Overloaded(usize),
    /// The deadline passed before or while the query ran.
    #[error("the query ran past its deadline and was cancelled")]
    TimedOut,
    /// The request was cancelled (its client went away).
    #[error("the request was cancelled")]
    Cancelled,
    /// Evaluation panicked (a bug); the service goes on.
    #[error("internal error while evaluating the query: {0}")]
    Panicked(String),
    /// The index could not be read.
    #[error(transparent)]
    Index(#[from] IndexError),
    /// The postings cache failed.
    #[error(transparent)]
    Cache(#[from] CacheError),
    /// The service is shutting down.
    #[error("the service is shutting down")]
    ShuttingDown,
}

impl LiveError {
    /// Whether the request failed on damaged index bytes (see [`IndexError::is_damage`]).
    pub fn is_damage(&self) -> bool {
        match self {
            LiveError::Index(e) | LiveError::Cache(CacheError::Index(e)) => e.is_damage(),
            _ => false,
        }
    }
}

/// Counters of a live service since it started.
#[derive(Debug, Clone, Copy, Default)]
pub struct LiveCounters {
    /// Requests admitted into the queue.
    pub admitted: u64,
    /// Requests refused because the queue was full.
    pub rejected: u64,
    /// Requests answered with results.
    pub completed: u64,
    /// Requests that timed out (queued past their deadline, or cancelled at it).
    pub timed_out: u64,
    /// Requests cancelled by their client.
    pub cancelled: u64,
    /// Panics caught in query threads or the worker.
    pub panics: u64,
    /// Requests answered with an error of the index or the cache (damaged bytes, a failed
    /// storage read).
    pub failed: u64,
    /// Requests that failed on damaged index bytes: a term's metadata or postings (these
    /// are counted in `failed` too), or a stored document ([`LiveService::note_damage`]).
    pub damaged: u64,
    /// Terms the cache could not load (a failed storage read, damaged bytes); the queries that
    /// needed them read them from the postings file instead, and fail only if that fails.
    pub load_errors: u64,
    /// Requests answered by the result cache, without being queued.
    pub result_cache_hits: u64,
    /// The result cache's own counters, when there is one.
    pub result_cache: Option<ResultCacheCounters>,
    /// Requests waiting now.
    pub queued: u64,
    /// Term reads served from the tier.
    pub cache_hits: u64,
    /// Term reads that had to come from storage.
    pub cache_misses: u64,
    /// The postings cache's own counters (cache modes).
    pub cache: Option<CacheCounters>,
    /// Segments in the adaptive lookahead window (hybrid-prefetch).
    pub window_segments: u64,
    /// Segments of the cache in all (cache modes).
    pub cache_segments: u64,
    /// Bytes the storage loaders read.
    pub loader_bytes: u64,
}

type Reply = Box<dyn FnOnce(Result<LiveAnswer, LiveError>) + Send>;

/// Where the preparation of a job stands.
///
/// In `hybrid-prefetch` the worker prepares queued jobs in admission order, ahead of the
/// query threads. A job admitted while a query thread is idle never goes to the worker: the
/// thread takes it at once, so there is nothing to run ahead of, and the hand-off to the
/// worker and back would only add thread wake-ups to its latency (on a loaded machine they
/// cost more than a warm cache saves). The thread makes its terms ready itself, as a plain
/// cache user (no reservation, no lookahead window, so it never waits for queued jobs). A
/// query thread that takes a queued job the worker has not started, when every earlier
/// queued job is prepared, also prepares it itself (`Claimed`); the worker then waits for
/// that preparation before it moves on, so queued jobs are still prepared in order and a
/// preparation waits for room only on earlier jobs, which always finish.
enum Preparation {
    /// Nobody has started it.
    Pending,
    /// The worker is preparing it.
    Preparing,
    /// The query thread that runs it is preparing it.
    Claimed,
    Ready(Prepared),
    /// Not prepared (cancelled or past its deadline when the worker reached it, or the
    /// worker failed on it); the query thread resolves the terms itself if it still runs it.
    Skipped,
}

struct Job {
    seq: u64,
    /// The job's place among the jobs sent to the prefetch worker; `None` for a job that was
    /// not (no worker, or a query thread was idle to take it at once).
    worker_turn: Option<u64>,
    request: LiveRequest,
    /// The request's key in the result cache, when there is one (its query is then in the
    /// form the cache evaluates).
    result_key: Option<ResultKey>,
    admitted: Instant,
    cancel: Arc<AtomicBool>,
    preparation: Mutex<Preparation>,
    prepared: Condvar,
    reply: Mutex<Option<Reply>>,
}

impl Job {
    fn is_cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }

    fn past_deadline(&self) -> bool {
        self.request.deadline.is_some_and(|d| Instant::now() >= d)
    }

    fn publish(&self, preparation: Preparation) {
        *self.preparation.lock().expect("job lock") = preparation;
        self.prepared.notify_all();
    }

    /// The job's preparation, once published. With `prepare`, a job nobody has started is
    /// prepared here, by the caller, instead of waiting for the worker.
    fn wait_prepared(&self, prepare: Option<&mut dyn FnMut() -> Preparation>) -> Option<Prepared> {
        let mut state = self.preparation.lock().expect("job lock");
        if let (Preparation::Pending, Some(prepare)) = (&*state, prepare) {
            *state = Preparation::Claimed;
            drop(state);
            let preparation = prepare();
            self.publish(preparation);
            state = self.preparation.lock().expect("job lock");
        }
        loop {
            match std::mem::replace(&mut *state, Preparation::Skipped) {
                Preparation::Ready(p) => return Some(p),
                Preparation::Skipped => return None,
                waiting => {
                    *state = waiting;
                    state = self.prepared.wait(state).expect("job lock");
                }
            }
        }
    }

    /// Marks the job as being prepared by the worker, unless a query thread has claimed it;
    /// then waits until that thread has published its preparation and returns false.
    fn start_preparing(&self) -> bool {
        let mut state = self.preparation.lock().expect("job lock");
        loop {
            match &*state {
                Preparation::Pending => {
                    *state = Preparation::Preparing;
                    return true;
                }
                Preparation::Claimed => {
                    state = self.prepared.wait(state).expect("job lock");
                }
                _ => return false,
            }
        }
    }

    fn answer(&self, outcome: Result<LiveAnswer, LiveError>) {
        if let Some(reply) = self.reply.lock().expect("job lock").take() {
            reply(outcome);
        }
    }
}

/// A request's hold on its place: dropping it cancels the request if it is still queued or
/// running (a closed connection, a deadline given up on).
pub struct Ticket {
    cancel: Arc<AtomicBool>,
}

impl Ticket {
    /// Cancels the request now.
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        self.cancel();
    }
}

struct Queue {
    jobs: VecDeque<Arc<Job>>,
    /// Jobs taken by query threads (they are taken in sequence order).
    started: u64,
    /// Query threads waiting for a job.
    idle: usize,
    /// Jobs sent to the prefetch worker so far.
    sent_to_worker: u64,
    shutdown: bool,
}

#[derive(Default)]
struct Tallies {
    admitted: AtomicU64,
    rejected: AtomicU64,
    completed: AtomicU64,
    timed_out: AtomicU64,
    cancelled: AtomicU64,
    panics: AtomicU64,
    failed: AtomicU64,
    damaged: AtomicU64,
    load_errors: AtomicU64,
    result_cache_hits: AtomicU64,
}

struct Shared {
    stack: Arc<ServingStack>,
    config: LiveConfig,
    queue: Mutex<Queue>,
    /// Signalled when a job is queued, one idle query thread at a time (waking them all would
    /// cost every idle thread a context switch per request).
    job_queued: Condvar,
    /// Signalled when a query thread takes a job (`base-prefetch`'s worker waits on it for
    /// room to run ahead), and at shutdown.
    changed: Condvar,
    next_seq: AtomicU64,
    /// The turn ([`Job::worker_turn`]) of the job the prefetch worker takes next: every job
    /// sent before it is prepared (or skipped). Of the jobs sent to the worker, only that one
    /// may be claimed by a query thread, so that they are prepared one at a time and in order.
    worker_next: AtomicU64,
    /// Jobs for the prefetch worker, in admission order (prefetching modes).
    to_worker: Option<crossbeam_channel::Sender<Arc<Job>>>,
    /// Terms queries missed, for the hybrid worker.
    hybrid_jobs: Option<crossbeam_channel::Sender<CacheJob>>,
    counters: HitCounters,
    /// Jobs finished since the last miss (a term read from storage, or loaded into the tier),
    /// and the miss count seen then: while the cache has not missed for [`QUIET_JOBS`] jobs,
    /// queued jobs skip the prefetch worker.
    quiet_jobs: AtomicU64,
    seen_misses: AtomicU64,
    tallies: Tallies,
    /// Per index segment: reads postings through a small buffer (`base-prefetch`).
    warmers: Vec<Box<dyn StorageLoader>>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().expect("queue lock")
    }

    fn reader(&self) -> &IndexReader {
        &self.stack.reader
    }
}

/// A live query service over one assembled [`ServingStack`].
pub struct LiveService {
    shared: Arc<Shared>,
    threads: Mutex<Vec<JoinHandle<()>>>,
}

impl LiveService {
    /// Starts the query threads and, in the prefetching and hybrid modes, the worker.
    pub fn start(stack: Arc<ServingStack>, config: LiveConfig) -> Result<LiveService, CacheError> {
        if config.threads == 0 {
            return Err(CacheError::Config("at least one query thread".into()));
        }
        if config.queue_depth == 0 {
            return Err(CacheError::Config("a queue depth of at least 1".into()));
        }
        let mode = stack.config.mode;
        if mode.uses_cache() && stack.cache.is_none() {
            return Err(CacheError::Config(format!(
                "mode {mode} needs a postings cache"
            )));
        }
        let mut warmers = Vec::new();
        if let ServingMode::BasePrefetch { .. } = mode {
            let options = LoaderOptions {
                chunk: stack.config.loader_options.chunk.max(512),
                emulation: stack.config.loader_options.emulation,
                ..LoaderOptions::default()
            };
            for path in postings_paths(&stack.dir, &stack.reader)? {
                warmers.push(open_loader(LoaderKind::Pread, &path, &options)?);
            }
        }
        let (to_worker, from_admission) = match mode {
            ServingMode::BasePrefetch { .. } | ServingMode::HybridPrefetch => {
                let (tx, rx) = crossbeam_channel::unbounded();
                (Some(tx), Some(rx))
            }
            _ => (None, None),
        };
        let (hybrid_jobs, hybrid_rx) = match mode {
            ServingMode::Hybrid => {
                let (tx, rx) = crossbeam_channel::bounded(HYBRID_JOBS);
                (Some(tx), Some(rx))
            }
            _ => (None, None),
        };
        let shared = Arc::new(Shared {
            stack,
            config,
            queue: Mutex::new(Queue {
                jobs: VecDeque::new(),
                started: 0,
                idle: 0,
                sent_to_worker: 0,
                shutdown: false,
            }),
            job_queued: Condvar::new(),
            changed: Condvar::new(),
            next_seq: AtomicU64::new(0),
            worker_next: AtomicU64::new(0),
            to_worker,
            hybrid_jobs,
            counters: HitCounters::default(),
            quiet_jobs: AtomicU64::new(0),
            seen_misses: AtomicU64::new(0),
            tallies: Tallies::default(),
            warmers,
        });
        let mut threads = Vec::new();
        for i in 0..config.threads {
            let shared = shared.clone();
            threads.push(spawn(format!("apcache-query-{i}"), move || {
                query_thread(&shared)
            }));
        }
        if let Some(rx) = from_admission {
            let shared = shared.clone();
            threads.push(spawn("apcache-prefetch".into(), move || {
                prefetch_worker(&shared, rx)
            }));
        }
        if let Some(rx) = hybrid_rx {
            let shared = shared.clone();
            threads.push(spawn("apcache-hybrid".into(), move || {
                hybrid_worker(&shared, rx)
            }));
        }
        Ok(LiveService {
            shared,
            threads: Mutex::new(threads),
        })
    }

    /// The served index.
    pub fn reader(&self) -> &IndexReader {
        self.shared.reader()
    }

    /// The assembled stack.
    pub fn stack(&self) -> &ServingStack {
        &self.shared.stack
    }

    /// Admits `request`: its terms go to the prefetch worker at once, and `reply` is called
    /// with the answer from a query thread. Refused at once when the queue is full or the
    /// service is stopping. Dropping the returned [`Ticket`] cancels the request.
    pub fn submit(
        &self,
        request: LiveRequest,
        reply: impl FnOnce(Result<LiveAnswer, LiveError>) + Send + 'static,
    ) -> Result<Ticket, LiveError> {
        let shared = &self.shared;
        let cancel = Arc::new(AtomicBool::new(false));
        // A result cache answers before the queue.
        let mut request = request;
        let result_key = match shared.stack.result_cache.as_ref() {
            Some(cache) if request.collection.is_none() => {
                // The query as asked has its evaluated form's key; the form replaces it on a
                // miss, to be evaluated (or answered approximately) and stored.
                let generation = shared.reader().generation();
                let key = cache.key(generation, &request.query, &request.options);
                let exact = cache.get(&key);
                let approximate = exact.is_none();
                let found = exact.or_else(|| {
                    request.query = cache.evaluated_form(&request.query);
                    cache.get_approximate(generation, &request.query, &request.options)
                });
                if let Some(hit) = found {
                    shared
                        .tallies
                        .result_cache_hits
                        .fetch_add(1, Ordering::Relaxed);
                    reply(Ok(LiveAnswer {
                        result: SearchResult {
                            total_hits: hit.total_hits,
                            total_hits_exact: hit.total_hits_exact,
                            hits: hit.hits,
                            stats: SearchStats::default(),
                        },
                        queued: Duration::ZERO,
                        evaluated: Duration::ZERO,
                        from_cache: true,
                        approximate,
                    }));
                    return Ok(Ticket { cancel });
                }
                Some(key)
            }
            _ => None,
        };
        let mut queue = shared.lock();
        if queue.shutdown {
            return Err(LiveError::ShuttingDown);
        }
        if queue.jobs.len() >= shared.config.queue_depth {
            shared.tallies.rejected.fetch_add(1, Ordering::Relaxed);
            return Err(LiveError::Overloaded(queue.jobs.len()));
        }
        // Sequence numbers are given under the queue lock, so the queue, the worker's channel
        // and the numbers agree on the order. A job an idle query thread takes at once skips
        // the worker.
        let worker_turn = match &shared.to_worker {
            Some(_)
                if queue.idle <= queue.jobs.len()
                    && shared.quiet_jobs.load(Ordering::Relaxed) < QUIET_JOBS =>
            {
                queue.sent_to_worker += 1;
                Some(queue.sent_to_worker - 1)
            }
            _ => None,
        };
        let job = Arc::new(Job {
            seq: shared.next_seq.fetch_add(1, Ordering::Relaxed),
            worker_turn,
            request,
            result_key,
            admitted: Instant::now(),
            cancel: cancel.clone(),
            preparation: Mutex::new(Preparation::Pending),
            prepared: Condvar::new(),
            reply: Mutex::new(Some(Box::new(reply))),
        });
        if let (Some(tx), Some(_)) = (&shared.to_worker, worker_turn) {
            // The worker lives as long as the service; a send fails only after shutdown.
            if tx.send(job.clone()).is_err() {
                job.publish(Preparation::Skipped);
            }
        }
        queue.jobs.push_back(job);
        // A busy thread looks at the queue before it waits (under this lock), so only an
        // idle one needs waking.
        let wake = queue.idle > 0;
        drop(queue);
        shared.tallies.admitted.fetch_add(1, Ordering::Relaxed);
        if wake {
            shared.job_queued.notify_one();
        }
        Ok(Ticket { cancel })
    }

    /// The service's counters now.
    pub fn counters(&self) -> LiveCounters {
        let shared = &self.shared;
        let t = &shared.tallies;
        let cache = shared.stack.cache.as_ref();
        let warm: u64 = shared.warmers.iter().map(|l| l.stats().bytes_read).sum();
        LiveCounters {
            admitted: t.admitted.load(Ordering::Relaxed),
            rejected: t.rejected.load(Ordering::Relaxed),
            completed: t.completed.load(Ordering::Relaxed),
            timed_out: t.timed_out.load(Ordering::Relaxed),
            cancelled: t.cancelled.load(Ordering::Relaxed),
            panics: t.panics.load(Ordering::Relaxed),
            failed: t.failed.load(Ordering::Relaxed),
            damaged: t.damaged.load(Ordering::Relaxed),
            load_errors: t.load_errors.load(Ordering::Relaxed),
            result_cache_hits: t.result_cache_hits.load(Ordering::Relaxed),
            result_cache: shared.stack.result_cache.as_ref().map(|c| c.counters()),
            queued: shared.lock().jobs.len() as u64,
            cache_hits: shared.counters.hits.load(Ordering::Relaxed),
            cache_misses: shared.counters.misses.load(Ordering::Relaxed),
            cache: cache.map(|c| c.counters()),
            window_segments: cache.map_or(0, |c| c.window().0),
            cache_segments: cache.map_or(0, |c| u64::from(c.total_segments())),
            loader_bytes: warm + cache.map_or(0, |c| c.loader_bytes()),
        }
    }

    /// Counts a timeout the caller gave up on (the request itself is cancelled by dropping
    /// its ticket).
    pub fn note_timeout(&self) {
        self.shared
            .tallies
            .timed_out
            .fetch_add(1, Ordering::Relaxed);
    }

    /// Counts a request that failed on damaged bytes outside evaluation (a hit's stored
    /// document, read by the caller).
    pub fn note_damage(&self) {
        self.shared.tallies.damaged.fetch_add(1, Ordering::Relaxed);
    }

    /// Stops taking requests, lets the query threads finish what is queued, and joins every
    /// thread.
    pub fn shutdown(&self) {
        self.shared.lock().shutdown = true;
        self.shared.job_queued.notify_all();
        self.shared.changed.notify_all();
        let threads = std::mem::take(&mut *self.threads.lock().expect("threads lock"));
        for t in threads {
            let _ = t.join();
        }
    }
}

impl Drop for LiveService {
    fn drop(&mut self) {
        self.shutdown();
    }
}

fn spawn(name: String, body: impl FnOnce() + Send + 'static) -> JoinHandle<()> {
    std::thread::Builder::new()
        .name(name)
        .spawn(body)
        .expect("spawn a serving thread")
}

/// The text of a caught panic.
fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "panic".to_string())
}

/// A query thread: takes jobs in order, waits for their preparation where a worker prepares
/// them, runs them, answers.
fn query_thread(shared: &Shared) {
    let searcher = Searcher::new(shared.reader());
    let mut own_terms = QueryTerms::default();
    let mode = shared.stack.config.mode;
    let mut staging = Staging::default();
    loop {
        let job = {
            let mut queue = shared.lock();
            loop {
                if let Some(job) = queue.jobs.pop_front() {
                    queue.started = job.seq + 1;
                    break job;
                }
                if queue.shutdown {
                    return;
                }
                queue.idle += 1;
                queue = shared.job_queued.wait(queue).expect("queue lock");
                queue.idle -= 1;
            }
        };
        if let ServingMode::BasePrefetch { .. } = mode {
            // The worker may be waiting for room to run ahead.
            shared.changed.notify_all();
        }
        let queued = job.admitted.elapsed();
        let prepared = match (mode, job.worker_turn) {
            (ServingMode::Base | ServingMode::Hybrid, _) => None,
            // Taken at once: nothing to prepare ahead of (base-prefetch reads as it goes).
            (ServingMode::BasePrefetch { .. }, None) => None,
            (ServingMode::HybridPrefetch, None) => {
                preparation(shared, &job, Ahead::No, &mut staging).ready()
            }
            (ServingMode::HybridPrefetch, Some(turn))
                if shared.worker_next.load(Ordering::Acquire) == turn =>
            {
                job.wait_prepared(Some(&mut || {
                    preparation(shared, &job, Ahead::Yes, &mut staging)
                }))
            }
            _ => job.wait_prepared(None),
        };
        let outcome = run_job(shared, &searcher, &mut own_terms, &job, prepared.as_ref());
        if let (Some(cache), Some(p)) = (shared.stack.cache.as_ref(), &prepared) {
            cache.finish_query(job.seq, &p.reserved);
        }
        let misses = shared.counters.misses.load(Ordering::Relaxed);
        if shared.seen_misses.swap(misses, Ordering::Relaxed) == misses {
            shared.quiet_jobs.fetch_add(1, Ordering::Relaxed);
        } else {
            shared.quiet_jobs.store(0, Ordering::Relaxed);
        }
        let tally = match &outcome {
            Ok(_) => &shared.tallies.completed,
            Err(LiveError::TimedOut) => &shared.tallies.timed_out,
            Err(LiveError::Cancelled) => &shared.tallies.cancelled,
            Err(LiveError::Panicked(_)) => &shared.tallies.panics,
            Err(_) => &shared.tallies.failed,
        };
        tally.fetch_add(1, Ordering::Relaxed);
        if outcome.as_ref().is_err_and(LiveError::is_damage) {
            shared.tallies.damaged.fetch_add(1, Ordering::Relaxed);
        }
        job.answer(outcome.map(|(result, evaluated)| LiveAnswer {
            result,
            queued,
            evaluated,
            from_cache: false,
            approximate: false,
        }));
    }
}

/// Runs one job, unless it was cancelled or is past its deadline.
fn run_job(
    shared: &Shared,
    searcher: &Searcher<'_>,
    own_terms: &mut QueryTerms,
    job: &Job,
    prepared: Option<&Prepared>,
) -> Result<(SearchResult, Duration), LiveError> {
    if job.past_deadline() {
        return Err(LiveError::TimedOut);
    }
    if job.is_cancelled() {
        return Err(LiveError::Cancelled);
    }
    let started = Instant::now();
    let _scope = CancelScope::enter(job.cancel.clone());
    let mode = shared.stack.config.mode;
    let evaluated = catch_unwind(AssertUnwindSafe(|| -> Result<SearchResult, LiveError> {
        // Tests inject a panic or a delay here (`failpoints` feature).
        fail::fail_point!("apcache::live::evaluate");
        let terms = match prepared {
            Some(p) => &p.terms,
            None => {
                own_terms.resolve_into(shared.reader(), &job.request.query)?;
                &*own_terms
            }
        };
        let source = shared.stack.cache.as_ref().map(|cache| CacheSource {
            cache,
            counters: &shared.counters,
            jobs: shared.hybrid_jobs.as_ref(),
            count_hits: mode == ServingMode::Hybrid,
        });
        let source = source.as_ref().map(|s| s as &dyn PostingsSource);
        let (query, options) = (&job.request.query, &job.request.options);
        // A shard's request scores with the whole collection's statistics: a searcher of its
        // own (cheap: the scorer's norm table of 256 entries).
        let shard_searcher = job
            .request
            .collection
            .clone()
            .map(|stats| Searcher::with_collection_stats(shared.reader(), stats));
        let searcher = shard_searcher.as_ref().unwrap_or(searcher);
        Ok(
            match (shared.stack.result_cache.as_ref(), &job.result_key) {
                (Some(cache), Some(key)) => evaluate_and_cache(
                    searcher,
                    shared.reader().generation(),
                    query,
                    terms,
                    options,
                    source,
                    cache,
                    key,
                )?,
                _ => searcher.search_resolved(query, terms, options, source)?,
            },
        )
    }));
    match evaluated {
        Ok(Ok(result)) => Ok((result, started.elapsed())),
        Ok(Err(LiveError::Index(IndexError::Cancelled))) => Err(if job.past_deadline() {
            LiveError::TimedOut
        } else {
            LiveError::Cancelled
        }),
        Ok(Err(e)) => Err(e),
        Err(panic) => Err(LiveError::Panicked(panic_text(panic.as_ref()))),
    }
}

/// The prefetching modes' worker: takes admitted jobs in order and prepares each: its terms
/// looked up, and its postings copied into the tier (`hybrid-prefetch`, as far ahead as the
/// cache's adaptive rule allows) or read into the page cache (`base-prefetch`, at most
/// `lookahead` jobs ahead of the query threads).
fn prefetch_worker(shared: &Shared, jobs: crossbeam_channel::Receiver<Arc<Job>>) {
    let mut staging = Staging::default();
    loop {
        let job = match jobs.recv_timeout(Duration::from_millis(50)) {
            Ok(job) => job,
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => {
                if shared.lock().shutdown && jobs.is_empty() {
                    return;
                }
                continue;
            }
            Err(crossbeam_channel::RecvTimeoutError::Disconnected) => return,
        };
        if let ServingMode::BasePrefetch { lookahead } = shared.stack.config.mode {
            let mut queue = shared.lock();
            while !queue.shutdown && job.seq >= queue.started + lookahead as u64 {
                queue = shared.changed.wait(queue).expect("queue lock");
            }
        }
        // Unless the query thread that took it first prepared it.
        if job.start_preparing() {
            let preparation = preparation(shared, &job, Ahead::Yes, &mut staging);
            job.publish(preparation);
        }
        let turn = job
            .worker_turn
            .expect("the worker gets only jobs with a turn");
        shared.worker_next.store(turn + 1, Ordering::Release);
    }
}

/// Whether a job is prepared ahead of its query thread.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ahead {
    /// Queued: its terms are reserved and enter the lookahead window, whose adaptive rule
    /// may make the preparation wait for room.
    Yes,
    /// About to run on the thread preparing it: its terms are only made ready, and room is
    /// waited for only on running queries.
    No,
}

impl Preparation {
    fn ready(self) -> Option<Prepared> {
        match self {
            Preparation::Ready(prepared) => Some(prepared),
            _ => None,
        }
    }
}

/// Prepares `job` unless it is cancelled or past its deadline: the preparation to publish.
/// A failure leaves the job to read from storage what could not be staged (and to meet the
/// same error there if it is the index's); it is counted.
fn preparation(shared: &Shared, job: &Job, ahead: Ahead, staging: &mut Staging) -> Preparation {
    if job.is_cancelled() || job.past_deadline() {
        return Preparation::Skipped;
    }
    match catch_unwind(AssertUnwindSafe(|| prepare(shared, job, ahead, staging))) {
        Ok(Ok(p)) => Preparation::Ready(p),
        Ok(Err(_)) => {
            shared.tallies.load_errors.fetch_add(1, Ordering::Relaxed);
            Preparation::Skipped
        }
        Err(_) => {
            shared.tallies.panics.fetch_add(1, Ordering::Relaxed);
            Preparation::Skipped
        }
    }
}

/// Prepares one job (see [`prefetch_worker`]).
fn prepare(
    shared: &Shared,
    job: &Job,
    ahead: Ahead,
    staging: &mut Staging,
) -> Result<Prepared, LiveError> {
    let reader = shared.reader();
    let query = &job.request.query;
    let terms = QueryTerms::resolve(reader, query)?;
    let mut reserved = Vec::new();
    match (shared.stack.config.mode, shared.stack.cache.as_ref()) {
        (ServingMode::HybridPrefetch, Some(cache)) => {
            let prefetch = (ahead == Ahead::Yes).then_some(Prefetch {
                query: job.seq,
                adaptive: true,
            });
            let staged = staging.stage_query(cache, reader, query, &terms, prefetch, |e| {
                match e {
                    Ensured::Hit(_) => shared.counters.hits.fetch_add(1, Ordering::Relaxed),
                    Ensured::Loaded(_) => shared.counters.misses.fetch_add(1, Ordering::Relaxed),
                    // The query thread counts the miss when it reads storage.
                    Ensured::Bypassed | Ensured::Inline => 0,
                };
            })?;
            if ahead == Ahead::Yes {
                reserved = staged;
            }
        }
        _ => {
            for (_, entries) in terms.iter() {
                for (segment, entry) in entries.iter().enumerate() {
                    let Some(entry) = entry else { continue };
                    let start = HEADER_LEN as u64 + entry.info.postings_offset;
                    shared.warmers[segment]
                        .read_range(start, entry.info.postings_bytes(), &mut |_, _| {})
                        .map_err(|source| CacheError::Load {
                            file: format!("index segment {segment}"),
                            source,
                        })?;
                }
            }
            warm_positions(reader, query, &terms)?;
        }
    }
    Ok(Prepared::new(terms, reserved))
}

/// `hybrid`'s worker: caches the terms queries missed, until the service stops.
fn hybrid_worker(shared: &Shared, jobs: crossbeam_channel::Receiver<CacheJob>) {
    let Some(cache) = shared.stack.cache.as_ref() else {
        return;
    };
    let reader = shared.reader();
    let mut staging = Staging::default();
    loop {
        match jobs.recv_timeout(Duration::from_millis(50)) {
            Ok(job) => {
                let ensured = catch_unwind(AssertUnwindSafe(|| {
                    staging.ensure(cache, reader, job, None)
                }));
                match ensured {
                    Err(_) => shared.tallies.panics.fetch_add(1, Ordering::Relaxed),
                    Ok(Err(_)) => shared.tallies.load_errors.fetch_add(1, Ordering::Relaxed),
                    Ok(Ok(_)) => 0,
                };
            }
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => {
                if shared.lock().shutdown {
                    return;
                }
            }
            Err(crossbeam_channel::RecvTimeoutError::Disconnected) => return,
        }
    }
}
