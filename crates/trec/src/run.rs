//! Run files: the ranked results of a set of topics, one line per retrieved document, in the
//! six columns `trec_eval` defined and every evaluation tool reads:
//!
//! ```text
//! 301 Q0 FBIS3-10082 1 14.672 apcache
//! qid Q0 docno       rank score tag
//! ```
//!
//! `Q0` is a constant kept for history. Ranks count from 1 in the order given. Scores are
//! written in full (Rust's shortest round-trip form of the `f32`), so that two documents
//! that differ in score never print alike; `trec_eval` ranks by score, breaking ties by docno,
//! so documents of exactly equal score may be evaluated in an order other than the run's.
//! The qid, the docno and the tag are single words: one holding whitespace (or nothing)
//! would shift the columns, and is refused.

use std::io::{self, Write};

/// Why a run line could not be written.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// A column would break the format.
    #[error("{what} {value:?} cannot go in a run file: it must be one word, without spaces")]
    NotAWord {
        /// Which column.
        what: &'static str,
        /// Its text.
        value: String,
    },
    /// A score that is not a number.
    #[error("topic {qid}, document {docno}: the score {score} is not a finite number")]
    BadScore {
        /// The topic.
        qid: String,
        /// The document.
        docno: String,
        /// The score.
        score: f32,
    },
    /// Writing failed.
    #[error("cannot write the run: {0}")]
    Io(#[from] io::Error),
}

/// Writes a run, one topic's ranking at a time.
///
/// ```
/// use apcache_trec::RunWriter;
///
/// let mut out = Vec::new();
/// let mut run = RunWriter::new(&mut out, "bm25").unwrap();
/// run.write_topic("301", [("d7", 2.5f32), ("d3", 1.25)]).unwrap();
/// assert_eq!(String::from_utf8(out).unwrap(), "301 Q0 d7 1 2.5 bm25\n301 Q0 d3 2 1.25 bm25\n");
/// ```
pub struct RunWriter<W: Write> {
    out: W,
    tag: String,
    lines: u64,
}

impl<W: Write> RunWriter<W> {
    /// A writer to `out` whose lines carry `tag`.
    ///
    /// # Errors
    ///
    /// [`RunError::NotAWord`] if the tag is empty or holds whitespace.
    pub fn new(out: W, tag: &str) -> Result<RunWriter<W>, RunError> {
        check_word("the run tag", tag)?;
        Ok(RunWriter {
            out,
            tag: tag.to_string(),
            lines: 0,
        })
    }

    /// Writes `qid`'s ranking: `(docno, score)` pairs, best first.
    ///
    /// # Errors
    ///
    /// [`RunError::NotAWord`] for a qid or docno that is empty or holds whitespace,
    /// [`RunError::BadScore`] for a score that is NaN or infinite, [`RunError::Io`] if
    /// writing fails. Lines before the bad one have been written.
    pub fn write_topic<D: AsRef<str>>(
        &mut self,
        qid: &str,
        ranking: impl IntoIterator<Item = (D, f32)>,
    ) -> Result<(), RunError> {
        check_word("the topic number", qid)?;
        for (rank, (docno, score)) in ranking.into_iter().enumerate() {
            let docno = docno.as_ref();
            check_word("the document id", docno)?;
            if !score.is_finite() {
                return Err(RunError::BadScore {
                    qid: qid.to_string(),
                    docno: docno.to_string(),
                    score,
                });
            }
            writeln!(
                self.out,
                "{qid} Q0 {docno} {} {score} {}",
                rank + 1,
                self.tag
            )?;
            self.lines += 1;
        }
        Ok(())
    }

    /// Lines written so far.
    pub fn lines(&self) -> u64 {
        self.lines
    }

    /// Flushes and returns the output.
    ///
    /// # Errors
    ///
    /// [`RunError::Io`] if flushing fails.
    pub fn finish(mut self) -> Result<W, RunError> {
        self.out.flush()?;
        Ok(self.out)
    }
}

fn check_word(what: &'static str, value: &str) -> Result<(), RunError> {
    if value.is_empty() || value.contains(char::is_whitespace) {
        return Err(RunError::NotAWord {
            what,
            value: value.to_string(),
        });
    }
    Ok(())
}
