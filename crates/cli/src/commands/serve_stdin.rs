//! `apcache serve-stdin`: the search-benchmark-game protocol, so that its clients and query
//! sets drive apcache as they drive other engines.
//!
//! Each input line is `COMMAND<TAB>query`; each gets one output line:
//! `COUNT` → the number of matching documents; `TOP_10`, `TOP_100`, `TOP_1000` → top-k
//! evaluation (pruned), printing 1; `TOP_10_COUNT`, `TOP_100_COUNT`, `TOP_1000_COUNT` → top-k
//! and the exact count, printing the count. Anything else gets `UNSUPPORTED`, and the reason
//! goes to standard error: an unknown command, a line that is not UTF-8, a query that does not
//! parse, and a query past the limits of `apcache serve` (16 KiB of text, 1,024 clauses: a
//! term counts each time it is written). A line past the text limit is skipped as it is read,
//! never held whole.
//!
//! Answers (and reasons) are flushed whenever no further input is waiting in the read buffer:
//! a client that sends a line and waits gets its answer at once, and a piped query file is
//! answered a buffer at a time, so an unsupported line costs no more system calls than a
//! supported one.

use std::io::{self, BufRead, Write};
use std::path::PathBuf;

use anyhow::Context;
use apcache_index::query::parse_query;
use apcache_index::search::Searcher;
use apcache_server::QueryLimits;
use clap::Args;

use apcache_cli::options::QueryArgs;

/// Options of `apcache serve-stdin`.
#[derive(Debug, Args)]
pub struct ServeStdinArgs {
    /// Index directory.
    dir: PathBuf,
    #[command(flatten)]
    query_args: QueryArgs,
    /// Serve an index that an interrupted build left (it holds only part of its input; refused
    /// without this flag). Its counts are printed.
    #[arg(long)]
    allow_partial: bool,
}

/// What a command asks for: top k and whether to count.
fn command(name: &str) -> Option<(usize, bool)> {
    Some(match name {
        "COUNT" => (0, true),
        "TOP_10" => (10, false),
        "TOP_100" => (100, false),
        "TOP_1000" => (1000, false),
        "TOP_10_COUNT" => (10, true),
        "TOP_100_COUNT" => (100, true),
        "TOP_1000_COUNT" => (1000, true),
        _ => return None,
    })
}

/// The longest command name, with room to spare, in bytes.
const MAX_COMMAND_BYTES: usize = 64;

/// The most bytes of a refused line that standard error shows.
const SHOWN_BYTES: usize = 200;

/// What [`read_line`] found.
#[derive(Debug, PartialEq, Eq)]
enum Line {
    /// A line, now in the buffer without its line end.
    Read,
    /// A line longer than the limit; the buffer holds its start, and the rest of it was
    /// skipped unread.
    TooLong,
}

/// Reads the next line of `input` into `buffer`, holding at most about `limit` bytes of it: a
/// longer line is consumed up to and including its line end without being stored. `None` at
/// the end of the input.
fn read_line(
    input: &mut impl BufRead,
    buffer: &mut Vec<u8>,
    limit: usize,
) -> io::Result<Option<Line>> {
    buffer.clear();
    // Room for a line of `limit` bytes and its `\r\n`.
    let cap = limit as u64 + 2;
    let read = io::Read::take(&mut *input, cap).read_until(b'\n', buffer)?;
    if read == 0 {
        return Ok(None);
    }
    let ended = buffer.last() == Some(&b'\n');
    if ended {
        buffer.pop();
        if buffer.last() == Some(&b'\r') {
            buffer.pop();
        }
    }
    if buffer.len() <= limit {
        return Ok(Some(Line::Read));
    }
    if !ended {
        skip_line(input)?;
    }
    Ok(Some(Line::TooLong))
}

/// Consumes `input` up to and including the next line end, or to its end.
fn skip_line(input: &mut impl BufRead) -> io::Result<()> {
    loop {
        let available = input.fill_buf()?;
        if available.is_empty() {
            return Ok(());
        }
        match available.iter().position(|&byte| byte == b'\n') {
            Some(at) => {
                input.consume(at + 1);
                return Ok(());
            }
            None => {
                let length = available.len();
                input.consume(length);
            }
        }
    }
}

/// Runs `apcache serve-stdin`.
pub fn run(args: ServeStdinArgs) -> anyhow::Result<()> {
    let reader = args.query_args.open(&args.dir, args.allow_partial)?;
    let analyzer = reader.analyzer();
    let searcher = Searcher::new(&reader);
    // The limits of `apcache serve`, so that a query set behaves the same on both.
    let limits = QueryLimits::default();
    let line_limit = MAX_COMMAND_BYTES + 1 + limits.max_query_bytes;
    let stdin = std::io::stdin();
    // A buffer of our own, to see whether more input is waiting (then nothing is flushed).
    let mut input = io::BufReader::with_capacity(64 * 1024, stdin.lock());
    let mut out = io::BufWriter::new(std::io::stdout().lock());
    let mut reasons = io::BufWriter::new(std::io::stderr().lock());
    let mut buffer = Vec::new();
    while let Some(line) =
        read_line(&mut input, &mut buffer, line_limit).context("cannot read standard input")?
    {
        let line = match line {
            Line::Read => {
                std::str::from_utf8(&buffer).map_err(|_| "the line is not valid UTF-8".to_owned())
            }
            Line::TooLong => Err(format!(
                "the line is longer than {line_limit} bytes; a query may have at most {} bytes",
                limits.max_query_bytes
            )),
        };
        let line = match line {
            Ok(line) => line,
            Err(reason) => {
                unsupported(
                    &mut out,
                    &mut reasons,
                    &String::from_utf8_lossy(&buffer),
                    &reason,
                )?;
                flush_if_idle(&input, &mut out, &mut reasons)?;
                continue;
            }
        };
        let answer = (|| -> Result<String, String> {
            let (name, text) = line
                .split_once('\t')
                .ok_or_else(|| "expected COMMAND<TAB>query".to_string())?;
            let (k, count) = command(name).ok_or_else(|| format!("unknown command {name}"))?;
            if text.len() > limits.max_query_bytes {
                return Err(format!(
                    "the query is {} bytes; at most {} are accepted",
                    text.len(),
                    limits.max_query_bytes
                ));
            }
            let query = parse_query(text, &analyzer, args.query_args.default_operator())
                .map_err(|e| e.to_string())?;
            query
                .check_clauses(limits.max_clauses)
                .map_err(|e| e.to_string())?;
            let result = searcher
                .search(&query, &args.query_args.options(k, count))
                .map_err(|e| e.to_string())?;
            Ok(if count {
                result.total_hits.to_string()
            } else {
                "1".to_string()
            })
        })();
        match answer {
            Ok(answer) => writeln!(out, "{answer}")?,
            Err(reason) => unsupported(&mut out, &mut reasons, line, &reason)?,
        }
        flush_if_idle(&input, &mut out, &mut reasons)?;
    }
    out.flush()?;
    reasons.flush()?;
    Ok(())
}

/// Flushes the answers, then the reasons, when no input is waiting in `input`'s buffer (the
/// next read may block on the client).
fn flush_if_idle<R>(
    input: &io::BufReader<R>,
    out: &mut impl Write,
    reasons: &mut impl Write,
) -> io::Result<()> {
    if input.buffer().is_empty() {
        out.flush()?;
        reasons.flush()?;
    }
    Ok(())
}

/// Answers `UNSUPPORTED` for `line` on `out`, with the reason on `reasons` (standard error),
/// where a long line is cut after [`SHOWN_BYTES`].
fn unsupported(
    out: &mut impl Write,
    reasons: &mut impl Write,
    line: &str,
    reason: &str,
) -> io::Result<()> {
    let mut end = line.len().min(SHOWN_BYTES);
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    let more = if end < line.len() { "…" } else { "" };
    writeln!(out, "UNSUPPORTED")?;
    writeln!(reasons, "UNSUPPORTED {:?}{more}: {reason}", &line[..end])
}

#[cfg(test)]
mod tests {
    use std::io::BufReader;

    use super::*;

    /// Every line of `input` read with `limit`, through a small buffer so that long lines span
    /// several refills.
    fn lines(input: &[u8], limit: usize) -> Vec<Result<Vec<u8>, Line>> {
        let mut input = BufReader::with_capacity(4, input);
        let mut buffer = Vec::new();
        let mut lines = Vec::new();
        while let Some(line) = read_line(&mut input, &mut buffer, limit).unwrap() {
            lines.push(match line {
                Line::Read => Ok(buffer.clone()),
                Line::TooLong => Err(line),
            });
        }
        lines
    }

    #[test]
    fn lines_are_read_as_bytes_without_their_line_end() {
        let input = b"a\n\xff\xfe\r\nlast";
        assert_eq!(
            lines(input, 10),
            [
                Ok(b"a".to_vec()),
                Ok(b"\xff\xfe".to_vec()),
                Ok(b"last".to_vec())
            ]
        );
        assert_eq!(lines(b"", 10), []);
        assert_eq!(lines(b"\n\n", 10), [Ok(vec![]), Ok(vec![])]);
    }

    #[test]
    fn a_long_line_is_skipped_and_the_next_one_read() {
        let long = "x".repeat(100);
        let input = format!("{long}\n12345\n123456\n{long}");
        assert_eq!(
            lines(input.as_bytes(), 5),
            [
                Err(Line::TooLong),
                Ok(b"12345".to_vec()),
                Err(Line::TooLong),
                Err(Line::TooLong),
            ]
        );
        // A line of exactly the limit, ended by `\r\n`, is whole.
        assert_eq!(
            lines(b"12345\r\nab", 5),
            [Ok(b"12345".to_vec()), Ok(b"ab".to_vec())]
        );
    }
}
