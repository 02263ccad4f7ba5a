//! An open index: its committed segments and the collection statistics queries need.

use std::collections::BTreeMap;
use std::path::Path;

use super::bm25::{Bm25, Norms, Scoring};
use super::field_scorers::TextFieldStats;
use super::term_cursor::{TermCursor, NO_MORE_DOCS};
use crate::analyzer::{Analyzer, AnalyzerConfig};
use crate::manifest::Manifest;
use crate::schema::{field_terms, Mapping, ID_FIELD};
use crate::segment::{SegmentReader, UncachedReads};
use crate::IndexError;

/// A committed index, open for queries. Immutable and `Send + Sync`: query threads share one.
pub struct IndexReader {
    segments: Vec<SegmentReader>,
    analyzer: AnalyzerConfig,
    /// Documents with at least one token (Lucene's `docCount` of the field).
    doc_count: u64,
    /// Documents, empty ones included.
    max_doc: u64,
    total_tokens: u64,
    /// Each segment's own BM25 (its blocks' best postings were chosen with it).
    segment_bm25: Vec<Bm25>,
    /// Each segment's own BM25 of each named text field.
    segment_field_bm25: Vec<BTreeMap<String, Bm25>>,
    /// The documents and tokens of each named text field.
    text_fields: BTreeMap<String, TextFieldStats>,
    /// The generation of the commit this reader opened.
    generation: u64,
    /// The fields of the index's documents.
    mapping: Mapping,
    /// Whether documents carry `_id`s of their own (else a document's id is its number).
    has_ids: bool,
}

/// How an index is read at query time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LoadMode {
    /// Compressed blocks through mmap, decoded as queries need them.
    #[default]
    Mmap,
    /// Every list decoded into process memory at open time ("uncompressed direct"); a
    /// damaged list is left out and fails the queries that read it.
    Direct,
}

impl IndexReader {
    /// Opens the index committed in `dir`, memory-mapped.
    pub fn open(dir: &Path) -> Result<IndexReader, IndexError> {
        IndexReader::open_with(dir, LoadMode::Mmap)
    }

    /// Opens the index committed in `dir`, read as `mode` says.
    pub fn open_with(dir: &Path, mode: LoadMode) -> Result<IndexReader, IndexError> {
        IndexReader::open_placed(dir, mode, None)
    }

    /// Opens the index committed in `dir`, mapping the segments' term metadata and norms
    /// ([`crate::segment::METADATA_FILES`]) from copies in `metadata_dir` when given.
    ///
    /// # Errors
    ///
    /// Among others [`IndexError::Partial`] for an index an interrupted build left, which
    /// holds only part of its input: its answers would look whole and be wrong.
    /// [`IndexReader::open_accepting_partial`] opens one all the same.
    pub fn open_placed(
        dir: &Path,
        mode: LoadMode,
        metadata_dir: Option<&Path>,
    ) -> Result<IndexReader, IndexError> {
        IndexReader::open_checked(dir, mode, metadata_dir, false)
    }

    /// [`IndexReader::open_placed`], opening a partial index too (`--allow-partial`): its
    /// answers cover the documents the interrupted build committed.
    pub fn open_accepting_partial(
        dir: &Path,
        mode: LoadMode,
        metadata_dir: Option<&Path>,
    ) -> Result<IndexReader, IndexError> {
        IndexReader::open_checked(dir, mode, metadata_dir, true)
    }

    fn open_checked(
        dir: &Path,
        mode: LoadMode,
        metadata_dir: Option<&Path>,
        accept_partial: bool,
    ) -> Result<IndexReader, IndexError> {
        let manifest = Manifest::load(dir)?;
        if !accept_partial {
            manifest.check_whole(dir)?;
        }
        let mut segments = manifest
            .segments
            .iter()
            .map(|meta| SegmentReader::open_placed(dir, meta, metadata_dir))
            .collect::<Result<Vec<_>, _>>()?;
        if mode == LoadMode::Direct {
            for segment in &mut segments {
                segment.load_direct()?;
            }
        }
        let mut doc_count = 0;
        let mut segment_bm25 = Vec::with_capacity(segments.len());
        let mut segment_field_bm25 = Vec::with_capacity(segments.len());
        let mut text_fields: BTreeMap<String, TextFieldStats> = BTreeMap::new();
        for segment in &segments {
            let lengths = segment.doc_lengths_in_order();
            doc_count += lengths.iter().filter(|&&l| l > 0).count() as u64;
            segment_bm25.push(Bm25::of_lengths(&lengths));
            let mut field_bm25 = BTreeMap::new();
            for field in segment.text_fields() {
                let stats = TextFieldStats {
                    documents: field.documents,
                    tokens: field.tokens,
                };
                text_fields
                    .entry(field.name.to_owned())
                    .or_default()
                    .add(stats);
                field_bm25.insert(
                    field.name.to_owned(),
                    Bm25::new(Scoring::Bm25, Norms::Lucene, stats.documents, stats.tokens),
                );
            }
            segment_field_bm25.push(field_bm25);
        }
        Ok(IndexReader {
            max_doc: manifest.documents(),
            total_tokens: manifest.segments.iter().map(|s| s.total_tokens).sum(),
            analyzer: manifest.analyzer,
            has_ids: segments_have_ids(&segments),
            segments,
            doc_count,
            segment_bm25,
            segment_field_bm25,
            text_fields,
            generation: manifest.generation,
            mapping: manifest.mapping.unwrap_or_else(Mapping::title_body),
        })
    }

    /// Reads stored documents past the page cache from now on, in every segment of the index
    /// in `dir` (the directory this reader opened): see [`crate::segment::UncachedFile`].
    /// Returns how the reads avoid the cache.
    pub fn read_store_uncached(&mut self, dir: &Path) -> Result<UncachedReads, IndexError> {
        let mut reads = UncachedReads::Direct;
        for segment in &mut self.segments {
            if segment.read_store_uncached(dir)? == UncachedReads::DropAfterRead {
                reads = UncachedReads::DropAfterRead;
            }
        }
        Ok(reads)
    }

    /// The generation of the commit this reader opened: it grows with every commit, so a
    /// result computed against this reader is valid exactly as long as the generation is.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Whether block bounds of segment `i` may use its best postings under `bm25`.
    pub fn best_postings_apply(&self, i: usize, bm25: &Bm25) -> bool {
        self.segment_bm25
            .get(i)
            .is_some_and(|s| s.same_ranking(bm25))
    }

    /// Whether the block bounds of the terms of text field `field` (`""`: the default field)
    /// in segment `i` may use their best postings under `bm25`.
    pub fn best_postings_apply_in(&self, i: usize, field: &str, bm25: &Bm25) -> bool {
        if field.is_empty() {
            return self.best_postings_apply(i, bm25);
        }
        self.segment_field_bm25
            .get(i)
            .and_then(|fields| fields.get(field))
            .is_some_and(|s| s.same_ranking(bm25))
    }

    /// The documents and tokens of each text field indexed under its own name.
    pub fn text_field_stats(&self) -> &BTreeMap<String, TextFieldStats> {
        &self.text_fields
    }

    /// The documents and tokens of the named text field `field` (zero when no document has
    /// it).
    pub fn text_field(&self, field: &str) -> TextFieldStats {
        self.text_fields.get(field).copied().unwrap_or_default()
    }

    /// The segments.
    pub fn segments(&self) -> &[SegmentReader] {
        &self.segments
    }

    /// The analyzer the documents were indexed with (queries must use it).
    pub fn analyzer(&self) -> Analyzer {
        Analyzer::new(self.analyzer)
    }

    /// Documents with at least one token.
    pub fn doc_count(&self) -> u64 {
        self.doc_count
    }

    /// All documents.
    pub fn max_doc(&self) -> u64 {
        self.max_doc
    }

    /// Tokens in all documents.
    pub fn total_tokens(&self) -> u64 {
        self.total_tokens
    }

    /// Documents containing `term`, over all segments.
    pub fn doc_freq(&self, term: &str) -> Result<u64, IndexError> {
        let mut df = 0;
        for segment in &self.segments {
            let info = segment.term(term);
            segment.check_query_reads()?;
            if let Some(info) = info? {
                df += u64::from(info.doc_freq);
            }
        }
        Ok(df)
    }

    /// An error naming the file if a read through the mapping of any file a query reads
    /// (every file of every segment but the stores) failed since the index was opened
    /// ([`IndexError::MappedReadFailed`]); see [`crate::mapping::MappedFile`]. A few atomic
    /// loads per segment.
    pub fn check_query_reads(&self) -> Result<(), IndexError> {
        self.segments
            .iter()
            .try_for_each(SegmentReader::check_query_reads)
    }

    /// `result`, a query's, unless a read through one of the mappings queries read failed by
    /// now ([`IndexReader::check_query_reads`]): then the error that names the failed read,
    /// since `result` (or the error it holds) may come from the zeros read in its place.
    pub fn unless_mapped_read_failed<T>(
        &self,
        result: Result<T, IndexError>,
    ) -> Result<T, IndexError> {
        self.check_query_reads()?;
        result
    }

    /// The fields of the index's documents (a title and a body for an index of tab-separated
    /// documents).
    pub fn mapping(&self) -> &Mapping {
        &self.mapping
    }

    /// Whether the documents have `_id`s of their own; without, a document's id is its number.
    pub fn has_ids(&self) -> bool {
        self.has_ids
    }

    /// The `_id` of global DID `doc`: its own, or its number in decimal for a document without
    /// one.
    pub fn document_id(&self, doc: u32) -> Result<String, IndexError> {
        let own = self.locate(doc).and_then(|(segment, local)| {
            let column = segment.columns()?.keyword(ID_FIELD)?;
            let mut ordinals = Vec::with_capacity(1);
            column.ordinals(local, &mut ordinals);
            let ordinal = *ordinals.first()?;
            Some(
                column
                    .value(ordinal)
                    .map(str::to_owned)
                    .map_err(|e| IndexError::corrupt(&segment.meta().name, e.to_string())),
            )
        });
        own.unwrap_or_else(|| Ok(doc.to_string()))
    }

    /// The global DID of the document whose `_id` is `id` (its number, for an index whose
    /// documents have no ids of their own); `None` when no document has it.
    pub fn doc_by_id(&self, id: &str) -> Result<Option<u32>, IndexError> {
        if !self.has_ids {
            return Ok(id
                .parse::<u32>()
                .ok()
                .filter(|&doc| u64::from(doc) < self.max_doc));
        }
        let term = field_terms::keyword_term(ID_FIELD, id);
        for segment in &self.segments {
            let Some(entry) = segment.lookup(&term)? else {
                continue;
            };
            let doc = TermCursor::new(segment, entry, 0.0)?.doc();
            if doc != NO_MORE_DOCS {
                return Ok(Some(doc));
            }
        }
        Ok(None)
    }

    /// The segment holding global DID `doc`, and the document's local index there.
    pub fn locate(&self, doc: u32) -> Option<(&SegmentReader, u32)> {
        self.segments
            .iter()
            .find_map(|s| s.meta().docs.local(doc).map(|local| (s, local)))
    }
}

/// Whether any segment keeps an `_id` column.
fn segments_have_ids(segments: &[SegmentReader]) -> bool {
    segments
        .iter()
        .any(|s| s.columns().is_some_and(|c| c.keyword(ID_FIELD).is_some()))
}
