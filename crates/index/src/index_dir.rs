//! Which files of a directory belong to apcache, and whether a writer may work there.
//!
//! A writer removes files: leftovers of a killed writer, the segments a merge or a rebuild
//! replaced, what a failed build wrote. It must never remove a user's file. So apcache knows
//! its own files by their exact names ([`is_own_file`]): `MANIFEST`, `LOCK`, `EXTERNAL_IDS`,
//! and `seg_NNNNNN.EXT` with one of the segment files' extensions, each possibly with the
//! `.tmp` suffix of a file being written. Nothing else is ever removed, whatever its name
//! starts or ends with (`seg_plan.txt` and `notes.tmp` are the user's).
//!
//! A build writes only into an empty directory, an existing index (a `MANIFEST`), or a
//! directory holding nothing but apcache's own files (what a build killed before its first
//! commit left); [`check_writable`] refuses any other directory before anything is written
//! there, the writer lock included.

use std::path::Path;

/// The ids file of indexes before format version 10 (ids now live in the segments): still
/// apcache's own, so that a build replacing such an index removes it.
const EXTERNAL_IDS: &str = "EXTERNAL_IDS";
use crate::format::FileKind;
use crate::manifest::MANIFEST;
use crate::writer_lock::LOCK;
use crate::IndexError;

/// The suffix of a file being written, renamed away when it is complete.
pub const TEMPORARY_SUFFIX: &str = ".tmp";

/// What a directory a build is asked to write into holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DirContents {
    /// Nothing, or it does not exist yet.
    Empty,
    /// A committed index (a `MANIFEST`).
    Index,
    /// Only apcache's own files without a manifest: what a build killed before its first
    /// commit left.
    Leftovers,
    /// Files that are not apcache's (their names, sorted): not a place to write an index.
    Foreign(Vec<String>),
}

/// The segment number of `name` if it is a segment file apcache writes (`seg_NNNNNN.EXT`,
/// or the same with `.tmp`), `None` otherwise.
pub fn segment_number(name: &str) -> Option<u32> {
    let name = name.strip_suffix(TEMPORARY_SUFFIX).unwrap_or(name);
    let rest = name.strip_prefix("seg_")?;
    let (number, extension) = rest.split_once('.')?;
    if number.len() < 6 || !number.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let known = FileKind::SEGMENT_FILES
        .iter()
        .chain(FileKind::OPTIONAL_SEGMENT_FILES.iter())
        .any(|kind| kind.extension() == extension);
    if !known {
        return None;
    }
    number.parse().ok()
}

/// Whether `name` is a file apcache writes in an index directory.
pub fn is_own_file(name: &str) -> bool {
    let base = name.strip_suffix(TEMPORARY_SUFFIX).unwrap_or(name);
    matches!(base, MANIFEST | EXTERNAL_IDS) || name == LOCK || segment_number(name).is_some()
}

/// Whether `name` is one of apcache's own files being written (or left half-written).
pub fn is_own_temporary(name: &str) -> bool {
    name.ends_with(TEMPORARY_SUFFIX) && is_own_file(name)
}

/// What `dir` holds, as [`DirContents`] says.
///
/// # Errors
///
/// [`IndexError::Io`] if `dir` exists but cannot be listed (or is not a directory).
pub fn contents(dir: &Path) -> Result<DirContents, IndexError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(DirContents::Empty),
        Err(e) => return Err(IndexError::io(dir, e)),
    };
    let mut own = false;
    let mut manifest = false;
    let mut foreign = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| IndexError::io(dir, e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let is_file = entry.file_type().is_ok_and(|t| t.is_file());
        if is_file && name == MANIFEST {
            manifest = true;
        } else if is_file && is_own_file(&name) {
            own |= name != LOCK;
        } else {
            foreign.push(name);
        }
    }
    foreign.sort();
    Ok(match (manifest, own, foreign.is_empty()) {
        (true, _, _) => DirContents::Index,
        (false, _, false) => DirContents::Foreign(foreign),
        (false, true, true) => DirContents::Leftovers,
        (false, false, true) => DirContents::Empty,
    })
}

/// Refuses `dir` as the place of a new index if it holds files that are not apcache's and
/// no index: a user's directory is never written into, and nothing in it is removed.
///
/// # Errors
///
/// [`IndexError::NotAnIndexDir`] naming a few of the foreign files, or [`IndexError::Io`].
pub fn check_writable(dir: &Path) -> Result<DirContents, IndexError> {
    let contents = contents(dir)?;
    if let DirContents::Foreign(names) = &contents {
        return Err(IndexError::NotAnIndexDir {
            dir: dir.to_path_buf(),
            examples: examples(names),
        });
    }
    Ok(contents)
}

/// Up to five names, then how many more.
fn examples(names: &[String]) -> String {
    let mut text = names
        .iter()
        .take(5)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > 5 {
        text.push_str(&format!(" and {} more", names.len() - 5));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_files_are_known_by_their_exact_names() {
        for name in [
            "MANIFEST",
            "MANIFEST.tmp",
            "LOCK",
            "EXTERNAL_IDS",
            "EXTERNAL_IDS.tmp",
            "seg_000004.terms",
            "seg_000004.terms.tmp",
            "seg_1234567.post",
            "seg_000000.pos",
            "seg_000000.store.tmp",
        ] {
            assert!(is_own_file(name), "{name}");
        }
        for name in [
            "notes.tmp",
            "seg_plan.txt",
            "seg_000004",
            "seg_00004.post",
            "seg_000004.post.bak",
            "seg_000004.txt",
            "seg_00000x.post",
            "MANIFEST.bak",
            "LOCK.tmp",
            "manifest",
            ".tmp",
        ] {
            assert!(!is_own_file(name), "{name}");
        }
        assert!(is_own_temporary("seg_000001.dict.tmp"));
        assert!(!is_own_temporary("seg_000001.dict"));
        assert!(!is_own_temporary("notes.tmp"));
        assert_eq!(segment_number("seg_000042.skip.tmp"), Some(42));
    }

    #[test]
    fn a_directory_is_classified_by_what_it_holds() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            contents(&dir.path().join("absent")).unwrap(),
            DirContents::Empty
        );
        assert_eq!(contents(dir.path()).unwrap(), DirContents::Empty);
        std::fs::write(dir.path().join("LOCK"), b"").unwrap();
        assert_eq!(contents(dir.path()).unwrap(), DirContents::Empty);
        std::fs::write(dir.path().join("seg_000000.post.tmp"), b"x").unwrap();
        assert_eq!(contents(dir.path()).unwrap(), DirContents::Leftovers);
        std::fs::write(dir.path().join("notes.tmp"), b"notes").unwrap();
        std::fs::create_dir(dir.path().join("seg_000001.post")).unwrap();
        assert_eq!(
            contents(dir.path()).unwrap(),
            DirContents::Foreign(vec!["notes.tmp".into(), "seg_000001.post".into()])
        );
        let error = check_writable(dir.path()).unwrap_err().to_string();
        assert!(error.contains("notes.tmp"), "{error}");
        std::fs::write(dir.path().join("MANIFEST"), b"").unwrap();
        assert_eq!(contents(dir.path()).unwrap(), DirContents::Index);
    }
}
