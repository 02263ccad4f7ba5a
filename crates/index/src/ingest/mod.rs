//! Ingest: reading documents from corpus files, compressed or not, for the indexer.
//!
//! A [`DocumentReader`] reads a list of [`Input`]s (files, or `-` for standard input) one
//! after the other and returns one [`Document`] per line, singly or in batches for the
//! indexing threads. Its [`IngestReport`] counts what was read.
//!
//! # Formats
//!
//! | [`InputFormat`] | a line | notes |
//! |---|---|---|
//! | `Tsv` | `title<TAB>body` | apcache's corpus format |
//! | `Luceneutil` | `title<TAB>date<TAB>body` | luceneutil line files; the header is skipped |
//! | `JsonLines` | `{"id": .., "title": .., "body": ..}` | `text` for `body`; `id`, `title` optional |
//! | `Auto` (default) | any of these | decided line by line; see [`InputFormat::Auto`] |
//!
//! Files ending in `.xz`, `.gz` or `.zst` are decompressed as they are read, and so is
//! compressed standard input.
//!
//! # Bad lines
//!
//! A line that is not a document (invalid UTF-8 or JSON, missing fields, empty, too long) is
//! a [`BadLine`], located by file and 1-based line number. Under [`BadLinePolicy::Skip`] it
//! is counted and the first ones are kept in the report; under [`BadLinePolicy::Reject`]
//! reading stops with [`IngestError::BadLine`]. No input makes the reader panic.
//!
//! # Speed
//!
//! Lines are read with `read_until` from a 1 MiB buffer into one reused byte buffer and
//! checked as UTF-8 in place; a document costs the allocation of its title and body and
//! nothing else.

mod bad_line;
mod compression;
mod document;
mod error;
mod format;
mod input;
mod json_lines;
mod line_reader;
mod reader;
mod report;
mod tab_separated;

#[cfg(test)]
mod tests;

pub use bad_line::{BadLine, BadLinePolicy, BadLineReason, SkippedLine};
pub use document::Document;
pub use error::IngestError;
pub use format::InputFormat;
pub use input::Input;
pub use reader::{DocumentReader, ReaderOptions};
pub use report::IngestReport;
