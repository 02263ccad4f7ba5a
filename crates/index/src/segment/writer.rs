//! Writes one segment: terms in sorted order with their whole posting lists, stored documents
//! in local order. Files are written under temporary names, fsynced, then renamed; the segment
//! becomes part of the index only when a manifest naming it is committed.

use std::path::{Path, PathBuf};

use apcache_codec::{BlockCodec, CodecKind};

use super::positions_file::PositionsTable;
use super::store::{StoreReader, StoreWriter};
use super::term_dictionary::DictionaryWriter;
use super::term_encoder::{EncodedTerms, FieldScoring, TermEncoder};
use super::{DictionaryKind, DocMap, FileMeta, SegmentMeta};
use crate::format::{
    encode_field_norms, encode_norms, FieldLengths, FileKind, FileWriter, PositionsCodec,
    SkipEntry, TermGroupsWriter,
};
use crate::search::Bm25;
use crate::IndexError;

/// Builds a segment's files.
pub struct SegmentWriter {
    dir: PathBuf,
    name: String,
    codec_kind: CodecKind,
    codec: Box<dyn BlockCodec>,
    docs: DocMap,
    lengths: Vec<u32>,
    dictionary_kind: DictionaryKind,
    dictionary: DictionaryWriter<FileWriter>,
    term_infos: FileWriter,
    /// The term-info file's groups.
    term_groups: TermGroupsWriter,
    skip: FileWriter,
    postings: FileWriter,
    /// The positions file and its table, when the segment keeps positions.
    positions: Option<(FileWriter, PositionsTable)>,
    positions_codec: PositionsCodec,
    /// The columns file, written whole by [`SegmentWriter::add_columns`]: its length and CRC.
    columns: Option<(u64, u32)>,
    /// `None` while a merge fills the store on a thread of its own.
    store: Option<StoreWriter>,
    ordinal: u64,
    skip_entries: u32,
    postings_count: u64,
    docs_bytes: u64,
    freqs_bytes: u64,
    batch: EncodedTerms,
    /// The segment's own BM25, which picks each block's best posting.
    bm25: Bm25,
    /// The named text fields' lengths and scorers, in name order (empty when the documents'
    /// text is all in the default field).
    fields: Vec<FieldScoring>,
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
        codec_kind: CodecKind,
        docs: DocMap,
        lengths: Vec<u32>,
    ) -> Result<SegmentWriter, IndexError> {
        let store = Self::open_store(dir, name)?;
        Self::create_with_store(
            dir,
            name,
            codec_kind,
            DictionaryKind::Fst,
            docs,
            lengths,
            store,
        )
    }

    /// Opens the store file of segment `name` in `dir`, to fill before the rest of the
    /// segment is written (an indexing thread streams its stored documents there) and hand to
    /// [`SegmentWriter::create_with_store`].
    pub(crate) fn open_store(dir: &Path, name: &str) -> Result<StoreWriter, IndexError> {
        let path = dir.join(format!("{name}.{}", FileKind::Store.extension()));
        Ok(StoreWriter::new(FileWriter::create(
            &temporary(&path),
            FileKind::Store,
        )?))
    }

    /// [`SegmentWriter::create`] with a store already opened by
    /// [`SegmentWriter::open_store`] for the same directory and name.
    pub(crate) fn create_with_store(
        dir: &Path,
        name: &str,
        codec_kind: CodecKind,
        dictionary_kind: DictionaryKind,
        docs: DocMap,
        lengths: Vec<u32>,
        store: StoreWriter,
    ) -> Result<SegmentWriter, IndexError> {
        if docs.len() as usize != lengths.len() {
            return Err(IndexError::InvalidArgument(format!(
                "{} documents but {} lengths",
                docs.len(),
                lengths.len()
            )));
        }
        let codec = codec_kind.build();
        let open = |kind: FileKind| {
            FileWriter::create(
                &temporary(&dir.join(format!("{name}.{}", kind.extension()))),
                kind,
            )
        };
        let bm25 = Bm25::of_lengths(&lengths);
        let dictionary_path = dir.join(format!("{name}.{}", FileKind::Dictionary.extension()));
        let dictionary = DictionaryWriter::new(
            dictionary_kind,
            open(FileKind::Dictionary)?,
            temporary(&dictionary_path),
        )?;
        Ok(SegmentWriter {
            dir: dir.to_path_buf(),
            name: name.to_string(),
            codec_kind,
            codec,
            docs,
            lengths,
            dictionary_kind,
            dictionary,
            term_infos: open(FileKind::TermInfos)?,
            term_groups: TermGroupsWriter::default(),
            skip: open(FileKind::Skip)?,
            postings: open(FileKind::Postings)?,
            positions: None,
            positions_codec: PositionsCodec::default(),
            columns: None,
            store: Some(store),
            ordinal: 0,
            skip_entries: 0,
            postings_count: 0,
            docs_bytes: 0,
            freqs_bytes: 0,
            batch: EncodedTerms::default(),
            bm25,
            fields: Vec::new(),
        })
    }

    /// Sets the lengths of the documents in each named text field (local order). Call before
    /// the first term: the blocks of a field's terms are bounded with the field's lengths.
    pub fn set_field_lengths(&mut self, lengths: &FieldLengths) -> Result<(), IndexError> {
        if self.ordinal > 0 {
            return Err(IndexError::InvalidArgument(
                "field lengths must be set before the first term".into(),
            ));
        }
        self.fields = FieldScoring::of_all(lengths, self.docs.len());
        Ok(())
    }

    /// The named text fields' lengths and scorers, in name order.
    pub fn field_scorings(&self) -> &[FieldScoring] {
        &self.fields
    }

    /// Makes the segment keep positions, coded by `codec`: every term added from now on must
    /// come with its positions. Call before the first term.
    pub fn keep_positions(&mut self, codec: PositionsCodec) -> Result<(), IndexError> {
        if self.ordinal > 0 {
            return Err(IndexError::InvalidArgument(
                "positions must be kept from the first term".into(),
            ));
        }
        if self.positions.is_none() {
            let path = temporary(&self.dir.join(format!(
                "{}.{}",
                self.name,
                FileKind::Positions.extension()
            )));
            let file = FileWriter::create(&path, FileKind::Positions)?;
            self.positions = Some((file, PositionsTable::default()));
        }
        self.positions_codec = codec;
        Ok(())
    }

    /// Writes the columns file, whose body is `body` ([`crate::columns::ColumnsBuilder`]).
    pub fn add_columns(&mut self, body: &[u8]) -> Result<(), IndexError> {
        let path = temporary(&self.dir.join(format!(
            "{}.{}",
            self.name,
            FileKind::Columns.extension()
        )));
        let mut file = FileWriter::create(&path, FileKind::Columns)?;
        file.write_body(body)?;
        self.columns = Some(file.finish()?);
        Ok(())
    }

    /// Whether the segment keeps positions.
    pub fn has_positions(&self) -> bool {
        self.positions.is_some()
    }

    /// The documents of the segment.
    pub fn docs(&self) -> &DocMap {
        &self.docs
    }

    /// Their lengths, in local order.
    pub fn lengths(&self) -> &[u32] {
        &self.lengths
    }

    /// The codec of the positions chunks ([`SegmentWriter::keep_positions`]).
    pub fn positions_codec(&self) -> PositionsCodec {
        self.positions_codec
    }

    /// The codec.
    pub fn codec(&self) -> &dyn BlockCodec {
        &*self.codec
    }

    /// Adds a term and its whole posting list. Terms must come in increasing byte order, DIDs
    /// strictly increasing, frequencies at least 1; `positions` as
    /// [`TermEncoder::encode`] takes them, given exactly when the segment keeps positions.
    pub fn add_term(
        &mut self,
        term: &[u8],
        docs: &[u32],
        freqs: &[u32],
        positions: Option<&[u32]>,
    ) -> Result<(), IndexError> {
        let mut batch = std::mem::take(&mut self.batch);
        batch.clear();
        let result = TermEncoder::new(
            &*self.codec,
            &self.bm25,
            &self.docs,
            &self.lengths,
            &self.name,
        )
        .with_fields(&self.fields)
        .with_positions_codec(self.positions_codec)
        .encode(term, docs, freqs, positions, &mut batch)
        .and_then(|()| self.add_encoded(&batch));
        self.batch = batch;
        result
    }

    /// Appends a batch of encoded terms (which must follow every term added so far).
    pub fn add_encoded(&mut self, batch: &EncodedTerms) -> Result<(), IndexError> {
        let expected = if self.positions.is_some() {
            batch.len()
        } else {
            0
        };
        if batch.position_ends.len() != expected {
            return Err(IndexError::InvalidArgument(format!(
                "segment {}: {} terms, {} with positions, {expected} expected",
                self.name,
                batch.len(),
                batch.position_ends.len()
            )));
        }
        if let Some((file, table)) = &mut self.positions {
            let mut start = 0;
            for &end in &batch.position_ends {
                table.push(&batch.positions[start..end]);
                start = end;
            }
            file.write_body(&batch.positions)?;
        }
        let postings_base = self.postings.position();
        let skip_base = self.skip_entries;
        let mut records = Vec::with_capacity(16 * batch.len());
        for (i, info) in batch.infos.iter().enumerate() {
            // The batch's own offsets locate the term's bytes in it; the record written
            // carries the segment's.
            let skips = info.first_skip as usize * SkipEntry::LEN;
            let skips = &batch.skip[skips..skips + info.stored_skip_entries() * SkipEntry::LEN];
            let postings = info.postings_offset as usize;
            let postings = &batch.postings[postings..postings + info.postings_bytes() as usize];
            let mut info = *info;
            info.postings_offset += postings_base;
            info.first_skip += skip_base;
            let block = info.single_block.unwrap_or_default();
            self.term_groups
                .push(&info, &block, skips, postings, &mut records)
                .map_err(|_| {
                    IndexError::InvalidArgument(format!(
                        "segment {}: term records pass 4 GiB, more than one segment holds",
                        self.name
                    ))
                })?;
            self.dictionary.insert(batch.term(i), self.ordinal)?;
            self.ordinal += 1;
        }
        self.postings.write_body(&batch.postings)?;
        self.skip.write_body(&batch.skip)?;
        self.term_infos.write_body(&records)?;
        self.skip_entries += batch.skip_entries;
        self.postings_count += batch.postings_count;
        self.docs_bytes += batch.docs_bytes;
        self.freqs_bytes += batch.freqs_bytes;
        Ok(())
    }

    /// Adds the next stored document (local order), in the raw form of
    /// `segment::store::append_raw`. A document that starts a run of the DocMap starts a new
    /// store block, so that no block spans two runs and a merge can copy blocks verbatim.
    pub fn add_stored_raw(&mut self, raw_document: &[u8]) -> Result<(), IndexError> {
        let documents = self.store()?.documents();
        if self.docs.is_run_start(documents) {
            self.store()?.cut()?;
        }
        self.store()?.add_raw(raw_document)
    }

    fn store(&mut self) -> Result<&mut StoreWriter, IndexError> {
        self.store
            .as_mut()
            .ok_or_else(|| IndexError::InvalidArgument("the store is taken".into()))
    }

    /// Takes the store writer, to fill it on another thread; [`SegmentWriter::put_store`]
    /// must give it back before [`SegmentWriter::finish`].
    pub(crate) fn take_store(&mut self) -> Result<StoreWriter, IndexError> {
        self.store
            .take()
            .ok_or_else(|| IndexError::InvalidArgument("the store is taken".into()))
    }

    /// Gives back the store writer taken by [`SegmentWriter::take_store`].
    pub(crate) fn put_store(&mut self, store: StoreWriter) {
        self.store = Some(store);
    }

    /// Appends the stored documents `locals` of another segment's store by copying its
    /// compressed blocks; `locals` must start and end at block boundaries (they do at run
    /// boundaries, see [`SegmentWriter::add_stored_raw`]).
    pub(crate) fn copy_stored(
        store: &mut StoreWriter,
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
            store.copy_block(bytes, end - first)?;
            next = end;
            block = Some(i + 1);
        }
        Ok(())
    }

    /// Writes the norms, finishes every file, fsyncs and renames them; returns the segment's
    /// metadata for the manifest.
    pub fn finish(self) -> Result<SegmentMeta, IndexError> {
        let mut finished = Vec::new();
        let dict = self.dictionary.finish()?;
        finished.push((FileKind::Dictionary, dict.finish()?));
        let mut term_infos = self.term_infos;
        term_infos.write_body(&self.term_groups.finish())?;
        finished.push((FileKind::TermInfos, term_infos.finish()?));
        finished.push((FileKind::Skip, self.skip.finish()?));
        finished.push((FileKind::Postings, self.postings.finish()?));
        let positions = match self.positions {
            Some((mut file, table)) => {
                file.write_body(&table.into_bytes())?;
                Some(file.finish()?)
            }
            None => None,
        };
        let norms_path = temporary(&self.dir.join(format!(
            "{}.{}",
            self.name,
            FileKind::Norms.extension()
        )));
        let mut norms = FileWriter::create(&norms_path, FileKind::Norms)?;
        norms.write_body(&encode_norms(&self.lengths))?;
        finished.push((FileKind::Norms, norms.finish()?));
        let field_norms = if self.fields.is_empty() {
            None
        } else {
            let path = temporary(&self.dir.join(format!(
                "{}.{}",
                self.name,
                FileKind::FieldNorms.extension()
            )));
            let fields: Vec<(&str, &[u32])> = self
                .fields
                .iter()
                .map(|f| (f.name.as_str(), f.lengths.as_slice()))
                .collect();
            let mut file = FileWriter::create(&path, FileKind::FieldNorms)?;
            file.write_body(&encode_field_norms(&fields, self.docs.len()))?;
            Some(file.finish()?)
        };
        let store = self
            .store
            .ok_or_else(|| IndexError::InvalidArgument("the store was not put back".into()))?;
        finished.push((FileKind::Store, store.finish()?));
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
        for (kind, finished) in [
            (FileKind::Positions, positions),
            (FileKind::Columns, self.columns),
            (FileKind::FieldNorms, field_norms),
        ] {
            let Some((len, crc)) = finished else {
                continue;
            };
            let name = format!("{}.{}", self.name, kind.extension());
            let path = self.dir.join(&name);
            std::fs::rename(temporary(&path), &path).map_err(|e| IndexError::io(&path, e))?;
            files.push(FileMeta {
                name,
                bytes: len,
                crc32c: crc,
            });
        }
        sync_dir(&self.dir)?;
        Ok(SegmentMeta {
            name: self.name,
            codec: self.codec_kind.name().to_string(),
            total_tokens: self.lengths.iter().map(|&l| u64::from(l)).sum(),
            docs: self.docs,
            terms: self.ordinal,
            postings: self.postings_count,
            docs_bytes: self.docs_bytes,
            freqs_bytes: self.freqs_bytes,
            dictionary: self.dictionary_kind,
            positions_codec: self.positions_codec,
            files,
            dir: None,
        })
    }
}

/// Fsyncs a directory, so that renames and creations in it are durable.
pub(crate) fn sync_dir(dir: &Path) -> Result<(), IndexError> {
    if let Some(e) = crate::fault::injected(crate::fault::FSYNC) {
        return Err(IndexError::io(dir, e));
    }
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| IndexError::io(dir, e))
}
