//! Lines of one input, read into a buffer that is reused from line to line.
//!
//! `read_until` into a reused `Vec<u8>` costs no allocation per line, and checking UTF-8 after
//! the fact lets an invalid line be reported instead of ending the input as `read_line` would.
//! A line's length is bounded, so that an input without newlines (a binary file given by
//! mistake) costs a bounded buffer rather than all memory.

use std::io::{self, BufRead, Read};

/// The UTF-8 byte-order mark, dropped from the start of an input.
const BYTE_ORDER_MARK: &[u8] = b"\xef\xbb\xbf";

/// Reads the lines of an input.
pub(crate) struct LineReader<R> {
    inner: R,
    max_line_bytes: usize,
    line_number: u64,
}

/// Where the line [`LineReader::next_line`] just read was, and whether it fit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LineInfo {
    /// Its line number, from 1.
    pub(crate) number: u64,
    /// The bytes it took in the input, line terminator included.
    pub(crate) bytes: u64,
    /// Whether it was longer than the limit, in which case the buffer is left empty.
    pub(crate) too_long: bool,
}

impl<R: BufRead> LineReader<R> {
    /// Reads the lines of `inner`; lines longer than `max_line_bytes`, terminator excluded, are
    /// reported as too long.
    pub(crate) fn new(inner: R, max_line_bytes: usize) -> LineReader<R> {
        LineReader {
            inner,
            max_line_bytes,
            line_number: 0,
        }
    }

    /// Reads the next line into `line`, without its `\n` or `\r\n` (or a lone `\r` before the
    /// end of the input), and without a byte-order mark at the start of the input. `None` at
    /// the end of the input.
    pub(crate) fn next_line(&mut self, line: &mut Vec<u8>) -> io::Result<Option<LineInfo>> {
        line.clear();
        // Room for the longest line allowed plus "\r\n": a line that fills it is too long.
        let limit = u64::try_from(self.max_line_bytes)
            .unwrap_or(u64::MAX)
            .saturating_add(2);
        let read = (&mut self.inner).take(limit).read_until(b'\n', line)?;
        if read == 0 {
            return Ok(None);
        }
        self.line_number += 1;
        let mut bytes = read as u64;
        let terminated = line.last() == Some(&b'\n');
        if !terminated && bytes == limit {
            bytes += self.skip_rest_of_line()?;
        }
        if terminated {
            line.pop();
        }
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        if self.line_number == 1 && line.starts_with(BYTE_ORDER_MARK) {
            line.drain(..BYTE_ORDER_MARK.len());
        }
        let too_long = line.len() > self.max_line_bytes;
        if too_long {
            line.clear();
        }
        Ok(Some(LineInfo {
            number: self.line_number,
            bytes,
            too_long,
        }))
    }

    /// Consumes the input up to and including the next `\n` and returns how many bytes that
    /// was.
    fn skip_rest_of_line(&mut self) -> io::Result<u64> {
        let mut skipped = 0;
        loop {
            let available = match self.inner.fill_buf() {
                Ok(available) => available,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                Err(error) => return Err(error),
            };
            if available.is_empty() {
                return Ok(skipped);
            }
            let (consumed, found) = match available.iter().position(|&byte| byte == b'\n') {
                Some(newline) => (newline + 1, true),
                None => (available.len(), false),
            };
            self.inner.consume(consumed);
            skipped += consumed as u64;
            if found {
                return Ok(skipped);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every line of `input` as (text, info), with the limit `max_line_bytes`.
    fn lines(input: &[u8], max_line_bytes: usize) -> Vec<(String, LineInfo)> {
        // A tiny buffer, so that long lines span many refills.
        let mut reader = LineReader::new(io::BufReader::with_capacity(3, input), max_line_bytes);
        let mut line = Vec::new();
        let mut lines = Vec::new();
        while let Some(info) = reader.next_line(&mut line).unwrap() {
            lines.push((String::from_utf8(line.clone()).unwrap(), info));
        }
        lines
    }

    fn info(number: u64, bytes: u64, too_long: bool) -> LineInfo {
        LineInfo {
            number,
            bytes,
            too_long,
        }
    }

    #[test]
    fn terminators_are_stripped_and_counted() {
        let lines = lines(b"a\nbc\r\n\n\r\nlast", 100);
        let expected = [
            ("a", info(1, 2, false)),
            ("bc", info(2, 4, false)),
            ("", info(3, 1, false)),
            ("", info(4, 2, false)),
            ("last", info(5, 4, false)),
        ];
        let expected: Vec<(String, LineInfo)> = expected
            .iter()
            .map(|&(text, info)| (text.to_owned(), info))
            .collect();
        assert_eq!(lines, expected);
    }

    #[test]
    fn only_one_carriage_return_is_stripped() {
        assert_eq!(lines(b"a\r\r\n", 100)[0].0, "a\r");
        assert_eq!(lines(b"a\r", 100)[0].0, "a");
    }

    #[test]
    fn a_byte_order_mark_is_dropped_from_the_first_line_only() {
        let lines = lines(b"\xef\xbb\xbfa\n\xef\xbb\xbfb\n", 100);
        assert_eq!(lines[0], ("a".to_owned(), info(1, 5, false)));
        assert_eq!(lines[1].0, "\u{feff}b");
    }

    #[test]
    fn long_lines_are_skipped_whole_and_reading_goes_on() {
        let input = b"12345\n123456\n1234567890123\r\n12345\r\n123456";
        let lines = lines(input, 5);
        let infos: Vec<LineInfo> = lines.iter().map(|(_, info)| *info).collect();
        assert_eq!(
            infos,
            [
                info(1, 6, false),
                info(2, 7, true),
                info(3, 15, true),
                info(4, 7, false),
                info(5, 6, true),
            ]
        );
        assert!(lines
            .iter()
            .all(|(text, info)| info.too_long == text.is_empty()));
        let total: u64 = infos.iter().map(|info| info.bytes).sum();
        assert_eq!(total, input.len() as u64);
    }

    #[test]
    fn an_empty_input_has_no_lines() {
        assert!(lines(b"", 10).is_empty());
    }
}
