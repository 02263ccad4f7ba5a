//! A range filter as a query node: the documents of one segment with a value in a range,
//! found a document at a time from the segment's columns ([`RangeTest`]) rather than listed in
//! advance. Under a conjunction led by a rarer clause, only the documents that clause proposes
//! are tested; leading, it walks the column once, stepping over blocks whose bounds miss the
//! range.
//!
//! Columns number a segment's documents locally (`0..documents`); postings carry global DIDs.
//! The segment's [`DocMap`] runs translate, both ways in increasing order.

use crate::columns::RangeTest;
use crate::segment::DocMap;

use super::term_cursor::NO_MORE_DOCS;

/// A run of the segment's documents: its first global DID, its first local number, its length.
#[derive(Debug, Clone, Copy)]
struct Run {
    first: u32,
    local: u32,
    count: u32,
}

/// The matching documents of a range, as global DIDs in increasing order.
pub struct RangeNode<'a> {
    test: RangeTest<'a>,
    runs: Vec<Run>,
    /// The run of the current document (or the next to search).
    run: usize,
    doc: u32,
    score: f32,
    cost: u64,
}

impl<'a> RangeNode<'a> {
    /// The node of `test` over a segment of `doc_map`, every match scoring `score`, on its
    /// first match.
    pub fn new(test: RangeTest<'a>, doc_map: &DocMap, score: f32) -> RangeNode<'a> {
        let mut local = 0;
        let runs = doc_map
            .runs()
            .iter()
            .map(|&[first, count]| {
                let run = Run {
                    first,
                    local,
                    count,
                };
                local += count;
                run
            })
            .collect();
        let mut node = RangeNode {
            cost: test.cost(),
            test,
            runs,
            run: 0,
            doc: 0,
            score,
        };
        node.advance(0);
        node
    }

    /// The current DID ([`NO_MORE_DOCS`] when exhausted).
    pub fn doc(&self) -> u32 {
        self.doc
    }

    /// Every match's score.
    pub fn score(&self) -> f32 {
        self.score
    }

    /// An upper bound on the matches.
    pub fn cost(&self) -> u64 {
        self.cost
    }

    /// Moves to the first match at or after `target` (targets never go back).
    pub fn advance(&mut self, target: u32) -> u32 {
        if self.doc == NO_MORE_DOCS {
            return NO_MORE_DOCS;
        }
        // The run holding `target`, or the first after it.
        while let Some(run) = self.runs.get(self.run) {
            if target < run.first + run.count {
                break;
            }
            self.run += 1;
        }
        let Some(run) = self.runs.get(self.run) else {
            self.doc = NO_MORE_DOCS;
            return NO_MORE_DOCS;
        };
        let from = run.local + target.saturating_sub(run.first);
        let Some(local) = self.test.next_match(from) else {
            self.doc = NO_MORE_DOCS;
            return NO_MORE_DOCS;
        };
        // Local numbers ascend with DIDs: the match is in this run or a later one.
        while let Some(run) = self.runs.get(self.run) {
            if local < run.local + run.count {
                self.doc = run.first + (local - run.local);
                return self.doc;
            }
            self.run += 1;
        }
        self.doc = NO_MORE_DOCS;
        NO_MORE_DOCS
    }
}
