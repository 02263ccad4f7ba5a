//! The postings sources query threads search with in the cache modes.

use std::sync::atomic::{AtomicU64, Ordering};

use apcache_index::search::{PostingsSource, TermBlocks, TermEntry, TermPositionBlocks};
use apcache_index::IndexError;
use crossbeam_channel::Sender;

use super::staging::CacheJob;
use crate::postings_cache::{Part, PostingsCache};

/// Hit and miss counts (a miss: a query had to read a term from storage).
#[derive(Debug, Default)]
pub(super) struct HitCounters {
    pub hits: AtomicU64,
    pub misses: AtomicU64,
    /// Of the misses, those a query thread met (it read the term from storage).
    pub query_misses: AtomicU64,
}

/// Reads cached terms from the tier; an absent term is a miss, read from storage, and (in
/// `hybrid`) a job for the worker to cache it.
pub(super) struct CacheSource<'c> {
    pub cache: &'c PostingsCache,
    pub counters: &'c HitCounters,
    /// Where misses are posted (`hybrid`); `None` when the worker prefetches.
    pub jobs: Option<&'c Sender<CacheJob>>,
    /// Count hits and order the cache here (`hybrid`); in `hybrid-prefetch` the worker
    /// does both.
    pub count_hits: bool,
}

impl PostingsSource for CacheSource<'_> {
    fn blocks(
        &self,
        segment: usize,
        term: &TermEntry,
    ) -> Result<Option<Box<dyn TermBlocks + '_>>, IndexError> {
        match self.cache.pin(segment, term, self.count_hits) {
            Some(pinned) => {
                if self.count_hits {
                    self.counters.hits.fetch_add(1, Ordering::Relaxed);
                }
                Ok(Some(Box::new(pinned)))
            }
            None => {
                self.missed(segment, term, Part::Postings);
                Ok(None)
            }
        }
    }

    fn positions(
        &self,
        segment: usize,
        term: &TermEntry,
    ) -> Result<Option<Box<dyn TermPositionBlocks + '_>>, IndexError> {
        match self.cache.pin_positions(segment, term, self.count_hits) {
            Some(pinned) => {
                if self.count_hits {
                    self.counters.hits.fetch_add(1, Ordering::Relaxed);
                }
                Ok(Some(Box::new(pinned)))
            }
            None => {
                self.missed(segment, term, Part::Positions);
                Ok(None)
            }
        }
    }
}

impl CacheSource<'_> {
    /// Counts a miss and, in `hybrid`, asks the worker to cache what was missed.
    fn missed(&self, segment: usize, term: &TermEntry, part: Part) {
        self.counters.misses.fetch_add(1, Ordering::Relaxed);
        self.counters.query_misses.fetch_add(1, Ordering::Relaxed);
        if let Some(jobs) = self.jobs {
            // A full queue drops the job: the term is asked for again on its next use.
            let _ = jobs.try_send((segment, *term, part));
        }
    }
}
