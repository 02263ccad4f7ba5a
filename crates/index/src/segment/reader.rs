//! Reads a committed segment through mmap.

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use apcache_codec::{BlockCodec, CodecKind, BLOCK_LEN};
use memmap2::Mmap;

use super::store::StoreReader;
use super::{DirectPostings, DocLengths, SegmentMeta, StoredDocument};
use crate::format::{FileKind, FramedFile, SkipEntry, TermInfo, HEADER_LEN};
use crate::search::TermEntry;
use crate::IndexError;

/// The body of a mapped file.
#[derive(Clone)]
pub(crate) struct MappedBody {
    map: Arc<Mmap>,
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
}

/// An open segment. Immutable and `Send + Sync`: many query threads may share one.
pub struct SegmentReader {
    meta: SegmentMeta,
    codec: Box<dyn BlockCodec>,
    dictionary: fst::Map<MappedBody>,
    term_infos: MappedBody,
    skip: MappedBody,
    postings: MappedBody,
    norms: MappedBody,
    store: MappedBody,
    /// Decoded postings, when loaded with [`SegmentReader::load_direct`].
    direct: Option<DirectPostings>,
}

/// The files a query reads besides the postings: the term metadata and the norms. A caller
/// may place copies of them elsewhere (a faster tier) with [`SegmentReader::open_placed`].
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
    let file = File::open(&path).map_err(|e| IndexError::io(&path, e))?;
    // SAFETY: index files are immutable once committed; apcache never writes to a committed
    // file, and the mapping is read-only.
    let map = unsafe { Mmap::map(&file) }.map_err(|e| IndexError::io(&path, e))?;
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
        // Advice failing changes nothing but speed.
        let _ = map.advise(memmap2::Advice::Random);
    }
    let framed = FramedFile::parse(&map, kind, &file_meta.name)?;
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

impl SegmentReader {
    /// Opens the segment `meta` of the index in `dir` (its files are in
    /// [`SegmentMeta::directory`]): maps its files and checks their framing;
    /// the dictionary's checksum is verified (a corrupt FST must not be walked).
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
        FramedFile::verify(dict.file_bytes(), FileKind::Dictionary, dict_name)?;
        let dictionary = fst::Map::new(dict)
            .map_err(|e| IndexError::corrupt(dict_name, format!("dictionary: {e}")))?;
        let reader = SegmentReader {
            codec,
            dictionary,
            term_infos: map_file(dir, meta, FileKind::TermInfos, metadata_dir)?,
            skip: map_file(dir, meta, FileKind::Skip, metadata_dir)?,
            postings: map_file(dir, meta, FileKind::Postings, metadata_dir)?,
            norms: map_file(dir, meta, FileKind::Norms, metadata_dir)?,
            store: map_file(dir, meta, FileKind::Store, metadata_dir)?,
            direct: None,
            meta: meta.clone(),
        };
        if reader.term_infos.as_ref().len() as u64 != meta.terms * TermInfo::LEN as u64 {
            return Err(IndexError::corrupt(
                &meta.name,
                "term infos do not match the term count",
            ));
        }
        if reader.norms.as_ref().len() != meta.documents() as usize * 5 {
            return Err(IndexError::corrupt(
                &meta.name,
                "norms do not match the document count",
            ));
        }
        Ok(reader)
    }

    /// Recomputes the checksum of every file.
    pub fn verify_checksums(&self) -> Result<(), IndexError> {
        for (kind, body) in self.bodies() {
            let name = &self.meta.file(kind).expect("opened").name;
            FramedFile::verify(body.file_bytes(), kind, name)?;
        }
        Ok(())
    }

    fn bodies(&self) -> [(FileKind, &MappedBody); 6] {
        [
            (FileKind::Dictionary, self.dictionary.as_fst().as_inner()),
            (FileKind::TermInfos, &self.term_infos),
            (FileKind::Skip, &self.skip),
            (FileKind::Postings, &self.postings),
            (FileKind::Norms, &self.norms),
            (FileKind::Store, &self.store),
        ]
    }

    /// The segment's manifest entry.
    pub fn meta(&self) -> &SegmentMeta {
        &self.meta
    }

    /// Decodes every posting list into memory; cursors read them from there from now on.
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
        let store = StoreReader::open(self.store.as_ref(), file)?;
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
            for (title, body) in docs {
                if std::str::from_utf8(title).is_err() || std::str::from_utf8(body).is_err() {
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
    pub fn dictionary(&self) -> &fst::Map<impl AsRef<[u8]>> {
        &self.dictionary
    }

    fn file_name(&self, kind: FileKind) -> &str {
        &self.meta.file(kind).expect("opened").name
    }

    /// The metadata of `term`, if the segment has it.
    pub fn term(&self, term: &str) -> Result<Option<TermInfo>, IndexError> {
        match self.dictionary.get(term) {
            Some(ordinal) => self.term_info(ordinal).map(Some),
            None => Ok(None),
        }
    }

    /// The ordinal and metadata of `term`, if the segment has it.
    pub fn lookup(&self, term: &str) -> Result<Option<TermEntry>, IndexError> {
        match self.dictionary.get(term) {
            Some(ordinal) => Ok(Some(TermEntry {
                ordinal,
                info: self.term_info(ordinal)?,
            })),
            None => Ok(None),
        }
    }

    /// The metadata of term `ordinal`.
    pub fn term_info(&self, ordinal: u64) -> Result<TermInfo, IndexError> {
        TermInfo::read(
            self.term_infos.as_ref(),
            ordinal,
            self.file_name(FileKind::TermInfos),
        )
    }

    /// The encoded skip entries of the term `info`, [`SkipEntry::LEN`] bytes each.
    pub fn term_skip_entries(
        &self,
        info: &TermInfo,
    ) -> Result<&[[u8; SkipEntry::LEN]], IndexError> {
        let start = info.first_skip as usize * SkipEntry::LEN;
        let end = start + info.blocks() * SkipEntry::LEN;
        let bytes = self.skip.as_ref().get(start..end).ok_or_else(|| {
            IndexError::corrupt(self.file_name(FileKind::Skip), "skip entries past the end")
        })?;
        let (entries, rest) = bytes.as_chunks::<{ SkipEntry::LEN }>();
        debug_assert!(rest.is_empty());
        Ok(entries)
    }

    /// Skip entry `block` of the term `info`.
    pub fn skip_entry(&self, info: &TermInfo, block: usize) -> Result<SkipEntry, IndexError> {
        SkipEntry::read(
            self.skip.as_ref(),
            info.first_skip as usize + block,
            self.file_name(FileKind::Skip),
        )
    }

    /// The bytes of the term's postings (DID blocks then frequency blocks).
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

    /// Decodes the whole posting list of `info` into `docs` and `freqs` (cleared first).
    pub fn read_postings(
        &self,
        info: &TermInfo,
        docs: &mut Vec<u32>,
        freqs: &mut Vec<u32>,
    ) -> Result<(), IndexError> {
        let bytes = self.postings_bytes(info)?;
        let file = self.file_name(FileKind::Postings);
        let n = info.doc_freq as usize;
        docs.clear();
        freqs.clear();
        docs.resize(n, 0);
        freqs.resize(n, 0);
        for block in 0..info.blocks() {
            let entry = self.skip_entry(info, block)?;
            let range = block * BLOCK_LEN..(n.min((block + 1) * BLOCK_LEN));
            let at = |offset: u32| {
                bytes
                    .get(offset as usize..)
                    .ok_or_else(|| IndexError::corrupt(file, "block offset past the term"))
            };
            self.codec
                .decode_docs(
                    entry.first_doc,
                    at(entry.docs_offset)?,
                    &mut docs[range.clone()],
                )
                .map_err(|source| IndexError::Codec {
                    file: file.to_string(),
                    source,
                })?;
            self.codec
                .decode_freqs(at(entry.freqs_offset)?, &mut freqs[range.clone()])
                .map_err(|source| IndexError::Codec {
                    file: file.to_string(),
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
        let at = local as usize * 4;
        self.lengths_section()
            .get(at..at + 4)
            .map(|b| u32::from_le_bytes(b.try_into().expect("4")))
    }

    /// The norm byte ([`crate::search::length_to_norm`]) of the document at local index
    /// `local`, as the norms file stores it.
    pub fn norm_byte(&self, local: u32) -> Option<u8> {
        (local < self.meta.documents()).then(|| self.norm_bytes_section()[local as usize])
    }

    /// The norms file's lengths: `u32` LE per document.
    fn lengths_section(&self) -> &[u8] {
        &self.norms.as_ref()[..self.meta.documents() as usize * 4]
    }

    /// The norms file's norm bytes, one per document.
    fn norm_bytes_section(&self) -> &[u8] {
        &self.norms.as_ref()[self.meta.documents() as usize * 4..]
    }

    /// The lengths of the segment's documents by global DID, for scoring loops.
    pub fn doc_lengths(&self) -> DocLengths<'_> {
        DocLengths::new(self, self.lengths_section(), self.norm_bytes_section())
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
        StoreReader::open(self.store.as_ref(), self.file_name(FileKind::Store))?.get(local)
    }

    /// The document store (for merging).
    pub(crate) fn store_reader(&self) -> Result<StoreReader<'_>, IndexError> {
        StoreReader::open(self.store.as_ref(), self.file_name(FileKind::Store))
    }
}
