//! The in-memory inverted index of one indexing thread: a hash table from term to a chain of
//! posting blocks (structure of arrays: 256 DIDs, 256 frequencies), flushed to a segment when
//! it outgrows its share of the memory budget. Full blocks move to a [`BlockArena`], whose
//! placement is configurable; the hash table, the growing tails ([`TailPool`]) and the
//! positions ([`ByteSlices`]) stay in process memory. A document reaches the table through a
//! [`DocumentTerms`], once per distinct term; its stored text goes straight to the store file
//! of the segment the table will be flushed as.

use std::path::{Path, PathBuf};

use apcache_codec::{CodecKind, BLOCK_LEN};
use compact_str::CompactString;
use hashbrown::HashTable;

use super::arena::{ArenaPlacement, BlockArena};
use super::byte_slices::{ByteSlices, ByteStream};
use super::document_terms::{hash_term, DocumentTerms, TermOccurrences};
use super::tail_pool::{deinterleave, Tail, TailPool};
use crate::analyzer::Analyzer;
use crate::columns::{ColumnsBuilder, ColumnsError};
use crate::format::{FieldLengths, PositionsCodec};
use crate::ingest::Document;
use crate::prefetch::prefetch_line;
use crate::schema::{field_terms, ID_FIELD, TEXT_GAP};
use crate::segment::{DictionaryKind, DocMap, SegmentMeta, SegmentWriter, StoreWriter};
use crate::IndexError;

/// A value the columns refused (a field with values of two kinds): the mapping prevents it.
fn column_error(error: ColumnsError) -> IndexError {
    IndexError::InvalidArgument(format!("a document's values: {error}"))
}

/// The existence marks of a tab-separated document's two fields
/// ([`field_terms::exists_term`] of `title` and `body`).
const TITLE_EXISTS: &str = "\u{2}title";
const BODY_EXISTS: &str = "\u{2}body";

/// How many terms ahead a flush prefetches what it reads next.
const FLUSH_PREFETCH_DISTANCE: usize = 8;

/// Terms up to this many bytes are stored inside the hash entry (`CompactString`).
const KEY_INLINE_BYTES: usize = 24;

/// The postings, norms and stored documents of the documents one thread indexed since its last
/// flush.
pub struct PostingTable {
    arena: BlockArena,
    tails: TailPool,
    contents: Contents,
    /// The document being inverted.
    document: DocumentTerms,
    /// The hash-table buckets of the document's terms, in [`DocumentTerms::for_each`] order.
    buckets: Vec<usize>,
    /// Per named text field of the document being added: its next position and its length.
    field_streams: Vec<(String, u32, u32)>,
    /// A named text field's term being built (its prefix, then a word).
    term_buffer: String,
    /// The segment the next flush writes: its directory, its name, and its store, which the
    /// stored documents stream to as they arrive (so they hold no memory of the table's).
    segment: Option<(PathBuf, String, StoreWriter)>,
    /// Whether positions are kept.
    keep_positions: bool,
}

/// A term's entry in the hash table: everything a new posting of the term touches, in 56
/// bytes (short terms are stored inline in the key, so the lookup follows no pointer).
struct TermEntry {
    term: CompactString,
    /// The postings after the sealed blocks.
    tail: Tail,
    /// Index of the term's list of sealed blocks.
    id: u32,
    /// When positions are kept: every occurrence's position as a VByte, the first of each
    /// document as it is, the others as gaps from the one before.
    positions: ByteStream,
}

/// What a flush writes and empties.
#[derive(Default)]
struct Contents {
    terms: HashTable<TermEntry>,
    /// Per term, the arena numbers of its sealed blocks.
    sealed: Vec<Vec<u32>>,
    /// The terms' position streams.
    positions: ByteSlices,
    docs: DocMap,
    lengths: Vec<u32>,
    /// The documents' lengths in each text field indexed under its own name.
    field_lengths: FieldLengths,
    /// The keyword, numeric, date and boolean values of JSON documents, and their `_id`s.
    columns: ColumnsBuilder,
    bytes: usize,
    postings: u64,
}

impl Contents {
    /// The bucket of `term`'s entry (whose hash is `hash`), made when the table lacks it, and
    /// a prefetch of the lines its next posting writes. Buckets stay where they are until the
    /// table grows: [`PostingTable::add_document`] reserves room for a document's terms first.
    fn find_or_insert(
        &mut self,
        term: &[u8],
        hash: u64,
        tails: &TailPool,
    ) -> Result<usize, IndexError> {
        let bucket = match self
            .terms
            .find_bucket_index(hash, |e| e.term.as_bytes() == term)
        {
            Some(bucket) => bucket,
            None => {
                let term = std::str::from_utf8(term)
                    .map_err(|_| IndexError::InvalidArgument("a token that is not UTF-8".into()))?;
                let id = self.sealed.len() as u32;
                self.sealed.push(Vec::new());
                if term.len() > KEY_INLINE_BYTES {
                    self.bytes += term.len();
                }
                let entry = TermEntry {
                    term: CompactString::new(term),
                    tail: Tail::default(),
                    id,
                    positions: ByteStream::default(),
                };
                self.terms
                    .insert_unique(hash, entry, |e| hash_term(e.term.as_bytes()))
                    .bucket_index()
            }
        };
        if let Some(entry) = self.terms.get_bucket(bucket) {
            tails.prefetch(&entry.tail);
            self.positions.prefetch(&entry.positions);
        }
        Ok(bucket)
    }

    /// Adds posting `(did, freq)` of the term in `bucket` (see [`Contents::find_or_insert`]),
    /// and its positions.
    fn add_posting(
        &mut self,
        bucket: usize,
        did: u32,
        occurrences: TermOccurrences<'_>,
        arena: &mut BlockArena,
        tails: &mut TailPool,
    ) -> Result<(), IndexError> {
        let TermOccurrences {
            freq, positions, ..
        } = occurrences;
        let entry = self
            .terms
            .get_bucket_mut(bucket)
            .ok_or_else(|| IndexError::InvalidArgument("a term's entry moved".into()))?;
        // Each position as a VByte of its gap, straight into the term's stream.
        let mut last = 0;
        for &position in positions {
            self.positions
                .append_vbyte(&mut entry.positions, position - last)
                .ok_or_else(|| {
                    IndexError::InvalidArgument(
                        "the positions of one indexing batch passed 4 GiB: give the build less \
                         memory or smaller documents"
                            .into(),
                    )
                })?;
            last = position;
        }
        if entry.tail.is_full_block() {
            let mut block = [[0u32; BLOCK_LEN]; 2];
            for (i, pair) in tails.pairs(&entry.tail).chunks_exact(2).enumerate() {
                block[0][i] = pair[0];
                block[1][i] = pair[1];
            }
            let number = arena.push(&block[0], &block[1])?;
            self.sealed[entry.id as usize].push(number);
            self.bytes += 4;
            TailPool::reset(&mut entry.tail);
        }
        tails.push(&mut entry.tail, did, freq);
        self.postings += 1;
        Ok(())
    }
}

impl PostingTable {
    /// An empty table whose blocks go to an arena placed as `placement`, keeping the terms'
    /// positions when `keep_positions`.
    pub fn new(
        placement: ArenaPlacement,
        keep_positions: bool,
    ) -> Result<PostingTable, IndexError> {
        Ok(PostingTable {
            arena: BlockArena::new(placement)?,
            tails: TailPool::default(),
            contents: Contents::default(),
            document: DocumentTerms::new(keep_positions),
            buckets: Vec::new(),
            field_streams: Vec::new(),
            term_buffer: String::new(),
            segment: None,
            keep_positions,
        })
    }

    /// Memory held, in bytes, plus what a flush will allocate to sort the terms: the hash
    /// table at its capacity, the arena's and the tail pool's chunks, the stored documents,
    /// and the heap parts that [`Contents::bytes`] tracks.
    pub fn bytes(&self) -> usize {
        let c = &self.contents;
        let entry = std::mem::size_of::<TermEntry>();
        let sort_entry = std::mem::size_of::<(&[u8], &TermEntry)>();
        c.bytes
            + c.terms.capacity() * (entry + 1)
            + c.terms.len() * sort_entry
            + c.sealed.capacity() * std::mem::size_of::<Vec<u32>>()
            + c.lengths.capacity() * 4
            + c.field_lengths.heap_bytes()
            + c.columns.heap_bytes()
            + c.positions.allocated_bytes()
            + self
                .segment
                .as_ref()
                .map_or(0, |(_, _, store)| store.buffered_bytes())
            + self.arena.allocated_bytes()
            + self.tails.allocated_bytes()
    }

    /// Bytes the block arena has allocated (its high-water mark).
    pub fn arena_bytes(&self) -> usize {
        self.arena.allocated_bytes()
    }

    /// Bytes the tail pool has allocated (its high-water mark).
    pub fn tail_pool_bytes(&self) -> usize {
        self.tails.allocated_bytes()
    }

    /// Documents held.
    pub fn documents(&self) -> usize {
        self.contents.lengths.len()
    }

    /// Starts segment `name` in `dir`, which the next [`PostingTable::flush`] writes: the
    /// documents added from now on are stored in its store file as they arrive.
    pub fn begin_segment(&mut self, dir: &Path, name: &str) -> Result<(), IndexError> {
        if self.segment.is_some() {
            return Err(IndexError::InvalidArgument(
                "a segment is already begun".into(),
            ));
        }
        let store = SegmentWriter::open_store(dir, name)?;
        self.segment = Some((dir.to_path_buf(), name.to_owned(), store));
        Ok(())
    }

    /// Whether a segment is begun (and not yet flushed).
    pub fn has_segment(&self) -> bool {
        self.segment.is_some()
    }

    /// Inverts `doc` as global DID `did` (greater than every DID already held), into the
    /// segment begun by [`PostingTable::begin_segment`].
    pub fn add_document(
        &mut self,
        did: u32,
        doc: &Document,
        analyzer: &Analyzer,
    ) -> Result<(), IndexError> {
        let Some((_, _, store)) = &mut self.segment else {
            return Err(IndexError::InvalidArgument(
                "a document added before a segment was begun".into(),
            ));
        };
        let document = &mut self.document;
        document.clear();
        let mut length = 0u32;
        let mut offset = 0u32;
        let local = self.contents.lengths.len() as u32;
        match &doc.json {
            // The title and the body are one stream of positions, as if joined by a space.
            None => {
                for text in [doc.title.as_str(), doc.body.as_str()] {
                    let words = analyzer.for_each_token_with_position(text, |position, token| {
                        length += 1;
                        document.add(token, offset.saturating_add(position));
                    });
                    offset = offset.saturating_add(words);
                }
                // Every such document has both fields (an empty string is a value, as in
                // Elasticsearch), so `_exists_` answers on them as on JSON documents.
                for (term, position) in [(TITLE_EXISTS, 1), (BODY_EXISTS, 2)] {
                    document.add(term, offset.saturating_add(position));
                }
            }
            Some(json) => {
                let fields = &json.fields;
                // A text field is a stream of positions of its own (the default field's, under
                // a mapping that joins them, is one stream of all); the values of one array are
                // set apart, so that no phrase runs from one into the next.
                let field_streams = &mut self.field_streams;
                field_streams.clear();
                let term = &mut self.term_buffer;
                for ((text, field), &gap) in fields
                    .texts
                    .iter()
                    .zip(&fields.text_fields)
                    .zip(&fields.text_gaps)
                {
                    if field.is_empty() {
                        if gap {
                            offset = offset.saturating_add(TEXT_GAP);
                        }
                        let words =
                            analyzer.for_each_token_with_position(text, |position, token| {
                                length += 1;
                                document.add(token, offset.saturating_add(position));
                            });
                        offset = offset.saturating_add(words);
                        continue;
                    }
                    let stream = match field_streams.iter().position(|s| s.0 == *field) {
                        Some(at) => at,
                        None => {
                            field_streams.push((field.clone(), 0, 0));
                            field_streams.len() - 1
                        }
                    };
                    let (_, field_offset, field_length) = &mut field_streams[stream];
                    if gap {
                        *field_offset = field_offset.saturating_add(TEXT_GAP);
                    }
                    term.clear();
                    term.push_str(&field_terms::text_prefix(field));
                    let prefix = term.len();
                    let at = *field_offset;
                    let words = analyzer.for_each_token_with_position(text, |position, token| {
                        *field_length += 1;
                        term.truncate(prefix);
                        term.push_str(token);
                        document.add(term, at.saturating_add(position));
                    });
                    *field_offset = field_offset.saturating_add(words);
                }
                for (field, _, field_length) in field_streams.iter() {
                    if *field_length > 0 {
                        self.contents.field_lengths.set(field, local, *field_length);
                    }
                }
                // Keyword values and field existence are terms, not words: they take
                // positions after the text and add nothing to the document's length.
                let mut mark = |term: &str| {
                    offset = offset.saturating_add(1);
                    document.add(term, offset);
                };
                let columns = &mut self.contents.columns;
                if let Some(id) = &doc.id {
                    mark(&field_terms::keyword_term(ID_FIELD, id));
                    columns
                        .add_keyword(ID_FIELD, local, id)
                        .map_err(column_error)?;
                }
                for (field, value) in &fields.keywords {
                    mark(&field_terms::keyword_term(field, value));
                    columns
                        .add_keyword(field, local, value)
                        .map_err(column_error)?;
                }
                for (field, value) in &fields.numbers {
                    columns
                        .add_numeric(field, local, *value)
                        .map_err(column_error)?;
                }
                for field in &fields.present {
                    mark(&field_terms::exists_term(field));
                }
            }
        }
        let (arena, tails, this) = (&mut self.arena, &mut self.tails, &mut self.contents);
        // Every distinct term's entry found (or made) first, with the lines its posting writes
        // prefetched, then the postings appended: the misses of many terms overlap. With room
        // reserved for all of them, no insert moves the buckets found before it.
        this.terms
            .reserve(document.len(), |e| hash_term(e.term.as_bytes()));
        let buckets = &mut self.buckets;
        buckets.clear();
        document.for_each(|occurrences| {
            buckets.push(this.find_or_insert(occurrences.term, occurrences.hash, tails)?);
            Ok::<_, IndexError>(())
        })?;
        let mut buckets = buckets.iter();
        document.for_each(|occurrences| {
            let bucket = *buckets.next().expect("one bucket per term");
            this.add_posting(bucket, did, occurrences, arena, tails)
        })?;
        // A store block never spans two runs of DIDs (see `SegmentWriter::add_stored_raw`).
        if this.docs.runs().last().is_some_and(|r| r[0] + r[1] != did) {
            store.cut()?;
        }
        let source = doc.json.as_ref().map_or("", |json| json.source.as_str());
        store.add_document(&doc.title, &doc.body, source)?;
        this.docs.push(did);
        this.lengths.push(length);
        Ok(())
    }

    /// Writes everything held as the segment begun by [`PostingTable::begin_segment`], in
    /// `format`, and empties the table.
    pub fn flush(&mut self, format: FlushFormat) -> Result<SegmentMeta, IndexError> {
        let (dir, name, store) = self
            .segment
            .take()
            .ok_or_else(|| IndexError::InvalidArgument("no segment was begun".into()))?;
        let mut table = std::mem::take(&mut self.contents);
        let documents = table.lengths.len() as u32;
        let columns = std::mem::take(&mut table.columns);
        let mut writer = SegmentWriter::create_with_store(
            &dir,
            &name,
            format.codec,
            format.dictionary,
            table.docs,
            table.lengths,
            store,
        )?;
        if self.keep_positions {
            writer.keep_positions(format.positions)?;
        }
        if !table.field_lengths.is_empty() {
            writer.set_field_lengths(&table.field_lengths)?;
        }
        if !columns.is_empty() {
            writer.add_columns(&columns.finish(documents).map_err(column_error)?)?;
        }
        let mut positions = Vec::new();
        let mut position_bytes = Vec::new();
        let mut order: Vec<(&[u8], &TermEntry)> = table
            .terms
            .iter()
            .map(|entry| (entry.term.as_bytes(), entry))
            .collect();
        order.sort_unstable_by(|a, b| a.0.cmp(b.0));
        let (mut docs, mut freqs) = (Vec::new(), Vec::new());
        for i in 0..order.len() {
            // Terms in byte order are scattered over the table and the pools: the entries a
            // few terms ahead are prefetched, and what those entries point to a few after.
            if let Some(&(_, ahead)) = order.get(i + 2 * FLUSH_PREFETCH_DISTANCE) {
                prefetch_line(std::ptr::from_ref(ahead).cast());
            }
            if let Some(&(_, ahead)) = order.get(i + FLUSH_PREFETCH_DISTANCE) {
                self.tails.prefetch_pairs(&ahead.tail);
                table.positions.prefetch_start(&ahead.positions);
                prefetch_line(table.sealed.as_ptr().wrapping_add(ahead.id as usize).cast());
            }
            let entry = order[i].1;
            docs.clear();
            freqs.clear();
            for &block in &table.sealed[entry.id as usize] {
                let (block_docs, block_freqs) = self.arena.block(block);
                docs.extend_from_slice(block_docs);
                freqs.extend_from_slice(block_freqs);
            }
            deinterleave(self.tails.pairs(&entry.tail), &mut docs, &mut freqs);
            let positions = if self.keep_positions {
                position_bytes.clear();
                table.positions.read(&entry.positions, &mut position_bytes);
                decode_positions(&position_bytes, &freqs, &mut positions).ok_or_else(|| {
                    IndexError::InvalidArgument(format!("term {:?}: positions lost", entry.term))
                })?;
                Some(positions.as_slice())
            } else {
                None
            };
            writer.add_term(entry.term.as_bytes(), &docs, &freqs, positions)?;
        }
        self.arena.release();
        self.tails.release();
        writer.finish()
    }
}

/// How a flush writes its segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlushFormat {
    /// The codec of the posting blocks.
    pub codec: CodecKind,
    /// The kind of term dictionary.
    pub dictionary: DictionaryKind,
    /// The codec of the positions chunks.
    pub positions: PositionsCodec,
}

impl FlushFormat {
    /// A segment that only a merge will read: what is written fastest. The merge decodes it
    /// once, re-encodes with the index's codecs and builds the one FST the index keeps.
    pub const BEFORE_MERGE: FlushFormat = FlushFormat {
        // Encodes several times faster than `pfor-delta-simd` (no exception analysis) and
        // decodes fastest.
        codec: CodecKind::BitpackDeltaSimd,
        dictionary: DictionaryKind::TermList,
        positions: PositionsCodec::BitpackDeltaSimd,
    };

    /// A segment that queries will read, with posting blocks coded by `codec`.
    pub fn searchable(codec: CodecKind) -> FlushFormat {
        FlushFormat {
            codec,
            dictionary: DictionaryKind::Fst,
            positions: PositionsCodec::PforDelta,
        }
    }
}

/// Decodes a term's VByte positions (see `Contents::positions`) into `out` as absolute
/// positions, `freqs[i]` for posting `i`; `None` if they do not add up.
fn decode_positions(bytes: &[u8], freqs: &[u32], out: &mut Vec<u32>) -> Option<()> {
    out.clear();
    let mut at = 0;
    let mut next = || -> Option<u32> {
        let mut value = 0u32;
        for shift in (0..35).step_by(7) {
            let byte = *bytes.get(at)?;
            at += 1;
            value |= u32::from(byte & 0x7F) << shift;
            if byte < 0x80 {
                return Some(value);
            }
        }
        None
    };
    for &freq in freqs {
        let mut position = next()?;
        out.push(position);
        for _ in 1..freq {
            position = position.checked_add(next()?)?;
            out.push(position);
        }
    }
    (at == bytes.len()).then_some(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_term_entry_takes_56_bytes() {
        assert_eq!(std::mem::size_of::<super::TermEntry>(), 56);
    }
}
