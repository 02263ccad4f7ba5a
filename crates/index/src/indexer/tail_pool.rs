//! The growing last blocks of every term of a posting table, in one pool.
//!
//! A term's unsealed postings (at most 256) sit in a region of the pool as interleaved
//! `(DID, frequency)` pairs. Regions start at 2 pairs and double up to 256; a region that is
//! outgrown is abandoned (at most as many words as the live one, so at most half the pool is
//! slack) and a full one is sealed into the block arena and reused for the term's next block.
//! The term's hash entry holds its region's address, length and capacity, so appending a
//! posting touches only the hash entry and the one cache line it writes: no per-term vector
//! headers, no allocator calls on the hot path.
//!
//! The pool is a list of 1 MiB chunks (regions never span chunks), so growing it never moves
//! what it holds; a flush frees them.

use apcache_codec::BLOCK_LEN;

/// Words per chunk (1 MiB).
const CHUNK_WORDS: usize = 1 << 18;
/// Capacity (pairs) of a term's first region.
const FIRST_CAPACITY: u16 = 2;

/// Where a term's tail lives: a region of `capacity` pairs at word `start`, `len` used.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Tail {
    start: u32,
    len: u16,
    capacity: u16,
}

impl Tail {
    /// True when it holds a whole block.
    pub(crate) fn is_full_block(&self) -> bool {
        usize::from(self.len) == BLOCK_LEN
    }
}

/// The pool of tail regions.
#[derive(Default)]
pub(crate) struct TailPool {
    chunks: Vec<Box<[u32]>>,
    /// Chunk being filled and the next free word in it.
    chunk: usize,
    next: usize,
}

impl TailPool {
    /// Bytes of the chunks allocated.
    pub(crate) fn allocated_bytes(&self) -> usize {
        self.chunks.len() * CHUNK_WORDS * 4
    }

    /// Appends the pair `(doc, freq)` to `tail` (which must not hold a full block).
    #[inline]
    pub(crate) fn push(&mut self, tail: &mut Tail, doc: u32, freq: u32) {
        if tail.len == tail.capacity {
            self.grow(tail);
        }
        let at = tail.start as usize + 2 * usize::from(tail.len);
        let words = &mut self.chunks[at / CHUNK_WORDS][at % CHUNK_WORDS..at % CHUNK_WORDS + 2];
        words[0] = doc;
        words[1] = freq;
        tail.len += 1;
    }

    /// Asks the CPU to bring the line that `tail`'s next push writes into the cache.
    #[inline]
    pub(crate) fn prefetch(&self, tail: &Tail) {
        if tail.len == tail.capacity {
            return; // the push moves the tail first
        }
        self.prefetch_at(tail.start as usize + 2 * usize::from(tail.len));
    }

    #[inline]
    fn prefetch_at(&self, at: usize) {
        if let Some(chunk) = self.chunks.get(at / CHUNK_WORDS) {
            crate::prefetch::prefetch_line(chunk[at % CHUNK_WORDS..].as_ptr().cast());
        }
    }

    #[cold]
    fn grow(&mut self, tail: &mut Tail) {
        let capacity = if tail.capacity == 0 {
            FIRST_CAPACITY
        } else {
            tail.capacity * 2
        };
        debug_assert!(usize::from(capacity) <= BLOCK_LEN);
        let words = 2 * usize::from(capacity);
        if self.chunks.is_empty() || self.next + words > CHUNK_WORDS {
            if !self.chunks.is_empty() {
                self.chunk += 1;
            }
            if self.chunk == self.chunks.len() {
                self.chunks.push(vec![0u32; CHUNK_WORDS].into_boxed_slice());
            }
            self.next = 0;
        }
        let start = self.chunk * CHUNK_WORDS + self.next;
        self.next += words;
        if tail.len > 0 {
            let old = tail.start as usize;
            let used = 2 * usize::from(tail.len);
            let (from_chunk, from) = (old / CHUNK_WORDS, old % CHUNK_WORDS);
            let (to_chunk, to) = (self.chunk, start % CHUNK_WORDS);
            if from_chunk == to_chunk {
                self.chunks[to_chunk].copy_within(from..from + used, to);
            } else {
                let (low, high) = self.chunks.split_at_mut(to_chunk);
                high[0][to..to + used].copy_from_slice(&low[from_chunk][from..from + used]);
            }
        }
        tail.start = start as u32;
        tail.capacity = capacity;
    }

    /// The pairs of `tail`, interleaved.
    pub(crate) fn pairs(&self, tail: &Tail) -> &[u32] {
        let at = tail.start as usize;
        let len = 2 * usize::from(tail.len);
        if len == 0 {
            return &[];
        }
        &self.chunks[at / CHUNK_WORDS][at % CHUNK_WORDS..at % CHUNK_WORDS + len]
    }

    /// Asks the CPU to bring the first line of `tail`'s pairs into the cache.
    #[inline]
    pub(crate) fn prefetch_pairs(&self, tail: &Tail) {
        if tail.len > 0 {
            self.prefetch_at(tail.start as usize);
        }
    }

    /// Empties `tail`, keeping its region for the term's next block.
    pub(crate) fn reset(tail: &mut Tail) {
        tail.len = 0;
    }

    /// Forgets every region and frees the chunks.
    pub(crate) fn release(&mut self) {
        self.chunks = Vec::new();
        self.chunk = 0;
        self.next = 0;
    }
}

/// Splits interleaved pairs into `docs` and `freqs`.
pub(crate) fn deinterleave(pairs: &[u32], docs: &mut Vec<u32>, freqs: &mut Vec<u32>) {
    for pair in pairs.chunks_exact(2) {
        docs.push(pair[0]);
        freqs.push(pair[1]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tails_grow_seal_and_survive_other_tails_growing() {
        let mut pool = TailPool::default();
        let mut tails = vec![Tail::default(); 3000];
        // Interleave appends to many tails so regions of different terms alternate and cross
        // chunk boundaries.
        for round in 0..BLOCK_LEN as u32 {
            for (t, tail) in tails.iter_mut().enumerate() {
                if (t as u32 + round).is_multiple_of(3) || t < 1500 {
                    pool.push(tail, round * 10_000 + t as u32, round + 1);
                }
            }
        }
        assert!(pool.allocated_bytes() > CHUNK_WORDS * 4);
        for (t, tail) in tails.iter().enumerate() {
            let (mut docs, mut freqs) = (Vec::new(), Vec::new());
            deinterleave(pool.pairs(tail), &mut docs, &mut freqs);
            let want: Vec<u32> = (0..BLOCK_LEN as u32)
                .filter(|round| (t as u32 + round).is_multiple_of(3) || t < 1500)
                .collect();
            assert_eq!(docs.len(), want.len());
            for ((d, f), round) in docs.iter().zip(&freqs).zip(&want) {
                assert_eq!(*d, round * 10_000 + t as u32);
                assert_eq!(*f, round + 1);
            }
        }
        assert!(tails[0].is_full_block());
        TailPool::reset(&mut tails[0]);
        let allocated = pool.allocated_bytes();
        pool.push(&mut tails[0], 7, 1);
        assert_eq!(pool.pairs(&tails[0]), &[7, 1]);
        assert_eq!(
            pool.allocated_bytes(),
            allocated,
            "a sealed region is reused"
        );
    }
}
