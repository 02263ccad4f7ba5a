//! The cache's segments and their chains: one array-based linked list holds every cached
//! term's chain of segments and the free list.
//!
//! Entry `i` of the array is the segment after segment `i` in whatever list `i` belongs to
//! ([`NIL`] ends a list). Nothing is allocated after construction, a term's segments need not
//! be adjacent (so the tier never fragments), and a released chain is spliced onto the free
//! list's tail in O(1) because every chain's last segment is known.

/// Ends a list.
pub const NIL: u32 = u32::MAX;

/// A list of segments: first, last and length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chain {
    /// First segment.
    pub first: u32,
    /// Last segment (its entry is [`NIL`]).
    pub last: u32,
    /// Segments in the chain.
    pub len: u32,
}

/// Every segment of the tier, each in exactly one list: a term's chain or the free list.
#[derive(Debug, Clone)]
pub struct SegmentChains {
    next: Vec<u32>,
    free: Option<Chain>,
}

impl SegmentChains {
    /// `total` segments, all free (`total` below [`NIL`]).
    pub fn new(total: u32) -> SegmentChains {
        assert!(total < NIL, "segment count must be below u32::MAX");
        let next = (0..total)
            .map(|i| if i + 1 == total { NIL } else { i + 1 })
            .collect();
        let free = (total > 0).then_some(Chain {
            first: 0,
            last: total - 1,
            len: total,
        });
        SegmentChains { next, free }
    }

    /// Segments in the tier.
    pub fn total(&self) -> u32 {
        self.next.len() as u32
    }

    /// Segments on the free list.
    pub fn free(&self) -> u32 {
        self.free.map_or(0, |c| c.len)
    }

    /// The segment after `segment` in its list, or [`NIL`].
    pub fn next(&self, segment: u32) -> u32 {
        self.next[segment as usize]
    }

    /// Takes `n` (> 0) segments off the head of the free list as one chain, appending their
    /// indices to `segments` in chain order; `None` (and no change) when fewer are free.
    pub fn allocate(&mut self, n: u32, segments: &mut Vec<u32>) -> Option<Chain> {
        let free = self.free?;
        if n == 0 || n > free.len {
            return None;
        }
        let mut last = free.first;
        segments.push(last);
        for _ in 1..n {
            last = self.next[last as usize];
            segments.push(last);
        }
        let rest = self.next[last as usize];
        self.next[last as usize] = NIL;
        self.free = (n < free.len).then_some(Chain {
            first: rest,
            last: free.last,
            len: free.len - n,
        });
        Some(Chain {
            first: free.first,
            last,
            len: n,
        })
    }

    /// Returns `chain` (allocated by [`SegmentChains::allocate`]) to the free list's tail.
    pub fn release(&mut self, chain: Chain) {
        debug_assert_eq!(self.next[chain.last as usize], NIL);
        self.free = Some(match self.free {
            None => chain,
            Some(free) => {
                self.next[free.last as usize] = chain.first;
                Chain {
                    first: free.first,
                    last: chain.last,
                    len: free.len + chain.len,
                }
            }
        });
    }

    /// Appends the segments of `chain`, in order, to `segments`.
    pub fn collect(&self, chain: Chain, segments: &mut Vec<u32>) {
        let mut s = chain.first;
        for _ in 0..chain.len {
            segments.push(s);
            s = self.next[s as usize];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::{BTreeSet, VecDeque};

    /// Every segment is in exactly one list, the free list included, and lengths agree.
    fn check(chains: &SegmentChains, held: &[(Chain, Vec<u32>)]) {
        let mut seen = BTreeSet::new();
        let mut walk = |chain: Chain| {
            let mut got = Vec::new();
            chains.collect(chain, &mut got);
            assert_eq!(*got.last().unwrap(), chain.last);
            assert_eq!(chains.next(chain.last), NIL);
            for s in &got {
                assert!(seen.insert(*s), "segment {s} in two lists");
            }
            got
        };
        if let Some(free) = chains.free {
            walk(free);
        }
        for (chain, segments) in held {
            assert_eq!(&walk(*chain), segments);
        }
        assert_eq!(seen.len() as u32, chains.total());
    }

    #[test]
    fn allocates_everything_then_nothing() {
        let mut chains = SegmentChains::new(4);
        let mut segs = Vec::new();
        assert_eq!(chains.allocate(5, &mut segs), None);
        let a = chains.allocate(4, &mut segs).unwrap();
        assert_eq!(segs, [0, 1, 2, 3]);
        assert_eq!(chains.free(), 0);
        assert_eq!(chains.allocate(1, &mut segs), None);
        chains.release(a);
        assert_eq!(chains.free(), 4);
        check(&chains, &[]);
    }

    proptest! {
        /// Random allocations and releases against a model: a queue of free segments.
        #[test]
        fn matches_a_model(total in 1u32..64, ops in proptest::collection::vec((0u8..3, 1u32..20), 1..200)) {
            let mut chains = SegmentChains::new(total);
            let mut model: VecDeque<u32> = (0..total).collect();
            let mut held: Vec<(Chain, Vec<u32>)> = Vec::new();
            for (op, n) in ops {
                if op < 2 {
                    let mut segs = Vec::new();
                    let got = chains.allocate(n, &mut segs);
                    if n as usize > model.len() {
                        prop_assert!(got.is_none());
                        prop_assert!(segs.is_empty());
                    } else {
                        let want: Vec<u32> = model.drain(..n as usize).collect();
                        prop_assert_eq!(&segs, &want);
                        held.push((got.unwrap(), segs));
                    }
                } else if !held.is_empty() {
                    let (chain, segs) = held.remove(n as usize % held.len());
                    chains.release(chain);
                    model.extend(segs);
                }
                prop_assert_eq!(chains.free() as usize, model.len());
                check(&chains, &held);
            }
        }
    }
}
