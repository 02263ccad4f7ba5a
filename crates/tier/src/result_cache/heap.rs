//! A fixed-size byte heap: a region of memory and an [`Allocator`] managing offsets into it.

use super::allocator::Allocator;

/// Bytes stored at offsets an allocator hands out, in memory the heap never grows.
///
/// `M` is the memory: a `Vec<u8>` or `Box<[u8]>` it owns, or a `&mut [u8]` borrowed from a
/// tier region. The heap copies bytes in and hands out slices; what an offset holds, and how
/// long it is, is the caller's to remember (a cache keeps both in its entry).
#[derive(Debug)]
pub struct ByteHeap<M, A> {
    memory: M,
    allocator: A,
}

impl<M: AsRef<[u8]> + AsMut<[u8]>, A: Allocator> ByteHeap<M, A> {
    /// A heap over `memory`, with `allocator` placing entries in it.
    ///
    /// # Panics
    ///
    /// If the allocator manages more bytes than `memory` holds.
    pub fn new(memory: M, allocator: A) -> ByteHeap<M, A> {
        assert!(
            allocator.capacity() <= memory.as_ref().len() as u64,
            "an allocator of {} bytes over {} bytes of memory",
            allocator.capacity(),
            memory.as_ref().len()
        );
        ByteHeap { memory, allocator }
    }

    /// The allocator, for its statistics.
    pub fn allocator(&self) -> &A {
        &self.allocator
    }

    /// Reserves room for `len` bytes and returns its offset, `None` if the allocator finds
    /// none (the caller then frees something and tries again).
    pub fn allocate(&mut self, len: u32) -> Option<u32> {
        self.allocator.allocate(len)
    }

    /// Copies `bytes` into a new allocation and returns its offset, `None` if the allocator
    /// finds no room (or `bytes` is longer than any allocation can be).
    pub fn store(&mut self, bytes: &[u8]) -> Option<u32> {
        let len = u32::try_from(bytes.len()).ok()?;
        let offset = self.allocator.allocate(len)?;
        self.bytes_mut(offset, len).copy_from_slice(bytes);
        Some(offset)
    }

    /// The `len` bytes at `offset`.
    ///
    /// # Panics
    ///
    /// If the range is outside the memory.
    pub fn bytes(&self, offset: u32, len: u32) -> &[u8] {
        &self.memory.as_ref()[offset as usize..offset as usize + len as usize]
    }

    /// The `len` bytes at `offset`, to write.
    ///
    /// # Panics
    ///
    /// If the range is outside the memory.
    pub fn bytes_mut(&mut self, offset: u32, len: u32) -> &mut [u8] {
        &mut self.memory.as_mut()[offset as usize..offset as usize + len as usize]
    }

    /// Releases the allocation at `offset` and returns the bytes it reserved.
    ///
    /// # Panics
    ///
    /// If `offset` is not a live allocation.
    pub fn free(&mut self, offset: u32) -> u64 {
        self.allocator.free(offset)
    }

    /// The memory and the allocator, taken apart.
    pub fn into_parts(self) -> (M, A) {
        (self.memory, self.allocator)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::result_cache::{AllocatorKind, FirstFit};

    #[test]
    fn over_borrowed_memory() {
        let mut memory = [0u8; 64];
        let mut heap = ByteHeap::new(&mut memory[..], FirstFit::new(64));
        let a = heap.store(b"hello").unwrap();
        let b = heap.store(b"world!").unwrap();
        assert_eq!(heap.bytes(a, 5), b"hello");
        assert_eq!(heap.bytes(b, 6), b"world!");
        assert_eq!(heap.free(a), 8);
        assert_eq!(heap.allocator().free_bytes(), 56);
    }

    #[test]
    #[should_panic(expected = "an allocator of 128 bytes over 64 bytes")]
    fn allocator_larger_than_memory() {
        ByteHeap::new(vec![0u8; 64], FirstFit::new(128));
    }

    proptest! {
        /// Entries written through the heap read back intact while others come and go: no
        /// allocation ever overlaps another.
        #[test]
        fn entries_stay_intact(
            tlsf in any::<bool>(),
            ops in proptest::collection::vec((any::<bool>(), 0u32..300, any::<prop::sample::Index>()), 1..200)
        ) {
            let kind = if tlsf { AllocatorKind::Tlsf } else { AllocatorKind::FirstFit };
            let mut heap = ByteHeap::new(vec![0u8; 4096], kind.build(4096));
            let mut live: Vec<(u32, Vec<u8>)> = Vec::new();
            for (i, (store, len, pick)) in ops.into_iter().enumerate() {
                if store || live.is_empty() {
                    let bytes: Vec<u8> = (0..len).map(|j| (i as u32 * 31 + j) as u8).collect();
                    if let Some(offset) = heap.store(&bytes) {
                        live.push((offset, bytes));
                    }
                } else {
                    let (offset, _) = live.swap_remove(pick.index(live.len()));
                    heap.free(offset);
                }
                for (offset, bytes) in &live {
                    prop_assert_eq!(heap.bytes(*offset, bytes.len() as u32), &bytes[..]);
                }
            }
        }
    }
}
