//! What the manifest records of each segment.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{DictionaryKind, DocMap};
use crate::format::{FileKind, PositionsCodec};

/// One file of a segment, as committed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileMeta {
    /// File name, relative to the index directory.
    pub name: String,
    /// Length in bytes.
    pub bytes: u64,
    /// The CRC32C its footer records.
    pub crc32c: u32,
}

/// A committed segment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SegmentMeta {
    /// Segment name; its files are `<name>.<extension>`.
    pub name: String,
    /// The codec of its posting blocks.
    pub codec: String,
    /// The global DIDs it holds.
    pub docs: DocMap,
    /// Distinct terms.
    pub terms: u64,
    /// Postings.
    pub postings: u64,
    /// Sum of document lengths, in tokens.
    pub total_tokens: u64,
    /// Bytes of DID blocks in the postings file.
    pub docs_bytes: u64,
    /// Bytes of frequency blocks in the postings file.
    pub freqs_bytes: u64,
    /// What its dictionary file holds (absent from the manifest: an FST).
    #[serde(default, skip_serializing_if = "DictionaryKind::is_fst")]
    pub dictionary: DictionaryKind,
    /// The codec of its positions chunks (absent from the manifest: `pfor-delta`).
    #[serde(default, skip_serializing_if = "PositionsCodec::is_default")]
    pub positions_codec: PositionsCodec,
    /// Its files, in [`FileKind::SEGMENT_FILES`] order.
    pub files: Vec<FileMeta>,
    /// The directory of its files when that is not the index directory (a flushed segment
    /// placed elsewhere with `--flush-dir`, awaiting its merge); absolute.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dir: Option<PathBuf>,
}

impl SegmentMeta {
    /// Number of documents.
    pub fn documents(&self) -> u32 {
        self.docs.len()
    }

    /// The directory holding its files, for an index in `index_dir`.
    pub fn directory<'a>(&'a self, index_dir: &'a Path) -> &'a Path {
        self.dir.as_deref().unwrap_or(index_dir)
    }

    /// The file of `kind`.
    pub fn file(&self, kind: FileKind) -> Option<&FileMeta> {
        self.files.iter().find(|f| {
            f.name
                .rsplit_once('.')
                .is_some_and(|(_, extension)| extension == kind.extension())
        })
    }
}
