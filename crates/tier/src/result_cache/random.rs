//! Random replacement: the victim is drawn uniformly from the resident keys, by a seeded
//! generator so a run can be repeated. The baseline any policy should beat.

use rustc_hash::FxHashMap;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::policy::{Key, Policy};

/// Random replacement over entries with sizes (see the [module](self) docs).
#[derive(Debug, Clone)]
pub struct Random {
    capacity: u64,
    resident: u64,
    /// Resident keys and sizes, in no order; `index` gives each key's position.
    entries: Vec<(Key, u64)>,
    index: FxHashMap<Key, usize>,
    rng: StdRng,
}

impl Random {
    /// An empty policy for `capacity` bytes whose draws follow `seed` (the same seed, and
    /// the same version of the `rand` crate, give the same victims).
    pub fn new(capacity: u64, seed: u64) -> Random {
        Random {
            capacity,
            resident: 0,
            entries: Vec::new(),
            index: FxHashMap::default(),
            rng: StdRng::seed_from_u64(seed),
        }
    }

    fn take(&mut self, i: usize) -> Key {
        let (key, size) = self.entries.swap_remove(i);
        self.index.remove(&key);
        if let Some(&(moved, _)) = self.entries.get(i) {
            self.index.insert(moved, i);
        }
        self.resident -= size;
        key
    }
}

impl Policy for Random {
    fn name(&self) -> &'static str {
        "random"
    }

    fn capacity(&self) -> u64 {
        self.capacity
    }

    fn resident_bytes(&self) -> u64 {
        self.resident
    }

    fn len(&self) -> usize {
        self.entries.len()
    }

    fn contains(&self, key: Key) -> bool {
        self.index.contains_key(&key)
    }

    fn on_hit(&mut self, _key: Key) {}

    fn on_insert(&mut self, key: Key, size: u64) -> bool {
        self.remove(key);
        if size > self.capacity {
            return false;
        }
        self.index.insert(key, self.entries.len());
        self.entries.push((key, size));
        self.resident += size;
        true
    }

    fn evict(&mut self) -> Option<Key> {
        if self.entries.is_empty() {
            return None;
        }
        let i = self.rng.random_range(0..self.entries.len());
        Some(self.take(i))
    }

    fn remove(&mut self, key: Key) -> bool {
        match self.index.get(&key) {
            Some(&i) => {
                self.take(i);
                true
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_victims() {
        let victims = |seed| {
            let mut r = Random::new(1000, seed);
            for k in 0..50 {
                assert!(r.on_insert(k, 10));
            }
            (0..20).map(|_| r.evict().unwrap()).collect::<Vec<_>>()
        };
        assert_eq!(victims(7), victims(7));
        assert_ne!(victims(7), victims(8));
    }
}
