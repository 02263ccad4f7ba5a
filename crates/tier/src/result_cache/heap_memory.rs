//! [`HeapMemory`]: where a result cache's heap lives, DRAM or a piece of a tier region.
//!
//! The design places the result cache beside the postings cache in the second tier when DRAM
//! is the scarce resource: its entries are read once per hit and copied out, which byte-
//! addressable memory (CXL, persistent memory, a tmpfs mapping) serves at memory speed.
//! [`ResultCache::in_region`](super::ResultCache::in_region) cuts one region into a disjoint
//! piece per shard.

use std::sync::Arc;

use crate::region::TierRegion;

/// The smallest page the memory is mapped in.
const PAGE: usize = 4096;

/// The bytes under one shard's heap.
pub enum HeapMemory {
    /// Process memory.
    Dram(Vec<u8>),
    /// `len` bytes at `offset` of a tier region, this shard's alone.
    Tier {
        /// The region, kept mapped while the heap lives.
        region: Arc<TierRegion>,
        /// Where the shard's bytes start in it.
        offset: usize,
        /// How many there are.
        len: usize,
    },
}

impl HeapMemory {
    /// `len` bytes of process memory, zeroed and resident: every page is written once here,
    /// so that the heap's DRAM is taken when the cache is made rather than as entries
    /// arrive, and storing an entry never waits for a page fault (a miss would otherwise pay
    /// one for every page its entries first reach).
    pub fn dram(len: usize) -> HeapMemory {
        let mut bytes = vec![0u8; len];
        for i in (0..len).step_by(PAGE) {
            // SAFETY: `i` is inside `bytes`. Volatile, so that the write of a zero over
            // zeroed memory is not optimised away: the write is what maps the page.
            unsafe { std::ptr::write_volatile(bytes.as_mut_ptr().add(i), 0) };
        }
        HeapMemory::Dram(bytes)
    }

    /// `len` bytes at `offset` of `region`.
    ///
    /// # Panics
    ///
    /// If the range is outside the region.
    pub fn in_region(region: Arc<TierRegion>, offset: usize, len: usize) -> HeapMemory {
        assert!(offset + len <= region.len(), "a heap outside its region");
        HeapMemory::Tier {
            region,
            offset,
            len,
        }
    }
}

impl HeapMemory {
    /// The first byte and the length of the memory.
    fn span(&self) -> (*mut u8, usize) {
        match self {
            HeapMemory::Dram(bytes) => (bytes.as_ptr().cast_mut(), bytes.len()),
            HeapMemory::Tier {
                region,
                offset,
                len,
            } => {
                // SAFETY: the range lies inside the region (checked in `in_region`).
                let first = unsafe { region.as_ptr().add(*offset) };
                (first, *len)
            }
        }
    }
}

impl AsRef<[u8]> for HeapMemory {
    fn as_ref(&self) -> &[u8] {
        let (ptr, len) = self.span();
        // SAFETY: `span` is memory this value owns (a vector, or a range of a region kept
        // mapped while the `Arc` is held that no other `HeapMemory` covers); writes go
        // through `as_mut`, which needs `&mut self`.
        unsafe { std::slice::from_raw_parts(ptr, len) }
    }
}

impl AsMut<[u8]> for HeapMemory {
    fn as_mut(&mut self) -> &mut [u8] {
        if let HeapMemory::Dram(bytes) = self {
            return bytes;
        }
        let (ptr, len) = self.span();
        // SAFETY: as in `as_ref`; `&mut self` makes this the only reference to the range.
        unsafe { std::slice::from_raw_parts_mut(ptr, len) }
    }
}

impl std::fmt::Debug for HeapMemory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HeapMemory::Dram(bytes) => write!(f, "Dram({} bytes)", bytes.len()),
            HeapMemory::Tier { offset, len, .. } => write!(f, "Tier({len} bytes at {offset})"),
        }
    }
}
