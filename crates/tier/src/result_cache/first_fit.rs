//! First fit: the baseline allocator. Free blocks in address order; an allocation takes the
//! lowest free block large enough, splitting off what it does not need; a free merges the
//! block with its free neighbours. A search is linear in the number of free blocks.

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;

use super::allocator::{reserved_len, Allocator, ALIGN};

/// First-fit allocator over a region of offsets (see the [module](self) docs).
#[derive(Debug, Clone)]
pub struct FirstFit {
    capacity: u32,
    /// Free blocks: offset -> size, in address order. Never two adjacent ones.
    free: BTreeMap<u32, u32>,
    /// How many free blocks have each size, for [`Allocator::largest_free`].
    sizes: BTreeMap<u32, u32>,
    /// Live allocations: offset -> reserved size.
    live: FxHashMap<u32, u32>,
    free_bytes: u64,
}

impl FirstFit {
    /// An allocator over `region_len` bytes (rounded down to [`ALIGN`]), all free.
    pub fn new(region_len: u32) -> FirstFit {
        let capacity = region_len / ALIGN * ALIGN;
        let mut ff = FirstFit {
            capacity,
            free: BTreeMap::new(),
            sizes: BTreeMap::new(),
            live: FxHashMap::default(),
            free_bytes: 0,
        };
        if capacity > 0 {
            ff.insert_free(0, capacity);
        }
        ff
    }

    fn insert_free(&mut self, offset: u32, size: u32) {
        self.free.insert(offset, size);
        *self.sizes.entry(size).or_insert(0) += 1;
        self.free_bytes += u64::from(size);
    }

    fn remove_free(&mut self, offset: u32) -> u32 {
        let size = self
            .free
            .remove(&offset)
            .expect("a free block at this offset");
        let count = self.sizes.get_mut(&size).expect("its size is counted");
        *count -= 1;
        if *count == 0 {
            self.sizes.remove(&size);
        }
        self.free_bytes -= u64::from(size);
        size
    }
}

impl Allocator for FirstFit {
    fn name(&self) -> &'static str {
        "first-fit"
    }

    fn capacity(&self) -> u64 {
        u64::from(self.capacity)
    }

    fn allocate(&mut self, len: u32) -> Option<u32> {
        let need = u32::try_from(reserved_len(len)).ok()?;
        let (&offset, _) = self.free.iter().find(|(_, &size)| size >= need)?;
        let size = self.remove_free(offset);
        if size > need {
            self.insert_free(offset + need, size - need);
        }
        self.live.insert(offset, need);
        Some(offset)
    }

    fn free(&mut self, offset: u32) -> u64 {
        let Some(size) = self.live.remove(&offset) else {
            panic!("first-fit: free of {offset}, which is not a live allocation");
        };
        let mut start = offset;
        let mut end = offset + size;
        let before = self.free.range(..offset).next_back().map(|(&o, &s)| (o, s));
        if let Some((prev, prev_size)) = before {
            if prev + prev_size == offset {
                self.remove_free(prev);
                start = prev;
            }
        }
        if self.free.contains_key(&end) {
            end += self.remove_free(end);
        }
        self.insert_free(start, end - start);
        u64::from(size)
    }

    fn reserved_at(&self, offset: u32) -> Option<u64> {
        self.live.get(&offset).map(|&s| u64::from(s))
    }

    fn live_count(&self) -> usize {
        self.live.len()
    }

    fn free_bytes(&self) -> u64 {
        self.free_bytes
    }

    fn largest_free(&self) -> u64 {
        self.sizes.keys().next_back().map_or(0, |&s| u64::from(s))
    }

    fn for_each_free_block(&self, f: &mut dyn FnMut(u32, u64)) {
        for (&offset, &size) in &self.free {
            f(offset, u64::from(size));
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn splits_and_coalesces() {
        let mut ff = FirstFit::new(100); // 96 bytes managed
        assert_eq!(ff.capacity(), 96);
        let a = ff.allocate(10).unwrap(); // 16
        let b = ff.allocate(8).unwrap(); // 8
        let c = ff.allocate(20).unwrap(); // 24
        assert_eq!((a, b, c), (0, 16, 24));
        assert_eq!(ff.free_bytes(), 48);
        ff.free(b);
        assert_eq!(ff.largest_free(), 48);
        assert_eq!(ff.unusable_bytes(), 8);
        // The hole is too small for 9 bytes (16 reserved), not for 8.
        assert_eq!(ff.unusable_for(9), 8);
        assert_eq!(ff.unusable_for(8), 0);
        assert!((ff.fragmentation() - 8.0 / 56.0).abs() < 1e-12);
        // The 8-byte hole is the first that fits 8 bytes.
        assert_eq!(ff.allocate(1), Some(16));
        ff.free(16);
        ff.free(a);
        ff.free(c);
        assert_eq!(ff.free_bytes(), 96);
        assert_eq!(ff.largest_free(), 96);
        assert_eq!(ff.fragmentation(), 0.0);
        assert_eq!(ff.allocate(96), Some(0));
        assert_eq!(ff.allocate(0), None);
    }

    #[test]
    fn empty_region() {
        let mut ff = FirstFit::new(7);
        assert_eq!(ff.capacity(), 0);
        assert_eq!(ff.allocate(0), None);
        assert_eq!(ff.largest_free(), 0);
    }

    proptest! {
        /// First fit places a request exactly where a scan of the free blocks in address
        /// order finds the first one large enough, and fails exactly when there is none.
        #[test]
        fn takes_the_first_block_that_fits(
            ops in proptest::collection::vec((any::<bool>(), 0u32..200, any::<prop::sample::Index>()), 1..300)
        ) {
            let mut ff = FirstFit::new(2048);
            let mut live: Vec<u32> = Vec::new();
            for (alloc, len, pick) in ops {
                if alloc || live.is_empty() {
                    let mut blocks = Vec::new();
                    ff.for_each_free_block(&mut |o, s| blocks.push((o, s)));
                    blocks.sort_unstable();
                    let expected = blocks.iter().find(|&&(_, s)| s >= reserved_len(len)).map(|&(o, _)| o);
                    let got = ff.allocate(len);
                    prop_assert_eq!(got, expected);
                    live.extend(got);
                } else {
                    let offset = live.swap_remove(pick.index(live.len()));
                    ff.free(offset);
                }
            }
        }
    }
}
