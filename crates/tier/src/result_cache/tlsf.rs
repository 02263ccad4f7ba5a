//! Two-level segregated fit (TLSF; Masmano, Ripoll, Crespo and Real, ECRTS 2004): free
//! blocks in segregated lists by size class, found in constant time with two levels of
//! bitmaps, and merged with their physical neighbours as soon as they are freed.
//!
//! # Size classes
//!
//! Sizes are counted in granules of [`ALIGN`] = 8 bytes. Below 32 granules (256 bytes) every
//! size is a class of its own (first level 0, second level = the size in granules). From 32
//! granules on, the first level is the power of two (`fl = floor(log2 granules) - 4`, 1 to
//! 24) and the second level splits each power of two into 32 equal classes
//! (`sl = (granules >> (floor(log2 granules) - 5)) - 32`), so a class spans 1/32 of its
//! power of two. A bitmap of non-empty first levels and, for each, a bitmap of non-empty
//! second levels find the lowest non-empty class at or above a given one with two
//! `trailing_zeros`.
//!
//! # The guarantee
//!
//! A request is rounded up to the next class boundary ([`Tlsf::class_round_up`]) and served
//! from the first non-empty class at or above that boundary: any block there is large enough,
//! so no list is ever walked. The price: a free block in the request's own class, large
//! enough but below the boundary, is not found that way. So the allocator first looks at the
//! first [`Tlsf::OWN_CLASS_PROBES`] blocks of the request's own class and takes, of those
//! large enough, the one of the lowest offset (a bounded walk, so constant time too), and
//! goes above only when none is.
//!
//! Own class first is a good fit: a block of the request's own class exceeds it by less than
//! 1/32, where a block from a class above is split and leaves a remainder, so taking the
//! close fit first keeps the large blocks whole for large requests. (Tried the other way
//! round, above first, the heap ended runs with more bytes free outside its largest block
//! than first fit's at the smallest heap; looking at the head of the class alone, more
//! fragmentation evictions than first fit's at a 10% heap; see docs/results/result-cache.md.)
//! So:
//!
//! - an allocation of `len` bytes always succeeds if a free block of at least
//!   `class_round_up(reserved_len(len))` bytes exists, or if the request's class holds at
//!   most `OWN_CLASS_PROBES` free blocks and one of them is at least `reserved_len(len)`
//!   bytes (in particular when the whole region is free: a heap freed of everything can
//!   allocate all of it again);
//! - it may fail while a free block of at least `reserved_len(len)` bytes but below the
//!   class boundary exists, when more than `OWN_CLASS_PROBES` smaller blocks come before it
//!   in its class's list (the internal rounding costs at most 1/32 of the request).
//!
//! # Order within a class
//!
//! Each class's list is FIFO: a freed block (or the remainder of a split) joins the tail,
//! and a search takes from the head, the block freed longest ago. Johnstone and Wilson ("The
//! memory fragmentation problem: solved?", ISMM 1998) found first fit over a LIFO free list
//! to fragment more than over an address-ordered or a FIFO one; FIFO keeps the constant-time
//! insertion that address order would lose. (With LIFO lists TLSF made more fragmentation
//! evictions than first fit at one heap size; see docs/results/result-cache.md.) Among the
//! blocks of its own class that a request probes, it takes the lowest: the preference that
//! makes address-ordered first fit fragment little (allocations gather at the low end, and
//! the free space at the high end stays whole), at the price of the bounded walk it already
//! makes. Over four workload seeds and three heap sizes this gave 13% fewer unusable bytes
//! than first fit on the term workload (11% with the head of the class) and 21% on the query
//! workload (24%), and fewer fragmentation evictions on both (0.6% and 2.0% fewer; with the
//! head of the class, 0.4% more on the term workload).
//!
//! # Memory
//!
//! The allocator keeps its block descriptors outside the region (it manages offsets only):
//! one descriptor of 28 bytes per block, free or used, and a hash map from the offset of each
//! live allocation to its descriptor.

use rustc_hash::FxHashMap;

use super::allocator::{reserved_len, Allocator, ALIGN};

const NIL: u32 = u32::MAX;
/// log2 of the second-level classes per first level.
const SL_LOG2: u32 = 5;
const SL_COUNT: u32 = 1 << SL_LOG2;
/// First levels: sizes below 2^32 bytes are below 2^29 granules, so `floor(log2) <= 28`
/// and `fl <= 24`.
const FL_COUNT: usize = 25;

#[derive(Debug, Clone)]
struct Block {
    offset: u32,
    /// Bytes, a multiple of [`ALIGN`].
    size: u32,
    free: bool,
    /// The physically adjacent blocks (NIL at the ends of the region).
    prev_phys: u32,
    next_phys: u32,
    /// Links in the free list of the block's class (free blocks only).
    prev_free: u32,
    next_free: u32,
}

/// TLSF allocator over a region of offsets (see the [module](self) docs).
#[derive(Debug, Clone)]
pub struct Tlsf {
    capacity: u32,
    /// Block descriptors; `spare` lists the unused ones.
    blocks: Vec<Block>,
    spare: Vec<u32>,
    /// Heads (oldest) and tails (newest) of the free lists, by first and second level.
    heads: [[u32; SL_COUNT as usize]; FL_COUNT],
    tails: [[u32; SL_COUNT as usize]; FL_COUNT],
    fl_bitmap: u32,
    sl_bitmap: [u32; FL_COUNT],
    /// Live allocations: offset -> descriptor.
    live: FxHashMap<u32, u32>,
    free_bytes: u64,
}

/// The class `(fl, sl)` holding blocks of `granules` granules (>= 1).
fn mapping(granules: u32) -> (usize, usize) {
    if granules < SL_COUNT {
        (0, granules as usize)
    } else {
        let f = 31 - granules.leading_zeros();
        (
            (f - (SL_LOG2 - 1)) as usize,
            ((granules >> (f - SL_LOG2)) - SL_COUNT) as usize,
        )
    }
}

/// `granules` rounded up to the lowest size of a class at or above it.
fn round_up(granules: u64) -> u64 {
    if granules < u64::from(SL_COUNT) {
        granules
    } else {
        let f = 63 - granules.leading_zeros();
        let step = 1u64 << (f - SL_LOG2);
        granules.div_ceil(step) * step
    }
}

impl Tlsf {
    /// The most blocks of the request's own class an allocation looks at before it goes to
    /// the classes above (see the module docs): a constant, so an allocation stays bounded.
    pub const OWN_CLASS_PROBES: usize = 8;

    /// An allocator over `region_len` bytes (rounded down to [`ALIGN`]), all free.
    pub fn new(region_len: u32) -> Tlsf {
        let capacity = region_len / ALIGN * ALIGN;
        let mut tlsf = Tlsf {
            capacity,
            blocks: Vec::new(),
            spare: Vec::new(),
            heads: [[NIL; SL_COUNT as usize]; FL_COUNT],
            tails: [[NIL; SL_COUNT as usize]; FL_COUNT],
            fl_bitmap: 0,
            sl_bitmap: [0; FL_COUNT],
            live: FxHashMap::default(),
            free_bytes: 0,
        };
        if capacity > 0 {
            let first = tlsf.new_block(0, capacity);
            tlsf.insert_free(first);
        }
        tlsf
    }

    /// `size` bytes rounded up to the next class boundary: the smallest block size for which
    /// every block of that class or above can hold `size` bytes. The allocator always serves
    /// a request of `size` bytes (after [`reserved_len`]) if a free block of this size exists.
    pub fn class_round_up(size: u64) -> u64 {
        round_up(size.div_ceil(u64::from(ALIGN))) * u64::from(ALIGN)
    }

    /// Whether blocks of `a` and `b` bytes (multiples of [`ALIGN`], at least one granule)
    /// fall in the same size class.
    pub fn same_class(a: u64, b: u64) -> bool {
        let g = |s: u64| mapping((s / u64::from(ALIGN)) as u32);
        g(a) == g(b)
    }

    fn new_block(&mut self, offset: u32, size: u32) -> u32 {
        let block = Block {
            offset,
            size,
            free: false,
            prev_phys: NIL,
            next_phys: NIL,
            prev_free: NIL,
            next_free: NIL,
        };
        match self.spare.pop() {
            Some(i) => {
                self.blocks[i as usize] = block;
                i
            }
            None => {
                self.blocks.push(block);
                (self.blocks.len() - 1) as u32
            }
        }
    }

    fn insert_free(&mut self, b: u32) {
        let (fl, sl) = mapping(self.blocks[b as usize].size / ALIGN);
        // At the tail: each class is a FIFO list, so a search takes the block freed longest
        // ago (see the module docs).
        let tail = self.tails[fl][sl];
        {
            let block = &mut self.blocks[b as usize];
            block.free = true;
            block.prev_free = tail;
            block.next_free = NIL;
        }
        if tail != NIL {
            self.blocks[tail as usize].next_free = b;
        } else {
            self.heads[fl][sl] = b;
        }
        self.tails[fl][sl] = b;
        self.fl_bitmap |= 1 << fl;
        self.sl_bitmap[fl] |= 1 << sl;
        self.free_bytes += u64::from(self.blocks[b as usize].size);
    }

    fn remove_free(&mut self, b: u32) {
        let (size, prev, next) = {
            let block = &mut self.blocks[b as usize];
            block.free = false;
            (block.size, block.prev_free, block.next_free)
        };
        let (fl, sl) = mapping(size / ALIGN);
        if prev != NIL {
            self.blocks[prev as usize].next_free = next;
        } else {
            self.heads[fl][sl] = next;
            if next == NIL {
                self.sl_bitmap[fl] &= !(1 << sl);
                if self.sl_bitmap[fl] == 0 {
                    self.fl_bitmap &= !(1 << fl);
                }
            }
        }
        if next != NIL {
            self.blocks[next as usize].prev_free = prev;
        } else {
            self.tails[fl][sl] = prev;
        }
        self.free_bytes -= u64::from(size);
    }

    /// The head of the first non-empty class at or above `(fl, sl)`.
    fn find_at_or_above(&self, fl: usize, sl: usize) -> Option<u32> {
        let mut fl = fl;
        let mut bits = self.sl_bitmap[fl] & (u32::MAX << sl);
        if bits == 0 {
            let above = self.fl_bitmap & (u32::MAX << (fl + 1));
            if above == 0 {
                return None;
            }
            fl = above.trailing_zeros() as usize;
            bits = self.sl_bitmap[fl];
        }
        Some(self.heads[fl][bits.trailing_zeros() as usize])
    }

    /// A free block of at least `need` bytes, by the rule in the module docs: the lowest
    /// block large enough among the first [`OWN_CLASS_PROBES`](Self::OWN_CLASS_PROBES) of the
    /// request's own class, else the first block of the lowest non-empty class at or above
    /// the rounded-up size.
    fn find(&self, need: u32) -> Option<u32> {
        let granules = need / ALIGN;
        let (fl, sl) = mapping(granules);
        if let Some(b) = self.lowest_of_class(self.heads[fl][sl], need) {
            return Some(b);
        }
        let rounded = round_up(u64::from(granules));
        if rounded >= (1 << 29) {
            return None;
        }
        let (fl, sl) = mapping(rounded as u32);
        self.find_at_or_above(fl, sl)
    }

    /// Among the first [`OWN_CLASS_PROBES`](Self::OWN_CLASS_PROBES) blocks of the list from
    /// `b`, the one of the lowest offset of those of at least `need` bytes.
    fn lowest_of_class(&self, mut b: u32, need: u32) -> Option<u32> {
        let mut best: Option<u32> = None;
        for _ in 0..Tlsf::OWN_CLASS_PROBES {
            if b == NIL {
                break;
            }
            let block = &self.blocks[b as usize];
            if block.size >= need
                && best.is_none_or(|c| block.offset < self.blocks[c as usize].offset)
            {
                best = Some(b);
            }
            b = block.next_free;
        }
        best
    }

    /// Merges free block `b` with the block after it (which must be free and in no list),
    /// releasing the latter's descriptor.
    fn absorb_next(&mut self, b: u32) {
        let n = self.blocks[b as usize].next_phys;
        let (n_size, n_next) = {
            let nb = &self.blocks[n as usize];
            (nb.size, nb.next_phys)
        };
        self.blocks[b as usize].size += n_size;
        self.blocks[b as usize].next_phys = n_next;
        if n_next != NIL {
            self.blocks[n_next as usize].prev_phys = b;
        }
        self.spare.push(n);
    }

    /// Checks every structural invariant, panicking on the first broken one (tests only).
    #[cfg(test)]
    pub(crate) fn check(&self) {
        // Physical chain: contiguous from 0 to the capacity, no two free neighbours.
        let mut free_blocks = 0usize;
        let mut free_bytes = 0u64;
        let mut used = 0usize;
        let mut expected_offset = 0u32;
        let mut prev = NIL;
        let mut b = if self.capacity == 0 { NIL } else { 0 };
        while b != NIL {
            let block = &self.blocks[b as usize];
            assert_eq!(block.offset, expected_offset);
            assert_eq!(block.prev_phys, prev);
            assert!(block.size > 0 && block.size.is_multiple_of(ALIGN));
            if block.free {
                assert!(
                    prev == NIL || !self.blocks[prev as usize].free,
                    "unmerged neighbours"
                );
                free_blocks += 1;
                free_bytes += u64::from(block.size);
            } else {
                used += 1;
                assert_eq!(self.live.get(&block.offset), Some(&b));
            }
            expected_offset += block.size;
            prev = b;
            b = block.next_phys;
        }
        assert_eq!(expected_offset, self.capacity);
        assert_eq!(used, self.live.len());
        assert_eq!(free_bytes, self.free_bytes);
        // Free lists: each block in the list of its class, bitmaps set exactly where non-empty.
        let mut listed = 0usize;
        for fl in 0..FL_COUNT {
            for sl in 0..SL_COUNT as usize {
                let mut prev = NIL;
                let mut b = self.heads[fl][sl];
                assert_eq!(self.sl_bitmap[fl] & (1 << sl) != 0, b != NIL);
                while b != NIL {
                    let block = &self.blocks[b as usize];
                    assert!(block.free);
                    assert_eq!(mapping(block.size / ALIGN), (fl, sl));
                    assert_eq!(block.prev_free, prev);
                    listed += 1;
                    prev = b;
                    b = block.next_free;
                }
                assert_eq!(self.tails[fl][sl], prev);
            }
            assert_eq!(self.fl_bitmap & (1 << fl) != 0, self.sl_bitmap[fl] != 0);
        }
        assert_eq!(listed, free_blocks);
    }
}

impl Allocator for Tlsf {
    fn name(&self) -> &'static str {
        "tlsf"
    }

    fn capacity(&self) -> u64 {
        u64::from(self.capacity)
    }

    fn allocate(&mut self, len: u32) -> Option<u32> {
        let need = u32::try_from(reserved_len(len)).ok()?;
        let b = self.find(need)?;
        self.remove_free(b);
        let (offset, size, next) = {
            let block = &self.blocks[b as usize];
            (block.offset, block.size, block.next_phys)
        };
        if size > need {
            let rest = self.new_block(offset + need, size - need);
            self.blocks[rest as usize].prev_phys = b;
            self.blocks[rest as usize].next_phys = next;
            if next != NIL {
                self.blocks[next as usize].prev_phys = rest;
            }
            self.blocks[b as usize].next_phys = rest;
            self.blocks[b as usize].size = need;
            self.insert_free(rest);
        }
        self.live.insert(offset, b);
        Some(offset)
    }

    fn free(&mut self, offset: u32) -> u64 {
        let Some(b) = self.live.remove(&offset) else {
            panic!("tlsf: free of {offset}, which is not a live allocation");
        };
        let size = u64::from(self.blocks[b as usize].size);
        let mut b = b;
        let next = self.blocks[b as usize].next_phys;
        if next != NIL && self.blocks[next as usize].free {
            self.remove_free(next);
            self.absorb_next(b);
        }
        let prev = self.blocks[b as usize].prev_phys;
        if prev != NIL && self.blocks[prev as usize].free {
            self.remove_free(prev);
            self.absorb_next(prev);
            b = prev;
        }
        self.insert_free(b);
        size
    }

    fn reserved_at(&self, offset: u32) -> Option<u64> {
        self.live
            .get(&offset)
            .map(|&b| u64::from(self.blocks[b as usize].size))
    }

    fn live_count(&self) -> usize {
        self.live.len()
    }

    fn free_bytes(&self) -> u64 {
        self.free_bytes
    }

    /// The largest block is in the highest non-empty class, found with the bitmaps; that
    /// class's list is walked for the exact size.
    fn largest_free(&self) -> u64 {
        if self.fl_bitmap == 0 {
            return 0;
        }
        let fl = (31 - self.fl_bitmap.leading_zeros()) as usize;
        let sl = (31 - self.sl_bitmap[fl].leading_zeros()) as usize;
        let mut largest = 0;
        let mut b = self.heads[fl][sl];
        while b != NIL {
            largest = largest.max(self.blocks[b as usize].size);
            b = self.blocks[b as usize].next_free;
        }
        u64::from(largest)
    }

    fn for_each_free_block(&self, f: &mut dyn FnMut(u32, u64)) {
        for row in &self.heads {
            for &head in row {
                let mut b = head;
                while b != NIL {
                    let block = &self.blocks[b as usize];
                    f(block.offset, u64::from(block.size));
                    b = block.next_free;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn classes() {
        assert_eq!(mapping(1), (0, 1));
        assert_eq!(mapping(31), (0, 31));
        assert_eq!(mapping(32), (1, 0));
        assert_eq!(mapping(63), (1, 31));
        assert_eq!(mapping(64), (2, 0));
        assert_eq!(mapping(65), (2, 0));
        assert_eq!(mapping(66), (2, 1));
        assert_eq!(mapping((1 << 29) - 1), (24, 31));
        assert_eq!(round_up(31), 31);
        assert_eq!(round_up(65), 66);
        assert_eq!(round_up(127), 128);
        // Every class boundary maps to a class whose blocks are all at least that large.
        for g in 1..5000u32 {
            let r = round_up(u64::from(g)) as u32;
            assert!(r >= g);
            // r is the lowest size of its class, and no size of g's class is above it.
            assert!(r == 1 || mapping(r - 1) != mapping(r));
            assert!(r == g || mapping(r) != mapping(g));
        }
        assert_eq!(Tlsf::class_round_up(1), 8);
        assert_eq!(Tlsf::class_round_up(520), 528);
        // 512 and 520 bytes (64 and 65 granules) share the class [64, 66) granules.
        assert!(Tlsf::same_class(512, 520));
        assert!(!Tlsf::same_class(520, 528));
    }

    #[test]
    fn whole_region_after_everything_is_freed() {
        // 1000 bytes = 125 granules: class [124, 126); a request for all of it rounds up to
        // 126 granules, beyond the block, and is served by the fallback.
        let mut t = Tlsf::new(1000);
        assert_eq!(t.allocate(1000), Some(0));
        assert_eq!(t.allocate(0), None);
        t.free(0);
        t.check();
        let offsets: Vec<u32> = (0..10).map(|i| t.allocate(i * 13).unwrap()).collect();
        for o in offsets.into_iter().rev() {
            t.free(o);
            t.check();
        }
        assert_eq!(t.largest_free(), 1000);
        assert_eq!(t.allocate(1000), Some(0));
    }

    #[test]
    fn takes_the_lowest_of_its_class_within_the_probes() {
        // Blocks of 528 bytes at three offsets, freed highest first: the list's head is the
        // highest, and a request of the class takes the lowest.
        let mut t = Tlsf::new(8192);
        let blocks: Vec<u32> = (0..3)
            .map(|_| {
                let b = t.allocate(528).unwrap();
                t.allocate(8).unwrap();
                b
            })
            .collect();
        t.allocate(8192 - 3 * 536).unwrap();
        for &b in blocks.iter().rev() {
            t.free(b);
        }
        t.check();
        assert_eq!(t.allocate(528), Some(blocks[0]));
        assert_eq!(t.allocate(528), Some(blocks[1]));
        assert_eq!(t.allocate(528), Some(blocks[2]));
    }

    #[test]
    fn may_miss_a_block_in_the_requests_own_class() {
        // Free blocks in class [66, 68) granules: 536 bytes (67 granules), and in front of
        // it in the list (freed before it), blocks of 528 bytes (66). A request for 536 bytes
        // rounds up to 68 granules and finds no class at or above it; its own class's list is
        // walked for `OWN_CLASS_PROBES` blocks only.
        for smaller in [1, Tlsf::OWN_CLASS_PROBES - 1, Tlsf::OWN_CLASS_PROBES] {
            let mut t = Tlsf::new(8192);
            let a = t.allocate(536).unwrap();
            let _sep = t.allocate(8).unwrap();
            let mut small = Vec::new();
            for _ in 0..smaller {
                small.push(t.allocate(528).unwrap());
                t.allocate(8).unwrap();
            }
            let used = 544 + 536 * smaller as u32;
            let rest = t.allocate(8192 - used).unwrap();
            for o in small {
                t.free(o);
            }
            t.free(a);
            t.check();
            assert_eq!(t.largest_free(), 536);
            let got = t.allocate(536);
            if smaller < Tlsf::OWN_CLASS_PROBES {
                assert_eq!(got, Some(a), "found within the probes");
                t.free(a);
            } else {
                assert_eq!(got, None, "behind the probes");
            }
            // A block of the rounded size is always found.
            t.free(rest);
            assert!(t.allocate(536).is_some());
        }
    }

    proptest! {
        /// Random allocations and frees keep the block chain, the free lists and the bitmaps
        /// consistent, and a failed allocation is one the guarantee allows.
        #[test]
        fn keeps_its_structure_and_guarantee(
            ops in proptest::collection::vec((any::<bool>(), 0u32..1500, any::<prop::sample::Index>()), 1..200)
        ) {
            let mut t = Tlsf::new(16 * 1024);
            let mut live: Vec<u32> = Vec::new();
            for (alloc, len, pick) in ops {
                if alloc || live.is_empty() {
                    let mut blocks = Vec::new();
                    t.for_each_free_block(&mut |_, s| blocks.push(s));
                    let need = reserved_len(len);
                    match t.allocate(len) {
                        Some(o) => live.push(o),
                        None => {
                            let rounded = Tlsf::class_round_up(need);
                            prop_assert!(blocks.iter().all(|&s| s < rounded));
                            let same: Vec<u64> = blocks.iter().copied().filter(|&s| Tlsf::same_class(s, need)).collect();
                            prop_assert!(same.len() > Tlsf::OWN_CLASS_PROBES || same.iter().all(|&s| s < need));
                        }
                    }
                } else {
                    t.free(live.swap_remove(pick.index(live.len())));
                }
                t.check();
            }
        }
    }
}
