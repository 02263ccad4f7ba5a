//! End-to-end tests of [`DocumentReader`] on files: formats, compressions, several inputs,
//! bad lines, and arbitrary bytes.

use std::io::Write;
use std::path::{Path, PathBuf};

use proptest::prelude::*;
use tempfile::TempDir;

use super::*;

/// Writes `content` to `name` in `dir`, compressed as the extension says, in two streams (two
/// xz streams, two gzip members, two zstd frames) when `content` has more than one line, so
/// that the multi-stream decoders are exercised.
fn write_input(dir: &TempDir, name: &str, content: &[u8]) -> PathBuf {
    let path = dir.path().join(name);
    let split = content
        .iter()
        .position(|&byte| byte == b'\n')
        .map_or(content.len(), |newline| newline + 1);
    let (first, second) = content.split_at(split);
    let mut file = Vec::new();
    for part in [first, second] {
        if part.is_empty() && !file.is_empty() {
            continue;
        }
        file.extend(compress(&path, part));
    }
    std::fs::write(&path, file).unwrap();
    path
}

fn compress(path: &Path, part: &[u8]) -> Vec<u8> {
    match path.extension().and_then(|extension| extension.to_str()) {
        Some("xz") => {
            let mut encoder = liblzma::write::XzEncoder::new(Vec::new(), 1);
            encoder.write_all(part).unwrap();
            encoder.finish().unwrap()
        }
        Some("gz") => {
            let mut encoder =
                flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            encoder.write_all(part).unwrap();
            encoder.finish().unwrap()
        }
        Some("zst") => zstd::encode_all(part, 1).unwrap(),
        _ => part.to_vec(),
    }
}

fn reader(paths: &[&Path], options: ReaderOptions) -> DocumentReader {
    DocumentReader::new(paths.iter().map(|&path| Input::from_arg(path)), options).unwrap()
}

/// Every document of `paths`, and the report, under `options`.
fn read_all(paths: &[&Path], options: ReaderOptions) -> (Vec<Document>, IngestReport) {
    let mut reader = reader(paths, options);
    let documents = reader.by_ref().collect::<Result<Vec<_>, _>>().unwrap();
    (documents, reader.into_report())
}

/// The default options, but reading an input to its end however many of its lines are bad.
fn accepting_bad_inputs() -> ReaderOptions {
    ReaderOptions {
        refuse_non_documents: false,
        ..ReaderOptions::default()
    }
}

/// The text values of a JSON document.
fn texts(document: &Document) -> Vec<&str> {
    let json = document.json.as_ref().expect("a JSON document");
    json.fields.texts.iter().map(String::as_str).collect()
}

fn document(title: &str, body: &str) -> Document {
    Document {
        id: None,
        title: title.to_owned(),
        body: body.to_owned(),
        json: None,
    }
}

fn with_format(format: InputFormat) -> ReaderOptions {
    ReaderOptions {
        format,
        ..ReaderOptions::default()
    }
}

/// (file name, line, reason) of each bad line kept in `report`.
fn bad_lines(report: &IngestReport) -> Vec<(String, u64, BadLineReason)> {
    report
        .bad_lines
        .iter()
        .map(|bad| {
            let Input::Path(path) = &bad.file else {
                panic!("bad line from standard input");
            };
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, bad.line, bad.reason.clone())
        })
        .collect()
}

const CORPUS_LINES: &str = "Anarchism\tAnarchism is a political philosophy.\nAlbedo\tAlbedo is the fraction of light.\nA\t\n";

fn corpus_documents() -> Vec<Document> {
    vec![
        document("Anarchism", "Anarchism is a political philosophy."),
        document("Albedo", "Albedo is the fraction of light."),
        document("A", ""),
    ]
}

#[test]
fn tsv_in_every_compression_reads_the_same_documents() {
    let dir = TempDir::new().unwrap();
    for name in ["c.txt", "c.txt.xz", "c.txt.gz", "c.txt.zst"] {
        let path = write_input(&dir, name, CORPUS_LINES.as_bytes());
        for format in [InputFormat::Auto, InputFormat::Tsv] {
            let (documents, report) = read_all(&[&path], with_format(format));
            assert_eq!(documents, corpus_documents(), "{name} as {format}");
            assert_eq!(report.documents, 3);
            assert_eq!(report.bad_line_count, 0);
            assert_eq!(report.bytes_read, CORPUS_LINES.len() as u64);
        }
    }
}

#[test]
fn luceneutil_skips_its_header_and_counts_it_as_line_one() {
    let dir = TempDir::new().unwrap();
    let content = "FIELDS_HEADER_INDICATOR###\ttitle\ttimestamp\ttext\n\
                   Anarchism\t30-APR-2012 03:25:17.000\tAnarchism is a philosophy.\n\
                   no date\tbody\n";
    let path = write_input(&dir, "lu.txt.gz", content.as_bytes());
    let (documents, report) = read_all(&[&path], with_format(InputFormat::Luceneutil));
    assert_eq!(
        documents,
        [document("Anarchism", "Anarchism is a philosophy.")]
    );
    let too_few = BadLineReason::TooFewFields {
        expected: 3,
        found: 2,
    };
    assert_eq!(bad_lines(&report), [("lu.txt.gz".to_owned(), 3, too_few)]);

    // Detected from the header: the line without a date is a bad line as above.
    let (documents, report) = read_all(&[&path], with_format(InputFormat::Auto));
    assert_eq!(
        documents,
        [document("Anarchism", "Anarchism is a philosophy.")]
    );
    assert_eq!(report.bad_line_count, 1);
}

#[test]
fn json_lines_read_ids_titles_and_bodies() {
    let dir = TempDir::new().unwrap();
    let content = concat!(
        r#"{"id":"a1","title":"First","body":"one","lang":"en"}"#,
        "\n",
        r#"{"id":7,"text":"two"}"#,
        "\n",
        r#"  {"title":"Third","body":"three\ttabbed\nmultiline"}"#,
        "\n",
    );
    let path = write_input(&dir, "docs.jsonl.zst", content.as_bytes());
    let (documents, report) = read_all(&[&path], with_format(InputFormat::JsonLines));
    let ids: Vec<Option<&str>> = documents.iter().map(|d| d.id.as_deref()).collect();
    assert_eq!(ids, [Some("a1"), Some("7"), None]);
    // Text values in document order; the source as given.
    assert_eq!(texts(&documents[0]), ["a1", "First", "one", "en"]);
    assert_eq!(texts(&documents[1]), ["7", "two"]);
    assert_eq!(texts(&documents[2]), ["Third", "three\ttabbed\nmultiline"]);
    let source = &documents[2].json.as_ref().unwrap().source;
    assert_eq!(
        source,
        r#"  {"title":"Third","body":"three\ttabbed\nmultiline"}"#
    );
    assert_eq!(report.bad_line_count, 0);
}

#[test]
fn auto_decides_each_file_s_format_from_its_first_line() {
    let dir = TempDir::new().unwrap();
    // A title<TAB>body file: a later JSON line is a bad line, and a body's tabs are text (its
    // second field is no date).
    let tsv = write_input(
        &dir,
        "mixed.xz",
        "T1\tb1\n{\"title\":\"T2\",\"body\":\"b2\"}\nT3\tdate\tb3\n".as_bytes(),
    );
    // A JSON-lines file after it is read as JSON lines: the format is the file's own.
    let json = write_input(
        &dir,
        "docs.jsonl",
        b"{\"title\":\"J\",\"body\":\"j\"}\nT\tb\n",
    );
    let (documents, report) = read_all(&[&tsv, &json], accepting_bad_inputs());
    assert_eq!(
        documents[..2],
        [document("T1", "b1"), document("T3", "date\tb3")]
    );
    assert_eq!(texts(&documents[2]), ["J", "j"]);
    assert_eq!(documents.len(), 3);
    let lines: Vec<(String, u64)> = bad_lines(&report)
        .into_iter()
        .map(|(file, line, _)| (file, line))
        .collect();
    assert_eq!(
        lines,
        [("mixed.xz".to_owned(), 2), ("docs.jsonl".to_owned(), 2)]
    );
}

#[test]
fn an_input_mostly_of_bad_lines_is_refused() {
    let dir = TempDir::new().unwrap();
    let path = write_input(&dir, "listing.txt", b"one\tdocument\nls\ncat\n");
    let mut listing = reader(&[&path], ReaderOptions::default());
    assert_eq!(
        listing.next_document().unwrap(),
        Some(document("one", "document"))
    );
    let error = listing.next_document().unwrap_err();
    assert!(
        matches!(
            error,
            IngestError::NotDocuments {
                bad_lines: 2,
                lines: 3,
                ..
            }
        ),
        "{error}"
    );
    // Without a document, refused after its first 1,000 lines, not at its end.
    let text = "no tab\n".repeat(5000);
    let path = write_input(&dir, "binary.txt", text.as_bytes());
    let error = reader(&[&path], ReaderOptions::default())
        .next_document()
        .unwrap_err();
    assert!(
        matches!(error, IngestError::NotDocuments { lines: 1000, .. }),
        "{error}"
    );
    // Half bad is still documents.
    let path = write_input(&dir, "half.txt", b"A\ta\nbad\n");
    let (documents, _) = read_all(&[&path], ReaderOptions::default());
    assert_eq!(documents, [document("A", "a")]);
}

#[test]
fn several_inputs_are_read_in_order_with_their_own_line_numbers() {
    let dir = TempDir::new().unwrap();
    let first = write_input(&dir, "1.txt", b"A\ta\n\nB\tb\n");
    let second = write_input(&dir, "2.txt.xz", b"no tab\nC\tc");
    let third = write_input(&dir, "3.txt", b"");
    let (documents, report) = read_all(&[&first, &third, &second], ReaderOptions::default());
    let titles: Vec<&str> = documents.iter().map(|doc| doc.title.as_str()).collect();
    assert_eq!(titles, ["A", "B", "C"]);
    let no_tab = BadLineReason::TooFewFields {
        expected: 2,
        found: 1,
    };
    assert_eq!(
        bad_lines(&report),
        [
            ("1.txt".to_owned(), 2, BadLineReason::Empty),
            ("2.txt.xz".to_owned(), 1, no_tab),
        ]
    );
    assert_eq!(report.bytes_read, 9 + 10);
}

/// One line for each kind of bad line, between good ones.
const BAD_LINES: &[u8] = b"good\t1\n\
    bad \xff utf-8\tx\n\
    {\"title\": \"no body\"}\n\
    {\"body\": \"unterminated\n\
    \n\
    \r\n\
    only a title\n\
    good\t2\n";

fn expected_bad_lines() -> Vec<(String, u64, BadLineReason)> {
    let name = "bad.txt".to_owned();
    let no_tab = BadLineReason::TooFewFields {
        expected: 2,
        found: 1,
    };
    vec![
        (
            name.clone(),
            2,
            BadLineReason::InvalidUtf8 { valid_up_to: 4 },
        ),
        // JSON in a title<TAB>body file (its first line says so) is a line without a tab.
        (name.clone(), 3, no_tab.clone()),
        (name.clone(), 4, no_tab.clone()),
        (name.clone(), 5, BadLineReason::Empty),
        (name.clone(), 6, BadLineReason::Empty),
        (
            name,
            7,
            BadLineReason::TooFewFields {
                expected: 2,
                found: 1,
            },
        ),
    ]
}

#[test]
fn skipped_bad_lines_are_reported_with_their_line_numbers() {
    let dir = TempDir::new().unwrap();
    let path = write_input(&dir, "bad.txt", BAD_LINES);
    let (documents, report) = read_all(&[&path], accepting_bad_inputs());
    assert_eq!(documents, [document("good", "1"), document("good", "2")]);
    assert_eq!(bad_lines(&report), expected_bad_lines());
    assert_eq!(report.bad_line_count, 6);
    assert_eq!(report.bytes_read, BAD_LINES.len() as u64);
    let shown = report.bad_lines[0].to_string();
    assert!(
        shown.ends_with("bad.txt:2: invalid UTF-8 after byte 4"),
        "{shown}"
    );
}

#[test]
fn the_report_keeps_a_bounded_number_of_examples_but_counts_all() {
    let dir = TempDir::new().unwrap();
    let path = write_input(&dir, "bad.txt", BAD_LINES);
    let options = ReaderOptions {
        max_bad_line_examples: 2,
        ..accepting_bad_inputs()
    };
    let (_, report) = read_all(&[&path], options);
    assert_eq!(report.bad_line_count, 6);
    assert_eq!(bad_lines(&report), expected_bad_lines()[..2]);
}

#[test]
fn a_rejected_bad_line_stops_the_reader_with_its_location() {
    let dir = TempDir::new().unwrap();
    let path = write_input(&dir, "bad.txt", BAD_LINES);
    let options = ReaderOptions {
        bad_lines: BadLinePolicy::Reject,
        ..ReaderOptions::default()
    };
    let mut reader = reader(&[&path], options);
    assert_eq!(reader.next_document().unwrap(), Some(document("good", "1")));
    let error = reader.next_document().unwrap_err();
    let IngestError::BadLine(bad_line) = &error else {
        panic!("expected a bad line, got {error}");
    };
    assert_eq!(bad_line.line, 2);
    assert_eq!(bad_line.file, Input::Path(path.clone()));
    assert!(
        error.to_string().contains("bad.txt:2: invalid UTF-8"),
        "{error}"
    );
    // The message says how to skip bad lines instead, in the command line's words.
    assert!(
        error
            .to_string()
            .contains("without it they are skipped and counted"),
        "{error}"
    );
    assert_eq!(reader.next_document().unwrap(), None);
    assert!(reader.next().is_none());
    assert_eq!(reader.report().bad_line_count, 1);
    assert_eq!(reader.report().documents, 1);
}

#[test]
fn crlf_line_ends_and_a_byte_order_mark_are_stripped() {
    let dir = TempDir::new().unwrap();
    let path = write_input(&dir, "crlf.txt.gz", b"\xef\xbb\xbfA\ta\r\nB\tb\r\nC\tc\r\n");
    let (documents, report) = read_all(&[&path], ReaderOptions::default());
    assert_eq!(
        documents,
        [document("A", "a"), document("B", "b"), document("C", "c")]
    );
    let path = write_input(&dir, "crlf.jsonl", b"\xef\xbb\xbf{\"body\":\"c\"}\r\n");
    let (documents, _) = read_all(&[&path], ReaderOptions::default());
    assert_eq!(documents.len(), 1);
    assert_eq!(texts(&documents[0]), ["c"]);
    assert_eq!(report.bad_line_count, 0);
}

#[test]
fn a_line_over_the_limit_is_a_bad_line_and_the_next_one_is_read() {
    let dir = TempDir::new().unwrap();
    let long = format!("T\t{}\nshort\tline\n", "x".repeat(5000));
    let path = write_input(&dir, "long.txt", long.as_bytes());
    let options = ReaderOptions {
        max_line_bytes: 1000,
        ..ReaderOptions::default()
    };
    let (documents, report) = read_all(&[&path], options);
    assert_eq!(documents, [document("short", "line")]);
    let too_long = BadLineReason::TooLong { limit: 1000 };
    assert_eq!(bad_lines(&report), [("long.txt".to_owned(), 1, too_long)]);
    assert_eq!(report.bytes_read, long.len() as u64);
}

#[test]
fn batches_hold_at_most_the_requested_number_of_documents() {
    let dir = TempDir::new().unwrap();
    let path = write_input(&dir, "c.txt", CORPUS_LINES.as_bytes());
    let mut reader = reader(&[&path], ReaderOptions::default());
    let mut batch = Vec::new();
    assert_eq!(reader.next_batch(0, &mut batch).unwrap(), 0);
    assert_eq!(reader.next_batch(2, &mut batch).unwrap(), 2);
    assert_eq!(reader.next_batch(2, &mut batch).unwrap(), 1);
    assert_eq!(batch, corpus_documents());
    assert_eq!(reader.next_batch(2, &mut batch).unwrap(), 0);
    assert_eq!(batch.len(), 3);
}

#[test]
fn inputs_that_cannot_be_read_are_refused_before_reading_starts() {
    let dir = TempDir::new().unwrap();
    let good = write_input(&dir, "good.txt", CORPUS_LINES.as_bytes());
    let missing = dir.path().join("missing.txt");
    let bzip2 = write_input(&dir, "c.txt.bz2", b"BZh9");
    let options = ReaderOptions::default;

    let inputs = [Input::from_arg(&good), Input::from_arg(&missing)];
    let error = DocumentReader::new(inputs, options()).err().unwrap();
    assert!(
        matches!(&error, IngestError::Io { input, .. } if *input == Input::Path(missing.clone()))
    );
    assert!(error.to_string().contains("missing.txt"), "{error}");

    let error = DocumentReader::new([Input::from_arg(dir.path())], options())
        .err()
        .unwrap();
    assert!(error.to_string().contains("is a directory"), "{error}");

    let error = DocumentReader::new([Input::from_arg(&bzip2)], options())
        .err()
        .unwrap();
    assert!(
        matches!(&error, IngestError::UnsupportedCompression { extension, .. } if extension == "bz2")
    );
}

#[test]
fn corrupt_and_truncated_compressed_files_are_io_errors() {
    let dir = TempDir::new().unwrap();
    let content = CORPUS_LINES.repeat(50);
    for name in ["t.xz", "t.gz", "t.zst"] {
        let whole = compress(Path::new(name), content.as_bytes());
        let truncated = dir.path().join(format!("truncated-{name}"));
        std::fs::write(&truncated, &whole[..whole.len() / 2]).unwrap();
        let garbage = dir.path().join(format!("garbage-{name}"));
        std::fs::write(&garbage, CORPUS_LINES).unwrap();
        for path in [truncated, garbage] {
            let mut reader = reader(&[&path], ReaderOptions::default());
            let error = reader.by_ref().find_map(Result::err);
            let Some(IngestError::Io { input, .. }) = error else {
                panic!("{}: expected an I/O error, got {error:?}", path.display());
            };
            assert_eq!(input, Input::Path(path));
            assert!(reader.next().is_none());
        }
    }
}

#[test]
fn the_reader_can_move_to_another_thread() {
    fn assert_send<T: Send>() {}
    assert_send::<DocumentReader>();
    assert_send::<IngestError>();
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn arbitrary_bytes_never_panic_and_every_line_is_accounted_for(
        bytes in proptest::collection::vec(
            prop_oneof![
                4 => any::<u8>(),
                2 => Just(b'\n'),
                2 => Just(b'\t'),
                1 => Just(b'\r'),
                1 => Just(b'{'),
                1 => Just(b'"'),
            ],
            0..400,
        ),
        format in proptest::sample::select(InputFormat::ALL.to_vec()),
        max_line_bytes in 1usize..64,
    ) {
        let dir = TempDir::new().unwrap();
        let path = write_input(&dir, "random.txt", &bytes);
        let options = ReaderOptions { format, max_line_bytes, ..accepting_bad_inputs() };
        let (documents, report) = read_all(&[&path], options);
        let lines = bytes.split(|&byte| byte == b'\n').count()
            - usize::from(bytes.is_empty() || bytes.ends_with(b"\n"));
        prop_assert_eq!(documents.len() as u64, report.documents);
        prop_assert_eq!(report.documents + report.bad_line_count, lines as u64);
        prop_assert_eq!(report.bytes_read, bytes.len() as u64);

        let rejecting = ReaderOptions { bad_lines: BadLinePolicy::Reject, ..options };
        let until_error = reader(&[&path], rejecting).take_while(Result::is_ok).count();
        prop_assert!(until_error as u64 <= report.documents);

        // Refusing inputs that are not documents: the reader stops with that error exactly
        // when bad lines outnumber the documents.
        let refusing = ReaderOptions { refuse_non_documents: true, ..options };
        let result: Result<Vec<_>, _> = reader(&[&path], refusing).collect();
        let mostly_bad = report.documents > 0 && report.bad_line_count > report.documents
            || report.documents == 0 && report.bad_line_count >= 1000;
        match result {
            Ok(read) => {
                prop_assert!(!mostly_bad);
                prop_assert_eq!(read, documents);
            }
            Err(error) => {
                prop_assert!(mostly_bad, "{}", error);
                prop_assert!(matches!(error, IngestError::NotDocuments { .. }), "{}", error);
            }
        }
    }

    #[test]
    fn arbitrary_bytes_in_a_compressed_file_never_panic(
        bytes in proptest::collection::vec(any::<u8>(), 0..200),
        extension in proptest::sample::select(vec!["xz", "gz", "zst"]),
        magic in any::<bool>(),
    ) {
        // With the magic bytes in front, the decoder gets past the header check.
        let magic: &[u8] = match (magic, extension) {
            (false, _) => b"",
            (true, "xz") => b"\xfd7zXZ\x00",
            (true, "gz") => b"\x1f\x8b",
            (true, _) => b"\x28\xb5\x2f\xfd",
        };
        let dir = TempDir::new().unwrap();
        let path = dir.path().join(format!("random.{extension}"));
        std::fs::write(&path, [magic, &bytes].concat()).unwrap();
        let reader = reader(&[&path], ReaderOptions::default());
        for result in reader {
            let is_io_error = matches!(result, Err(IngestError::Io { .. }));
            prop_assert!(result.is_ok() || is_io_error, "{:?}", result);
        }
    }
}
