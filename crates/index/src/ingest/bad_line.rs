//! Lines that are not documents: where they are, why they were refused, and what to do with
//! them.
//!
//! A corpus of hundreds of thousands of lines nearly always holds a few broken ones (a stray
//! newline inside a body, a truncated last line). Whether one should stop the run is the
//! caller's choice, so the reader either skips and reports them or stops at the first.

use std::fmt;

use super::input::Input;

/// What the reader does with a line that is not a document.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum BadLinePolicy {
    /// Count the line, keep it as an example in the [`IngestReport`](super::IngestReport) and
    /// go on.
    #[default]
    Skip,
    /// Stop with [`IngestError::BadLine`](super::IngestError::BadLine).
    Reject,
}

/// A line that is not a document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadLine {
    /// The input it was read from.
    pub file: Input,
    /// Its line number in that input, from 1 (a luceneutil header is line 1).
    pub line: u64,
    /// Why it is not a document.
    pub reason: BadLineReason,
}

/// A skipped line as reports show it: where it is and why, as text.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct SkippedLine {
    /// The input, as it was named (`<stdin>` for standard input).
    pub file: String,
    /// Its line number, from 1.
    pub line: u64,
    /// Why it is not a document.
    pub reason: String,
}

impl From<&BadLine> for SkippedLine {
    fn from(bad_line: &BadLine) -> SkippedLine {
        SkippedLine {
            file: bad_line.file.to_string(),
            line: bad_line.line,
            reason: bad_line.reason.to_string(),
        }
    }
}

impl fmt::Display for SkippedLine {
    /// `file:line: reason`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.file, self.line, self.reason)
    }
}

impl fmt::Display for BadLine {
    /// `file:line: reason`, the form editors and `grep -n` use.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.file, self.line, self.reason)
    }
}

/// Why a line is not a document.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BadLineReason {
    /// The line is not UTF-8.
    #[error("invalid UTF-8 after byte {valid_up_to}")]
    InvalidUtf8 {
        /// The length of the line's valid UTF-8 prefix.
        valid_up_to: usize,
    },
    /// The line is empty (or holds only `\r`).
    #[error("empty line")]
    Empty,
    /// A tab-separated line has too few fields for its layout.
    #[error("expected {expected} tab-separated fields, found {found}")]
    TooFewFields {
        /// The fields the layout needs: 2 for `title<TAB>body`, 3 for luceneutil.
        expected: usize,
        /// The fields the line has.
        found: usize,
    },
    /// A JSON line is not a JSON object or does not parse.
    #[error("invalid JSON: {message}")]
    InvalidJson {
        /// The parser's message.
        message: String,
    },
    /// A JSON document does not fit the index's mapping (or its id is not usable).
    #[error("document{} does not fit the mapping: {reason}", id.as_ref().map(|id| format!(" {id:?}")).unwrap_or_default())]
    DoesNotFit {
        /// The id the document states, if any.
        id: Option<String>,
        /// The field and what is wrong with it.
        reason: String,
    },
    /// The line is longer than [`ReaderOptions::max_line_bytes`](super::ReaderOptions).
    #[error("line longer than {limit} bytes")]
    TooLong {
        /// The limit it exceeded.
        limit: usize,
    },
}
