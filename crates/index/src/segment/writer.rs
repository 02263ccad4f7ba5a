//! Writes one segment: terms in sorted order with their whole posting lists, stored documents
//! in local order. Files are written under temporary names, fsynced, then renamed; the segment
//! becomes part of the index only when a manifest naming it is committed.

use std::path::{Path, PathBuf};

use apcache_codec::{codec_by_name, BlockCodec, BLOCK_LEN};

use super::store::{StoreReader, StoreWriter};
use super::{DocMap, FileMeta, SegmentMeta};
use crate::format::{FileKind, FileWriter, SkipEntry, TermInfo};
use crate::IndexError;

/// Builds a segment's files.
pub struct SegmentWriter {
    dir: PathBuf,
    name: String,
    codec_name: String,
    codec: Box<dyn BlockCodec>,
    docs: DocMap,
    lengths: Vec<u32>,
    dictionary: fst::MapBuilder<FileWriter>,
    term_infos: FileWriter,
    skip: FileWriter,
    postings: FileWriter,
    store: StoreWriter,
    ordinal: u64,
    skip_entries: u32,
    postings_count: u64,
    docs_bytes: u64,
    freqs_bytes: u64,
    buffers: (Vec<u8>, Vec<u8>, Vec<u8>),
}

/// Temporary name of a file being written.
fn temporary(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".tmp");
    PathBuf::from(name)
}

impl SegmentWriter {
    /// Starts segment `name` in `dir` for the documents `docs`, whose lengths (in local order)
    /// are `lengths`.
    pub fn create(
        dir: &Path,
        name: &str,
        codec_name: &str,
        docs: DocMap,
        lengths: Vec<u32>,
    ) -> Result<SegmentWriter, IndexError> {
        if docs.len() as usize != lengths.len() {
            return Err(IndexError::InvalidArgument(format!(
                "{} documents but {} lengths",
                docs.len(),
                lengths.len()
            )));
        }
        let codec = codec_by_name(codec_name).map_err(|source| IndexError::Codec {
            file: name.to_string(),
            source,
        })?;
        let open = |kind: FileKind| {
            FileWriter::create(
                &temporary(&dir.join(format!("{name}.{}", kind.extension()))),
                kind,
            )
        };
        let dictionary = fst::MapBuilder::new(open(FileKind::Dictionary)?)
            .map_err(|e| IndexError::corrupt(name, format!("dictionary: {e}")))?;
        Ok(SegmentWriter {
            dir: dir.to_path_buf(),
            name: name.to_string(),
            codec_name: codec_name.to_string(),
            codec,
            docs,
            lengths,
            dictionary,
            term_infos: open(FileKind::TermInfos)?,
            skip: open(FileKind::Skip)?,
            postings: open(FileKind::Postings)?,
            store: StoreWriter::new(open(FileKind::Store)?),
            ordinal: 0,
            skip_entries: 0,
            postings_count: 0,
            docs_bytes: 0,
            freqs_bytes: 0,
            buffers: Default::default(),
        })
    }

    fn length_of(&self, doc: u32) -> Result<u32, IndexError> {
        self.docs
            .local(doc)
            .map(|local| self.lengths[local as usize])
            .ok_or_else(|| {
                IndexError::InvalidArgument(format!(
                    "posting for document {doc}, which the segment does not hold"
                ))
            })
    }

    /// Adds a term and its whole posting list. Terms must come in increasing byte order, DIDs
    /// strictly increasing, frequencies at least 1.
    pub fn add_term(&mut self, term: &[u8], docs: &[u32], freqs: &[u32]) -> Result<(), IndexError> {
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
        let (doc_bytes, freq_bytes, skip_bytes) = &mut self.buffers;
        doc_bytes.clear();
        freq_bytes.clear();
        skip_bytes.clear();
        let mut entries = Vec::with_capacity(docs.len().div_ceil(BLOCK_LEN));
        let mut stored_freqs = [0u32; BLOCK_LEN];
        for (block_docs, block_freqs) in docs.chunks(BLOCK_LEN).zip(freqs.chunks(BLOCK_LEN)) {
            let docs_offset = doc_bytes.len() as u32;
            let freqs_offset = freq_bytes.len() as u32;
            self.codec
                .encode_docs(block_docs[0], block_docs, doc_bytes)
                .map_err(|source| IndexError::Codec {
                    file: self.name.clone(),
                    source,
                })?;
            for (s, f) in stored_freqs.iter_mut().zip(block_freqs) {
                *s = f - 1;
            }
            self.codec
                .encode_freqs(&stored_freqs[..block_freqs.len()], freq_bytes)
                .map_err(|source| IndexError::Codec {
                    file: self.name.clone(),
                    source,
                })?;
            entries.push(SkipEntry {
                first_doc: block_docs[0],
                last_doc: block_docs[block_docs.len() - 1],
                docs_offset,
                freqs_offset,
                max_freq: block_freqs.iter().copied().max().unwrap_or(0),
                min_doc_len: 0,
            });
        }
        for (entry, block_docs) in entries.iter_mut().zip(docs.chunks(BLOCK_LEN)) {
            let mut min = u32::MAX;
            for &d in block_docs {
                min = min.min(self.length_of(d)?);
            }
            entry.min_doc_len = min;
        }
        let (doc_bytes, freq_bytes, skip_bytes) = &mut self.buffers;
        let docs_len = doc_bytes.len() as u32;
        for entry in &mut entries {
            entry.freqs_offset += docs_len;
            entry.write_to(skip_bytes);
        }
        let info = TermInfo {
            doc_freq: docs.len() as u32,
            total_term_freq: freqs.iter().map(|&f| u64::from(f)).sum(),
            postings_offset: self.postings.position(),
            docs_bytes: docs_len,
            freqs_bytes: freq_bytes.len() as u32,
            first_skip: self.skip_entries,
        };
        self.postings.write_body(doc_bytes)?;
        self.postings.write_body(freq_bytes)?;
        self.skip.write_body(skip_bytes)?;
        let mut record = Vec::with_capacity(TermInfo::LEN);
        info.write_to(&mut record);
        self.term_infos.write_body(&record)?;
        self.dictionary
            .insert(term, self.ordinal)
            .map_err(|e| IndexError::InvalidArgument(format!("dictionary: {e}")))?;
        self.ordinal += 1;
        self.skip_entries += entries.len() as u32;
        self.postings_count += docs.len() as u64;
        self.docs_bytes += u64::from(docs_len);
        self.freqs_bytes += freq_bytes.len() as u64;
        Ok(())
    }

    /// Adds the next stored document (local order), in the raw form of
    /// `segment::store::append_raw`. A document that starts a run of the DocMap starts a new
    /// store block, so that no block spans two runs and a merge can copy blocks verbatim.
    pub fn add_stored_raw(&mut self, raw_document: &[u8]) -> Result<(), IndexError> {
        if self.docs.is_run_start(self.store.documents()) {
            self.store.cut()?;
        }
        self.store.add_raw(raw_document)
    }

    /// Appends a compressed store block (as [`crate::segment::compress_block`] makes it) of
    /// the next `docs` documents; it must not span two runs of the DocMap.
    pub(crate) fn add_stored_block(&mut self, block: &[u8], docs: u32) -> Result<(), IndexError> {
        self.store.copy_block(block, docs)
    }

    /// Appends the stored documents `locals` of another segment's store by copying its
    /// compressed blocks; `locals` must start and end at block boundaries (they do at run
    /// boundaries, see [`SegmentWriter::add_stored_raw`]).
    pub(crate) fn copy_stored(
        &mut self,
        from: &StoreReader<'_>,
        locals: std::ops::Range<u32>,
        total_docs: u32,
        from_name: &str,
    ) -> Result<(), IndexError> {
        let mut next = locals.start;
        let mut block = from.block_of(next);
        while next < locals.end {
            let i = block.ok_or_else(|| IndexError::corrupt(from_name, "store has no block"))?;
            let (first, following, bytes) = from.block_bytes(i)?;
            let end = following.unwrap_or(total_docs);
            if first != next || end > locals.end || end <= first {
                return Err(IndexError::corrupt(
                    from_name,
                    format!("store block {i} (documents {first}..{end}) crosses a run boundary"),
                ));
            }
            self.store.copy_block(bytes, end - first)?;
            next = end;
            block = Some(i + 1);
        }
        Ok(())
    }

    /// Writes the norms, finishes every file, fsyncs and renames them; returns the segment's
    /// metadata for the manifest.
    pub fn finish(self) -> Result<SegmentMeta, IndexError> {
        let mut finished = Vec::new();
        let dict = self
            .dictionary
            .into_inner()
            .map_err(|e| IndexError::corrupt(&self.name, format!("dictionary: {e}")))?;
        finished.push((FileKind::Dictionary, dict.finish()?));
        finished.push((FileKind::TermInfos, self.term_infos.finish()?));
        finished.push((FileKind::Skip, self.skip.finish()?));
        finished.push((FileKind::Postings, self.postings.finish()?));
        let norms_path = temporary(&self.dir.join(format!(
            "{}.{}",
            self.name,
            FileKind::Norms.extension()
        )));
        let mut norms = FileWriter::create(&norms_path, FileKind::Norms)?;
        let mut bytes = Vec::with_capacity(self.lengths.len() * 4);
        for len in &self.lengths {
            bytes.extend_from_slice(&len.to_le_bytes());
        }
        norms.write_body(&bytes)?;
        finished.push((FileKind::Norms, norms.finish()?));
        finished.push((FileKind::Store, self.store.finish()?));
        let mut files = Vec::new();
        for kind in FileKind::SEGMENT_FILES {
            let (_, (len, crc)) = finished
                .iter()
                .find(|(k, _)| *k == kind)
                .expect("every kind written");
            let name = format!("{}.{}", self.name, kind.extension());
            let path = self.dir.join(&name);
            std::fs::rename(temporary(&path), &path).map_err(|e| IndexError::io(&path, e))?;
            files.push(FileMeta {
                name,
                bytes: *len,
                crc32c: *crc,
            });
        }
        sync_dir(&self.dir)?;
        Ok(SegmentMeta {
            name: self.name,
            codec: self.codec_name,
            total_tokens: self.lengths.iter().map(|&l| u64::from(l)).sum(),
            docs: self.docs,
            terms: self.ordinal,
            postings: self.postings_count,
            docs_bytes: self.docs_bytes,
            freqs_bytes: self.freqs_bytes,
            files,
            dir: None,
        })
    }
}

/// Fsyncs a directory, so that renames and creations in it are durable.
pub(crate) fn sync_dir(dir: &Path) -> Result<(), IndexError> {
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| IndexError::io(dir, e))
}
