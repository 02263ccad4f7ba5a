//! Reads a committed segment through mmap.

use std::path::Path;
use std::sync::Arc;

use apcache_codec::{BlockCodec, CodecKind, BLOCK_LEN};

use super::columns_file::ColumnsFile;
use super::field_norms_file::FieldNormsMapped;
use super::positions_file::{self, PositionsFile};
use super::store::{BlockSource, StoreIndex, StoreReader};
use super::term_dictionary::TermDictionary;
use super::uncached_file::{UncachedFile, UncachedReads};
use super::verified_terms::{Verified, VerifiedTerms};
use super::{DirectPostings, DocLengths, SegmentMeta, StoredDocument};
use crate::columns::Columns;
use crate::format::term_groups::GROUP_TERMS;
use crate::format::{
    FieldNorms, FileKind, FramedFile, NormsFile, PositionsCodec, SkipEntries, SkipEntry,
    TermGroups, TermInfo, TermPositions, HEADER_LEN,
};
use crate::mapping::MappedFile;
use crate::search::TermEntry;
use crate::IndexError;

/// The body of a mapped file.
#[derive(Clone)]
pub(crate) struct MappedBody {
    map: Arc<MappedFile>,
    len: usize,
}

impl AsRef<[u8]> for MappedBody {
    fn as_ref(&self) -> &[u8] {
        &self.map[HEADER_LEN..HEADER_LEN + self.len]
    }
}

impl MappedBody {
    /// The whole mapped file, framing included.
    pub(crate) fn file_bytes(&self) -> &[u8] {
        &self.map
    }

    /// An error if a read of the file through its mapping failed (see [`MappedFile`]).
    #[inline]
    pub(crate) fn check(&self) -> Result<(), IndexError> {
        self.map.check()
    }
}

/// An open segment. Immutable and `Send + Sync`: many query threads may share one.
pub struct SegmentReader {
    meta: SegmentMeta,
    codec: Box<dyn BlockCodec>,
    dictionary: TermDictionary<MappedBody>,
    term_infos: MappedBody,
    skip: MappedBody,
    postings: MappedBody,
    norms: MappedBody,
    store: MappedBody,
    /// The positions, when the segment keeps them.
    positions: Option<PositionsFile<MappedBody>>,
    /// The columns, when the segment's documents have keyword, numeric, date or boolean
    /// values.
    columns: Option<ColumnsFile>,
    /// The norms of the text fields indexed under their own names, when there are any.
    field_norms: Option<FieldNormsMapped>,
    /// Which terms' checksums this process has verified.
    verified: VerifiedTerms,
    /// The document store read past the page cache, when asked for
    /// ([`SegmentReader::read_store_uncached`]).
    uncached_store: Option<UncachedFile>,
    /// The document store's block index, read and verified on the first stored read.
    store_index: std::sync::OnceLock<Result<StoreIndex, String>>,
    /// Decoded postings, when loaded with [`SegmentReader::load_direct`].
    direct: Option<DirectPostings>,
}

/// The files a query reads besides the postings: the term metadata (with the postings'
/// checksums) and the norms. A caller may place copies of them elsewhere (a faster tier) with
/// [`SegmentReader::open_placed`].
pub const METADATA_FILES: [FileKind; 4] = [
    FileKind::Dictionary,
    FileKind::TermInfos,
    FileKind::Skip,
    FileKind::Norms,
];

fn map_file(
    dir: &Path,
    meta: &SegmentMeta,
    kind: FileKind,
    metadata_dir: Option<&Path>,
) -> Result<MappedBody, IndexError> {
    let file_meta = meta.file(kind).ok_or_else(|| {
        IndexError::corrupt(
            &meta.name,
            format!("manifest lists no {} file", kind.extension()),
        )
    })?;
    let path = match metadata_dir {
        Some(placed) if METADATA_FILES.contains(&kind) => placed.join(&file_meta.name),
        _ => meta.directory(dir).join(&file_meta.name),
    };
    let map = MappedFile::open(&path)?;
    if map.len() as u64 != file_meta.bytes {
        return Err(IndexError::corrupt(
            &file_meta.name,
            format!(
                "{} bytes on disk, the manifest records {}",
                map.len(),
                file_meta.bytes
            ),
        ));
    }
    if matches!(kind, FileKind::TermInfos | FileKind::Skip | FileKind::Store) {
        // Small reads at scattered offsets (a term's metadata, a hit's store block):
        // read-ahead around them only evicts pages that matter when memory is tight.
        map.advise(memmap2::Advice::Random);
    }
    let framed = FramedFile::parse(&map, kind, &file_meta.name);
    map.check()?;
    let framed = framed?;
    if framed.crc != file_meta.crc32c {
        return Err(IndexError::corrupt(
            &file_meta.name,
            "footer checksum differs from the manifest's",
        ));
    }
    Ok(MappedBody {
        map: Arc::new(map),
        len: framed.body_len,
    })
}

/// `result`, unless a read of `body` through its mapping failed while computing it: then the
/// error that names the failed read (the other may come from the zeros read in its place).
fn unless_read_failed<T>(
    result: Result<T, IndexError>,
    body: &MappedBody,
) -> Result<T, IndexError> {
    body.check()?;
    result
}

impl SegmentReader {
    /// Opens the segment `meta` of the index in `dir` (its files are in
    /// [`SegmentMeta::directory`]): maps its files and checks their framing (headers,
    /// footers, lengths and footer checksums against the manifest). The dictionary and the
    /// norms are verified whole (a corrupt FST must not be walked; every scored posting reads a
    /// norm); a term's metadata and postings are verified when a query first reads them, a
    /// store block when a document in it is read.
    pub fn open(dir: &Path, meta: &SegmentMeta) -> Result<SegmentReader, IndexError> {
        SegmentReader::open_placed(dir, meta, None)
    }

    /// Like [`SegmentReader::open`], but maps the [`METADATA_FILES`] from `metadata_dir`
    /// when given (byte-identical copies, checked against the manifest like the originals).
    pub fn open_placed(
        dir: &Path,
        meta: &SegmentMeta,
        metadata_dir: Option<&Path>,
    ) -> Result<SegmentReader, IndexError> {
        let codec = meta
            .codec
            .parse::<CodecKind>()
            .map_err(|source| IndexError::Codec {
                file: meta.name.clone(),
                source,
            })?
            .build();
        let dict = map_file(dir, meta, FileKind::Dictionary, metadata_dir)?;
        let dict_name = &meta.file(FileKind::Dictionary).expect("mapped").name;
        unless_read_failed(
            FramedFile::verify(dict.file_bytes(), FileKind::Dictionary, dict_name),
            &dict,
        )?;
        let dictionary = unless_read_failed(
            TermDictionary::open(meta.dictionary, dict.clone(), dict_name),
            &dict,
        )?;
        let reader = SegmentReader {
            codec,
            dictionary,
            term_infos: map_file(dir, meta, FileKind::TermInfos, metadata_dir)?,
            skip: map_file(dir, meta, FileKind::Skip, metadata_dir)?,
            postings: map_file(dir, meta, FileKind::Postings, metadata_dir)?,
            norms: map_file(dir, meta, FileKind::Norms, metadata_dir)?,
            store: map_file(dir, meta, FileKind::Store, metadata_dir)?,
            positions: match meta.file(FileKind::Positions) {
                Some(file) => {
                    let body = map_file(dir, meta, FileKind::Positions, None)?;
                    Some(unless_read_failed(
                        PositionsFile::new(body.clone(), &file.name, meta.terms),
                        &body,
                    )?)
                }
                None => None,
            },
            columns: match meta.file(FileKind::Columns) {
                Some(file) => {
                    let body = map_file(dir, meta, FileKind::Columns, None)?;
                    Some(unless_read_failed(
                        ColumnsFile::open(body.clone(), &file.name, meta.documents()),
                        &body,
                    )?)
                }
                None => None,
            },
            field_norms: match meta.file(FileKind::FieldNorms) {
                Some(file) => {
                    let body = map_file(dir, meta, FileKind::FieldNorms, None)?;
                    Some(unless_read_failed(
                        FieldNormsMapped::open(body.clone(), &file.name, meta.documents()),
                        &body,
                    )?)
                }
                None => None,
            },
            verified: VerifiedTerms::new(meta.terms),
            store_index: std::sync::OnceLock::new(),
            uncached_store: None,
            direct: None,
            meta: meta.clone(),
        };
        let checked = reader.check_at_open();
        reader.check_mapped_reads()?;
        checked?;
        Ok(reader)
    }

    /// The checks of [`SegmentReader::open`] that read the mapped files.
    fn check_at_open(&self) -> Result<(), IndexError> {
        if TermGroups::new(self.term_infos.as_ref(), self.meta.terms).is_none() {
            return Err(IndexError::corrupt(
                self.file_name(FileKind::TermInfos),
                "too short for its table of term groups",
            ));
        }
        if self.skip.as_ref().len() % SkipEntry::LEN != 0 {
            return Err(IndexError::corrupt(
                self.file_name(FileKind::Skip),
                "not a whole number of skip entries",
            ));
        }
        FramedFile::verify(
            self.norms.file_bytes(),
            FileKind::Norms,
            self.file_name(FileKind::Norms),
        )?;
        if let Err(what) = NormsFile::new(self.norms.as_ref(), self.meta.documents()) {
            return Err(IndexError::corrupt(self.file_name(FileKind::Norms), what));
        }
        Ok(())
    }

    /// The segment's columns (keyword, numeric, date and boolean values by local document);
    /// `None` when its documents have none. Verified whole when the segment was opened.
    pub fn columns(&self) -> Option<Columns<'_>> {
        self.columns.as_ref().map(ColumnsFile::columns)
    }

    /// Recomputes the checksum of every file.
    pub fn verify_checksums(&self) -> Result<(), IndexError> {
        for (kind, body) in self.bodies() {
            let name = &self.meta.file(kind).expect("opened").name;
            let verified = FramedFile::verify(body.file_bytes(), kind, name);
            body.check()?;
            verified?;
        }
        Ok(())
    }

    /// An error naming the file if a read through the mapping of any of the segment's files
    /// failed since it was opened ([`IndexError::MappedReadFailed`]): what was read from it
    /// may have been zeros, so nothing computed from the segment can be trusted.
    pub fn check_mapped_reads(&self) -> Result<(), IndexError> {
        self.check_query_reads()?;
        self.store.check()
    }

    /// [`SegmentReader::check_mapped_reads`] of the files queries read: all but the store,
    /// whose reads [`SegmentReader::stored`] checks.
    pub fn check_query_reads(&self) -> Result<(), IndexError> {
        self.dictionary.inner().check()?;
        self.term_infos.check()?;
        self.skip.check()?;
        self.postings.check()?;
        self.norms.check()?;
        if let Some(columns) = &self.columns {
            columns.body().check()?;
        }
        if let Some(field_norms) = &self.field_norms {
            field_norms.body().check()?;
        }
        match &self.positions {
            Some(positions) => positions.body().check(),
            None => Ok(()),
        }
    }

    fn bodies(&self) -> Vec<(FileKind, &MappedBody)> {
        let mut bodies = vec![
            (FileKind::Dictionary, self.dictionary.inner()),
            (FileKind::TermInfos, &self.term_infos),
            (FileKind::Skip, &self.skip),
            (FileKind::Postings, &self.postings),
            (FileKind::Norms, &self.norms),
            (FileKind::Store, &self.store),
        ];
        if let Some(positions) = &self.positions {
            bodies.push((FileKind::Positions, positions.body()));
        }
        if let Some(columns) = &self.columns {
            bodies.push((FileKind::Columns, columns.body()));
        }
        if let Some(field_norms) = &self.field_norms {
            bodies.push((FileKind::FieldNorms, field_norms.body()));
        }
        bodies
    }

    /// The codec of the segment's positions chunks.
    pub fn positions_codec(&self) -> PositionsCodec {
        self.meta.positions_codec
    }

    /// Whether the segment keeps positions.
    pub fn has_positions(&self) -> bool {
        self.positions.is_some()
    }

    /// The positions of `entry`'s term, verified against their checksum the first time this
    /// process reads them; an error when the segment keeps no positions.
    pub fn verified_positions(&self, entry: &TermEntry) -> Result<TermPositions<'_>, IndexError> {
        let Some(file) = &self.positions else {
            return Err(IndexError::NoPositions {
                segment: self.meta.name.clone(),
            });
        };
        let (region, group) = file.region(entry.ordinal, entry.info.doc_freq)?;
        // A group's regions are checked together; the bit of its first term records it.
        let group_ordinal = group * positions_file::GROUP;
        if !self.verified.is_set(group_ordinal, Verified::Positions) {
            let (bytes, crc) = file.group(group)?;
            if crc32c::crc32c(bytes) != crc {
                return Err(IndexError::corrupt(
                    self.file_name(FileKind::Positions),
                    format!(
                        "positions of terms {group_ordinal} to {} (term {:?} among them): checksum mismatch",
                        group_ordinal + positions_file::GROUP - 1,
                        self.term_text(entry.ordinal),
                    ),
                ));
            }
            self.verified.set(group_ordinal, Verified::Positions);
        }
        Ok(region)
    }

    /// Decodes every position of `entry`'s term into `out` (cleared first): `freqs[i]`
    /// positions for posting `i`, whose frequencies (the term's whole list, as
    /// [`SegmentReader::read_postings`] reads them) are `freqs`.
    pub fn read_positions(
        &self,
        entry: &TermEntry,
        freqs: &[u32],
        out: &mut Vec<u32>,
    ) -> Result<(), IndexError> {
        out.clear();
        self.verified_positions(entry)?
            .read_all(self.meta.positions_codec, freqs, out)
            .map_err(|e| IndexError::corrupt(self.file_name(FileKind::Positions), e.to_string()))?;
        Ok(())
    }

    /// The segment's manifest entry.
    pub fn meta(&self) -> &SegmentMeta {
        &self.meta
    }

    /// Decodes every posting list into memory; cursors read them from there from now on. A
    /// term whose bytes fail their checks is left out ([`DirectPostings::damaged_terms`]), so
    /// that only the queries reading it fail.
    pub fn load_direct(&mut self) -> Result<(), IndexError> {
        self.direct = Some(DirectPostings::load(self)?);
        Ok(())
    }

    /// The decoded postings, if loaded.
    pub fn direct(&self) -> Option<&DirectPostings> {
        self.direct.as_ref()
    }

    /// The codec of the segment's blocks.
    pub fn codec(&self) -> &dyn BlockCodec {
        &*self.codec
    }

    /// Number of skip entries in the skip file.
    pub fn skip_entries(&self) -> usize {
        self.skip.as_ref().len() / SkipEntry::LEN
    }

    /// Bytes of the postings file's body.
    pub fn postings_len(&self) -> usize {
        self.postings.as_ref().len()
    }

    /// Decompresses the whole document store and counts its documents, checking that every
    /// block parses and every text is UTF-8.
    pub fn count_stored(&self) -> Result<u64, IndexError> {
        let file = self.file_name(FileKind::Store);
        let store = self.store_reader()?;
        let mut count = 0u64;
        for i in 0..store.blocks() {
            let (first, raw) = store.block(i)?;
            if u64::from(first) != count {
                return Err(IndexError::corrupt(
                    file,
                    format!("block {i} starts at document {first}, expected {count}"),
                ));
            }
            let docs = StoreReader::documents(&raw)
                .ok_or_else(|| IndexError::corrupt(file, format!("block {i} is malformed")))?;
            for fields in docs {
                if fields
                    .iter()
                    .any(|field| std::str::from_utf8(field).is_err())
                {
                    return Err(IndexError::corrupt(
                        file,
                        format!("document {count} is not UTF-8"),
                    ));
                }
                count += 1;
            }
        }
        Ok(count)
    }

    /// The term dictionary.
    pub fn dictionary(&self) -> &TermDictionary<impl AsRef<[u8]>> {
        &self.dictionary
    }

    fn file_name(&self, kind: FileKind) -> &str {
        &self.meta.file(kind).expect("opened").name
    }

    /// The metadata of `term`, if the segment has it, verified against its checksum.
    pub fn term(&self, term: &str) -> Result<Option<TermInfo>, IndexError> {
        Ok(self.lookup(term)?.map(|entry| entry.info))
    }

    /// The ordinal and metadata of `term`, if the segment has it, verified against its
    /// checksum (once per process).
    pub fn lookup(&self, term: &str) -> Result<Option<TermEntry>, IndexError> {
        match self.dictionary.get(term) {
            Some(ordinal) => self.verified_entry(ordinal, Some(term)).map(Some),
            None => Ok(None),
        }
    }

    /// [`SegmentReader::lookup`] of each of `terms`, in their order, into `out` (cleared
    /// first). The dictionary walks of all the terms advance together
    /// ([`TermDictionary::get_many`]), and the lines of every found term's metadata are asked
    /// for before any is read, so that their misses overlap.
    pub fn lookup_many(
        &self,
        terms: &[&str],
        out: &mut Vec<Option<TermEntry>>,
    ) -> Result<(), IndexError> {
        let keys: Vec<&[u8]> = terms.iter().map(|term| term.as_bytes()).collect();
        let mut ordinals = Vec::with_capacity(terms.len());
        self.dictionary.get_many(&keys, &mut ordinals);
        let groups = self.term_groups();
        for &ordinal in ordinals.iter().flatten() {
            groups.prefetch_entry(ordinal / GROUP_TERMS);
            self.verified.prefetch(ordinal - ordinal % GROUP_TERMS);
        }
        for &ordinal in ordinals.iter().flatten() {
            if ordinal < self.meta.terms {
                groups.prefetch_records(ordinal / GROUP_TERMS);
            }
        }
        out.clear();
        for (ordinal, term) in ordinals.into_iter().zip(terms) {
            out.push(match ordinal {
                Some(ordinal) => Some(self.verified_entry(ordinal, Some(term))?),
                None => None,
            });
        }
        Ok(())
    }

    /// The entry of term `ordinal`, its metadata verified against its checksum (once per
    /// process).
    pub fn entry(&self, ordinal: u64) -> Result<TermEntry, IndexError> {
        self.verified_entry(ordinal, None)
    }

    /// A reader of term entries for ordinals that mostly increase, as a merge asks for them:
    /// it decodes a term's whole group of records once instead of walking the group to each.
    pub fn entries_in_order(&self) -> EntriesInOrder<'_> {
        EntriesInOrder {
            reader: self,
            group: None,
            infos: Vec::with_capacity(GROUP_TERMS as usize),
        }
    }

    /// Checks the group of term `ordinal` against its checksum, once per process.
    fn verify_group_of(&self, ordinal: u64, term: Option<&str>) -> Result<(), IndexError> {
        // A group's checksum is remembered on its first term's bit.
        let group = ordinal / GROUP_TERMS;
        let first = group * GROUP_TERMS;
        if !self.verified.is_set(first, Verified::Meta) {
            if ordinal >= self.meta.terms || !self.term_groups().verify(group, self.skip.as_ref()) {
                return Err(self.damaged(ordinal, term, "metadata checksum mismatch"));
            }
            self.verified.set(first, Verified::Meta);
        }
        Ok(())
    }

    fn verified_entry(&self, ordinal: u64, term: Option<&str>) -> Result<TermEntry, IndexError> {
        self.verify_group_of(ordinal, term)?;
        let info = self
            .term_info(ordinal)
            .map_err(|_| self.damaged(ordinal, term, "its record does not decode"))?;
        Ok(TermEntry { ordinal, info })
    }

    /// The term-info file, read.
    fn term_groups(&self) -> TermGroups<'_> {
        TermGroups::new(self.term_infos.as_ref(), self.meta.terms).expect("checked at open")
    }

    /// The error for a term whose bytes fail their checks: names the files that hold them
    /// and the term (looked up by ordinal when the caller does not know its text).
    fn damaged(&self, ordinal: u64, term: Option<&str>, what: &str) -> IndexError {
        let term = match term {
            Some(term) => term.to_string(),
            None => self.term_text(ordinal),
        };
        let files = if what.starts_with("postings") {
            self.file_name(FileKind::Postings).to_string()
        } else {
            format!(
                "{} or {}",
                self.file_name(FileKind::TermInfos),
                self.file_name(FileKind::Skip)
            )
        };
        let sums = self.file_name(FileKind::TermInfos);
        IndexError::corrupt(
            &files,
            format!("term {term:?} (ordinal {ordinal}): {what} (checksums in {sums})"),
        )
    }

    /// Term `ordinal` of the dictionary (`None` past the last), found in one walk of it.
    pub fn term_at(&self, ordinal: u64) -> Option<Vec<u8>> {
        self.dictionary.term_at(ordinal)
    }

    /// The text of term `ordinal`, for error messages.
    fn term_text(&self, ordinal: u64) -> String {
        match self.term_at(ordinal) {
            Some(term) => String::from_utf8_lossy(&term).into_owned(),
            None => format!("#{ordinal}"),
        }
    }

    /// Whether this process verified the postings of term `ordinal`.
    pub fn postings_verified(&self, ordinal: u64) -> bool {
        self.verified.is_set(ordinal, Verified::Postings)
    }

    /// Checks `crc`, the CRC32C of a copy of the term's postings (a cache's), against the
    /// term's checksum, and remembers a match. Postings short enough to share their group's
    /// checksum are checked against the segment's own bytes, verified with their group the
    /// first time.
    pub fn accept_postings(&self, entry: &TermEntry, crc: u32) -> Result<(), IndexError> {
        let info = &entry.info;
        let expected = if info.has_own_checksum() {
            info.postings_crc
        } else {
            crc32c::crc32c(self.verified_postings(entry)?)
        };
        if expected != crc {
            return Err(self.damaged(entry.ordinal, None, "postings checksum mismatch"));
        }
        self.verified.set(entry.ordinal, Verified::Postings);
        Ok(())
    }

    /// The term's postings bytes, verified against their checksum the first time this
    /// process reads them.
    pub fn verified_postings(&self, entry: &TermEntry) -> Result<&[u8], IndexError> {
        let bytes = self.stored_postings(entry)?;
        if !self.verified.is_set(entry.ordinal, Verified::Postings) {
            if entry.info.has_own_checksum() {
                self.accept_postings(entry, crc32c::crc32c(bytes))?;
            } else {
                self.verify_short_postings(entry.ordinal)?;
            }
        }
        Ok(bytes)
    }

    /// The term's postings bytes, not verified.
    fn stored_postings(&self, entry: &TermEntry) -> Result<&[u8], IndexError> {
        self.postings_bytes(&entry.info)
            .map_err(|_| self.damaged(entry.ordinal, None, "postings past the end of the file"))
    }

    /// Verifies the short postings of the group of term `ordinal` (those without a checksum
    /// of their own) against the group's checksum, and remembers each of them as verified.
    fn verify_short_postings(&self, ordinal: u64) -> Result<(), IndexError> {
        let group = ordinal / GROUP_TERMS;
        let groups = self.term_groups();
        let mut infos = Vec::with_capacity(GROUP_TERMS as usize);
        groups
            .read_group(group, self.skip_entries(), &mut infos)
            .ok_or_else(|| self.damaged(ordinal, None, "its group's records do not decode"))?;
        let mut crc = 0;
        for info in infos.iter().filter(|info| !info.has_own_checksum()) {
            let bytes = self
                .postings_bytes(info)
                .map_err(|_| self.damaged(ordinal, None, "postings past the end of the file"))?;
            crc = crc32c::crc32c_append(crc, bytes);
        }
        if crc != groups.entry(group).short_crc {
            return Err(self.damaged(ordinal, None, "postings checksum mismatch"));
        }
        for (i, info) in infos.iter().enumerate() {
            if !info.has_own_checksum() {
                self.verified
                    .set(group * GROUP_TERMS + i as u64, Verified::Postings);
            }
        }
        Ok(())
    }

    /// The metadata of term `ordinal`, as stored (not verified; [`SegmentReader::entry`]
    /// verifies it).
    pub fn term_info(&self, ordinal: u64) -> Result<TermInfo, IndexError> {
        self.term_groups()
            .read(ordinal, self.skip_entries())
            .ok_or_else(|| {
                IndexError::corrupt(
                    self.file_name(FileKind::TermInfos),
                    format!("the record of term ordinal {ordinal} does not decode"),
                )
            })
    }

    /// Every term's metadata in ordinal order, as stored (for `check` and merges; faster
    /// than [`SegmentReader::term_info`] per ordinal). An item is an error where a record
    /// does not decode, and the iteration ends there.
    pub fn term_infos(&self) -> impl Iterator<Item = Result<TermInfo, IndexError>> + '_ {
        let file = self.file_name(FileKind::TermInfos);
        self.term_groups()
            .iter(self.skip_entries())
            .enumerate()
            .map(move |(ordinal, info)| {
                info.ok_or_else(|| {
                    IndexError::corrupt(
                        file,
                        format!("the record of term ordinal {ordinal} does not decode"),
                    )
                })
            })
    }

    /// Whether the checksum of the group of term records holding `ordinal` matches (for
    /// `check`, which verifies every group).
    pub fn term_group_verifies(&self, ordinal: u64) -> bool {
        self.term_groups()
            .verify(ordinal / GROUP_TERMS, self.skip.as_ref())
    }

    /// The encoded skip entries of the term `info`, [`SkipEntry::LEN`] bytes each: in place
    /// in the skip file, or the one entry its record holds.
    pub fn term_skip_entries(&self, info: &TermInfo) -> Result<SkipEntries<'_>, IndexError> {
        if let Some(block) = &info.single_block {
            return Ok(SkipEntries::Single([block.to_bytes()]));
        }
        let start = info.first_skip as usize * SkipEntry::LEN;
        let end = start + info.blocks() * SkipEntry::LEN;
        let bytes = self.skip.as_ref().get(start..end).ok_or_else(|| {
            IndexError::corrupt(self.file_name(FileKind::Skip), "skip entries past the end")
        })?;
        let (entries, rest) = bytes.as_chunks::<{ SkipEntry::LEN }>();
        debug_assert!(rest.is_empty());
        Ok(SkipEntries::Stored(entries))
    }

    /// Skip entry `block` of the term `info`.
    pub fn skip_entry(&self, info: &TermInfo, block: usize) -> Result<SkipEntry, IndexError> {
        if let (Some(entry), 0) = (info.single_block, block) {
            return Ok(entry);
        }
        SkipEntry::read(
            self.skip.as_ref(),
            info.first_skip as usize + block,
            self.file_name(FileKind::Skip),
        )
    }

    /// The bytes of the term's postings (DID blocks then frequency blocks), as stored (not
    /// verified; [`SegmentReader::verified_postings`] verifies them).
    pub fn postings_bytes(&self, info: &TermInfo) -> Result<&[u8], IndexError> {
        let start = info.postings_offset as usize;
        self.postings
            .as_ref()
            .get(start..start + info.postings_bytes() as usize)
            .ok_or_else(|| {
                IndexError::corrupt(
                    self.file_name(FileKind::Postings),
                    "term postings past the end",
                )
            })
    }

    /// Decodes the whole posting list of `entry` into `docs` and `freqs` (cleared first),
    /// verifying its postings.
    pub fn read_postings(
        &self,
        entry: &TermEntry,
        docs: &mut Vec<u32>,
        freqs: &mut Vec<u32>,
    ) -> Result<(), IndexError> {
        let info = &entry.info;
        docs.clear();
        freqs.clear();
        if let Some((doc, freq)) = info.lone_posting() {
            docs.push(doc);
            freqs.push(freq);
            return Ok(());
        }
        let bytes = self.verified_postings(entry)?;
        // Named only in errors: a merge reads every term, and finding a name costs a search.
        let file = || self.file_name(FileKind::Postings);
        let n = info.doc_freq as usize;
        docs.resize(n, 0);
        freqs.resize(n, 0);
        for block in 0..info.blocks() {
            let entry = self.skip_entry(info, block)?;
            let range = block * BLOCK_LEN..(n.min((block + 1) * BLOCK_LEN));
            let at = |offset: u32| {
                bytes
                    .get(offset as usize..)
                    .ok_or_else(|| IndexError::corrupt(file(), "block offset past the term"))
            };
            self.codec
                .decode_docs(
                    entry.first_doc,
                    at(entry.docs_offset)?,
                    &mut docs[range.clone()],
                )
                .map_err(|source| IndexError::Codec {
                    file: file().to_string(),
                    source,
                })?;
            self.codec
                .decode_freqs(at(entry.freqs_offset)?, &mut freqs[range.clone()])
                .map_err(|source| IndexError::Codec {
                    file: file().to_string(),
                    source,
                })?;
        }
        for f in freqs.iter_mut() {
            *f = f.wrapping_add(1);
        }
        Ok(())
    }

    /// Length (tokens) of the document at local index `local`.
    pub fn doc_length(&self, local: u32) -> Option<u32> {
        self.norms_file().length(local)
    }

    /// Every document's length, in local order.
    pub fn doc_lengths_in_order(&self) -> Vec<u32> {
        self.norms_file().lengths()
    }

    /// The norm byte ([`crate::search::length_to_norm`]) of the document at local index
    /// `local`, as the norms file stores it.
    pub fn norm_byte(&self, local: u32) -> Option<u8> {
        self.norms_file().norm_bytes().get(local as usize).copied()
    }

    /// The norms file, read (its layout was checked at open).
    fn norms_file(&self) -> NormsFile<'_> {
        NormsFile::split(self.norms.as_ref(), self.meta.documents())
    }

    /// The lengths of the segment's documents by global DID, for scoring loops.
    pub fn doc_lengths(&self) -> DocLengths<'_> {
        DocLengths::new(self, self.norms_file())
    }

    /// The lengths of the segment's documents in the text field `field` (`""`: the default
    /// field) by global DID; `None` for a named field no document of the segment has.
    pub fn field_lengths(&self, field: &str) -> Option<DocLengths<'_>> {
        if field.is_empty() {
            return Some(self.doc_lengths());
        }
        let norms = self.field_norms.as_ref()?.field(field)?;
        Some(DocLengths::new(self, norms.norms))
    }

    /// The norms of the text fields indexed under their own names, in name order, each with
    /// its documents and tokens.
    pub fn text_fields(&self) -> &[FieldNorms<'_>] {
        self.field_norms
            .as_ref()
            .map_or(&[], FieldNormsMapped::fields)
    }

    /// Length (tokens) of global DID `doc`, if the segment holds it.
    #[inline]
    pub fn doc_length_of(&self, doc: u32) -> Option<u32> {
        let local = match self.meta.docs.runs() {
            // A merged segment: one run, local = DID - first.
            [[first, count]] => doc.checked_sub(*first).filter(|l| l < count)?,
            _ => self.meta.docs.local(doc)?,
        };
        self.doc_length(local)
    }

    /// The stored document at local index `local`.
    pub fn stored(&self, local: u32) -> Result<StoredDocument, IndexError> {
        let stored = self.store_reader().and_then(|store| store.get(local));
        // Read through the mapping (the block index, or the blocks unless read uncached).
        self.store.check()?;
        stored
    }

    /// The document store, its block index read and verified on first use.
    pub(crate) fn store_reader(&self) -> Result<StoreReader<'_>, IndexError> {
        let file = self.file_name(FileKind::Store);
        let index = self
            .store_index
            .get_or_init(|| StoreIndex::read(self.store.as_ref()))
            .as_ref()
            .map_err(|comment| IndexError::corrupt(file, format!("document store: {comment}")))?;
        let source = match &self.uncached_store {
            Some(uncached) => BlockSource::Uncached(uncached, HEADER_LEN as u64),
            None => BlockSource::Mapped,
        };
        Ok(StoreReader::new(self.store.as_ref(), index, file, source))
    }

    /// Reads stored documents past the page cache from now on (see [`UncachedFile`]): under a
    /// memory budget, a hit's document then costs the budget nothing once it is returned.
    pub fn read_store_uncached(&mut self, dir: &Path) -> Result<UncachedReads, IndexError> {
        let path = self
            .meta
            .directory(dir)
            .join(self.file_name(FileKind::Store));
        let file = UncachedFile::open(&path)?;
        let reads = file.reads();
        self.uncached_store = Some(file);
        Ok(reads)
    }
}

/// Term entries of one segment read group by group ([`SegmentReader::entries_in_order`]).
pub struct EntriesInOrder<'r> {
    reader: &'r SegmentReader,
    /// The group whose records `infos` holds.
    group: Option<u64>,
    infos: Vec<TermInfo>,
}

impl EntriesInOrder<'_> {
    /// The entry of term `ordinal`, its group verified against its checksum (once per
    /// process), as [`SegmentReader::entry`] gives it.
    pub fn get(&mut self, ordinal: u64) -> Result<TermEntry, IndexError> {
        let reader = self.reader;
        let group = ordinal / GROUP_TERMS;
        if self.group != Some(group) {
            self.group = None;
            reader.verify_group_of(ordinal, None)?;
            reader
                .term_groups()
                .read_group(group, reader.skip_entries(), &mut self.infos)
                .ok_or_else(|| reader.damaged(ordinal, None, "its record does not decode"))?;
            self.group = Some(group);
        }
        let info = *self
            .infos
            .get((ordinal % GROUP_TERMS) as usize)
            .ok_or_else(|| reader.damaged(ordinal, None, "its record does not decode"))?;
        Ok(TermEntry { ordinal, info })
    }
}
