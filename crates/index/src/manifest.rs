//! The manifest: the list of committed segments. Replacing it atomically is the commit.
//!
//! A commit writes `MANIFEST.tmp` (framed, CRC32C), fsyncs it, renames it over `MANIFEST` and
//! fsyncs the directory, as Lucene's segments_N: a crash at any point leaves either the old or
//! the new manifest. Segment files that the manifest does not name, and temporary files, are
//! ignored by readers, reported by `check` ([`Manifest::leftovers`]) and removed by
//! [`Manifest::remove_unreferenced`] once no writer is at work.
//!
//! A build into an empty directory commits after every flush, so that a killed build keeps
//! what it flushed; those commits carry [`Manifest::build`], which says the index holds only
//! part of its input, and the build's final commit clears it.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::analyzer::AnalyzerConfig;
use crate::format::{FileKind, FileWriter, FramedFile, FORMAT_VERSION};
use crate::schema::Mapping;
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
    /// The fields of the index's documents, in Elasticsearch's JSON form (absent from an
    /// index without documents).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mapping: Option<Mapping>,
    /// The committed segments.
    pub segments: Vec<SegmentMeta>,
    /// Set on the commits of a build before its final one: an index committed with it holds
    /// only part of its input (the build was interrupted). Absent from a complete index.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<BuildProgress>,
}

/// How far an unfinished build had come when it committed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BuildProgress {
    /// The build's input, as it was named (files separated by `, `).
    pub input: String,
    /// Documents read from the input by then (the committed segments hold those flushed).
    pub documents_read: u64,
}

impl Manifest {
    /// An empty manifest.
    pub fn new(analyzer: AnalyzerConfig) -> Manifest {
        Manifest {
            format_version: FORMAT_VERSION,
            generation: 0,
            analyzer,
            mapping: None,
            segments: Vec::new(),
            build: None,
        }
    }

    /// What `stats` and `check` say of an index an interrupted build left: `None` for a
    /// complete index.
    pub fn incomplete_note(&self) -> Option<String> {
        self.build.as_ref().map(|_| {
            format!(
                "incomplete: an interrupted build left {} documents; re-run apcache index --force",
                self.documents()
            )
        })
    }

    /// Fails with [`IndexError::Partial`] if this is the manifest of an index an interrupted
    /// build left in `dir`.
    pub fn check_whole(&self, dir: &Path) -> Result<(), IndexError> {
        match &self.build {
            None => Ok(()),
            Some(progress) => Err(IndexError::Partial {
                dir: dir.to_path_buf(),
                documents: self.documents(),
                documents_read: progress.documents_read,
            }),
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
        if let Some(e) = crate::fault::injected(crate::fault::COMMIT) {
            return Err(IndexError::io(&path, e));
        }
        std::fs::rename(&tmp, &path).map_err(|e| IndexError::io(&path, e))?;
        crate::segment::sync_dir(dir)
    }

    /// The names in `dir` that an interrupted writer leaves behind: segment files that this
    /// manifest does not name (flushed or merged segments never committed, or replaced by a
    /// merge or a rebuild) and apcache's temporary files (`MANIFEST.tmp`, `seg_*.EXT.tmp`),
    /// sorted. Only apcache's own names count ([`crate::index_dir::is_own_file`]): a user's
    /// `notes.tmp` is never a leftover.
    /// While a writer is at work they include the files it is writing.
    pub fn leftovers(&self, dir: &Path) -> Result<Vec<String>, IndexError> {
        let live: std::collections::HashSet<&str> = self
            .segments
            .iter()
            .flat_map(|s| s.files.iter().map(|f| f.name.as_str()))
            .collect();
        let entries = std::fs::read_dir(dir).map_err(|e| IndexError::io(dir, e))?;
        let mut leftovers: Vec<String> = entries
            .flatten()
            .filter(|entry| entry.file_type().is_ok_and(|t| t.is_file()))
            .filter_map(|entry| entry.file_name().into_string().ok())
            .filter(|name| {
                crate::index_dir::is_own_temporary(name)
                    || crate::index_dir::segment_number(name).is_some()
                        && !live.contains(name.as_str())
            })
            .collect();
        leftovers.sort();
        Ok(leftovers)
    }

    /// Removes [`Manifest::leftovers`] from `dir`. Call it only under the writer lock, when no
    /// file is being written.
    pub fn remove_unreferenced(&self, dir: &Path) -> Result<(), IndexError> {
        for name in self.leftovers(dir)? {
            let _ = std::fs::remove_file(dir.join(name));
        }
        Ok(())
    }
}
