//! [`IngestError`]: why reading the input stopped.

use std::io;

use super::bad_line::BadLine;
use super::input::Input;

/// An error that stops reading.
#[derive(Debug, thiserror::Error)]
pub enum IngestError {
    /// An input could not be opened, read or decompressed.
    #[error("cannot read {input}: {source}")]
    Io {
        /// The input.
        input: Input,
        /// The underlying error; decompression errors are I/O errors too.
        source: io::Error,
    },
    /// A bad line, under [`BadLinePolicy::Reject`](super::BadLinePolicy::Reject).
    #[error(
        "{0} (bad lines are rejected because --reject-bad-lines was given; \
         without it they are skipped and counted)"
    )]
    BadLine(BadLine),
    /// Most lines of an input are not documents: it is not a corpus (a binary, a listing, a
    /// file in another format).
    #[error("{input} does not look like documents: {bad_lines} of its first {lines} lines are bad lines; check the file and --format")]
    NotDocuments {
        /// The input.
        input: Input,
        /// Its bad lines.
        bad_lines: u64,
        /// Its lines read.
        lines: u64,
    },
    /// An input format name that [`InputFormat`](super::InputFormat) does not know.
    #[error("unknown input format {name:?}: expected auto, tsv, luceneutil or jsonl")]
    UnknownFormat {
        /// The name given.
        name: String,
    },
    /// An input compressed in a format the reader cannot decompress.
    #[error("cannot read {input}: .{extension} files are not supported; use .xz, .gz or .zst, or decompress it to plain text")]
    UnsupportedCompression {
        /// The input.
        input: Input,
        /// Its file extension.
        extension: String,
    },
    /// Tab-separated documents (a title and a body) in a build whose mapping gives `title` or
    /// `body` another type.
    #[error("{input}: tab-separated documents have the text fields title and body, and the mapping disagrees: {message}")]
    MappingConflict {
        /// The input.
        input: Input,
        /// The conflict.
        message: String,
    },
}
