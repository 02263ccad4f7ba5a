//! [`IngestReport`]: what a reader has read so far, for the indexer's summary.

use super::bad_line::BadLine;

/// Counts of what a [`DocumentReader`](super::DocumentReader) has read, and the first bad lines.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IngestReport {
    /// Documents returned.
    pub documents: u64,
    /// Bad lines met, skipped or rejected.
    pub bad_line_count: u64,
    /// The first bad lines, at most
    /// [`ReaderOptions::max_bad_line_examples`](super::ReaderOptions) of them.
    pub bad_lines: Vec<BadLine>,
    /// Bytes of text read, after decompression, line terminators included.
    pub bytes_read: u64,
}

impl IngestReport {
    /// Counts `bad_line` and keeps a copy if fewer than `max_examples` are kept.
    pub(crate) fn record_bad_line(&mut self, bad_line: &BadLine, max_examples: usize) {
        self.bad_line_count += 1;
        if self.bad_lines.len() < max_examples {
            self.bad_lines.push(bad_line.clone());
        }
    }
}
