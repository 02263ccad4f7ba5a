//! Whole-term least-recently-used order: a doubly linked list over cache slots, kept in two
//! arrays, so a touch, an insertion and a removal are O(1) and nothing is allocated.

use crate::segment_chains::NIL;

/// Slots in recency order: the head is the most recently used, the tail the least.
#[derive(Debug, Clone)]
pub struct TermLru {
    prev: Vec<u32>,
    next: Vec<u32>,
    linked: Vec<bool>,
    head: u32,
    tail: u32,
}

impl TermLru {
    /// An empty order over `slots` slots.
    pub fn new(slots: u32) -> TermLru {
        TermLru {
            prev: vec![NIL; slots as usize],
            next: vec![NIL; slots as usize],
            linked: vec![false; slots as usize],
            head: NIL,
            tail: NIL,
        }
    }

    /// Whether `slot` is in the order.
    pub fn contains(&self, slot: u32) -> bool {
        self.linked[slot as usize]
    }

    /// Makes `slot` the most recently used, inserting it if absent.
    pub fn touch(&mut self, slot: u32) {
        if self.linked[slot as usize] {
            if self.head == slot {
                return;
            }
            self.unlink(slot);
        }
        let s = slot as usize;
        self.prev[s] = NIL;
        self.next[s] = self.head;
        if self.head != NIL {
            self.prev[self.head as usize] = slot;
        } else {
            self.tail = slot;
        }
        self.head = slot;
        self.linked[s] = true;
    }

    /// Removes `slot` (no change if absent).
    pub fn remove(&mut self, slot: u32) {
        if self.linked[slot as usize] {
            self.unlink(slot);
        }
    }

    fn unlink(&mut self, slot: u32) {
        let s = slot as usize;
        let (p, n) = (self.prev[s], self.next[s]);
        if p != NIL {
            self.next[p as usize] = n;
        } else {
            self.head = n;
        }
        if n != NIL {
            self.prev[n as usize] = p;
        } else {
            self.tail = p;
        }
        self.linked[s] = false;
        self.prev[s] = NIL;
        self.next[s] = NIL;
    }

    /// The least recently used slot for which `evictable` holds.
    pub fn victim(&self, mut evictable: impl FnMut(u32) -> bool) -> Option<u32> {
        let mut s = self.tail;
        while s != NIL {
            if evictable(s) {
                return Some(s);
            }
            s = self.prev[s as usize];
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Random touches, removals and victim queries against a vector model.
        #[test]
        fn matches_a_model(ops in proptest::collection::vec((0u8..3, 0u32..16, any::<u16>()), 1..300)) {
            let mut lru = TermLru::new(16);
            let mut model: Vec<u32> = Vec::new(); // most recent first
            for (op, slot, mask) in ops {
                match op {
                    0 => {
                        lru.touch(slot);
                        model.retain(|&s| s != slot);
                        model.insert(0, slot);
                    }
                    1 => {
                        lru.remove(slot);
                        model.retain(|&s| s != slot);
                    }
                    _ => {
                        let evictable = |s: u32| mask & (1 << s) != 0;
                        let want = model.iter().rev().copied().find(|&s| evictable(s));
                        prop_assert_eq!(lru.victim(evictable), want);
                    }
                }
                for s in 0..16 {
                    prop_assert_eq!(lru.contains(s), model.contains(&s));
                }
            }
        }
    }
}
