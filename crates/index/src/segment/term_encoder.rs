//! Encoding a term's posting list into its segment records, apart from writing them.
//!
//! A [`TermEncoder`] turns `(term, DIDs, freqs)` into the bytes the segment files will hold (the
//! blocks, the skip entries, the term info) in an [`EncodedTerms`] batch whose offsets are
//! relative to the batch. [`super::SegmentWriter::add_encoded`] then appends a batch, shifting
//! the offsets. Splitting the two lets a merge encode on one thread while another builds the
//! dictionary and writes the files.

use apcache_codec::{BlockCodec, BLOCK_LEN};

use super::DocMap;
use crate::format::{encode_term_positions, FieldLengths, PositionsCodec, SkipEntry, TermInfo};
use crate::schema::field_terms;
use crate::search::{length_to_norm, Bm25};
use crate::IndexError;

/// Encoded terms, ready to be appended to a segment.
#[derive(Default)]
pub struct EncodedTerms {
    /// The terms' bytes, concatenated; `term_ends[i]` ends term `i`.
    pub(crate) term_bytes: Vec<u8>,
    pub(crate) term_ends: Vec<usize>,
    /// Term infos; `postings_offset` and `first_skip` are relative to this batch.
    pub(crate) infos: Vec<TermInfo>,
    /// Skip entries of the terms of more than one block, serialised.
    pub(crate) skip: Vec<u8>,
    /// Postings (per term, DID blocks then frequency blocks).
    pub(crate) postings: Vec<u8>,
    /// Positions regions (see [`crate::format::positions`]), when the segment has positions;
    /// `position_ends[i]` ends term `i`'s.
    pub(crate) positions: Vec<u8>,
    pub(crate) position_ends: Vec<usize>,
    pub(crate) skip_entries: u32,
    pub(crate) postings_count: u64,
    pub(crate) docs_bytes: u64,
    pub(crate) freqs_bytes: u64,
    /// Scratch space for one term's frequency blocks.
    freq_buffer: Vec<u8>,
}

impl EncodedTerms {
    /// Number of terms.
    pub fn len(&self) -> usize {
        self.infos.len()
    }

    /// True when it holds no term.
    pub fn is_empty(&self) -> bool {
        self.infos.is_empty()
    }

    /// Approximate bytes held.
    pub fn bytes(&self) -> usize {
        self.term_bytes.len()
            + self.skip.len()
            + self.postings.len()
            + self.positions.len()
            + self.infos.len() * 48
    }

    /// Term `i`.
    pub(crate) fn term(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.term_ends[i - 1] };
        &self.term_bytes[start..self.term_ends[i]]
    }

    /// Empties the batch, keeping its buffers.
    pub fn clear(&mut self) {
        self.term_bytes.clear();
        self.term_ends.clear();
        self.infos.clear();
        self.skip.clear();
        self.postings.clear();
        self.positions.clear();
        self.position_ends.clear();
        self.skip_entries = 0;
        self.postings_count = 0;
        self.docs_bytes = 0;
        self.freqs_bytes = 0;
    }
}

/// The lengths of one named text field's documents (local order) and the scorer of the
/// field, which pick the best postings of that field's terms' blocks.
#[derive(Debug, Clone)]
pub struct FieldScoring {
    /// The field.
    pub name: String,
    /// [`Bm25::of_lengths`] of `lengths`.
    pub bm25: Bm25,
    /// Its documents' lengths in the field.
    pub lengths: Vec<u32>,
}

impl FieldScoring {
    /// The scoring of every field of `lengths`, each padded to `documents` documents.
    pub fn of_all(lengths: &FieldLengths, documents: u32) -> Vec<FieldScoring> {
        lengths
            .fields()
            .iter()
            .map(|(name, lengths)| {
                let mut lengths = lengths.clone();
                lengths.resize(documents as usize, 0);
                FieldScoring {
                    name: name.clone(),
                    bm25: Bm25::of_lengths(&lengths),
                    lengths,
                }
            })
            .collect()
    }
}

/// Encodes posting lists for a segment holding `docs` with `lengths` (local order).
#[derive(Clone, Copy)]
pub struct TermEncoder<'a> {
    codec: &'a dyn BlockCodec,
    bm25: &'a Bm25,
    docs: &'a DocMap,
    lengths: &'a [u32],
    /// The named text fields, by name: their terms' blocks are bounded with their lengths.
    fields: &'a [FieldScoring],
    segment: &'a str,
    positions_codec: PositionsCodec,
}

impl<'a> TermEncoder<'a> {
    /// An encoder with `codec` for segment `segment`; `bm25` is [`Bm25::of_lengths`] of the
    /// segment's lengths (it picks each block's best posting).
    pub fn new(
        codec: &'a dyn BlockCodec,
        bm25: &'a Bm25,
        docs: &'a DocMap,
        lengths: &'a [u32],
        segment: &'a str,
    ) -> TermEncoder<'a> {
        TermEncoder {
            codec,
            bm25,
            docs,
            lengths,
            fields: &[],
            segment,
            positions_codec: PositionsCodec::default(),
        }
    }

    /// The encoder with the lengths of the named text fields, `fields` in name order.
    pub fn with_fields(mut self, fields: &'a [FieldScoring]) -> TermEncoder<'a> {
        self.fields = fields;
        self
    }

    /// The scorer and lengths that bound the blocks of `term`: its text field's, or the
    /// default field's for any other term (keyword values and existence marks have no length
    /// of their own; the default field's keep their bounds as before).
    fn scoring_of(&self, term: &[u8]) -> Result<(&'a Bm25, &'a [u32]), IndexError> {
        if term.first() != Some(&(field_terms::TEXT_MARK as u8)) {
            return Ok((self.bm25, self.lengths));
        }
        let field = std::str::from_utf8(term)
            .ok()
            .and_then(field_terms::text_field_of)
            .map(|(field, _)| field);
        let found = field.and_then(|field| {
            self.fields
                .binary_search_by(|f| f.name.as_str().cmp(field))
                .ok()
                .map(|at| &self.fields[at])
        });
        match found {
            Some(field) => Ok((&field.bm25, &field.lengths)),
            None => Err(IndexError::InvalidArgument(format!(
                "term {:?} of a text field without lengths",
                String::from_utf8_lossy(term)
            ))),
        }
    }

    /// The encoder with positions coded by `codec` (default: [`PositionsCodec::PforDelta`]).
    pub fn with_positions_codec(mut self, codec: PositionsCodec) -> TermEncoder<'a> {
        self.positions_codec = codec;
        self
    }

    fn length_of(&self, lengths: &[u32], doc: u32) -> Result<u32, IndexError> {
        self.docs
            .local(doc)
            .and_then(|local| lengths.get(local as usize).copied())
            .ok_or_else(|| {
                IndexError::InvalidArgument(format!(
                    "posting for document {doc}, which the segment does not hold"
                ))
            })
    }

    /// Encodes one term and its whole posting list into `out`. DIDs must be strictly
    /// increasing, frequencies at least 1 (term order is the writer's to check). `positions`,
    /// for a segment with positions, holds every posting's positions in order (`freqs[i]` of
    /// them for posting `i`, increasing).
    pub fn encode(
        &mut self,
        term: &[u8],
        docs: &[u32],
        freqs: &[u32],
        positions: Option<&[u32]>,
        out: &mut EncodedTerms,
    ) -> Result<(), IndexError> {
        if docs.is_empty() || docs.len() != freqs.len() {
            return Err(IndexError::InvalidArgument(format!(
                "term {:?}: {} docs, {} freqs",
                String::from_utf8_lossy(term),
                docs.len(),
                freqs.len()
            )));
        }
        if docs.windows(2).any(|w| w[0] >= w[1]) || freqs.contains(&0) {
            return Err(IndexError::InvalidArgument(format!(
                "term {:?}: DIDs not increasing or a zero frequency",
                String::from_utf8_lossy(term)
            )));
        }
        let codec_error = |source| IndexError::Codec {
            file: self.segment.to_string(),
            source,
        };
        let (bm25, lengths) = self.scoring_of(term)?;
        let postings_offset = out.postings.len();
        let first_skip = out.skip_entries;
        let mut entries = Vec::with_capacity(docs.len().div_ceil(BLOCK_LEN));
        let mut stored_freqs = [0u32; BLOCK_LEN];
        let mut freq_buffer = std::mem::take(&mut out.freq_buffer);
        freq_buffer.clear();
        // A lone posting is kept in the term's record; it has no postings bytes.
        let lone = docs.len() == 1;
        for (block_docs, block_freqs) in docs.chunks(BLOCK_LEN).zip(freqs.chunks(BLOCK_LEN)) {
            let docs_offset = (out.postings.len() - postings_offset) as u32;
            let freqs_offset = freq_buffer.len() as u32;
            if !lone {
                self.codec
                    .encode_docs(block_docs[0], block_docs, &mut out.postings)
                    .map_err(codec_error)?;
                for (s, f) in stored_freqs.iter_mut().zip(block_freqs) {
                    *s = f - 1;
                }
                self.codec
                    .encode_freqs(&stored_freqs[..block_freqs.len()], &mut freq_buffer)
                    .map_err(codec_error)?;
            }
            let mut min_doc_len = u32::MAX;
            let (mut best_freq, mut best_doc_len, mut best_key) = (0, 0, f32::NEG_INFINITY);
            for (&d, &f) in block_docs.iter().zip(block_freqs) {
                let length = self.length_of(lengths, d)?;
                min_doc_len = min_doc_len.min(length);
                let key = bm25.saturation_key(f, length);
                if key > best_key {
                    (best_freq, best_doc_len, best_key) = (f, length, key);
                }
            }
            entries.push(SkipEntry {
                first_doc: block_docs[0],
                last_doc: block_docs[block_docs.len() - 1],
                docs_offset,
                freqs_offset,
                max_freq: block_freqs.iter().copied().max().unwrap_or(0),
                min_norm: length_to_norm(min_doc_len),
                best_freq,
                best_norm: length_to_norm(best_doc_len),
            });
        }
        let docs_len = (out.postings.len() - postings_offset) as u32;
        for entry in &mut entries {
            entry.freqs_offset += docs_len;
        }
        // A term of one block keeps its entry in its record; others in the skip file.
        let single_block = match entries.as_slice() {
            [only] => Some(*only),
            _ => {
                for entry in &entries {
                    entry.write_to(&mut out.skip);
                }
                out.skip_entries += entries.len() as u32;
                None
            }
        };
        out.postings.extend_from_slice(&freq_buffer);
        out.infos.push(TermInfo {
            doc_freq: docs.len() as u32,
            total_term_freq: freqs.iter().map(|&f| u64::from(f)).sum(),
            postings_offset: postings_offset as u64,
            docs_bytes: docs_len,
            freqs_bytes: freq_buffer.len() as u32,
            first_skip,
            single_block,
            postings_crc: 0,
        });
        if let Some(positions) = positions {
            encode_term_positions(self.positions_codec, freqs, positions, &mut out.positions)
                .map_err(|e| {
                    IndexError::InvalidArgument(format!(
                        "term {:?}: positions: {e}",
                        String::from_utf8_lossy(term)
                    ))
                })?;
            out.position_ends.push(out.positions.len());
        }
        out.term_bytes.extend_from_slice(term);
        out.term_ends.push(out.term_bytes.len());
        out.postings_count += docs.len() as u64;
        out.docs_bytes += u64::from(docs_len);
        out.freqs_bytes += freq_buffer.len() as u64;
        out.freq_buffer = freq_buffer;
        Ok(())
    }
}
