//! The k best hits seen so far, in a min-heap (the seeds' baseline), ranked as Lucene ranks:
//! higher score first, and among equal scores the lower DID first.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use serde::Serialize;

/// A scored document.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Hit {
    /// Global DID.
    pub doc: u32,
    /// Its score.
    pub score: f32,
}

/// Ranking order: `Less` means "ranks better".
pub fn rank(a: &Hit, b: &Hit) -> Ordering {
    b.score.total_cmp(&a.score).then(a.doc.cmp(&b.doc))
}

/// Heap entry ordered so that the worst hit is the heap's maximum (popped first).
#[derive(Debug, Clone, Copy)]
struct Worst(Hit);

impl PartialEq for Worst {
    fn eq(&self, other: &Self) -> bool {
        rank(&self.0, &other.0) == Ordering::Equal
    }
}
impl Eq for Worst {}
impl PartialOrd for Worst {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Worst {
    fn cmp(&self, other: &Self) -> Ordering {
        rank(&self.0, &other.0)
    }
}

/// The best `k` hits.
#[derive(Debug)]
pub struct TopK {
    k: usize,
    heap: BinaryHeap<Worst>,
    /// The worst held score once `k` hits are held, else -inf: a hit scoring below it cannot
    /// enter, which [`TopK::push`] checks before touching the heap.
    floor: f32,
}

impl TopK {
    /// Keeps the best `k` (0 keeps none).
    pub fn new(k: usize) -> TopK {
        TopK {
            k,
            heap: BinaryHeap::with_capacity(k.min(1 << 16) + 1),
            floor: if k == 0 {
                f32::INFINITY
            } else {
                f32::NEG_INFINITY
            },
        }
    }

    /// Offers a hit.
    #[inline(always)]
    pub fn push(&mut self, hit: Hit) {
        // Most hits of a long evaluation score below the floor; NaN scores go the slow way.
        if hit.score < self.floor {
            return;
        }
        self.offer(hit);
    }

    #[inline(never)]
    fn offer(&mut self, hit: Hit) {
        if self.heap.len() < self.k {
            self.heap.push(Worst(hit));
        } else if self
            .heap
            .peek()
            .is_some_and(|worst| rank(&hit, &worst.0) == Ordering::Less)
        {
            if let Some(mut worst) = self.heap.peek_mut() {
                *worst = Worst(hit);
            }
        } else {
            return;
        }
        if self.heap.len() == self.k {
            self.floor = self.heap.peek().map_or(f32::NEG_INFINITY, |w| w.0.score);
        }
    }

    /// The score a hit must beat to enter (strictly greater, or equal with a lower DID);
    /// `None` while fewer than `k` hits are held. Pruning may skip a document only if its
    /// score bound is below this.
    #[inline]
    pub fn threshold(&self) -> Option<f32> {
        if self.heap.len() < self.k || self.k == 0 {
            None
        } else {
            Some(self.floor)
        }
    }

    /// True when `k` is 0.
    pub fn is_disabled(&self) -> bool {
        self.k == 0
    }

    /// The hits, best first.
    pub fn into_sorted(self) -> Vec<Hit> {
        let mut hits: Vec<Hit> = self.heap.into_iter().map(|w| w.0).collect();
        hits.sort_by(rank);
        hits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_best_with_lucene_tie_breaking() {
        let mut top = TopK::new(3);
        for (doc, score) in [(5, 1.0), (1, 2.0), (9, 2.0), (3, 0.5), (2, 2.0), (7, 3.0)] {
            top.push(Hit { doc, score });
        }
        let docs: Vec<u32> = top.into_sorted().iter().map(|h| h.doc).collect();
        assert_eq!(docs, vec![7, 1, 2]);
    }
}
