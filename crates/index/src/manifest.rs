//! The manifest: the list of committed segments. Replacing it atomically is the commit.
//!
//! A commit writes `MANIFEST.tmp` (framed, CRC32C), fsyncs it, renames it over `MANIFEST` and
//! fsyncs the directory, as Lucene's segments_N: a crash at any point leaves either the old or
//! the new manifest. Segment files that the manifest does not name are ignored by readers and
//! removed by [`Manifest::remove_unreferenced`] once no writer is at work.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::analyzer::AnalyzerConfig;
use crate::format::{FileKind, FileWriter, FramedFile, FORMAT_VERSION};
use crate::segment::SegmentMeta;
use crate::IndexError;

/// File name of the manifest.
pub const MANIFEST: &str = "MANIFEST";

/// The committed state of an index.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// Format version of the index.
    pub format_version: u32,
    /// Incremented by every commit.
    pub generation: u64,
    /// The analyzer documents were indexed with (queries must use the same).
    pub analyzer: AnalyzerConfig,
    /// The committed segments.
    pub segments: Vec<SegmentMeta>,
}

impl Manifest {
    /// An empty manifest.
    pub fn new(analyzer: AnalyzerConfig) -> Manifest {
        Manifest {
            format_version: FORMAT_VERSION,
            generation: 0,
            analyzer,
            segments: Vec::new(),
        }
    }

    /// Documents in all segments.
    pub fn documents(&self) -> u64 {
        self.segments.iter().map(|s| u64::from(s.documents())).sum()
    }

    /// Bytes of the files of `kind` over all segments.
    pub fn file_bytes(&self, kind: FileKind) -> u64 {
        self.segments
            .iter()
            .filter_map(|s| s.file(kind))
            .map(|f| f.bytes)
            .sum()
    }

    /// Bytes of the files queries read: postings, skip entries, dictionary, term infos and
    /// norms (everything but the document store).
    pub fn search_bytes(&self) -> u64 {
        [
            FileKind::Postings,
            FileKind::Skip,
            FileKind::Dictionary,
            FileKind::TermInfos,
            FileKind::Norms,
        ]
        .into_iter()
        .map(|kind| self.file_bytes(kind))
        .sum()
    }

    /// Reads and verifies the manifest of `dir`.
    pub fn load(dir: &Path) -> Result<Manifest, IndexError> {
        let path = dir.join(MANIFEST);
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(IndexError::NoIndex(dir.to_path_buf()))
            }
            Err(e) => return Err(IndexError::io(&path, e)),
        };
        let body = FramedFile::verify(&bytes, FileKind::Manifest, MANIFEST)?;
        let mut manifest: Manifest = serde_json::from_slice(body)
            .map_err(|e| IndexError::corrupt(MANIFEST, format!("invalid JSON: {e}")))?;
        for segment in &mut manifest.segments {
            segment.docs = std::mem::take(&mut segment.docs).rebuilt();
        }
        Ok(manifest)
    }

    /// Commits `self` (with the next generation) as the manifest of `dir`.
    pub fn commit(&mut self, dir: &Path) -> Result<(), IndexError> {
        self.generation += 1;
        let body = serde_json::to_vec_pretty(self)
            .map_err(|e| IndexError::InvalidArgument(e.to_string()))?;
        let tmp = dir.join(format!("{MANIFEST}.tmp"));
        let mut writer = FileWriter::create(&tmp, FileKind::Manifest)?;
        writer.write_body(&body)?;
        writer.finish()?;
        let path = dir.join(MANIFEST);
        std::fs::rename(&tmp, &path).map_err(|e| IndexError::io(&path, e))?;
        crate::segment::sync_dir(dir)
    }

    /// Removes the segment files of `dir` that this manifest does not name (left by a crash, or
    /// replaced by a merge). Call it only when no segment is being written.
    pub fn remove_unreferenced(&self, dir: &Path) -> Result<(), IndexError> {
        let live: std::collections::HashSet<&str> = self
            .segments
            .iter()
            .flat_map(|s| s.files.iter().map(|f| f.name.as_str()))
            .collect();
        let entries = std::fs::read_dir(dir).map_err(|e| IndexError::io(dir, e))?;
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            let stale = name.starts_with("seg_") && !live.contains(name)
                || name.strip_prefix(MANIFEST) == Some(".tmp");
            if stale {
                let _ = std::fs::remove_file(entry.path());
            }
        }
        Ok(())
    }
}
