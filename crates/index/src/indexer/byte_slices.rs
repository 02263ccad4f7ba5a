//! Growing byte streams of many terms in one pool: the positions of a posting table.
//!
//! Each term's stream is a chain of slices of growing size (16 bytes, then doubling up to
//! 1 KiB). A slice's last 4 bytes are kept for the address of the next one, written when the
//! stream outgrows it. Appending never moves what is written (no reallocation, no copy, no
//! allocator call per term) and wastes at most the unused end of each term's last slice, where
//! a vector per term would copy its bytes on every doubling and keep up to half its capacity
//! unused. This is the layout of Lucene's `ByteBlockPool` slices.
//!
//! The pool is a list of 1 MiB chunks (slices never span chunks); addresses are 32-bit, so one
//! pool holds at most 4 GiB ([`ByteSlices::MAX_BYTES`]).

/// Bytes per chunk.
const CHUNK_BYTES: usize = 1 << 20;
/// Size of a stream's first slice; each next one is twice the last, up to [`LAST_SIZE`].
const FIRST_SIZE: usize = 16;
const LAST_SIZE: usize = 1 << 10;
/// Bytes at a slice's end for the next slice's address.
const LINK: usize = 4;
/// The longest VByte of a `u32`.
const MAX_VBYTE: usize = 5;

/// Where a stream is: its first slice, the next byte to write, and the end of the usable part
/// of the slice being written. All zero for a stream not started.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ByteStream {
    start: u32,
    cursor: u32,
    end: u32,
    /// Size of the slice being written.
    size: u32,
}

impl ByteStream {
    /// Whether nothing was ever written.
    pub(crate) fn is_empty(&self) -> bool {
        self.size == 0
    }
}

/// The pool of slices.
#[derive(Default)]
pub(crate) struct ByteSlices {
    chunks: Vec<Box<[u8]>>,
    /// Free bytes start here in the last chunk.
    next: usize,
}

impl ByteSlices {
    /// The most bytes a pool can hold (addresses are 32-bit).
    pub(crate) const MAX_BYTES: usize = u32::MAX as usize + 1 - CHUNK_BYTES;

    /// Bytes of the chunks allocated.
    pub(crate) fn allocated_bytes(&self) -> usize {
        self.chunks.len() * CHUNK_BYTES
    }

    /// Appends `bytes` to `stream`; `None` when the pool would pass
    /// [`ByteSlices::MAX_BYTES`] (a posting table flushes long before).
    #[must_use]
    pub(crate) fn append(&mut self, stream: &mut ByteStream, mut bytes: &[u8]) -> Option<()> {
        if stream.is_empty() {
            let at = self.allocate(FIRST_SIZE)?;
            *stream = ByteStream {
                start: at,
                cursor: at,
                end: at + (FIRST_SIZE - LINK) as u32,
                size: FIRST_SIZE as u32,
            };
        }
        while !bytes.is_empty() {
            if stream.cursor == stream.end {
                let size = (stream.size as usize * 2).min(LAST_SIZE);
                let at = self.allocate(size)?;
                self.slice_mut(stream.end, LINK)
                    .copy_from_slice(&at.to_le_bytes());
                stream.cursor = at;
                stream.end = at + (size - LINK) as u32;
                stream.size = size as u32;
            }
            let n = bytes.len().min((stream.end - stream.cursor) as usize);
            self.slice_mut(stream.cursor, n)
                .copy_from_slice(&bytes[..n]);
            stream.cursor += n as u32;
            bytes = &bytes[n..];
        }
        Some(())
    }

    /// Appends `value` to `stream` as a VByte (7 bits a byte, low first, high bit: more
    /// follow); `None` as [`append`](Self::append). Where the slice has room for the longest
    /// VByte, all five bytes of its encoding are stored at once (a fixed-size copy, no
    /// `memcpy` call for the one to three bytes most positions take) and the cursor moves by
    /// its length: the bytes past the cursor are written over by the next append and never
    /// read.
    #[must_use]
    #[inline]
    pub(crate) fn append_vbyte(&mut self, stream: &mut ByteStream, mut value: u32) -> Option<()> {
        let mut encoded = [0u8; MAX_VBYTE];
        let mut len = 0;
        while value >= 0x80 {
            encoded[len] = value as u8 | 0x80;
            value >>= 7;
            len += 1;
        }
        encoded[len] = value as u8;
        len += 1;
        if !stream.is_empty() && (stream.end - stream.cursor) as usize >= MAX_VBYTE {
            self.slice_mut(stream.cursor, MAX_VBYTE)
                .copy_from_slice(&encoded);
            stream.cursor += len as u32;
            return Some(());
        }
        self.append(stream, &encoded[..len])
    }

    /// Appends every byte of `stream` to `out`, in order.
    pub(crate) fn read(&self, stream: &ByteStream, out: &mut Vec<u8>) {
        if stream.is_empty() {
            return;
        }
        let (mut at, mut size) = (stream.start, FIRST_SIZE);
        loop {
            let usable_end = at + (size - LINK) as u32;
            // The slice being written is the one holding the cursor.
            if (at..=usable_end).contains(&stream.cursor) {
                out.extend_from_slice(self.slice(at, (stream.cursor - at) as usize));
                return;
            }
            out.extend_from_slice(self.slice(at, size - LINK));
            let link = self.slice(usable_end, LINK);
            at = u32::from_le_bytes(link.try_into().expect("4 bytes"));
            size = (size * 2).min(LAST_SIZE);
        }
    }

    /// Asks the CPU to bring the line that `stream`'s next append writes into the cache.
    #[inline]
    pub(crate) fn prefetch(&self, stream: &ByteStream) {
        if !stream.is_empty() {
            self.prefetch_at(stream.cursor);
        }
    }

    /// Asks the CPU to bring the first line of `stream` into the cache.
    #[inline]
    pub(crate) fn prefetch_start(&self, stream: &ByteStream) {
        if !stream.is_empty() {
            self.prefetch_at(stream.start);
        }
    }

    #[inline]
    fn prefetch_at(&self, at: u32) {
        let at = at as usize;
        if let Some(chunk) = self.chunks.get(at / CHUNK_BYTES) {
            crate::prefetch::prefetch_line(chunk[at % CHUNK_BYTES..].as_ptr());
        }
    }

    /// A new slice of `size` bytes: its address.
    fn allocate(&mut self, size: usize) -> Option<u32> {
        if self.chunks.is_empty() || self.next + size > CHUNK_BYTES {
            if self.allocated_bytes() + CHUNK_BYTES > Self::MAX_BYTES {
                return None;
            }
            self.chunks.push(vec![0u8; CHUNK_BYTES].into_boxed_slice());
            self.next = 0;
        }
        let at = (self.chunks.len() - 1) * CHUNK_BYTES + self.next;
        self.next += size;
        Some(at as u32)
    }

    fn slice(&self, at: u32, len: usize) -> &[u8] {
        let at = at as usize;
        let offset = at % CHUNK_BYTES;
        &self.chunks[at / CHUNK_BYTES][offset..offset + len]
    }

    fn slice_mut(&mut self, at: u32, len: usize) -> &mut [u8] {
        let at = at as usize;
        let offset = at % CHUNK_BYTES;
        &mut self.chunks[at / CHUNK_BYTES][offset..offset + len]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Against a vector per stream: byte runs of any length and VBytes, appended to
        /// streams in any interleaving, read back as the concatenation of what each was given
        /// (a VByte as its bytes: what a whole store leaves past the cursor never shows).
        #[test]
        fn streams_read_back_what_was_appended(
            appends in prop::collection::vec(
                (0usize..40, prop::option::of(any::<u32>()), prop::collection::vec(any::<u8>(), 0..300)),
                0..1000,
            ),
        ) {
            let mut pool = ByteSlices::default();
            let mut streams = vec![ByteStream::default(); 40];
            let mut want = vec![Vec::new(); 40];
            for (s, value, bytes) in &appends {
                match value {
                    Some(value) => {
                        pool.append_vbyte(&mut streams[*s], *value).unwrap();
                        let mut v = *value;
                        while v >= 0x80 {
                            want[*s].push(v as u8 | 0x80);
                            v >>= 7;
                        }
                        want[*s].push(v as u8);
                    }
                    None => {
                        pool.append(&mut streams[*s], bytes).unwrap();
                        want[*s].extend_from_slice(bytes);
                    }
                }
            }
            for (stream, want) in streams.iter().zip(&want) {
                let mut got = Vec::new();
                pool.read(stream, &mut got);
                prop_assert_eq!(&got, want);
            }
        }
    }

    #[test]
    fn a_long_stream_crosses_chunks() {
        let mut pool = ByteSlices::default();
        let mut streams = [ByteStream::default(); 2];
        let mut want = [Vec::new(), Vec::new()];
        for i in 0..3 * CHUNK_BYTES / 7 {
            let bytes = [(i % 251) as u8; 7];
            pool.append(&mut streams[i % 2], &bytes[..1 + i % 7])
                .unwrap();
            want[i % 2].extend_from_slice(&bytes[..1 + i % 7]);
        }
        assert!(pool.allocated_bytes() > CHUNK_BYTES);
        for (stream, want) in streams.iter().zip(&want) {
            let mut got = Vec::new();
            pool.read(stream, &mut got);
            assert_eq!(&got, want);
        }
    }
}
