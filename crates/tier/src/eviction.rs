//! Which whole term leaves the cache when a new one needs room.

use std::str::FromStr;

use serde::Serialize;

use crate::clock::Clock;
use crate::term_lru::TermLru;

/// An eviction policy's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum EvictionPolicy {
    /// Least recently used term first (the original study's policy).
    Lru,
    /// CLOCK, second chance.
    Clock,
}

impl FromStr for EvictionPolicy {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "lru" => Ok(EvictionPolicy::Lru),
            "clock" => Ok(EvictionPolicy::Clock),
            other => Err(format!("unknown eviction policy {other:?} (lru, clock)")),
        }
    }
}

/// The order a policy keeps over the cached terms' slots.
#[derive(Debug, Clone)]
pub enum EvictionOrder {
    /// See [`TermLru`].
    Lru(TermLru),
    /// See [`Clock`].
    Clock(Clock),
}

impl EvictionOrder {
    /// An empty order over `slots` slots.
    pub fn new(policy: EvictionPolicy, slots: u32) -> EvictionOrder {
        match policy {
            EvictionPolicy::Lru => EvictionOrder::Lru(TermLru::new(slots)),
            EvictionPolicy::Clock => EvictionOrder::Clock(Clock::new(slots)),
        }
    }

    /// A use of `slot` (inserting it if absent).
    pub fn touch(&mut self, slot: u32) {
        match self {
            EvictionOrder::Lru(o) => o.touch(slot),
            EvictionOrder::Clock(o) => o.touch(slot),
        }
    }

    /// Forgets `slot`.
    pub fn remove(&mut self, slot: u32) {
        match self {
            EvictionOrder::Lru(o) => o.remove(slot),
            EvictionOrder::Clock(o) => o.remove(slot),
        }
    }

    /// The slot to evict among those for which `evictable` holds.
    pub fn victim(&mut self, evictable: impl FnMut(u32) -> bool) -> Option<u32> {
        match self {
            EvictionOrder::Lru(o) => o.victim(evictable),
            EvictionOrder::Clock(o) => o.victim(evictable),
        }
    }
}
