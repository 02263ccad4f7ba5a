//! DLIRS (Cong Li, "DLIRS: Improving Low Inter-Reference Recency Set Cache Replacement
//! Policy with Dynamics", SYSTOR 2018): LIRS with the split of the cache between LIR and
//! resident HIR entries adapted to the workload, the way ARC adapts its split.
//!
//! # LIRS (Jiang and Zhang, SIGMETRICS 2002)
//!
//! An entry's inter-reference recency (IRR) is the number of other keys seen between its last
//! two accesses. Entries with a low IRR are LIR and are kept; the rest are HIR, and only a
//! small part of the cache holds resident HIR entries, so a one-time scan (entries of infinite
//! IRR) passes through that part without disturbing the LIR entries.
//!
//! - The stack `S` holds, most recent on top, the LIR entries and the HIR entries (resident or
//!   not) more recent than the least recent LIR entry; it is *pruned* so that its bottom is
//!   always LIR. A non-resident HIR entry in `S` is history only: its key, no data.
//! - The queue `Q` holds the resident HIR entries; the victim is its front.
//! - A hit on a LIR entry moves it to the top of `S` (and prunes if it was the bottom).
//! - A hit on a resident HIR entry that is in `S` (its IRR is below the oldest LIR's
//!   recency) makes it LIR; LIR entries from the bottom of `S` are *demoted* to resident HIR
//!   (to the back of `Q`) until the LIR entries fit their share again. A hit on a resident
//!   HIR entry not in `S` puts it on top of `S` and at the back of `Q`.
//! - A miss on a key that is non-resident HIR in `S` makes it LIR (as above). Any other miss
//!   makes a resident HIR entry, on top of `S` and at the back of `Q`; except while the cache
//!   is filling: an entry that fits in the free room and in the LIR share becomes LIR at once.
//! - The resident HIR set always has room for the entry just missed: LIRS sizes it at 1% of
//!   the cache *and at least one block*, so a new block stays resident until the next miss
//!   and a reuse right after its first access is a hit. With entries of many sizes the share
//!   can be smaller than an entry (1% of a heap of 80 entries is under one); then LIR entries
//!   are demoted from the bottom of `S`, before the new entry joins `Q`, until the LIR
//!   entries and the new entry fit together. Without this, every new entry larger than the
//!   share was evicted on arrival. For the same reason an eviction never takes the entry
//!   just missed while another entry is resident: when it is the front of `Q` (the cache
//!   evicts beyond the capacity when its heap is fragmented), the next entry of `Q`, or else
//!   the bottom LIR entry demoted, goes in its place.
//! - Eviction takes the front of `Q`; if it is in `S` it stays there as non-resident history.
//!   The history is bounded: non-resident entries take at most `capacity` bytes (as if `S`
//!   held at most twice the cache), the oldest dropped first.
//!
//! # The dynamics (DLIRS), as recalled from the paper
//!
//! LIRS fixes the resident HIR share (1% in the original study, the initial value here). DLIRS
//! moves it with two signals, like ARC's two ghost lists:
//!
//! - a miss on a *non-resident HIR* entry in `S` means the HIR share was too small to keep
//!   it until its second access: the HIR share grows by `max(1, demoted / non-resident)`
//!   units;
//! - a hit on a *demoted* entry (a resident HIR entry demoted from LIR and not accessed since)
//!   means the LIR share was too small to keep it: the HIR share shrinks by
//!   `max(1, non-resident / demoted)` units.
//!
//! `demoted` and `non-resident` are the numbers of such entries, so a signal from the rarer
//! kind moves the split further. The paper counts in blocks; here entries have sizes, so a unit
//! is the size of the entry that gave the signal, the ratio is of entry counts rounded to the
//! nearest integer, and the HIR share stays within `[1, capacity - 1]` bytes. When the HIR
//! share grows, LIR entries are demoted from the bottom of `S` until the LIR entries fit again;
//! when it shrinks, the LIR set grows as HIR entries are promoted.
//!
//! [`remove`](Policy::remove) forgets a key entirely, history included.

use super::policy::{Key, Policy};
use super::slots::{List, Slots};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    Lir,
    /// Resident HIR: in `Q`, possibly in `S`.
    Hir,
    /// Non-resident HIR: in `S` and in the history list only.
    NonResident,
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    size: u64,
    status: Status,
    /// Demoted from LIR and not accessed since (resident HIR entries only).
    demoted: bool,
}

/// DLIRS over entries with sizes (see the [module](self) docs).
#[derive(Debug, Clone)]
pub struct Dlirs {
    capacity: u64,
    /// Bytes the resident HIR entries may take before LIR entries are limited to the rest.
    hir_target: u64,
    lir_bytes: u64,
    lir_count: usize,
    hir_bytes: u64,
    nonresident_bytes: u64,
    demoted: usize,
    slots: Slots<Entry>,
    /// The LIRS stack: top (most recent) at the front, bottom (always LIR) at the back.
    stack: List,
    /// Resident HIR entries: the next victim at the front.
    queue: List,
    /// Non-resident entries, oldest at the front, to bound the history.
    history: List,
    /// The key of the last miss, which evictions spare while anything else is resident.
    newest: Option<Key>,
}

impl Dlirs {
    /// The resident HIR share a new policy starts with, as a fraction of the capacity (the
    /// original study's 1%).
    pub const INITIAL_HIR_SHARE: f64 = 0.01;

    /// An empty policy for `capacity` bytes, with [`INITIAL_HIR_SHARE`](Self::INITIAL_HIR_SHARE)
    /// of it for resident HIR entries.
    pub fn new(capacity: u64) -> Dlirs {
        Dlirs::with_hir_share(capacity, Dlirs::INITIAL_HIR_SHARE)
    }

    /// An empty policy for `capacity` bytes whose resident HIR share starts at `share` of it
    /// (clamped to `[1, capacity - 1]` bytes).
    pub fn with_hir_share(capacity: u64, share: f64) -> Dlirs {
        let mut dlirs = Dlirs {
            capacity,
            hir_target: 0,
            lir_bytes: 0,
            lir_count: 0,
            hir_bytes: 0,
            nonresident_bytes: 0,
            demoted: 0,
            slots: Slots::new(),
            stack: List::new(),
            queue: List::new(),
            history: List::new(),
            newest: None,
        };
        dlirs.set_hir_target((capacity as f64 * share).round() as u64);
        dlirs
    }

    /// Bytes the resident HIR entries are meant to take now (the LIR entries take at most
    /// the rest of the capacity).
    pub fn hir_target(&self) -> u64 {
        self.hir_target
    }

    /// Bytes the LIR entries may take now.
    pub fn lir_target(&self) -> u64 {
        self.capacity - self.hir_target
    }

    /// Bytes of the LIR entries.
    pub fn lir_bytes(&self) -> u64 {
        self.lir_bytes
    }

    /// Whether `key` is resident and LIR.
    pub fn is_lir(&self, key: Key) -> bool {
        self.slots
            .find(key)
            .is_some_and(|s| self.slots.get(s).status == Status::Lir)
    }

    fn set_hir_target(&mut self, target: u64) {
        // [1, capacity - 1], or the whole capacity when it is below 2 bytes.
        self.hir_target = target
            .clamp(1, self.capacity.saturating_sub(1).max(1))
            .min(self.capacity);
    }

    /// Removes HIR entries from the bottom of the stack until a LIR entry is there (while
    /// there is none, the stack keeps its HIR entries: they become LIR on their next access).
    fn prune(&mut self) {
        if self.lir_count == 0 {
            return;
        }
        while let Some(bottom) = self.stack.back() {
            match self.slots.get(bottom).status {
                Status::Lir => break,
                Status::Hir => {
                    self.stack.remove(bottom);
                }
                Status::NonResident => {
                    self.stack.remove(bottom);
                    self.forget_nonresident(bottom);
                }
            }
        }
    }

    fn forget_nonresident(&mut self, slot: u32) {
        self.history.remove(slot);
        let (_, entry) = self.slots.remove(slot);
        self.nonresident_bytes -= entry.size;
    }

    /// Demotes the LIR entry at the bottom of the stack to resident HIR.
    fn demote_bottom(&mut self) {
        let bottom = self.stack.back().expect("a LIR entry at the bottom");
        let entry = self.slots.get_mut(bottom);
        debug_assert_eq!(entry.status, Status::Lir);
        entry.status = Status::Hir;
        entry.demoted = true;
        let size = entry.size;
        self.lir_bytes -= size;
        self.lir_count -= 1;
        self.hir_bytes += size;
        self.demoted += 1;
        self.stack.remove(bottom);
        self.queue.push_back(bottom);
        self.prune();
    }

    /// Demotes LIR entries until they fit their share.
    fn fit_lir(&mut self) {
        while self.lir_bytes > self.lir_target() {
            self.demote_bottom();
        }
    }

    /// Makes the HIR entry (resident or not) in `slot` LIR, on top of the stack.
    fn promote(&mut self, slot: u32) {
        let entry = self.slots.get_mut(slot);
        match entry.status {
            Status::Lir => unreachable!("promoting a LIR entry"),
            Status::Hir => {
                self.hir_bytes -= entry.size;
                if entry.demoted {
                    entry.demoted = false;
                    self.demoted -= 1;
                }
                self.queue.remove(slot);
            }
            Status::NonResident => {
                self.nonresident_bytes -= entry.size;
                self.history.remove(slot);
            }
        }
        let entry = self.slots.get_mut(slot);
        entry.status = Status::Lir;
        self.lir_bytes += entry.size;
        self.lir_count += 1;
        self.stack.push_front(slot);
        self.prune();
        self.fit_lir();
    }

    /// `unit * max(1, round(a / b))`.
    fn step(unit: u64, a: usize, b: usize) -> u64 {
        let ratio = (a + b / 2).checked_div(b).map_or(1, |r| r.max(1));
        unit.saturating_mul(ratio as u64)
    }

    /// Drops the oldest non-resident entries until the history fits.
    fn trim_history(&mut self) {
        while self.nonresident_bytes > self.capacity {
            let oldest = self.history.front().expect("non-resident entries");
            self.stack.remove(oldest);
            self.forget_nonresident(oldest);
        }
    }

    /// Checks every structural invariant, panicking on the first broken one (tests only).
    #[cfg(test)]
    pub(crate) fn check(&self) {
        let (mut lir, mut hir, mut nonres, mut demoted) = (0u64, 0u64, 0u64, 0usize);
        let (mut n_lir, mut n_hir, mut n_nonres) = (0usize, 0usize, 0usize);
        for (slot, _, e) in self.slots.iter() {
            match e.status {
                Status::Lir => {
                    assert!(self.stack.contains(slot) && !self.queue.contains(slot));
                    assert!(!self.history.contains(slot) && !e.demoted);
                    lir += e.size;
                    n_lir += 1;
                }
                Status::Hir => {
                    assert!(self.queue.contains(slot) && !self.history.contains(slot));
                    hir += e.size;
                    n_hir += 1;
                    if e.demoted {
                        demoted += 1;
                    }
                }
                Status::NonResident => {
                    assert!(self.stack.contains(slot) && self.history.contains(slot));
                    assert!(!self.queue.contains(slot) && !e.demoted);
                    nonres += e.size;
                    n_nonres += 1;
                }
            }
        }
        assert_eq!(
            (lir, hir, nonres),
            (self.lir_bytes, self.hir_bytes, self.nonresident_bytes)
        );
        assert_eq!(demoted, self.demoted);
        assert_eq!(n_hir, self.queue.len());
        assert_eq!(n_nonres, self.history.len());
        assert_eq!(n_lir, self.lir_count);
        if let (Some(bottom), true) = (self.stack.back(), n_lir > 0) {
            assert_eq!(
                self.slots.get(bottom).status,
                Status::Lir,
                "stack bottom not LIR"
            );
        }
        assert!(self.lir_bytes <= self.lir_target());
        assert!(self.nonresident_bytes <= self.capacity);
        assert!(self.hir_target <= self.capacity && (self.hir_target >= 1 || self.capacity == 0));
    }
}

impl Policy for Dlirs {
    fn name(&self) -> &'static str {
        "dlirs"
    }

    fn capacity(&self) -> u64 {
        self.capacity
    }

    fn resident_bytes(&self) -> u64 {
        self.lir_bytes + self.hir_bytes
    }

    fn len(&self) -> usize {
        self.slots.len() - self.history.len()
    }

    fn contains(&self, key: Key) -> bool {
        self.slots
            .find(key)
            .is_some_and(|s| self.slots.get(s).status != Status::NonResident)
    }

    fn on_hit(&mut self, key: Key) {
        let Some(slot) = self.slots.find(key) else {
            return;
        };
        let Entry {
            size,
            status,
            demoted,
        } = *self.slots.get(slot);
        match status {
            Status::NonResident => {}
            Status::Lir => {
                let was_bottom = self.stack.back() == Some(slot);
                self.stack.push_front(slot);
                if was_bottom {
                    self.prune();
                }
            }
            Status::Hir => {
                if demoted {
                    // The LIR share was too small to keep this entry: shrink the HIR share.
                    let step = Dlirs::step(size, self.history.len(), self.demoted);
                    self.set_hir_target(self.hir_target.saturating_sub(step));
                    self.slots.get_mut(slot).demoted = false;
                    self.demoted -= 1;
                }
                if self.stack.contains(slot) {
                    self.promote(slot);
                } else {
                    self.stack.push_front(slot);
                    self.queue.push_back(slot);
                }
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
        self.newest = Some(key);
        if let Some(slot) = self.slots.find(key) {
            // A non-resident HIR entry: the HIR share was too small to keep it.
            let step = Dlirs::step(size, self.demoted, self.history.len());
            self.set_hir_target(self.hir_target.saturating_add(step));
            let old = std::mem::replace(&mut self.slots.get_mut(slot).size, size);
            self.nonresident_bytes = self.nonresident_bytes - old + size;
            self.promote(slot);
            return true;
        }
        let filling = self.resident_bytes() + size <= self.capacity;
        let status = if filling && self.lir_bytes + size <= self.lir_target() {
            Status::Lir
        } else {
            Status::Hir
        };
        if status == Status::Hir {
            // The resident HIR set holds at least this entry (see the module docs): demoted
            // entries join `Q` ahead of it, so evictions take them first.
            while self.lir_count > 0 && self.lir_bytes + size > self.capacity {
                self.demote_bottom();
            }
        }
        let slot = self.slots.insert(
            key,
            Entry {
                size,
                status,
                demoted: false,
            },
        );
        self.stack.push_front(slot);
        if status == Status::Lir {
            self.lir_bytes += size;
            self.lir_count += 1;
            self.prune();
        } else {
            self.hir_bytes += size;
            self.queue.push_back(slot);
        }
        true
    }

    fn evict(&mut self) -> Option<Key> {
        if self.queue.is_empty() {
            // Only LIR entries are resident (the cache evicts beyond the capacity, for
            // fragmentation), or none: the least recent LIR entry, at the bottom, goes.
            if self.lir_count == 0 {
                return None;
            }
            self.demote_bottom();
        }
        // Spare the entry just missed while another is resident (see the module docs).
        if let Some(front) = self.queue.front() {
            if Some(self.slots.key(front)) == self.newest
                && (self.queue.len() > 1 || self.lir_count > 0)
            {
                if self.queue.len() == 1 {
                    self.demote_bottom();
                }
                self.queue.remove(front);
                self.queue.push_back(front);
            }
        }
        let slot = self.queue.pop_front()?;
        let key = self.slots.key(slot);
        let entry = self.slots.get_mut(slot);
        let size = entry.size;
        if entry.demoted {
            entry.demoted = false;
            self.demoted -= 1;
        }
        self.hir_bytes -= size;
        if self.stack.contains(slot) {
            self.slots.get_mut(slot).status = Status::NonResident;
            self.nonresident_bytes += size;
            self.history.push_back(slot);
            self.trim_history();
            self.prune();
        } else {
            self.slots.remove(slot);
        }
        Some(key)
    }

    fn remove(&mut self, key: Key) -> bool {
        let Some(slot) = self.slots.find(key) else {
            return false;
        };
        let entry = *self.slots.get(slot);
        self.stack.remove(slot);
        match entry.status {
            Status::Lir => {
                self.lir_bytes -= entry.size;
                self.lir_count -= 1;
            }
            Status::Hir => {
                self.queue.remove(slot);
                self.hir_bytes -= entry.size;
                if entry.demoted {
                    self.demoted -= 1;
                }
            }
            Status::NonResident => {
                self.history.remove(slot);
                self.nonresident_bytes -= entry.size;
            }
        }
        self.slots.remove(slot);
        self.prune();
        entry.status != Status::NonResident
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// The cache's side of the protocol: a hit, or an insertion and evictions.
    fn access(d: &mut Dlirs, key: Key, size: u64) -> bool {
        if d.contains(key) {
            d.on_hit(key);
            return true;
        }
        if d.on_insert(key, size) {
            while d.over_capacity() {
                d.evict().unwrap();
            }
        }
        d.check();
        false
    }

    #[test]
    fn classic_lirs_example() {
        // Entries of 1 byte in a cache of 3 with a HIR share of 1: two LIR entries.
        let mut d = Dlirs::with_hir_share(3, 0.34);
        assert_eq!(d.hir_target(), 1);
        for k in [1, 2] {
            access(&mut d, k, 1);
            assert!(d.is_lir(k));
        }
        access(&mut d, 3, 1); // fills the HIR share
        assert!(!d.is_lir(3) && d.contains(3));
        access(&mut d, 4, 1); // evicts 3, which stays in S as history
        assert!(!d.contains(3) && d.contains(4));
        assert_eq!(d.resident_bytes(), 3);
        // 3 again: a non-resident HIR entry in S becomes LIR, demoting 1 (the bottom), and
        // the HIR share grows.
        access(&mut d, 3, 1);
        assert!(d.is_lir(3));
        assert!(d.hir_target() > 1);
        assert!(!d.is_lir(1));
    }

    #[test]
    fn a_hit_on_a_demoted_entry_shrinks_the_hir_share() {
        let mut d = Dlirs::with_hir_share(10, 0.5);
        for k in 0..5 {
            access(&mut d, k, 1); // LIR: 0..5
        }
        for k in 5..10 {
            access(&mut d, k, 1); // HIR: 5..10
        }
        access(&mut d, 5, 1); // 5 is in S: it becomes LIR, demoting 0
        assert!(d.is_lir(5) && !d.is_lir(0) && d.contains(0));
        let before = d.hir_target();
        access(&mut d, 0, 1);
        assert!(d.hir_target() < before);
        d.check();
    }

    #[test]
    fn a_new_entry_larger_than_the_hir_share_stays_until_the_next_miss() {
        // 100 bytes, a HIR share of 1 byte: LIR fills 99 bytes with nine entries of 11.
        let mut d = Dlirs::new(100);
        for k in 0..9 {
            access(&mut d, k, 11);
            assert!(d.is_lir(k));
        }
        // 9 leaves no room beside the LIR entries: the bottom one (0) is demoted and goes,
        // and 9 stays, resident HIR (it used to be evicted on arrival).
        assert!(!access(&mut d, 9, 10));
        assert!(d.contains(9) && !d.is_lir(9) && !d.contains(0));
        // An eviction beyond the capacity (a fragmented heap) spares it too.
        let victim = d.evict().unwrap();
        assert!(victim != 9 && d.contains(9));
        // Reused right after its first access: a hit, and in S, so it becomes LIR.
        assert!(access(&mut d, 9, 10));
        assert!(d.is_lir(9));
        // The next new entry takes its place in the resident HIR set.
        assert!(!access(&mut d, 10, 10));
        assert!(d.contains(10));
        d.check();
    }

    proptest! {
        /// Random accesses, removals and extra evictions keep the stack, the queue and the
        /// history consistent, and the split within its bounds.
        #[test]
        fn keeps_its_structure(
            capacity in 1u64..300,
            ops in proptest::collection::vec((0u8..6, 0u64..40, 1u64..60), 1..400)
        ) {
            let mut d = Dlirs::new(capacity);
            for (op, key, size) in ops {
                match op {
                    0..=3 => {
                        access(&mut d, key, size);
                    }
                    4 => {
                        d.remove(key);
                    }
                    _ => {
                        let had = d.len();
                        let victim = d.evict();
                        prop_assert_eq!(victim.is_some(), had > 0);
                    }
                }
                d.check();
                prop_assert!(d.resident_bytes() <= d.capacity());
            }
        }
    }
}
