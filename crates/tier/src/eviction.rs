//! Which whole term leaves the cache when a new one needs room.

use std::str::FromStr;

use serde::Serialize;

use crate::clock::Clock;
use crate::keyed_order::KeyedOrder;
use crate::result_cache::PolicyKind;
use crate::term_lru::TermLru;

/// An eviction policy's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum EvictionPolicy {
    /// Least recently used term first (the original study's policy).
    Lru,
    /// CLOCK, second chance.
    Clock,
    /// S3-FIFO (Yang et al., 2023): a small FIFO for new terms, a main FIFO for terms used
    /// again, a ghost FIFO remembering terms evicted from the small one.
    S3Fifo,
    /// LIRS with a dynamic LIR/HIR split (DLIRS, Li 2018): terms ranked by the distance
    /// between their last two uses, with non-resident terms kept as history.
    Lirs,
}

impl EvictionPolicy {
    /// Every policy, in a fixed order.
    pub const ALL: [EvictionPolicy; 4] = [
        EvictionPolicy::Lru,
        EvictionPolicy::Clock,
        EvictionPolicy::S3Fifo,
        EvictionPolicy::Lirs,
    ];

    /// The policy's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            EvictionPolicy::Lru => "lru",
            EvictionPolicy::Clock => "clock",
            EvictionPolicy::S3Fifo => "s3fifo",
            EvictionPolicy::Lirs => "lirs",
        }
    }
}

impl FromStr for EvictionPolicy {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        EvictionPolicy::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| format!("unknown eviction policy {s:?} (lru, clock, s3fifo, lirs)"))
    }
}

/// The order a policy keeps over the cached terms' slots.
#[derive(Debug)]
pub enum EvictionOrder {
    /// See [`TermLru`].
    Lru(TermLru),
    /// See [`Clock`].
    Clock(Clock),
    /// S3-FIFO or LIRS: see [`KeyedOrder`].
    Keyed(KeyedOrder),
}

impl EvictionOrder {
    /// An empty order over `slots` slots of a cache of `capacity` segments.
    pub fn new(policy: EvictionPolicy, slots: u32, capacity: u64) -> EvictionOrder {
        match policy {
            EvictionPolicy::Lru => EvictionOrder::Lru(TermLru::new(slots)),
            EvictionPolicy::Clock => EvictionOrder::Clock(Clock::new(slots)),
            EvictionPolicy::S3Fifo => {
                EvictionOrder::Keyed(KeyedOrder::new(PolicyKind::S3Fifo, slots, capacity))
            }
            EvictionPolicy::Lirs => {
                EvictionOrder::Keyed(KeyedOrder::new(PolicyKind::Dlirs, slots, capacity))
            }
        }
    }

    /// The term `key`, of `segments` segments, was loaded into `slot`.
    pub fn insert(&mut self, slot: u32, key: u64, segments: u64) {
        match self {
            EvictionOrder::Lru(o) => o.touch(slot),
            EvictionOrder::Clock(o) => o.touch(slot),
            EvictionOrder::Keyed(o) => o.insert(slot, key, segments),
        }
    }

    /// A use of the term in `slot`.
    pub fn touch(&mut self, slot: u32) {
        match self {
            EvictionOrder::Lru(o) => o.touch(slot),
            EvictionOrder::Clock(o) => o.touch(slot),
            EvictionOrder::Keyed(o) => o.touch(slot),
        }
    }

    /// Forgets `slot`.
    pub fn remove(&mut self, slot: u32) {
        match self {
            EvictionOrder::Lru(o) => o.remove(slot),
            EvictionOrder::Clock(o) => o.remove(slot),
            EvictionOrder::Keyed(o) => o.remove(slot),
        }
    }

    /// The slot to evict among those for which `evictable` holds.
    pub fn victim(&mut self, evictable: impl FnMut(u32) -> bool) -> Option<u32> {
        match self {
            EvictionOrder::Lru(o) => o.victim(evictable),
            EvictionOrder::Clock(o) => o.victim(evictable),
            EvictionOrder::Keyed(o) => o.victim(evictable),
        }
    }
}
