//! The k best hits seen so far, ranked as Lucene ranks: higher score first, and among equal
//! scores the lower DID first.

use std::cmp::Ordering;

use serde::Serialize;

/// A scored document.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Hit {
    /// Global DID.
    pub doc: u32,
    /// Its score.
    pub score: f32,
}

/// Up to this `k`, the held hits are kept in rank order and a hit that enters takes its place
/// at once (a few compares and a short move from the end, where most entering hits land), so
/// the floor is always the exact k-th best score: a top-10 evaluation prunes on it after every
/// hit. Above it, hits gather until `k / 2` more are held, so that a cut costs a few compares
/// per hit it drops; the floor lags by at most that many hits, which a top-1000 evaluation,
/// whose floor rises slowly, hardly feels.
const EXACT_UP_TO: usize = 64;

/// Hits held past `k` before a cut (above [`EXACT_UP_TO`]).
fn slack(k: usize) -> usize {
    if k <= EXACT_UP_TO {
        0
    } else {
        k / 2
    }
}

/// Ranking order: `Less` means "ranks better".
pub fn rank(a: &Hit, b: &Hit) -> Ordering {
    b.score.total_cmp(&a.score).then(a.doc.cmp(&b.doc))
}

/// The best `k` hits.
///
/// Up to [`EXACT_UP_TO`], the hits are kept in rank order. Above it, hits that reach the floor
/// are appended to an array; when it holds `capacity` of them, a selection
/// (`select_nth_unstable`) cuts it back to the best `k`, and the floor becomes the k-th best
/// score. A min-heap pays a sift of `log k` levels, each a mispredicted compare, per hit that
/// enters; with k = 1000 and a floor that rises slowly, that was a third of a top-1000 query's
/// time. Here a hit costs a store, and each cut a linear selection, a few compares per hit it
/// drops.
#[derive(Debug)]
pub struct TopK {
    k: usize,
    /// Up to [`EXACT_UP_TO`], the best `k` so far in rank order; above, the best `k` as of the
    /// last cut, then every hit offered since that reached the floor.
    hits: Vec<Hit>,
    /// The length at which `hits` is cut back to `k`.
    capacity: usize,
    /// The k-th best score as of the last cut (or of the first `k` hits), else -inf: a hit
    /// scoring below it cannot enter, which [`TopK::push`] checks first.
    floor: f32,
    /// Whether `k` hits have been seen, so that the floor is a real threshold.
    full: bool,
    /// Whether the floor is a threshold: `k` hits were seen, or [`TopK::seed`] raised it.
    armed: bool,
}

impl TopK {
    /// Keeps the best `k` (0 keeps none).
    pub fn new(k: usize) -> TopK {
        let capacity = k.saturating_add(slack(k));
        TopK {
            k,
            hits: Vec::with_capacity(capacity.min(1 << 17)),
            capacity,
            floor: if k == 0 {
                f32::INFINITY
            } else {
                f32::NEG_INFINITY
            },
            full: false,
            armed: false,
        }
    }

    /// Raises the floor to `score`, a score that at least `k` documents still to be offered
    /// are known to reach (so the final k-th best reaches it too): hits below it are dropped,
    /// and [`TopK::threshold`] is at least it from now on, full or not. A lower `score` than
    /// the floor changes nothing.
    pub fn seed(&mut self, score: f32) {
        if self.k > 0 && score > self.floor {
            self.floor = score;
            self.armed = true;
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
        if self.k == 0 {
            return;
        }
        if self.k <= EXACT_UP_TO {
            self.insert_ranked(hit);
            return;
        }
        self.hits.push(hit);
        if !self.full && self.hits.len() == self.k {
            self.full = true;
            self.armed = true;
            self.floor = self
                .hits
                .iter()
                .max_by(|a, b| rank(a, b))
                .map_or(f32::NEG_INFINITY, |worst| worst.score);
        } else if self.hits.len() >= self.capacity {
            self.cut();
        }
    }

    /// Small `k`: puts `hit` in its place among the held hits, kept in rank order, dropping
    /// the worst once `k` are held; the floor is then the k-th best.
    fn insert_ranked(&mut self, hit: Hit) {
        if self.full {
            // It ties the floor or beats it; with a tie it enters only on a lower DID.
            match self.hits.last() {
                Some(worst) if rank(&hit, worst) == Ordering::Less => self.hits.pop(),
                _ => return,
            };
        }
        let mut at = self.hits.len();
        while at > 0 && rank(&hit, &self.hits[at - 1]) == Ordering::Less {
            at -= 1;
        }
        self.hits.insert(at, hit);
        if self.hits.len() == self.k {
            self.full = true;
            self.armed = true;
            self.floor = self.hits[self.k - 1].score;
        }
    }

    /// Keeps the best `k` hits and raises the floor to the k-th best score.
    fn cut(&mut self) {
        let k = self.k;
        self.hits.select_nth_unstable_by(k - 1, rank);
        self.hits.truncate(k);
        self.floor = self.hits[k - 1].score;
    }

    /// A score every hit of the final top k reaches: the k-th best score as of the last cut
    /// (exactly the k-th best so far up to [`EXACT_UP_TO`], never above it beyond), or the
    /// seed ([`TopK::seed`]) while that is higher; `None` while fewer than `k` hits have been
    /// offered and no seed was given. Pruning may skip a document only if its score bound is
    /// below this.
    #[inline]
    pub fn threshold(&self) -> Option<f32> {
        self.armed.then_some(self.floor)
    }

    /// How many hits it keeps.
    pub fn k(&self) -> usize {
        self.k
    }

    /// True when `k` is 0.
    pub fn is_disabled(&self) -> bool {
        self.k == 0
    }

    /// The hits, best first.
    pub fn into_sorted(self) -> Vec<Hit> {
        let mut hits = self.hits;
        hits.sort_by(rank);
        hits.truncate(self.k);
        hits
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #[test]
        fn holds_the_best_k_and_never_a_floor_above_the_kth_best(
            scores in proptest::collection::vec(0u8..40, 0..400),
            k in prop_oneof![0usize..12, 60usize..70, 100usize..300],
        ) {
            let hits: Vec<Hit> = scores
                .iter()
                .enumerate()
                .map(|(doc, &s)| Hit { doc: (doc as u32 * 7919) % 1000, score: f32::from(s) / 4.0 })
                .collect();
            let mut top = TopK::new(k);
            for (seen, &hit) in hits.iter().enumerate() {
                top.push(hit);
                let mut so_far = hits[..=seen].to_vec();
                so_far.sort_by(rank);
                match top.threshold() {
                    None => prop_assert!(k == 0 || so_far.len() < k),
                    Some(floor) => {
                        prop_assert!(so_far.len() >= k);
                        let kth = so_far[k - 1].score;
                        prop_assert!(floor <= kth, "floor {} above the k-th best {}", floor, kth);
                        if k <= EXACT_UP_TO {
                            prop_assert_eq!(floor, kth);
                        }
                    }
                }
            }
            let mut expected = hits;
            expected.sort_by(rank);
            expected.truncate(k);
            prop_assert_eq!(top.into_sorted(), expected);
        }
    }

    proptest! {
        /// A seed at or below the final k-th best score changes nothing in the result, and the
        /// threshold is at least the seed from the start.
        #[test]
        fn a_seed_at_or_below_the_kth_best_keeps_the_best_k(
            scores in proptest::collection::vec(0u8..40, 1..400),
            k in prop_oneof![1usize..12, 60usize..70, 100usize..300],
            below in 0u8..8,
        ) {
            let hits: Vec<Hit> = scores
                .iter()
                .enumerate()
                .map(|(doc, &s)| Hit { doc: (doc as u32 * 7919) % 1000, score: f32::from(s) / 4.0 })
                .collect();
            let mut expected = hits.clone();
            expected.sort_by(rank);
            expected.truncate(k);
            prop_assume!(expected.len() == k);
            let seed = expected[k - 1].score - f32::from(below) / 4.0;
            let mut top = TopK::new(k);
            top.seed(seed);
            for &hit in &hits {
                prop_assert!(top.threshold().is_some_and(|t| t >= seed));
                top.push(hit);
            }
            prop_assert_eq!(top.into_sorted(), expected);
        }
    }

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
