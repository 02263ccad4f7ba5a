//! Tab-separated documents: apcache's `title<TAB>body` corpus format and luceneutil's
//! `title<TAB>date<TAB>body` line files.

use super::bad_line::BadLineReason;
use super::document::Document;

/// How luceneutil's line files begin (`FIELDS_HEADER_INDICATOR###<TAB>title<TAB>...`). Such a
/// line is never a document, wherever it appears, so that concatenated line files read well.
pub(crate) const LUCENEUTIL_HEADER: &str = "FIELDS_HEADER_INDICATOR###";

/// Which field holds what.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Layout {
    /// `title<TAB>body`; the body runs to the end of the line, tabs included.
    TitleBody,
    /// `title<TAB>date<TAB>body`; the date is dropped and the body runs to the end of the
    /// line.
    TitleDateBody,
}

/// Whether `field` is a date as luceneutil's line files write it: `30-APR-2012 03:25:17.000`.
pub(crate) fn is_luceneutil_date(field: &str) -> bool {
    let b = field.as_bytes();
    let digits = |range: std::ops::Range<usize>| b[range].iter().all(u8::is_ascii_digit);
    b.len() == 24
        && digits(0..2)
        && b[2] == b'-'
        && b[3..6].iter().all(u8::is_ascii_uppercase)
        && b[6] == b'-'
        && digits(7..11)
        && b[11] == b' '
        && digits(12..14)
        && b[14] == b':'
        && digits(15..17)
        && b[17] == b':'
        && digits(18..20)
        && b[20] == b'.'
        && digits(21..24)
}

/// The document on `line`, `None` for a luceneutil header.
pub(crate) fn parse(line: &str, layout: Layout) -> Result<Option<Document>, BadLineReason> {
    if line.starts_with(LUCENEUTIL_HEADER) {
        return Ok(None);
    }
    let minimum_fields = match layout {
        Layout::TitleBody => 2,
        Layout::TitleDateBody => 3,
    };
    let too_few = |found| BadLineReason::TooFewFields {
        expected: minimum_fields,
        found,
    };
    let (title, rest) = line.split_once('\t').ok_or(too_few(1))?;
    let body = match (layout, rest.split_once('\t')) {
        (Layout::TitleBody, _) => rest,
        (Layout::TitleDateBody, Some((_date, body))) => body,
        (Layout::TitleDateBody, None) => return Err(too_few(2)),
    };
    Ok(Some(Document {
        id: None,
        title: title.to_owned(),
        body: body.to_owned(),
        json: None,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn document(title: &str, body: &str) -> Option<Document> {
        Some(Document {
            id: None,
            title: title.to_owned(),
            body: body.to_owned(),
            json: None,
        })
    }

    #[test]
    fn title_body_keeps_later_tabs_in_the_body() {
        assert_eq!(
            parse("T\tthe body", Layout::TitleBody),
            Ok(document("T", "the body"))
        );
        assert_eq!(
            parse("T\ta\tb", Layout::TitleBody),
            Ok(document("T", "a\tb"))
        );
        assert_eq!(parse("\t", Layout::TitleBody), Ok(document("", "")));
    }

    #[test]
    fn luceneutil_drops_the_date() {
        let line = "Anarchism\t30-APR-2012 03:25:17.000\tAnarchism is\ta philosophy";
        let expected = document("Anarchism", "Anarchism is\ta philosophy");
        assert_eq!(parse(line, Layout::TitleDateBody), Ok(expected));
    }

    #[test]
    fn luceneutil_dates_are_told_from_text() {
        assert!(is_luceneutil_date("30-APR-2012 03:25:17.000"));
        for field in [
            "",
            "date",
            "30-apr-2012 03:25:17.000",
            "30-APR-2012 03:25:17",
            "30-APR-2012 03:25:17.0000",
            "a body with a tab",
        ] {
            assert!(!is_luceneutil_date(field), "{field:?}");
        }
    }

    #[test]
    fn missing_fields_say_how_many_were_expected() {
        let reason = |expected, found| Err(BadLineReason::TooFewFields { expected, found });
        assert_eq!(parse("no tab", Layout::TitleBody), reason(2, 1));
        assert_eq!(parse("no tab", Layout::TitleDateBody), reason(3, 1));
        assert_eq!(parse("T\tbody", Layout::TitleDateBody), reason(3, 2));
    }

    #[test]
    fn the_luceneutil_header_is_skipped_in_every_layout() {
        let header = "FIELDS_HEADER_INDICATOR###\ttitle\ttimestamp\ttext";
        for layout in [Layout::TitleBody, Layout::TitleDateBody] {
            assert_eq!(parse(header, layout), Ok(None));
        }
    }
}
