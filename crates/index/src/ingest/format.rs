//! [`InputFormat`]: how a line becomes a document, chosen by the caller or line by line.

use std::fmt;
use std::str::FromStr;

use super::bad_line::BadLineReason;
use super::document::Document;
use super::error::IngestError;
use super::json_lines;
use super::tab_separated::{self, Layout};

/// The layout of the input's lines.
///
/// Every layout reads one document per line. A luceneutil header line
/// (`FIELDS_HEADER_INDICATOR###...`) is skipped by all but [`InputFormat::JsonLines`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum InputFormat {
    /// Decided line by line: a line that starts with `{` is JSON; any other line is
    /// tab-separated, `title<TAB>body` if it has one tab and luceneutil's
    /// `title<TAB>date<TAB>body` if it has more. A line without a tab is a bad line: in a
    /// tab-separated corpus it is nearly always the tail of a body cut by a stray newline,
    /// which should be reported rather than indexed as a document of its own.
    ///
    /// A `title<TAB>body` corpus whose bodies may contain tabs, or whose titles may start with
    /// `{`, should be read as [`InputFormat::Tsv`].
    #[default]
    Auto,
    /// `title<TAB>body`; the body runs to the end of the line, tabs included.
    Tsv,
    /// luceneutil's `title<TAB>date<TAB>body`; the date is dropped.
    Luceneutil,
    /// One JSON object per line with a `body` (or `text`) string, an optional `title` string
    /// and an optional `id` string or number; other fields are ignored.
    JsonLines,
}

impl InputFormat {
    /// Every format, in the order of [`InputFormat::name`]'s documentation.
    pub const ALL: [InputFormat; 4] = [
        InputFormat::Auto,
        InputFormat::Tsv,
        InputFormat::Luceneutil,
        InputFormat::JsonLines,
    ];

    /// The format's name on the command line: `auto`, `tsv`, `luceneutil` or `jsonl`.
    pub fn name(self) -> &'static str {
        match self {
            InputFormat::Auto => "auto",
            InputFormat::Tsv => "tsv",
            InputFormat::Luceneutil => "luceneutil",
            InputFormat::JsonLines => "jsonl",
        }
    }

    /// The document on `line` (without its terminator), `None` for a header line.
    pub(crate) fn parse_line(self, line: &str) -> Result<Option<Document>, BadLineReason> {
        if line.is_empty() {
            return Err(BadLineReason::Empty);
        }
        match self {
            InputFormat::Auto if line.starts_with('{') => json_lines::parse(line).map(Some),
            InputFormat::Auto => tab_separated::parse(line, Layout::ByTabCount),
            InputFormat::Tsv => tab_separated::parse(line, Layout::TitleBody),
            InputFormat::Luceneutil => tab_separated::parse(line, Layout::TitleDateBody),
            InputFormat::JsonLines => json_lines::parse(line).map(Some),
        }
    }
}

impl fmt::Display for InputFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for InputFormat {
    type Err = IngestError;

    /// The format named `name` (see [`InputFormat::name`]).
    fn from_str(name: &str) -> Result<InputFormat, IngestError> {
        InputFormat::ALL
            .into_iter()
            .find(|format| format.name() == name)
            .ok_or_else(|| IngestError::UnknownFormat {
                name: name.to_owned(),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for format in InputFormat::ALL {
            assert_eq!(format.to_string().parse::<InputFormat>().ok(), Some(format));
        }
        let error = "xml".parse::<InputFormat>().unwrap_err();
        assert!(matches!(&error, IngestError::UnknownFormat { name } if name == "xml"));
        assert!(error.to_string().contains("auto, tsv, luceneutil or jsonl"));
    }

    #[test]
    fn auto_tells_json_from_tab_separated_line_by_line() {
        let json = InputFormat::Auto.parse_line(r#"{"title":"J","body":"b"}"#);
        assert_eq!(json.unwrap().unwrap().title, "J");
        let tsv = InputFormat::Auto.parse_line("T\tb");
        assert_eq!(tsv.unwrap().unwrap().title, "T");
        let luceneutil = InputFormat::Auto.parse_line("T\tdate\tb");
        assert_eq!(luceneutil.unwrap().unwrap().body, "b");
    }

    #[test]
    fn a_forced_format_does_not_guess() {
        let line = "{not json}\tbody";
        assert_eq!(
            InputFormat::Tsv.parse_line(line).unwrap().unwrap().title,
            "{not json}"
        );
        assert!(matches!(
            InputFormat::Auto.parse_line(line),
            Err(BadLineReason::InvalidJson { .. })
        ));
        assert!(matches!(
            InputFormat::JsonLines.parse_line("T\tb"),
            Err(BadLineReason::InvalidJson { .. })
        ));
    }

    #[test]
    fn empty_lines_are_bad_in_every_format() {
        for format in InputFormat::ALL {
            assert_eq!(format.parse_line(""), Err(BadLineReason::Empty));
        }
    }
}
