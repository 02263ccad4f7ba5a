//! S3-FIFO (Yang, Zhang, Qiu, Yue and Vinayak, "FIFO queues are all you need for cache
//! eviction", SOSP 2023): three FIFO queues and a small frequency counter per entry.
//!
//! - *Small* (`S`) takes about 10% of the capacity; new entries enter it, so an entry seen once
//!   (most of a scan, most one-hit wonders) leaves quickly.
//! - *Main* (`M`) takes the rest and holds entries that proved themselves.
//! - *Ghost* (`G`) remembers keys (no data) recently evicted from `S`.
//!
//! Each resident entry counts its hits since it entered, capped at 3. A miss inserts the key
//! at the head of `M` if `G` remembers it (it came back soon after leaving `S`), else at the
//! head of `S`; either way with a count of 0. To evict: if `S` holds at least its share of the
//! capacity (or `M` is empty), take the tail of `S`: with a count of
//! [`MOVE_TO_MAIN`](S3Fifo::MOVE_TO_MAIN) (2) or more it moves to the head of `M` with a
//! count of 0 and the search goes on; with less it leaves the cache and its key goes to `G`.
//! Otherwise take the tail of `M`: with a count above 0 it is reinserted at the head with the
//! count decremented and the search goes on; with 0 it leaves.
//!
//! The count starts again at 0 in `M`, as in the authors' implementation (libCacheSim's
//! `S3FIFO.c` inserts the moved object into the main FIFO as a new object): the hit that
//! earned the move is spent on it, and to stay past one pass of `M` the entry must be hit
//! again there. Carrying the count over gave an entry hit once in `S` (often right after it
//! arrived) a second pass of `M` without any hit there.
//!
//! Two hits in `S` earn the move, not one: that is the authors' own default
//! (`move-to-main-threshold=2` in libCacheSim's `S3FIFO.c`), and it is what keeps a burst
//! from passing for popularity. References that come together (a user who repeats a query at
//! once, a single term asked right after the disjunction whose entry holds its section)
//! touch an entry once more within its first moments; with a threshold of one hit, every such
//! entry took a full pass of `M`, however rarely it was asked again. An entry that is really
//! asked again still reaches `M`: by a second hit in `S`, or through `G` when it comes back
//! after leaving.
//!
//! Sizes are in bytes: `S`'s share is `capacity / 10` bytes, and `G` remembers keys whose
//! sizes add up to at most `M`'s share (the paper keeps as many ghost entries as `M` holds),
//! dropping its oldest first. [`remove`](Policy::remove) forgets a key entirely, ghost
//! included.

use super::policy::{Key, Policy};
use super::slots::{List, Slots};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Queue {
    Small,
    Main,
    Ghost,
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    size: u64,
    freq: u8,
    queue: Queue,
}

/// S3-FIFO over entries with sizes (see the [module](self) docs).
#[derive(Debug, Clone)]
pub struct S3Fifo {
    capacity: u64,
    /// Hits in `S` that move an entry to `M` when it leaves `S`.
    move_to_main: u8,
    small_target: u64,
    small_bytes: u64,
    main_bytes: u64,
    ghost_bytes: u64,
    slots: Slots<Entry>,
    /// Heads (newest) at the front, tails (next out) at the back.
    small: List,
    main: List,
    ghost: List,
}

impl S3Fifo {
    /// The highest hit count an entry keeps.
    pub const MAX_FREQ: u8 = 3;
    /// The hit count at which an entry leaving the small queue moves to the main queue
    /// instead of leaving the cache, unless told otherwise (the module docs say why two).
    pub const MOVE_TO_MAIN: u8 = 2;

    /// An empty policy for `capacity` bytes.
    pub fn new(capacity: u64) -> S3Fifo {
        S3Fifo::with_move_to_main(capacity, S3Fifo::MOVE_TO_MAIN)
    }

    /// An empty policy for `capacity` bytes whose entries move from the small queue to the
    /// main one after `hits` hits there (1 to [`MAX_FREQ`](Self::MAX_FREQ)).
    pub fn with_move_to_main(capacity: u64, hits: u8) -> S3Fifo {
        S3Fifo {
            capacity,
            move_to_main: hits.clamp(1, S3Fifo::MAX_FREQ),
            small_target: capacity / 10,
            small_bytes: 0,
            main_bytes: 0,
            ghost_bytes: 0,
            slots: Slots::new(),
            small: List::new(),
            main: List::new(),
            ghost: List::new(),
        }
    }

    /// The bytes of keys the ghost queue may remember: the main queue's share.
    fn ghost_capacity(&self) -> u64 {
        self.capacity - self.small_target
    }

    /// Bytes in the small queue.
    pub fn small_bytes(&self) -> u64 {
        self.small_bytes
    }

    /// Bytes in the main queue.
    pub fn main_bytes(&self) -> u64 {
        self.main_bytes
    }

    /// Whether `key` is resident in the main queue.
    pub fn in_main(&self, key: Key) -> bool {
        self.slots
            .find(key)
            .is_some_and(|s| self.slots.get(s).queue == Queue::Main)
    }

    /// Whether the ghost queue remembers `key`.
    pub fn in_ghost(&self, key: Key) -> bool {
        self.slots
            .find(key)
            .is_some_and(|s| self.slots.get(s).queue == Queue::Ghost)
    }

    fn add_ghost(&mut self, slot: u32) {
        let entry = self.slots.get_mut(slot);
        entry.queue = Queue::Ghost;
        entry.freq = 0;
        self.ghost_bytes += entry.size;
        self.ghost.push_front(slot);
        while self.ghost_bytes > self.ghost_capacity() {
            let oldest = self.ghost.pop_back().expect("ghost entries");
            let (_, e) = self.slots.remove(oldest);
            self.ghost_bytes -= e.size;
        }
    }

    /// Checks every structural invariant, panicking on the first broken one (tests only).
    #[cfg(test)]
    pub(crate) fn check(&self) {
        let mut bytes = [0u64; 3];
        let mut counts = [0usize; 3];
        for (slot, _, e) in self.slots.iter() {
            let lists = [&self.small, &self.main, &self.ghost];
            let i = e.queue as usize;
            for (j, list) in lists.iter().enumerate() {
                assert_eq!(
                    list.contains(slot),
                    i == j,
                    "slot {slot} in the wrong queue"
                );
            }
            assert!(e.freq <= S3Fifo::MAX_FREQ);
            assert!(e.queue != Queue::Ghost || e.freq == 0);
            bytes[i] += e.size;
            counts[i] += 1;
        }
        assert_eq!(bytes, [self.small_bytes, self.main_bytes, self.ghost_bytes]);
        assert_eq!(
            counts,
            [self.small.len(), self.main.len(), self.ghost.len()]
        );
        assert!(self.ghost_bytes <= self.ghost_capacity());
    }
}

impl Policy for S3Fifo {
    fn name(&self) -> &'static str {
        "s3fifo"
    }

    fn capacity(&self) -> u64 {
        self.capacity
    }

    fn resident_bytes(&self) -> u64 {
        self.small_bytes + self.main_bytes
    }

    fn len(&self) -> usize {
        self.small.len() + self.main.len()
    }

    fn contains(&self, key: Key) -> bool {
        self.slots
            .find(key)
            .is_some_and(|s| self.slots.get(s).queue != Queue::Ghost)
    }

    fn on_hit(&mut self, key: Key) {
        if let Some(slot) = self.slots.find(key) {
            let entry = self.slots.get_mut(slot);
            if entry.queue != Queue::Ghost {
                entry.freq = (entry.freq + 1).min(S3Fifo::MAX_FREQ);
            }
        }
    }

    fn on_insert(&mut self, key: Key, size: u64) -> bool {
        if self.contains(key) {
            self.remove(key);
        }
        if size > self.capacity {
            return false;
        }
        match self.slots.find(key) {
            Some(slot) => {
                // Remembered by the ghost queue: straight to main.
                self.ghost.remove(slot);
                let entry = self.slots.get_mut(slot);
                self.ghost_bytes -= entry.size;
                *entry = Entry {
                    size,
                    freq: 0,
                    queue: Queue::Main,
                };
                self.main.push_front(slot);
                self.main_bytes += size;
            }
            None => {
                let slot = self.slots.insert(
                    key,
                    Entry {
                        size,
                        freq: 0,
                        queue: Queue::Small,
                    },
                );
                self.small.push_front(slot);
                self.small_bytes += size;
            }
        }
        true
    }

    fn evict(&mut self) -> Option<Key> {
        loop {
            let from_small = !self.small.is_empty()
                && (self.small_bytes >= self.small_target || self.main.is_empty());
            if from_small {
                let slot = self.small.pop_back().expect("small is not empty");
                let entry = self.slots.get_mut(slot);
                self.small_bytes -= entry.size;
                if entry.freq >= self.move_to_main {
                    entry.queue = Queue::Main;
                    entry.freq = 0;
                    self.main_bytes += entry.size;
                    self.main.push_front(slot);
                } else {
                    let key = self.slots.key(slot);
                    self.add_ghost(slot);
                    return Some(key);
                }
            } else {
                let slot = self.main.pop_back()?;
                let entry = self.slots.get_mut(slot);
                if entry.freq > 0 {
                    entry.freq -= 1;
                    self.main.push_front(slot);
                } else {
                    self.main_bytes -= entry.size;
                    return Some(self.slots.remove(slot).0);
                }
            }
        }
    }

    fn remove(&mut self, key: Key) -> bool {
        let Some(slot) = self.slots.find(key) else {
            return false;
        };
        let (_, entry) = self.slots.remove(slot);
        match entry.queue {
            Queue::Small => {
                self.small.remove(slot);
                self.small_bytes -= entry.size;
            }
            Queue::Main => {
                self.main.remove(slot);
                self.main_bytes -= entry.size;
            }
            Queue::Ghost => {
                self.ghost.remove(slot);
                self.ghost_bytes -= entry.size;
            }
        }
        entry.queue != Queue::Ghost
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;

    use proptest::prelude::*;

    use super::*;

    /// S3-FIFO written the slow, obvious way: queues of (key, size, freq), newest first,
    /// searched linearly.
    struct Reference {
        move_to_main: u8,
        small_target: u64,
        ghost_capacity: u64,
        small: VecDeque<(Key, u64, u8)>,
        main: VecDeque<(Key, u64, u8)>,
        ghost: VecDeque<(Key, u64)>,
    }

    impl Reference {
        fn new(capacity: u64, move_to_main: u8) -> Reference {
            Reference {
                move_to_main,
                small_target: capacity / 10,
                ghost_capacity: capacity - capacity / 10,
                small: VecDeque::new(),
                main: VecDeque::new(),
                ghost: VecDeque::new(),
            }
        }

        fn bytes(q: &VecDeque<(Key, u64, u8)>) -> u64 {
            q.iter().map(|e| e.1).sum()
        }

        fn resident(&self) -> Vec<(Key, u64)> {
            let mut r: Vec<(Key, u64)> = self
                .small
                .iter()
                .chain(&self.main)
                .map(|e| (e.0, e.1))
                .collect();
            r.sort_unstable();
            r
        }

        fn hit(&mut self, key: Key) {
            for e in self.small.iter_mut().chain(self.main.iter_mut()) {
                if e.0 == key {
                    e.2 = (e.2 + 1).min(3);
                }
            }
        }

        fn insert(&mut self, key: Key, size: u64) {
            if let Some(i) = self.ghost.iter().position(|g| g.0 == key) {
                self.ghost.remove(i);
                self.main.push_front((key, size, 0));
            } else {
                self.small.push_front((key, size, 0));
            }
        }

        fn evict(&mut self) -> Option<Key> {
            loop {
                if !self.small.is_empty()
                    && (Self::bytes(&self.small) >= self.small_target || self.main.is_empty())
                {
                    let (k, s, f) = self.small.pop_back().unwrap();
                    if f >= self.move_to_main {
                        self.main.push_front((k, s, 0));
                    } else {
                        self.ghost.push_front((k, s));
                        while self.ghost.iter().map(|g| g.1).sum::<u64>() > self.ghost_capacity {
                            self.ghost.pop_back();
                        }
                        return Some(k);
                    }
                } else {
                    let (k, s, f) = self.main.pop_back()?;
                    if f > 0 {
                        self.main.push_front((k, s, f - 1));
                    } else {
                        return Some(k);
                    }
                }
            }
        }

        fn remove(&mut self, key: Key) {
            self.small.retain(|e| e.0 != key);
            self.main.retain(|e| e.0 != key);
            self.ghost.retain(|g| g.0 != key);
        }
    }

    #[test]
    fn two_hits_in_small_earn_main() {
        let mut s = S3Fifo::new(100); // small: 10 bytes
        assert!(s.on_insert(1, 3));
        s.on_hit(1);
        s.on_hit(1);
        assert!(s.on_insert(4, 3));
        s.on_hit(4);
        assert!(s.on_insert(2, 3));
        assert!(s.on_insert(3, 91));
        // Small holds 100 bytes: 1 (hit twice) moves to main; 4 (hit once) leaves for the
        // ghost.
        assert_eq!(s.evict(), Some(4));
        assert!(s.in_main(1) && s.in_ghost(4));
        // Then 2, never hit.
        assert_eq!(s.evict(), Some(2));
        assert!(s.in_ghost(2));
        // 2 comes back while remembered: straight to main.
        assert!(s.on_insert(2, 5));
        assert!(s.in_main(2));
        s.check();
    }

    proptest! {
        /// Victims, residents and ghost contents match the slow reference.
        #[test]
        fn matches_the_reference(
            capacity in 1u64..300,
            move_to_main in 1u8..=3,
            ops in proptest::collection::vec((0u8..6, 0u64..40, 1u64..60), 1..400)
        ) {
            let mut s = S3Fifo::with_move_to_main(capacity, move_to_main);
            let mut r = Reference::new(capacity, move_to_main);
            for (op, key, size) in ops {
                match op {
                    0..=2 => {
                        if s.contains(key) {
                            s.on_hit(key);
                            r.hit(key);
                        } else if size <= capacity {
                            prop_assert!(s.on_insert(key, size));
                            r.insert(key, size);
                            while s.over_capacity() {
                                prop_assert_eq!(s.evict(), r.evict());
                            }
                        } else {
                            prop_assert!(!s.on_insert(key, size));
                        }
                    }
                    3 => {
                        s.on_hit(key);
                        r.hit(key);
                    }
                    4 => {
                        s.remove(key);
                        r.remove(key);
                    }
                    _ => prop_assert_eq!(s.evict(), r.evict()),
                }
                s.check();
                let mut resident = Vec::new();
                for (_, k, e) in s.slots.iter() {
                    if e.queue != Queue::Ghost {
                        resident.push((k, e.size));
                    }
                }
                resident.sort_unstable();
                prop_assert_eq!(resident, r.resident());
                for &(k, _) in &r.ghost {
                    prop_assert!(s.in_ghost(k));
                }
                prop_assert_eq!(s.ghost.len(), r.ghost.len());
            }
        }
    }
}
