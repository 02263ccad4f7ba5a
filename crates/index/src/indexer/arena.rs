//! Where the posting table's sealed blocks live.
//!
//! A full posting block (256 DIDs, then 256 frequencies: 2 KiB) is moved out of its term's
//! growing tail into an arena of fixed-size chunks, and the term keeps only the block's number.
//! The arena is the bulk of an indexing thread's memory, so its placement is a flag (the
//! original study's persistent-memory part compares these placements):
//!
//! - [`ArenaPlacement::Anonymous`]: ordinary process memory (DRAM);
//! - [`ArenaPlacement::MappedFile`]: a file created in a given directory and mapped shared, so
//!   the blocks live wherever that directory's pages live: a tmpfs, a DAX mount of persistent
//!   memory, a CXL-backed mount, or page cache over a disk. The file is unlinked as soon as it
//!   is mapped, so no crash leaves it behind.
//!
//! A flush frees the chunks, so the memory a table holds is what its documents need now.

use std::path::{Path, PathBuf};

use apcache_codec::BLOCK_LEN;
use memmap2::MmapMut;
use serde::Serialize;

use crate::IndexError;

/// Where an indexing thread's posting blocks are allocated.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind", content = "dir")]
pub enum ArenaPlacement {
    /// Anonymous process memory.
    #[default]
    Anonymous,
    /// A file mapped from this directory.
    MappedFile(PathBuf),
}

/// `u32` words of one block: its DIDs, then its frequencies.
const BLOCK_WORDS: usize = 2 * BLOCK_LEN;
/// Blocks per chunk: 512 blocks of 2 KiB, 1 MiB.
const CHUNK_BLOCKS: usize = 512;
const CHUNK_BYTES: usize = CHUNK_BLOCKS * BLOCK_WORDS * 4;

enum Chunk {
    Heap(Box<[u32]>),
    Mapped(MmapMut),
}

impl Chunk {
    fn words(&self) -> &[u32] {
        match self {
            Chunk::Heap(words) => words,
            Chunk::Mapped(map) => bytemuck::cast_slice(&map[..]),
        }
    }

    fn words_mut(&mut self) -> &mut [u32] {
        match self {
            Chunk::Heap(words) => words,
            Chunk::Mapped(map) => bytemuck::cast_slice_mut(&mut map[..]),
        }
    }
}

/// Fixed-size posting blocks, allocated by number.
pub(crate) struct BlockArena {
    placement: ArenaPlacement,
    chunks: Vec<Chunk>,
    used: usize,
}

impl BlockArena {
    /// An empty arena; nothing is allocated until the first block.
    pub(crate) fn new(placement: ArenaPlacement) -> Result<BlockArena, IndexError> {
        if let ArenaPlacement::MappedFile(dir) = &placement {
            if !dir.is_dir() {
                return Err(IndexError::InvalidArgument(format!(
                    "arena directory {} does not exist",
                    dir.display()
                )));
            }
        }
        Ok(BlockArena {
            placement,
            chunks: Vec::new(),
            used: 0,
        })
    }

    /// Bytes of the chunks allocated (the arena's footprint).
    pub(crate) fn allocated_bytes(&self) -> usize {
        self.chunks.len() * CHUNK_BYTES
    }

    /// A new block holding `docs` and `freqs` (256 each); returns its number.
    pub(crate) fn push(&mut self, docs: &[u32], freqs: &[u32]) -> Result<u32, IndexError> {
        debug_assert!(docs.len() == BLOCK_LEN && freqs.len() == BLOCK_LEN);
        if self.used == self.chunks.len() * CHUNK_BLOCKS {
            let chunk = self.new_chunk()?;
            self.chunks.push(chunk);
        }
        let id = self.used;
        self.used += 1;
        let words = self.block_words_mut(id);
        words[..BLOCK_LEN].copy_from_slice(docs);
        words[BLOCK_LEN..].copy_from_slice(freqs);
        u32::try_from(id).map_err(|_| IndexError::InvalidArgument("arena full".into()))
    }

    /// The DIDs and frequencies of block `id`.
    pub(crate) fn block(&self, id: u32) -> (&[u32], &[u32]) {
        let id = id as usize;
        let start = (id % CHUNK_BLOCKS) * BLOCK_WORDS;
        let words = &self.chunks[id / CHUNK_BLOCKS].words()[start..start + BLOCK_WORDS];
        words.split_at(BLOCK_LEN)
    }

    fn block_words_mut(&mut self, id: usize) -> &mut [u32] {
        let start = (id % CHUNK_BLOCKS) * BLOCK_WORDS;
        &mut self.chunks[id / CHUNK_BLOCKS].words_mut()[start..start + BLOCK_WORDS]
    }

    /// Forgets every block and frees the chunks (a mapped chunk's pages go back with its
    /// mapping).
    pub(crate) fn release(&mut self) {
        self.chunks = Vec::new();
        self.used = 0;
    }

    fn new_chunk(&self) -> Result<Chunk, IndexError> {
        match &self.placement {
            ArenaPlacement::Anonymous => Ok(Chunk::Heap(vec![0u32; CHUNK_BYTES / 4].into())),
            ArenaPlacement::MappedFile(dir) => map_chunk(dir),
        }
    }
}

/// Creates, sizes, maps and unlinks a chunk file in `dir`.
fn map_chunk(dir: &Path) -> Result<Chunk, IndexError> {
    let file = tempfile::Builder::new()
        .prefix("apcache-arena-")
        .tempfile_in(dir)
        .map_err(|e| IndexError::io(dir, e))?;
    file.as_file()
        .set_len(CHUNK_BYTES as u64)
        .map_err(|e| IndexError::io(file.path(), e))?;
    // SAFETY: the file was just created by this process with a unique name and is unlinked
    // below before anyone else could open it; only this mapping ever touches its pages.
    let map = unsafe { MmapMut::map_mut(file.as_file()) }.map_err(|e| IndexError::io(dir, e))?;
    drop(file); // unlinks it; the mapping keeps the pages
    Ok(Chunk::Mapped(map))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(placement: ArenaPlacement) {
        let mut arena = BlockArena::new(placement).unwrap();
        let blocks = CHUNK_BLOCKS + 3; // crosses a chunk boundary
        for b in 0..blocks as u32 {
            let docs: Vec<u32> = (0..BLOCK_LEN as u32).map(|i| b * 1000 + i).collect();
            let freqs: Vec<u32> = (0..BLOCK_LEN as u32).map(|i| b + i).collect();
            assert_eq!(arena.push(&docs, &freqs).unwrap(), b);
        }
        for b in [0, 1, CHUNK_BLOCKS as u32, blocks as u32 - 1] {
            let (docs, freqs) = arena.block(b);
            assert_eq!(docs[5], b * 1000 + 5);
            assert_eq!(freqs[255], b + 255);
        }
        assert_eq!(arena.allocated_bytes(), 2 * CHUNK_BYTES);
        arena.release();
        assert_eq!(arena.allocated_bytes(), 0);
        assert_eq!(arena.push(&[7; BLOCK_LEN], &[1; BLOCK_LEN]).unwrap(), 0);
        assert_eq!(arena.allocated_bytes(), CHUNK_BYTES);
    }

    #[test]
    fn anonymous_blocks_round_trip() {
        round_trip(ArenaPlacement::Anonymous);
    }

    #[test]
    fn mapped_blocks_round_trip_and_leave_no_file() {
        let dir = tempfile::tempdir().unwrap();
        round_trip(ArenaPlacement::MappedFile(dir.path().to_path_buf()));
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn missing_directory_is_an_error() {
        assert!(BlockArena::new(ArenaPlacement::MappedFile("/no/such/dir".into())).is_err());
    }
}
