//! The table of apcache's live file mappings, which the `SIGBUS` handler searches for the
//! address that faulted.
//!
//! A signal handler may not lock or allocate: the thread it interrupted may hold the lock or
//! be inside the allocator. So the table is written with atomics only and read in the handler
//! with atomic loads only. It is a list of chunks of slots that only grows: a chunk, once
//! published, is never freed, so the handler can walk the list at any moment. Registering a
//! mapping claims a free slot (allocating a chunk, outside any handler, when all are taken);
//! dropping its [`Registration`] frees the slot before the mapping is unmapped.
//!
//! Each slot is a sequence lock: a writer makes its counter odd, writes the range, and makes
//! it even again; the handler reads the counter, the range and the counter, and reads again if
//! the counter moved, so it never takes a range half written for a mapping's.

use std::ptr;
use std::sync::atomic::{fence, AtomicBool, AtomicPtr, AtomicUsize, Ordering};

/// Slots per chunk: one chunk holds every file of 36 segments of 7 files.
const CHUNK_SLOTS: usize = 256;

/// One registered mapping: the bytes `[start, start + len)`, and whether a read of them faulted.
struct Slot {
    /// Taken by a registration (writers only; the handler ignores it).
    claimed: AtomicBool,
    /// The sequence lock: odd while the range is written.
    seq: AtomicUsize,
    start: AtomicUsize,
    /// 0 when the slot holds no mapping.
    len: AtomicUsize,
    /// Set by the handler on the first fault in the range; never cleared while registered.
    faulted: AtomicBool,
}

impl Slot {
    const fn new() -> Slot {
        Slot {
            claimed: AtomicBool::new(false),
            seq: AtomicUsize::new(0),
            start: AtomicUsize::new(0),
            len: AtomicUsize::new(0),
            faulted: AtomicBool::new(false),
        }
    }

    /// Writes the range (`len` 0: none) under the sequence lock. Only the claimant writes.
    fn write(&self, start: usize, len: usize) {
        let seq = self.seq.load(Ordering::Relaxed);
        self.seq.store(seq.wrapping_add(1), Ordering::Relaxed);
        fence(Ordering::Release);
        self.start.store(start, Ordering::Relaxed);
        self.len.store(len, Ordering::Relaxed);
        self.seq.store(seq.wrapping_add(2), Ordering::Release);
    }

    /// The range, read consistently (async-signal-safe: loads and spins only; a writer never
    /// runs on the thread of a fault in a mapping, so it always finishes).
    fn range(&self) -> (usize, usize) {
        loop {
            let before = self.seq.load(Ordering::Acquire);
            let start = self.start.load(Ordering::Relaxed);
            let len = self.len.load(Ordering::Relaxed);
            fence(Ordering::Acquire);
            if before.is_multiple_of(2) && self.seq.load(Ordering::Relaxed) == before {
                return (start, len);
            }
            std::hint::spin_loop();
        }
    }
}

struct Chunk {
    slots: [Slot; CHUNK_SLOTS],
    next: AtomicPtr<Chunk>,
}

impl Chunk {
    const fn new() -> Chunk {
        Chunk {
            slots: [const { Slot::new() }; CHUNK_SLOTS],
            next: AtomicPtr::new(ptr::null_mut()),
        }
    }

    fn next(&self) -> Option<&'static Chunk> {
        // SAFETY: a published chunk is leaked (`Box::leak`) and never freed.
        unsafe { self.next.load(Ordering::Acquire).as_ref() }
    }
}

static FIRST: Chunk = Chunk::new();

/// Every chunk, first to last.
fn chunks() -> impl Iterator<Item = &'static Chunk> {
    std::iter::successors(Some(&FIRST), |chunk| chunk.next())
}

/// A mapping's place in the table, from registration until it is dropped (before the
/// mapping is unmapped).
pub(crate) struct Registration {
    slot: &'static Slot,
}

impl Registration {
    /// Registers the mapped bytes `[start, start + len)`, `len` > 0.
    pub(crate) fn new(start: usize, len: usize) -> Registration {
        debug_assert!(len > 0);
        let slot = claim();
        slot.faulted.store(false, Ordering::Relaxed);
        slot.write(start, len);
        Registration { slot }
    }

    /// Whether a read of the mapping faulted (the handler then mapped zeros over the page).
    ///
    /// The faulting thread set the flag before it read the zeros. Another thread can read
    /// them only once the page of zeros is mapped, after the flag was stored (the handler's
    /// store is sequentially consistent, and `mmap` reaches other CPUs through their TLBs);
    /// the fence keeps this load after the caller's earlier reads of the mapping.
    #[inline]
    pub(crate) fn faulted(&self) -> bool {
        fence(Ordering::Acquire);
        self.slot.faulted.load(Ordering::Relaxed)
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.slot.write(0, 0);
        self.slot.claimed.store(false, Ordering::Release);
    }
}

/// A free slot, taken; a new chunk is appended when every slot is taken.
fn claim() -> &'static Slot {
    let mut last = &FIRST;
    loop {
        for chunk in std::iter::successors(Some(last), |chunk| chunk.next()) {
            for slot in &chunk.slots {
                if slot
                    .claimed
                    .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
                {
                    return slot;
                }
            }
            last = chunk;
        }
        let fresh = Box::into_raw(Box::new(Chunk::new()));
        if let Err(theirs) =
            last.next
                .compare_exchange(ptr::null_mut(), fresh, Ordering::AcqRel, Ordering::Acquire)
        {
            // Another thread appended first: ours was never published.
            // SAFETY: `fresh` came from `Box::into_raw` above and nobody else saw it.
            drop(unsafe { Box::from_raw(fresh) });
            debug_assert!(!theirs.is_null());
        }
    }
}

/// Marks the registered mapping holding `addr` as faulted; whether one holds it. Called from
/// the `SIGBUS` handler: atomic loads and stores only.
pub(super) fn mark_faulted(addr: usize) -> bool {
    for chunk in chunks() {
        for slot in &chunk.slots {
            let (start, len) = slot.range();
            if len != 0 && addr.wrapping_sub(start) < len {
                slot.faulted.store(true, Ordering::SeqCst);
                return true;
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_registered_range_is_found_until_dropped() {
        // Addresses no real mapping has (the top of the address space).
        let base = usize::MAX - (1 << 20);
        let a = Registration::new(base, 4096);
        let b = Registration::new(base + 8192, 100);
        assert!(!mark_faulted(base + 4096));
        assert!(!a.faulted() && !b.faulted());
        assert!(mark_faulted(base + 8192 + 99));
        assert!(b.faulted() && !a.faulted());
        assert!(mark_faulted(base));
        assert!(a.faulted());
        drop(a);
        assert!(!mark_faulted(base));
        // The freed slot serves the next mapping, which starts sound.
        let c = Registration::new(base + 16384, 4096);
        assert!(!c.faulted());
        assert!(mark_faulted(base + 16384));
        drop((b, c));
    }

    #[test]
    fn the_table_grows_past_a_chunk() {
        let base = usize::MAX - (1 << 30);
        let many: Vec<Registration> = (0..CHUNK_SLOTS * 2 + 3)
            .map(|i| Registration::new(base + i * 4096, 4096))
            .collect();
        let last = CHUNK_SLOTS * 2 + 2;
        assert!(mark_faulted(base + last * 4096 + 1));
        assert!(many[last].faulted());
        assert_eq!(many.iter().filter(|r| r.faulted()).count(), 1);
    }
}
