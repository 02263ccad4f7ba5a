//! [`InputFormat`]: how a line becomes a document, chosen by the caller or line by line.

use std::fmt;
use std::str::FromStr;

use super::bad_line::BadLineReason;
use super::document::Document;
use super::error::IngestError;
use super::json_lines;
use super::tab_separated::{self, Layout};
use crate::schema::Mapper;

/// The layout of the input's lines.
///
/// Every layout reads one document per line. A luceneutil header line
/// (`FIELDS_HEADER_INDICATOR###...`) is skipped by all but [`InputFormat::JsonLines`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum InputFormat {
    /// Detected once per input file from its first document line, never line by line: a
    /// luceneutil header or a `title<TAB>date<TAB>body` line whose second field is a
    /// luceneutil date (`30-APR-2012 03:25:17.000`) makes the file [`InputFormat::Luceneutil`],
    /// a line starting with `{` [`InputFormat::JsonLines`], any other line with a tab
    /// [`InputFormat::Tsv`] (its body keeps its tabs). Every later line of the file is read in
    /// that format, and one that does not fit it is a bad line. Lines before the first that
    /// decides (empty, not UTF-8, without a tab) are bad lines.
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

    /// The format of a file whose first line that decides is `line` (see
    /// [`InputFormat::Auto`]); `None` if `line` decides nothing (empty, or no tab and no `{`).
    pub(crate) fn detect(line: &str) -> Option<InputFormat> {
        if line.starts_with(tab_separated::LUCENEUTIL_HEADER) {
            return Some(InputFormat::Luceneutil);
        }
        if line.starts_with('{') {
            return Some(InputFormat::JsonLines);
        }
        let (_title, rest) = line.split_once('\t')?;
        let second = rest.split_once('\t').map(|(field, _)| field);
        Some(match second {
            Some(field) if tab_separated::is_luceneutil_date(field) => InputFormat::Luceneutil,
            _ => InputFormat::Tsv,
        })
    }

    /// The document on `line` (without its terminator), `None` for a header line. `Auto`
    /// reads the line as the format [`InputFormat::detect`] finds in it.
    pub(crate) fn parse_line(
        self,
        line: &str,
        mapper: &mut Mapper,
    ) -> Result<Option<Document>, BadLineReason> {
        if line.is_empty() {
            return Err(BadLineReason::Empty);
        }
        match self {
            InputFormat::Auto => match InputFormat::detect(line) {
                Some(format) => format.parse_line(line, mapper),
                None => tab_separated::parse(line, Layout::TitleBody),
            },
            InputFormat::Tsv => tab_separated::parse(line, Layout::TitleBody),
            InputFormat::Luceneutil => tab_separated::parse(line, Layout::TitleDateBody),
            InputFormat::JsonLines => json_lines::parse(line, mapper).map(Some),
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

    fn mapper() -> Mapper {
        Mapper::new(crate::schema::Mapping::default(), None)
    }

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
    fn a_line_shows_its_file_s_format() {
        let detect = InputFormat::detect;
        assert_eq!(
            detect(r#"{"title":"J","body":"b"}"#),
            Some(InputFormat::JsonLines)
        );
        assert_eq!(detect("T\tb"), Some(InputFormat::Tsv));
        assert_eq!(detect("T\tdate\tb"), Some(InputFormat::Tsv));
        let dated = "T\t30-APR-2012 03:25:17.000\tb";
        assert_eq!(detect(dated), Some(InputFormat::Luceneutil));
        let header = "FIELDS_HEADER_INDICATOR###\ttitle\ttimestamp\ttext";
        assert_eq!(detect(header), Some(InputFormat::Luceneutil));
        assert_eq!(detect("no tab"), None);
        assert_eq!(detect(""), None);
        let body = InputFormat::Auto
            .parse_line("T\tdate\tb", &mut mapper())
            .unwrap()
            .unwrap()
            .body;
        assert_eq!(body, "date\tb");
        let body = InputFormat::Auto
            .parse_line(dated, &mut mapper())
            .unwrap()
            .unwrap()
            .body;
        assert_eq!(body, "b");
    }

    #[test]
    fn a_forced_format_does_not_guess() {
        let line = "{not json}\tbody";
        assert_eq!(
            InputFormat::Tsv
                .parse_line(line, &mut mapper())
                .unwrap()
                .unwrap()
                .title,
            "{not json}"
        );
        assert!(matches!(
            InputFormat::Auto.parse_line(line, &mut mapper()),
            Err(BadLineReason::InvalidJson { .. })
        ));
        assert!(matches!(
            InputFormat::JsonLines.parse_line("T\tb", &mut mapper()),
            Err(BadLineReason::InvalidJson { .. })
        ));
    }

    #[test]
    fn empty_lines_are_bad_in_every_format() {
        for format in InputFormat::ALL {
            assert_eq!(
                format.parse_line("", &mut mapper()),
                Err(BadLineReason::Empty)
            );
        }
    }
}
