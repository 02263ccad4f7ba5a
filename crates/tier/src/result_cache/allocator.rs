//! The allocator interface: offsets into a region of bytes, with fragmentation statistics.

use super::{FirstFit, Tlsf};

/// Alignment of every allocation, and the granule of the region: offsets and reserved sizes
/// are multiples of 8 bytes.
pub const ALIGN: u32 = 8;

/// The bytes an allocation of `len` bytes reserves: `len` rounded up to [`ALIGN`], and at
/// least one granule (so a request of 0 bytes still gets an offset of its own). This is the
/// whole per-allocation overhead: allocators keep their metadata outside the region.
pub fn reserved_len(len: u32) -> u64 {
    let align = u64::from(ALIGN);
    (u64::from(len).max(1)).div_ceil(align) * align
}

/// Manages offsets into a region of [`capacity`](Allocator::capacity) bytes.
///
/// An allocator never reads or writes the region: it hands out offsets and keeps its own
/// books, so the region can live anywhere (see [`ByteHeap`](super::ByteHeap)). The region
/// given at construction is rounded down to a multiple of [`ALIGN`].
pub trait Allocator {
    /// The allocator's name, as [`AllocatorKind::name`] gives it.
    fn name(&self) -> &'static str;

    /// Bytes managed: the region's length rounded down to [`ALIGN`].
    fn capacity(&self) -> u64;

    /// Reserves [`reserved_len(len)`](reserved_len) bytes and returns their offset (a
    /// multiple of [`ALIGN`]), or `None` when the allocator finds no free block for them.
    fn allocate(&mut self, len: u32) -> Option<u32>;

    /// Releases the allocation at `offset` and returns the bytes it reserved.
    ///
    /// # Panics
    ///
    /// If `offset` is not the offset of a live allocation (a double free, or a wrong offset).
    fn free(&mut self, offset: u32) -> u64;

    /// The bytes reserved by the live allocation at `offset`, `None` if there is none.
    fn reserved_at(&self, offset: u32) -> Option<u64>;

    /// Number of live allocations.
    fn live_count(&self) -> usize;

    /// Bytes in free blocks: [`capacity`](Allocator::capacity) less the reserved bytes of the
    /// live allocations.
    fn free_bytes(&self) -> u64;

    /// The size of the largest free block (0 when none is free).
    fn largest_free(&self) -> u64;

    /// Calls `f(offset, size)` for every free block, in no particular order.
    fn for_each_free_block(&self, f: &mut dyn FnMut(u32, u64));

    /// Free bytes that no single allocation can use: everything outside the largest free
    /// block.
    fn unusable_bytes(&self) -> u64 {
        self.free_bytes() - self.largest_free()
    }

    /// Free bytes in blocks too small for a request of `len` bytes: the bytes a request of
    /// that size can never be placed in, however many are free.
    fn unusable_for(&self, len: u32) -> u64 {
        let need = reserved_len(len);
        let mut small = 0;
        self.for_each_free_block(&mut |_, size| {
            if size < need {
                small += size;
            }
        });
        small
    }

    /// External fragmentation, `1 - largest_free / free_bytes`: 0 when the free bytes are one
    /// block (or none are free), towards 1 as they scatter into many small blocks.
    fn fragmentation(&self) -> f64 {
        let free = self.free_bytes();
        if free == 0 {
            0.0
        } else {
            1.0 - self.largest_free() as f64 / free as f64
        }
    }
}

impl<A: Allocator + ?Sized> Allocator for Box<A> {
    fn name(&self) -> &'static str {
        (**self).name()
    }
    fn capacity(&self) -> u64 {
        (**self).capacity()
    }
    fn allocate(&mut self, len: u32) -> Option<u32> {
        (**self).allocate(len)
    }
    fn free(&mut self, offset: u32) -> u64 {
        (**self).free(offset)
    }
    fn reserved_at(&self, offset: u32) -> Option<u64> {
        (**self).reserved_at(offset)
    }
    fn live_count(&self) -> usize {
        (**self).live_count()
    }
    fn free_bytes(&self) -> u64 {
        (**self).free_bytes()
    }
    fn largest_free(&self) -> u64 {
        (**self).largest_free()
    }
    fn for_each_free_block(&self, f: &mut dyn FnMut(u32, u64)) {
        (**self).for_each_free_block(f)
    }
    fn unusable_bytes(&self) -> u64 {
        (**self).unusable_bytes()
    }
    fn unusable_for(&self, len: u32) -> u64 {
        (**self).unusable_for(len)
    }
    fn fragmentation(&self) -> f64 {
        (**self).fragmentation()
    }
}

/// The allocators, selectable by name for the experiments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AllocatorKind {
    /// [`FirstFit`]: the baseline.
    FirstFit,
    /// [`Tlsf`]: two-level segregated fit.
    Tlsf,
}

impl AllocatorKind {
    /// Every kind, in a fixed order.
    pub const ALL: [AllocatorKind; 2] = [AllocatorKind::FirstFit, AllocatorKind::Tlsf];

    /// The kind's name: `first-fit` or `tlsf`.
    pub fn name(self) -> &'static str {
        match self {
            AllocatorKind::FirstFit => "first-fit",
            AllocatorKind::Tlsf => "tlsf",
        }
    }

    /// The kind named `name` (as [`name`](AllocatorKind::name) gives it), `None` if no kind
    /// has that name.
    pub fn from_name(name: &str) -> Option<AllocatorKind> {
        AllocatorKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// An allocator of this kind over a region of `region_len` bytes.
    pub fn build(self, region_len: u32) -> Box<dyn Allocator + Send> {
        match self {
            AllocatorKind::FirstFit => Box::new(FirstFit::new(region_len)),
            AllocatorKind::Tlsf => Box::new(Tlsf::new(region_len)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reserved_lengths() {
        assert_eq!(reserved_len(0), 8);
        assert_eq!(reserved_len(1), 8);
        assert_eq!(reserved_len(8), 8);
        assert_eq!(reserved_len(9), 16);
        assert_eq!(reserved_len(u32::MAX), 1 << 32);
    }

    #[test]
    fn kinds_by_name() {
        for kind in AllocatorKind::ALL {
            assert_eq!(AllocatorKind::from_name(kind.name()), Some(kind));
            assert_eq!(kind.build(64).name(), kind.name());
        }
        assert_eq!(AllocatorKind::from_name("best-fit"), None);
    }
}
