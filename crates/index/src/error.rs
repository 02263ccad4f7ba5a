//! The error type of the index crate.

use std::path::{Path, PathBuf};

use crate::ingest::IngestError;

/// Why an index could not be built, opened or read.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    /// An operating-system I/O error on a path.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A file's bytes are not what the format says they must be.
    #[error("{file} is corrupt: {comment}; restore it from a backup or re-build the index")]
    Corrupt {
        /// The file.
        file: String,
        /// What is wrong.
        comment: String,
    },
    /// A file's checksum does not match its bytes.
    #[error("{file}: checksum mismatch (footer {expected:#010x}, computed {actual:#010x}); the file is damaged")]
    ChecksumMismatch {
        /// The file.
        file: String,
        /// The checksum recorded.
        expected: u32,
        /// The checksum of the bytes.
        actual: u32,
    },
    /// A file was written by another version of the format.
    #[error("{file} has format version {found}, and this build of apcache reads versions {oldest} to {newest}: rebuild the index from its input (apcache index INPUT -o DIR --force)")]
    IncompatibleVersion {
        /// The file.
        file: String,
        /// Its version.
        found: u32,
        /// The oldest version this build reads.
        oldest: u32,
        /// The newest version this build reads (the one it writes).
        newest: u32,
    },
    /// The directory holds no committed index.
    #[error("{0}: no committed index (no MANIFEST)")]
    NoIndex(PathBuf),
    /// The directory already holds an index and overwriting was not asked for.
    #[error("{0} already holds an index; pass --force to replace it")]
    IndexExists(PathBuf),
    /// The directory holds files that are not apcache's and no index: a build does not write
    /// there, so that none of those files is touched.
    #[error("{dir} is not empty and holds no apcache index (it holds {examples}); index into an empty or new directory")]
    NotAnIndexDir {
        /// The directory.
        dir: PathBuf,
        /// A few of the files found there.
        examples: String,
    },
    /// The index holds only part of its input: a build was interrupted after committing some
    /// of it. Readers refuse it unless told to accept a partial index.
    #[error("{dir} is a partial index: an interrupted build committed {documents} documents of its input ({documents_read} read by then); rebuild it with apcache index --force, or pass --allow-partial to search it as it is")]
    Partial {
        /// The index directory.
        dir: PathBuf,
        /// Documents committed.
        documents: u64,
        /// Documents the build had read when it last committed.
        documents_read: u64,
    },
    /// Another process is writing the index (it holds the writer lock).
    #[error("another process is writing the index in {0} (it holds {0}/LOCK)")]
    Locked(PathBuf),
    /// Reading the input failed.
    #[error(transparent)]
    Ingest(#[from] IngestError),
    /// A block could not be encoded or decoded.
    #[error("{file}: {source}")]
    Codec {
        /// The file.
        file: String,
        /// The codec's error.
        source: apcache_codec::CodecError,
    },
    /// An argument is out of range.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// A phrase query on an index built without positions.
    #[error("phrase queries need positions, and segment {segment} was built without them (--no-positions): rebuild the index without that flag")]
    NoPositions {
        /// The segment.
        segment: String,
    },
    /// A read through the mapping of an index file failed (the kernel's `SIGBUS`): the file
    /// shrank or its device failed while it was mapped. Every read of the file fails so
    /// until the index is opened again.
    #[error("read error in {} (the file changed or its device failed under the mapping); the index must be reopened, or restored from a backup if the file is damaged", path.display())]
    MappedReadFailed {
        /// The file.
        path: PathBuf,
    },
    /// The query was cancelled while it ran (see `search::CancelScope`).
    #[error("the query was cancelled")]
    Cancelled,
}

impl IndexError {
    /// An I/O error on `path`.
    pub fn io(path: &Path, source: std::io::Error) -> IndexError {
        IndexError::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    /// A corruption of `file`.
    pub fn corrupt(file: impl Into<String>, comment: impl Into<String>) -> IndexError {
        IndexError::Corrupt {
            file: file.into(),
            comment: comment.into(),
        }
    }

    /// Whether the error says the index's bytes are damaged: a checksum that does not match,
    /// a structure or a block that does not decode. Such an error belongs to the bytes read,
    /// not to the process: other reads may still succeed.
    pub fn is_damage(&self) -> bool {
        matches!(
            self,
            IndexError::Corrupt { .. }
                | IndexError::ChecksumMismatch { .. }
                | IndexError::Codec { .. }
        )
    }
}
