//! Least recently used: the victim is the resident key looked up or inserted longest ago.

use super::policy::{Key, Policy};
use super::slots::{List, Slots};

/// LRU over entries with sizes (see the [module](self) docs).
#[derive(Debug, Clone)]
pub struct Lru {
    capacity: u64,
    resident: u64,
    /// Entry sizes by slot.
    slots: Slots<u64>,
    /// Most recently used at the front.
    order: List,
}

impl Lru {
    /// An empty LRU for `capacity` bytes.
    pub fn new(capacity: u64) -> Lru {
        Lru {
            capacity,
            resident: 0,
            slots: Slots::new(),
            order: List::new(),
        }
    }
}

impl Policy for Lru {
    fn name(&self) -> &'static str {
        "lru"
    }

    fn capacity(&self) -> u64 {
        self.capacity
    }

    fn resident_bytes(&self) -> u64 {
        self.resident
    }

    fn len(&self) -> usize {
        self.slots.len()
    }

    fn contains(&self, key: Key) -> bool {
        self.slots.find(key).is_some()
    }

    fn on_hit(&mut self, key: Key) {
        if let Some(slot) = self.slots.find(key) {
            self.order.push_front(slot);
        }
    }

    fn on_insert(&mut self, key: Key, size: u64) -> bool {
        self.remove(key);
        if size > self.capacity {
            return false;
        }
        let slot = self.slots.insert(key, size);
        self.order.push_front(slot);
        self.resident += size;
        true
    }

    fn evict(&mut self) -> Option<Key> {
        let slot = self.order.pop_back()?;
        let (key, size) = self.slots.remove(slot);
        self.resident -= size;
        Some(key)
    }

    fn remove(&mut self, key: Key) -> bool {
        let Some(slot) = self.slots.find(key) else {
            return false;
        };
        self.order.remove(slot);
        let (_, size) = self.slots.remove(slot);
        self.resident -= size;
        true
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// Every victim is exactly the least recently used key of a vector model.
        #[test]
        fn evicts_the_least_recently_used(
            ops in proptest::collection::vec((0u8..4, 0u64..24, 1u64..40), 1..400)
        ) {
            let mut lru = Lru::new(200);
            let mut model: Vec<(Key, u64)> = Vec::new(); // most recent last
            for (op, key, size) in ops {
                match op {
                    0 | 1 if !model.iter().any(|&(k, _)| k == key) => {
                        prop_assert!(lru.on_insert(key, size));
                        model.push((key, size));
                        while lru.over_capacity() {
                            let victim = lru.evict();
                            prop_assert_eq!(victim, Some(model.remove(0).0));
                        }
                    }
                    0 | 1 => {
                        lru.on_hit(key);
                        let i = model.iter().position(|&(k, _)| k == key).unwrap();
                        let e = model.remove(i);
                        model.push(e);
                    }
                    2 => {
                        let was = model.iter().position(|&(k, _)| k == key);
                        prop_assert_eq!(lru.remove(key), was.is_some());
                        if let Some(i) = was {
                            model.remove(i);
                        }
                    }
                    _ => {
                        let expected = if model.is_empty() { None } else { Some(model.remove(0).0) };
                        prop_assert_eq!(lru.evict(), expected);
                    }
                }
                prop_assert_eq!(lru.resident_bytes(), model.iter().map(|&(_, s)| s).sum::<u64>());
                prop_assert_eq!(lru.len(), model.len());
            }
        }
    }
}
