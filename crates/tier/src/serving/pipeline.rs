//! The queue that query threads and the worker share: which queries are taken, which are
//! prepared (their terms looked up, and for the prefetching modes, their postings staged),
//! and which are finished.

use std::sync::{Condvar, Mutex, MutexGuard};

use apcache_index::search::QueryTerms;

use crate::postings_cache::Part;

/// A prepared query: its resolved terms, and the terms the worker reserved for it.
#[derive(Debug, Default)]
pub(super) struct Prepared {
    pub terms: QueryTerms,
    pub reserved: Vec<(usize, u64, Part)>,
    /// Nothing was prepared: the result cache held the query's answer when the worker
    /// reached it.
    pub nothing: bool,
}

impl Prepared {
    /// A query's preparation.
    pub fn new(terms: QueryTerms, reserved: Vec<(usize, u64, Part)>) -> Prepared {
        Prepared {
            terms,
            reserved,
            nothing: false,
        }
    }

    /// No preparation (the result cache holds the answer).
    pub fn nothing() -> Prepared {
        Prepared {
            terms: QueryTerms::default(),
            reserved: Vec::new(),
            nothing: true,
        }
    }

    /// Whether this is [`Prepared::nothing`].
    pub fn is_nothing(&self) -> bool {
        self.nothing
    }
}

pub(super) struct PipelineState {
    /// `prepared[j]`: set by the worker, taken by the query thread that runs query `j`.
    pub prepared: Vec<Option<Prepared>>,
    /// Queries the worker has prepared (it prepares them in order).
    pub prepared_upto: usize,
    /// Queries taken by query threads (they are taken in order).
    pub started: usize,
    /// Set when a thread failed: everyone stops.
    pub failed: bool,
}

/// The shared queue.
pub(super) struct Pipeline {
    state: Mutex<PipelineState>,
    changed: Condvar,
}

impl Pipeline {
    pub fn new(queries: usize) -> Pipeline {
        Pipeline {
            state: Mutex::new(PipelineState {
                prepared: (0..queries).map(|_| None).collect(),
                prepared_upto: 0,
                started: 0,
                failed: false,
            }),
            changed: Condvar::new(),
        }
    }

    pub fn lock(&self) -> MutexGuard<'_, PipelineState> {
        self.state.lock().expect("pipeline lock poisoned")
    }

    /// Waits on the condition variable.
    pub fn wait<'g>(&self, guard: MutexGuard<'g, PipelineState>) -> MutexGuard<'g, PipelineState> {
        self.changed.wait(guard).expect("pipeline lock poisoned")
    }

    pub fn notify(&self) {
        self.changed.notify_all();
    }

    /// Takes the next query, or `None` when all are taken (or a thread failed).
    pub fn take(&self, queries: usize) -> Option<usize> {
        let mut state = self.lock();
        if state.failed || state.started >= queries {
            return None;
        }
        let j = state.started;
        state.started += 1;
        drop(state);
        self.notify();
        Some(j)
    }

    /// Waits until query `j` is prepared and takes its preparation; `None` if a thread failed.
    pub fn wait_prepared(&self, j: usize) -> Option<Prepared> {
        let mut state = self.lock();
        loop {
            if state.failed {
                return None;
            }
            if let Some(p) = state.prepared[j].take() {
                return Some(p);
            }
            state = self.wait(state);
        }
    }

    /// The worker prepared query `j`.
    pub fn publish(&self, j: usize, prepared: Prepared) {
        let mut state = self.lock();
        state.prepared[j] = Some(prepared);
        state.prepared_upto = j + 1;
        drop(state);
        self.notify();
    }

    /// Marks the run failed and wakes everyone.
    pub fn fail(&self) {
        self.lock().failed = true;
        self.notify();
    }
}
