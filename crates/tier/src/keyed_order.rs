//! [`KeyedOrder`]: the postings cache's eviction order driven by one of the result cache's
//! replacement policies (S3-FIFO, DLIRS), which reason about keys and sizes rather than slots.
//!
//! LRU and CLOCK need nothing but the slot a term occupies. S3-FIFO and LIRS also remember
//! terms that have left the cache (the ghost queue, the non-resident HIR entries): a term
//! that comes back soon after its eviction is a term worth keeping, which is what makes them
//! resist scans and one-hit wonders. That memory needs the term's identity, which outlives
//! its slot, so this order keys the policy by the term's cache key (segment and ordinal) and
//! keeps the slot of each resident key beside it.
//!
//! The postings cache may not evict every term: one a query has pinned, one still loading,
//! one reserved for a queued query. [`Policy::evict`] has no such filter, so a victim that
//! may not go is set aside and admitted again (and counted as used, since it is in use) once
//! an evictable victim is found or the policy runs out of them.

use std::collections::HashMap;

use crate::result_cache::{Policy, PolicyKind, S3Fifo};

/// The hits in S3-FIFO's small queue that move a term to the main queue. A result-cache
/// entry is inserted by the request that missed it, so its first hit is its second use, and
/// S3-FIFO's own default of two hits means three uses. A term enters the postings cache by
/// the prefetcher's load, ahead of the query that reads it, so that read is its first hit:
/// one hit here is one use. With two, the small queue (13 to 26 segments at caches of 5-10%
/// of the postings) let most terms go before a second query read them: on the looping AND
/// workload of docs/results/postings-eviction.md, 78% misses at 20 MiB and 72% at 41 MiB
/// (`results-move-to-main-2.csv`), against 64% and 59% with one hit (`results.csv`).
const POSTINGS_MOVE_TO_MAIN: u8 = 1;

/// An eviction order over cache slots kept by a key-based replacement policy.
pub struct KeyedOrder {
    policy: Box<dyn Policy + Send>,
    /// Per slot: the key and size of the term resident in it, as the policy knows it.
    slots: Vec<Option<(u64, u64)>>,
    slot_of: HashMap<u64, u32>,
}

impl std::fmt::Debug for KeyedOrder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyedOrder")
            .field("policy", &self.policy.name())
            .field("resident", &self.slot_of.len())
            .finish()
    }
}

impl KeyedOrder {
    /// An empty order over `slots` slots, for a cache of `capacity` units (the unit of the
    /// sizes given to [`KeyedOrder::insert`]).
    pub fn new(kind: PolicyKind, slots: u32, capacity: u64) -> KeyedOrder {
        let policy: Box<dyn Policy + Send> = match kind {
            PolicyKind::S3Fifo => {
                Box::new(S3Fifo::with_move_to_main(capacity, POSTINGS_MOVE_TO_MAIN))
            }
            _ => kind.build(capacity, 0x5eed),
        };
        KeyedOrder {
            policy,
            slots: vec![None; slots as usize],
            slot_of: HashMap::new(),
        }
    }

    /// A term `key` of `size` units now occupies `slot`.
    pub fn insert(&mut self, slot: u32, key: u64, size: u64) {
        self.remove(slot);
        if let Some(old) = self.slot_of.insert(key, slot) {
            // The same term under another slot: the cache never does this, but the books
            // must stay one slot per key.
            self.slots[old as usize] = None;
            self.policy.remove(key);
        }
        self.slots[slot as usize] = Some((key, size));
        // The policies admit whatever fits their capacity, which every cached term does.
        let admitted = self.policy.on_insert(key, size);
        debug_assert!(admitted, "a term that fits the cache is admitted");
    }

    /// A use of the term in `slot` (no change if the slot is empty).
    pub fn touch(&mut self, slot: u32) {
        if let Some((key, _)) = self.slots[slot as usize] {
            self.policy.on_hit(key);
        }
    }

    /// The cache dropped the term in `slot` (no change if the slot is empty): the policy
    /// forgets it, history included.
    pub fn remove(&mut self, slot: u32) {
        if let Some((key, _)) = self.slots[slot as usize].take() {
            self.slot_of.remove(&key);
            self.policy.remove(key);
        }
    }

    /// The slot to evict among those for which `evictable` holds, as the policy chooses; the
    /// term leaves the books as an eviction (the policy keeps its history of it).
    pub fn victim(&mut self, mut evictable: impl FnMut(u32) -> bool) -> Option<u32> {
        let mut set_aside = Vec::new();
        let mut found = None;
        while let Some(key) = self.policy.evict() {
            let Some(&slot) = self.slot_of.get(&key) else {
                continue; // not a key of ours: cannot happen, and nothing to evict
            };
            if evictable(slot) {
                found = Some(slot);
                break;
            }
            set_aside.push(key);
        }
        for key in set_aside {
            let slot = self.slot_of[&key];
            let (_, size) = self.slots[slot as usize].expect("a resident slot");
            if self.policy.on_insert(key, size) {
                self.policy.on_hit(key);
            }
        }
        let slot = found?;
        if let Some((key, _)) = self.slots[slot as usize].take() {
            self.slot_of.remove(&key);
        }
        Some(slot)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn victims_skip_what_may_not_go_and_history_survives_eviction() {
        for kind in [PolicyKind::S3Fifo, PolicyKind::Dlirs, PolicyKind::Lru] {
            let mut order = KeyedOrder::new(kind, 8, 8);
            for slot in 0..8 {
                order.insert(slot, 100 + u64::from(slot), 1);
            }
            // Slot 0 is pinned: never a victim.
            let mut evicted = Vec::new();
            for _ in 0..7 {
                let slot = order.victim(|s| s != 0).expect("an evictable slot");
                assert_ne!(slot, 0, "{kind:?}");
                order.remove(slot); // what the cache does after evicting: a no-op here
                evicted.push(slot);
            }
            evicted.sort_unstable();
            assert_eq!(evicted, (1..8).collect::<Vec<_>>(), "{kind:?}");
            assert_eq!(order.victim(|s| s != 0), None, "{kind:?}");
            assert_eq!(order.victim(|_| true), Some(0), "{kind:?}");
            assert_eq!(order.victim(|_| true), None, "{kind:?}");
        }
    }

    /// S3-FIFO remembers a term evicted from its small queue: when it comes back it goes to
    /// the main queue, and outlives terms seen once.
    #[test]
    fn s3fifo_keeps_a_returning_term_over_one_hit_wonders() {
        let mut order = KeyedOrder::new(PolicyKind::S3Fifo, 10, 10);
        order.insert(0, 7, 1);
        let slot = order.victim(|_| true).unwrap();
        assert_eq!(slot, 0);
        order.insert(0, 7, 1); // back: from the ghost queue to the main queue
        for (i, slot) in (1..10).enumerate() {
            order.insert(slot, 1000 + i as u64, 1);
        }
        for _ in 0..9 {
            let victim = order.victim(|_| true).unwrap();
            assert_ne!(
                victim, 0,
                "the returning term is evicted before a one-hit wonder"
            );
        }
    }
}
