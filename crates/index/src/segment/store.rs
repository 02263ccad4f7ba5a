//! The document store: documents as given (a title and a body, or a JSON document's
//! `_source`) in zstd-compressed blocks of about 16 KiB, so results can be shown.
//!
//! ```text
//! body: block* | index entry* (first local doc u32, block offset u64) | entries u32 |
//!       index offset u64 | index crc u32
//! block: raw length u32 | compressed length u32 | crc u32 | zstd frame
//! raw block: per document, VByte title length, title, VByte body length, body,
//!            VByte source length, source (empty for a tab-separated document)
//! ```
//!
//! A block's CRC32C covers its two lengths and its frame; the index's covers the index
//! entries, their count and offset. A reader verifies the index once, when it first reads a
//! document, and a block each time it decompresses it, so a damaged block fails only the
//! documents it holds.

use super::uncached_file::UncachedFile;
use crate::format::vbyte::{read_vbyte, write_vbyte};
use crate::format::FileWriter;
use crate::IndexError;

/// Raw bytes at which a block closes. A hit's document costs the decompression of its whole
/// block: on Wikipedia articles (2.7 KB on average), 16 KiB blocks read a document in 20 µs
/// against 55 µs for 64 KiB, for a store 2.7% larger (`examples/store_read.rs`).
const BLOCK_TARGET: usize = 16 << 10;
const ZSTD_LEVEL: i32 = 1;

/// A stored document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredDocument {
    /// Its title: a tab-separated document's, or a JSON document's `title` string.
    pub title: String,
    /// Its body: a tab-separated document's, or a JSON document's `body` string.
    pub body: String,
    /// A JSON document as given (`_source`); `None` for a tab-separated document.
    pub source: Option<String>,
}

impl StoredDocument {
    /// A document stored from `title`, `body` and `source` (empty for none); a JSON document's
    /// title and body are its `title` and `body` strings, when it has them.
    pub(crate) fn new(title: String, body: String, source: String) -> StoredDocument {
        if source.is_empty() {
            return StoredDocument {
                title,
                body,
                source: None,
            };
        }
        let parsed: Option<serde_json::Map<String, serde_json::Value>> =
            serde_json::from_str(&source).ok();
        let text = |key: &str| {
            parsed
                .as_ref()
                .and_then(|object| object.get(key))
                .and_then(serde_json::Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        StoredDocument {
            title: text("title"),
            body: text("body"),
            source: Some(source),
        }
    }

    /// `_source`: the JSON document as given, or a tab-separated document's title and body as
    /// a JSON object.
    pub fn source_json(&self) -> serde_json::Value {
        match &self.source {
            Some(source) => serde_json::from_str(source).unwrap_or(serde_json::Value::Null),
            None => serde_json::json!({"title": self.title, "body": self.body}),
        }
    }
}

/// The start of `text` for a result list: its first `max_chars` characters, cut back to the
/// last space when that keeps more than half of them, with an ellipsis when anything was cut.
pub fn snippet(text: &str, max_chars: usize) -> String {
    let cut: String = text.chars().take(max_chars).collect();
    if cut.len() == text.len() {
        return cut;
    }
    match cut.rfind(' ') {
        Some(space) if space > max_chars / 2 => format!("{}…", &cut[..space]),
        _ => format!("{cut}…"),
    }
}

/// Appends one document to a raw store block.
fn append_raw(title: &str, body: &str, source: &str, out: &mut Vec<u8>) {
    for field in [title, body, source] {
        write_vbyte(field.len() as u64, out);
        out.extend_from_slice(field.as_bytes());
    }
}

/// Fields per stored document: title, body, source.
const FIELDS: usize = 3;

/// The largest raw block a reader decompresses: a block closes once it reaches
/// [`BLOCK_TARGET`], so it is at most that plus one document (the document size limit).
const MAX_RAW_BLOCK: usize = 1 << 30;

/// Appends the stored form of the raw block `raw` (header and zstd frame) to `out`.
fn compress_block(raw: &[u8], out: &mut Vec<u8>) -> Result<(), IndexError> {
    thread_local! {
        /// A compression context: making one costs as much as compressing a few kilobytes.
        static CONTEXT: std::cell::RefCell<Option<zstd::bulk::Compressor<'static>>> =
            const { std::cell::RefCell::new(None) };
    }
    let start = out.len();
    let frame_at = start + BLOCK_HEADER_LEN;
    out.resize(frame_at + zstd::zstd_safe::compress_bound(raw.len()), 0);
    let frame_len = CONTEXT
        .with(|context| {
            let mut context = context.borrow_mut();
            let compressor = match context.as_mut() {
                Some(c) => c,
                None => context.insert(zstd::bulk::Compressor::new(ZSTD_LEVEL)?),
            };
            compressor.compress_to_buffer(raw, &mut out[frame_at..])
        })
        .map_err(|e| IndexError::io(std::path::Path::new("<store block>"), e))?;
    out.truncate(frame_at + frame_len);
    let mut lengths = [0u8; 8];
    lengths[..4].copy_from_slice(&(raw.len() as u32).to_le_bytes());
    lengths[4..].copy_from_slice(&(frame_len as u32).to_le_bytes());
    let crc = crc32c::crc32c_append(crc32c::crc32c(&lengths), &out[frame_at..]);
    out[start..start + 8].copy_from_slice(&lengths);
    out[start + 8..frame_at].copy_from_slice(&crc.to_le_bytes());
    Ok(())
}

/// Decompresses a zstd `frame` of `raw_len` bytes into `out` (cleared first), with a
/// decompression context kept per thread: making one costs more than decompressing a small
/// block.
fn decompress_into(frame: &[u8], raw_len: usize, out: &mut Vec<u8>) -> std::io::Result<()> {
    thread_local! {
        static CONTEXT: std::cell::RefCell<Option<zstd::bulk::Decompressor<'static>>> =
            const { std::cell::RefCell::new(None) };
    }
    out.clear();
    out.reserve(raw_len);
    CONTEXT.with(|context| {
        let mut context = context.borrow_mut();
        let decompressor = match context.as_mut() {
            Some(d) => d,
            None => context.insert(zstd::bulk::Decompressor::new()?),
        };
        decompressor.decompress_to_buffer(frame, out).map(|_| ())
    })
}

/// Writes the store file of a segment.
pub(crate) struct StoreWriter {
    out: FileWriter,
    raw: Vec<u8>,
    /// The last block compressed (a buffer kept for the next).
    compressed: Vec<u8>,
    docs: u32,
    block_first: u32,
    index: Vec<(u32, u64)>,
}

impl StoreWriter {
    pub(crate) fn new(out: FileWriter) -> StoreWriter {
        StoreWriter {
            out,
            raw: Vec::new(),
            compressed: Vec::new(),
            docs: 0,
            block_first: 0,
            index: Vec::new(),
        }
    }

    /// Adds a document already in raw form (see [`append_raw`]).
    pub(crate) fn add_raw(&mut self, raw_document: &[u8]) -> Result<(), IndexError> {
        self.raw.extend_from_slice(raw_document);
        self.document_added()
    }

    /// Adds a document given by its title, body and source (empty for none).
    pub(crate) fn add_document(
        &mut self,
        title: &str,
        body: &str,
        source: &str,
    ) -> Result<(), IndexError> {
        append_raw(title, body, source, &mut self.raw);
        self.document_added()
    }

    /// Counts the document just appended to the raw block, and closes the block once it is
    /// full.
    fn document_added(&mut self) -> Result<(), IndexError> {
        self.docs += 1;
        if self.raw.len() >= BLOCK_TARGET {
            self.flush_block()?;
        }
        Ok(())
    }

    /// Heap bytes held: the block being filled and the last one compressed.
    pub(crate) fn buffered_bytes(&self) -> usize {
        self.raw.capacity() + self.compressed.capacity()
    }

    /// Ends the current block here, so that the next document starts a new one.
    pub(crate) fn cut(&mut self) -> Result<(), IndexError> {
        self.flush_block()
    }

    /// Appends a whole block of another store verbatim (its 12-byte header and zstd frame, as
    /// [`StoreReader::block_bytes`] gives it), holding `docs` documents.
    pub(crate) fn copy_block(&mut self, block: &[u8], docs: u32) -> Result<(), IndexError> {
        self.flush_block()?;
        self.index.push((self.docs, self.out.position()));
        self.out.write_body(block)?;
        self.docs += docs;
        self.block_first = self.docs;
        Ok(())
    }

    /// Documents added so far.
    pub(crate) fn documents(&self) -> u32 {
        self.docs
    }

    fn flush_block(&mut self) -> Result<(), IndexError> {
        if self.docs == self.block_first {
            return Ok(());
        }
        self.compressed.clear();
        compress_block(&self.raw, &mut self.compressed)?;
        self.index.push((self.block_first, self.out.position()));
        self.out.write_body(&self.compressed)?;
        self.raw.clear();
        self.block_first = self.docs;
        Ok(())
    }

    pub(crate) fn finish(mut self) -> Result<(u64, u32), IndexError> {
        self.flush_block()?;
        let index_offset = self.out.position();
        let mut tail = Vec::with_capacity(self.index.len() * 12 + TRAILER_LEN);
        for (first, offset) in &self.index {
            tail.extend_from_slice(&first.to_le_bytes());
            tail.extend_from_slice(&offset.to_le_bytes());
        }
        tail.extend_from_slice(&(self.index.len() as u32).to_le_bytes());
        tail.extend_from_slice(&index_offset.to_le_bytes());
        let crc = crc32c::crc32c(&tail);
        tail.extend_from_slice(&crc.to_le_bytes());
        self.out.write_body(&tail)?;
        self.out.finish()
    }
}

/// Bytes after the index entries: their count, their offset and their CRC32C.
const TRAILER_LEN: usize = 16;

/// Bytes of a block's header: raw length, compressed length, CRC32C.
const BLOCK_HEADER_LEN: usize = 12;

/// The store's block index: each block's first local document and offset, verified.
pub(crate) struct StoreIndex {
    entries: Vec<(u32, u64)>,
    /// Where the blocks end (the index's offset in the body).
    blocks_end: u64,
}

impl StoreIndex {
    /// Reads and verifies the index of a store body; the error is what is wrong with it.
    pub(crate) fn read(body: &[u8]) -> Result<StoreIndex, String> {
        let n = body.len();
        if n < TRAILER_LEN {
            return Err("too short".into());
        }
        let trailer = &body[n - TRAILER_LEN..];
        let entries = u32::from_le_bytes(trailer[..4].try_into().expect("4")) as usize;
        let index_offset = u64::from_le_bytes(trailer[4..12].try_into().expect("8"));
        let crc = u32::from_le_bytes(trailer[12..].try_into().expect("4"));
        let index_start = usize::try_from(index_offset).map_err(|_| "index offset")?;
        if entries
            .checked_mul(12)
            .and_then(|len| index_start.checked_add(len))
            != Some(n - TRAILER_LEN)
        {
            return Err("the block index does not fit the file".into());
        }
        if crc32c::crc32c(&body[index_start..n - 4]) != crc {
            return Err("block index checksum mismatch".into());
        }
        let entries = body[index_start..n - TRAILER_LEN]
            .chunks_exact(12)
            .map(|e| {
                (
                    u32::from_le_bytes(e[..4].try_into().expect("4")),
                    u64::from_le_bytes(e[4..].try_into().expect("8")),
                )
            })
            .collect();
        Ok(StoreIndex {
            entries,
            blocks_end: index_offset,
        })
    }
}

/// Where a [`StoreReader`] reads its blocks from.
#[derive(Clone, Copy)]
pub(crate) enum BlockSource<'a> {
    /// The mapped body.
    Mapped,
    /// Positional reads that bypass the page cache, the body starting at this file offset.
    Uncached(&'a UncachedFile, u64),
}

/// Reads documents from a store body.
pub(crate) struct StoreReader<'a> {
    body: &'a [u8],
    index: &'a StoreIndex,
    file: &'a str,
    source: BlockSource<'a>,
}

impl<'a> StoreReader<'a> {
    /// A reader of `body`, whose verified index is `index`, in the file `file`, reading the
    /// blocks it decompresses from `source`.
    pub(crate) fn new(
        body: &'a [u8],
        index: &'a StoreIndex,
        file: &'a str,
        source: BlockSource<'a>,
    ) -> StoreReader<'a> {
        StoreReader {
            body,
            index,
            file,
            source,
        }
    }

    fn corrupt(&self, i: usize, comment: &str) -> IndexError {
        IndexError::corrupt(self.file, format!("document store block {i}: {comment}"))
    }

    /// Block `i`'s first local document and offset in the body.
    fn entry(&self, i: usize) -> Result<(u32, u64), IndexError> {
        self.index
            .entries
            .get(i)
            .copied()
            .ok_or_else(|| self.corrupt(i, "no such block"))
    }

    /// Block `i` as stored in the mapped body (12-byte header and zstd frame), verified
    /// against its checksum, with its first local document and the first local document of
    /// the next block (`None` for the last block).
    pub(crate) fn block_bytes(&self, i: usize) -> Result<(u32, Option<u32>, &'a [u8]), IndexError> {
        let (first, offset) = self.entry(i)?;
        let from = self
            .body
            .get(offset as usize..)
            .ok_or_else(|| self.corrupt(i, "past the end"))?;
        let bytes = self.verified_block(i, from)?;
        Ok((first, self.index.entries.get(i + 1).map(|e| e.0), bytes))
    }

    /// The block at the start of `from` (which may run past it), verified against its
    /// checksum.
    fn verified_block<'b>(&self, i: usize, from: &'b [u8]) -> Result<&'b [u8], IndexError> {
        let header = from
            .get(..BLOCK_HEADER_LEN)
            .ok_or_else(|| self.corrupt(i, "past the end"))?;
        let comp_len = u32::from_le_bytes(header[4..8].try_into().expect("4")) as usize;
        let crc = u32::from_le_bytes(header[8..].try_into().expect("4"));
        let bytes = BLOCK_HEADER_LEN
            .checked_add(comp_len)
            .and_then(|end| from.get(..end))
            .ok_or_else(|| self.corrupt(i, "past the end"))?;
        let frame = &bytes[BLOCK_HEADER_LEN..];
        if crc32c::crc32c_append(crc32c::crc32c(&header[..8]), frame) != crc {
            return Err(self.corrupt(i, "checksum mismatch"));
        }
        Ok(bytes)
    }

    /// Reads block `i` past the page cache: the bytes from its offset to the next block's
    /// (or the end of the blocks), in one read.
    fn read_uncached(
        &self,
        i: usize,
        file: &UncachedFile,
        body_start: u64,
    ) -> Result<(u32, Vec<u8>), IndexError> {
        let (first, offset) = self.entry(i)?;
        let end = self
            .index
            .entries
            .get(i + 1)
            .map_or(self.index.blocks_end, |e| e.1);
        let len = end
            .checked_sub(offset)
            .filter(|_| end <= self.body.len() as u64)
            .ok_or_else(|| self.corrupt(i, "block offsets out of order"))?;
        Ok((first, file.read_at(body_start + offset, len as usize)?))
    }

    /// The index of the block holding local document `local`.
    pub(crate) fn block_of(&self, local: u32) -> Option<usize> {
        self.index
            .entries
            .partition_point(|&(first, _)| first <= local)
            .checked_sub(1)
    }

    /// Decompresses block `i`; returns its first local document and raw bytes.
    pub(crate) fn block(&self, i: usize) -> Result<(u32, Vec<u8>), IndexError> {
        let corrupt = |c: &str| self.corrupt(i, c);
        let read;
        let (first, bytes) = match self.source {
            BlockSource::Mapped => {
                let (first, _, bytes) = self.block_bytes(i)?;
                (first, bytes)
            }
            BlockSource::Uncached(file, body_start) => {
                let (first, bytes) = self.read_uncached(i, file, body_start)?;
                read = bytes;
                (first, self.verified_block(i, &read)?)
            }
        };
        let raw_len = u32::from_le_bytes(bytes[..4].try_into().expect("4")) as usize;
        if raw_len > MAX_RAW_BLOCK {
            return Err(corrupt("raw length past any block's"));
        }
        let frame = &bytes[BLOCK_HEADER_LEN..];
        let mut raw = Vec::new();
        decompress_into(frame, raw_len, &mut raw).map_err(|_| corrupt("bad zstd frame"))?;
        if raw.len() != raw_len {
            return Err(corrupt("wrong decompressed length"));
        }
        Ok((first, raw))
    }

    /// Number of blocks.
    pub(crate) fn blocks(&self) -> usize {
        self.index.entries.len()
    }

    /// Splits a raw block into documents (title, body and source as raw slices).
    pub(crate) fn documents(raw: &[u8]) -> Option<Vec<[&[u8]; FIELDS]>> {
        let mut pos = 0;
        let mut docs = Vec::new();
        while pos < raw.len() {
            let mut fields = [&raw[..0]; FIELDS];
            for field in &mut fields {
                let len = read_vbyte(raw, &mut pos)? as usize;
                *field = raw.get(pos..pos.checked_add(len)?)?;
                pos += len;
            }
            docs.push(fields);
        }
        Some(docs)
    }

    /// Document `n` of a raw block (title, body and source as raw slices), walking past the
    /// ones before it.
    fn nth_document(raw: &[u8], n: usize) -> Option<(&[u8], &[u8], &[u8])> {
        let mut pos = 0;
        let mut field = || {
            let len = read_vbyte(raw, &mut pos)? as usize;
            let bytes = raw.get(pos..pos.checked_add(len)?)?;
            pos += len;
            Some(bytes)
        };
        for _ in 0..n * FIELDS {
            field()?;
        }
        Some((field()?, field()?, field()?))
    }

    /// The document at local index `local`.
    pub(crate) fn get(&self, local: u32) -> Result<StoredDocument, IndexError> {
        let i = self
            .index
            .entries
            .partition_point(|&(first, _)| first <= local);
        let i = i
            .checked_sub(1)
            .ok_or_else(|| IndexError::corrupt(self.file, "document before the first block"))?;
        let (first, raw) = self.block(i)?;
        let (title, body, source) = Self::nth_document(&raw, (local - first) as usize)
            .ok_or_else(|| IndexError::corrupt(self.file, format!("no stored document {local}")))?;
        let text = |b: &[u8]| {
            String::from_utf8(b.to_vec())
                .map_err(|_| IndexError::corrupt(self.file, "stored text is not UTF-8"))
        };
        Ok(StoredDocument::new(
            text(title)?,
            text(body)?,
            text(source)?,
        ))
    }
}

#[cfg(test)]
mod snippet_tests {
    use super::snippet;

    #[test]
    fn snippets_cut_at_a_word_and_never_inside_a_character() {
        assert_eq!(snippet("short", 10), "short");
        assert_eq!(snippet("one two three four", 10), "one two…");
        assert_eq!(snippet("ééééééééééé", 4), "éééé…");
        assert_eq!(snippet("", 4), "");
    }
}
