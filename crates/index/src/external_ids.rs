//! External document ids: the ids an application gave its documents (`"FBIS3-10082"`,
//! `"doc-7"`), beside the index's own numbers (DIDs, from 0 in input order).
//!
//! The index itself knows documents only by DID; an application that has ids of its own
//! (the Python bindings' `IndexWriter.add(id, ...)`) keeps them in `EXTERNAL_IDS`, a text
//! file in the index directory: a header line naming the index generation and document
//! count it was written for, then one id per line in DID order. It lies outside the manifest,
//! so the index's format and `apcache check` are unchanged; an index rebuilt since (another
//! generation or count) makes the file stale, and [`ExternalIds::load`] then ignores it and
//! says so. Without the file a document's id is its DID in decimal, which is what `apcache
//! search` prints, so results read the same either way.

use std::io::Write;
use std::path::Path;

use crate::IndexError;

/// The file's name in the index directory.
pub const EXTERNAL_IDS: &str = "EXTERNAL_IDS";

const MAGIC: &str = "apcache-external-ids 1";

/// The external ids of an index's documents, by DID.
#[derive(Debug, Clone, Default)]
pub struct ExternalIds {
    ids: Vec<String>,
}

/// What [`ExternalIds::load`] found.
#[derive(Debug)]
pub enum LoadedIds {
    /// No `EXTERNAL_IDS` file: ids are DIDs.
    Absent,
    /// The ids, for this generation and count.
    Loaded(ExternalIds),
    /// A file written for another build of the index, ignored; the message says why.
    Stale(String),
}

impl ExternalIds {
    /// Checks that `id` can be stored: not empty, and one line without tabs (ids go in run
    /// files and TSV output; whitespace inside one would shift their columns).
    ///
    /// # Errors
    ///
    /// [`IndexError::InvalidArgument`] saying what is wrong.
    pub fn check(id: &str) -> Result<(), IndexError> {
        if id.is_empty() {
            return Err(IndexError::InvalidArgument(
                "a document id cannot be empty".into(),
            ));
        }
        if id.contains(char::is_whitespace) {
            return Err(IndexError::InvalidArgument(format!(
                "the document id {id:?} has whitespace in it; ids are single words"
            )));
        }
        Ok(())
    }

    /// Writes `ids` (in DID order) as the external ids of the index in `dir` at `generation`,
    /// atomically (a temporary file renamed over the old one).
    ///
    /// # Errors
    ///
    /// [`IndexError::InvalidArgument`] for an id [`ExternalIds::check`] refuses,
    /// [`IndexError::Io`] if writing fails.
    pub fn write<'a>(
        dir: &Path,
        generation: u64,
        ids: impl ExactSizeIterator<Item = &'a str>,
    ) -> Result<(), IndexError> {
        let path = dir.join(EXTERNAL_IDS);
        let tmp = dir.join(format!("{EXTERNAL_IDS}.tmp"));
        let io = |e| IndexError::io(&path, e);
        let file = std::fs::File::create(&tmp).map_err(io)?;
        let mut out = std::io::BufWriter::new(file);
        writeln!(
            out,
            "{MAGIC} generation={generation} documents={}",
            ids.len()
        )
        .map_err(io)?;
        for id in ids {
            ExternalIds::check(id)?;
            writeln!(out, "{id}").map_err(io)?;
        }
        let file = out.into_inner().map_err(|e| io(e.into_error()))?;
        file.sync_all().map_err(io)?;
        std::fs::rename(&tmp, &path).map_err(io)?;
        Ok(())
    }

    /// The external ids of the index in `dir`, which is at `generation` with `documents`
    /// documents.
    ///
    /// # Errors
    ///
    /// [`IndexError::Io`] if the file exists but cannot be read, [`IndexError::Corrupt`] if it
    /// is not an ids file or its lines disagree with its header.
    pub fn load(dir: &Path, generation: u64, documents: u64) -> Result<LoadedIds, IndexError> {
        let path = dir.join(EXTERNAL_IDS);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(LoadedIds::Absent),
            Err(e) => return Err(IndexError::io(&path, e)),
        };
        let corrupt = |what: String| IndexError::Corrupt {
            file: path.display().to_string(),
            comment: what,
        };
        let mut lines = text.lines();
        let header = lines.next().unwrap_or_default();
        let fields = header
            .strip_prefix(MAGIC)
            .ok_or_else(|| corrupt(format!("not an external-ids file (header {header:?})")))?;
        let value = |name: &str| -> Option<u64> {
            fields
                .split_whitespace()
                .find_map(|f| f.strip_prefix(name)?.strip_prefix('=')?.parse().ok())
        };
        let (Some(file_generation), Some(file_documents)) =
            (value("generation"), value("documents"))
        else {
            return Err(corrupt(format!(
                "a header without generation and documents: {header:?}"
            )));
        };
        let ids: Vec<String> = lines.map(str::to_owned).collect();
        if ids.len() as u64 != file_documents {
            return Err(corrupt(format!(
                "the header says {file_documents} ids, the file holds {}",
                ids.len()
            )));
        }
        if file_generation != generation || file_documents != documents {
            return Ok(LoadedIds::Stale(format!(
                "{} was written for generation {file_generation} with {file_documents} \
                 documents, the index is at generation {generation} with {documents}; it was \
                 rebuilt since, so documents are known by their numbers",
                path.display()
            )));
        }
        Ok(LoadedIds::Loaded(ExternalIds { ids }))
    }

    /// The id of document `did`, if the file names one.
    pub fn get(&self, did: u32) -> Option<&str> {
        self.ids.get(did as usize).map(String::as_str)
    }

    /// The DID of the document with external id `id` (a linear scan; for single look-ups).
    pub fn find(&self, id: &str) -> Option<u32> {
        self.ids.iter().position(|x| x == id).map(|i| i as u32)
    }

    /// How many ids the file holds.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_ids_load_back_for_their_generation_only() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(
            ExternalIds::load(dir.path(), 1, 2).unwrap(),
            LoadedIds::Absent
        ));
        ExternalIds::write(dir.path(), 3, ["a-1", "b/2"].into_iter()).unwrap();
        let LoadedIds::Loaded(ids) = ExternalIds::load(dir.path(), 3, 2).unwrap() else {
            panic!("the ids of generation 3");
        };
        assert_eq!(
            (ids.get(0), ids.get(1), ids.get(2)),
            (Some("a-1"), Some("b/2"), None)
        );
        assert_eq!((ids.find("b/2"), ids.find("c")), (Some(1), None));
        for (generation, documents) in [(4, 2), (3, 3)] {
            assert!(matches!(
                ExternalIds::load(dir.path(), generation, documents).unwrap(),
                LoadedIds::Stale(_)
            ));
        }
        assert!(!dir.path().join(format!("{EXTERNAL_IDS}.tmp")).exists());
    }

    #[test]
    fn bad_ids_and_damaged_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        for bad in ["", "two words", "tab\there", "line\nbreak"] {
            assert!(ExternalIds::check(bad).is_err(), "{bad:?}");
            assert!(ExternalIds::write(dir.path(), 1, [bad].into_iter()).is_err());
        }
        std::fs::write(dir.path().join(EXTERNAL_IDS), "something else\n").unwrap();
        assert!(ExternalIds::load(dir.path(), 1, 0).is_err());
        std::fs::write(
            dir.path().join(EXTERNAL_IDS),
            format!("{MAGIC} generation=1 documents=3\na\nb\n"),
        )
        .unwrap();
        assert!(ExternalIds::load(dir.path(), 1, 3).is_err());
    }
}
