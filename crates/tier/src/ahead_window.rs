//! The adaptive lookahead of `hybrid-prefetch`: how far the prefetch worker may run ahead of
//! the query threads, decided by the cache's free space rather than a fixed count.
//!
//! The worker records, in a FIFO, the segment count of every term it makes ready for a queued
//! query (a term already cached is counted again, and so is a term repeated within the
//! window: each occurrence is a term some query has still to read), with their rolling sum.
//! Before it evicts the least recently used term, it waits while
//! `rolling_sum + segments_of_that_term > total_segments`: evicting then could take away a
//! term that a prefetched query has not read yet. A query thread that finishes a query
//! removes that query's counts and subtracts them. So the lookahead grows while the window's
//! terms fit in the cache and shrinks by itself when they do not, with nothing to tune.

use std::collections::VecDeque;

/// The window's entries of one query.
#[derive(Debug, Clone, Copy)]
struct QueryEntry {
    query: u64,
    segments: u64,
    terms: u32,
    finished: bool,
}

/// The FIFO of segment counts ahead of the query threads.
///
/// Kept per query (a query's term occurrences are pushed together, queries in increasing
/// order), so that a finishing query leaves in O(log n) and the front is trimmed as queries
/// finish, in whatever order the query threads finish them.
#[derive(Debug, Clone, Default)]
pub struct AheadWindow {
    fifo: VecDeque<QueryEntry>,
    rolling_sum: u64,
    terms: usize,
    unfinished: usize,
}

impl AheadWindow {
    /// An empty window.
    pub fn new() -> AheadWindow {
        AheadWindow::default()
    }

    /// The worker made a term of `segments` segments ready for query `query` (queries are
    /// pushed in increasing order).
    pub fn push(&mut self, query: u64, segments: u32) {
        match self.fifo.back_mut() {
            Some(last) if last.query == query && !last.finished => {
                last.segments += u64::from(segments);
                last.terms += 1;
            }
            _ => {
                self.fifo.push_back(QueryEntry {
                    query,
                    segments: u64::from(segments),
                    terms: 1,
                    finished: false,
                });
                self.unfinished += 1;
            }
        }
        self.rolling_sum += u64::from(segments);
        self.terms += 1;
    }

    /// Query `query` finished: its counts leave the window.
    pub fn finish(&mut self, query: u64) {
        let i = self.fifo.partition_point(|e| e.query < query);
        if let Some(entry) = self
            .fifo
            .get_mut(i)
            .filter(|e| e.query == query && !e.finished)
        {
            entry.finished = true;
            self.rolling_sum -= entry.segments;
            self.terms -= entry.terms as usize;
            self.unfinished -= 1;
        }
        while self.fifo.front().is_some_and(|e| e.finished) {
            self.fifo.pop_front();
        }
    }

    /// Segments of the terms in the window.
    pub fn rolling_sum(&self) -> u64 {
        self.rolling_sum
    }

    /// Term occurrences in the window.
    pub fn len(&self) -> usize {
        self.terms
    }

    /// Whether the window is empty.
    pub fn is_empty(&self) -> bool {
        self.terms == 0
    }

    /// Whether the least recently used term, of `victim_segments` segments, may be evicted
    /// now from a cache of `total_segments` of which `free_segments` are free.
    ///
    /// The original study's rule is `rolling_sum + victim <= total`, which assumes a full cache.
    /// The free segments are added here: the window's terms are the most recently used, so the
    /// victim lies outside the window when the used segments exceed the window's by at least the
    /// victim's, `total - free - rolling_sum >= victim`. With one query thread finishing queries in
    /// order and only the worker ordering the cache, the victim is then never a term a prefetched
    /// query has still to read.
    pub fn may_evict(&self, victim_segments: u32, free_segments: u32, total_segments: u32) -> bool {
        self.rolling_sum + u64::from(victim_segments) + u64::from(free_segments)
            <= u64::from(total_segments)
    }

    /// Whether any query other than `query` has terms in the window (only those can finish
    /// and shrink it while the worker waits).
    pub fn others_than(&self, query: u64) -> bool {
        let i = self.fifo.partition_point(|e| e.query < query);
        let own = self
            .fifo
            .get(i)
            .is_some_and(|e| e.query == query && !e.finished);
        self.unfinished > usize::from(own)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Pushes in query order and finishes in any order, against a list of occurrences.
        #[test]
        fn matches_a_model(ops in proptest::collection::vec((any::<bool>(), 0u64..6, 1u32..9), 1..200)) {
            let mut w = AheadWindow::new();
            let mut model: Vec<(u64, u32)> = Vec::new();
            let mut finished = std::collections::HashSet::new();
            let mut next_query = 0u64;
            for (push, step, segments) in ops {
                if push {
                    // Stay on the current query or move to a later one.
                    next_query += step % 2;
                    if finished.contains(&next_query) {
                        next_query += 1;
                    }
                    w.push(next_query, segments);
                    model.push((next_query, segments));
                } else {
                    let q = next_query.saturating_sub(step);
                    w.finish(q);
                    finished.insert(q);
                    model.retain(|&(m, _)| m != q);
                }
                let sum: u64 = model.iter().map(|&(_, s)| u64::from(s)).sum();
                prop_assert_eq!(w.rolling_sum(), sum);
                prop_assert_eq!(w.len(), model.len());
                for q in 0..=next_query + 1 {
                    prop_assert_eq!(w.others_than(q), model.iter().any(|&(m, _)| m != q));
                }
            }
        }
    }

    #[test]
    fn counts_every_occurrence_and_finishes_by_query() {
        let mut w = AheadWindow::new();
        w.push(0, 3);
        w.push(0, 2);
        w.push(1, 3); // the same term again: counted again
        assert_eq!(w.rolling_sum(), 8);
        assert!(w.may_evict(2, 0, 10));
        assert!(!w.may_evict(3, 0, 10));
        assert!(!w.may_evict(2, 1, 10));
        assert!(w.others_than(0));
        w.finish(0);
        assert_eq!(w.rolling_sum(), 3);
        assert!(!w.others_than(1));
        w.finish(1);
        assert!(w.is_empty());
        assert_eq!(w.rolling_sum(), 0);
    }

    #[test]
    fn out_of_order_finishes() {
        let mut w = AheadWindow::new();
        for q in 0..4 {
            w.push(q, q as u32 + 1);
        }
        w.finish(2);
        w.finish(0);
        assert_eq!(w.rolling_sum(), 2 + 4);
        w.finish(3);
        w.finish(1);
        assert_eq!(w.rolling_sum(), 0);
    }
}
