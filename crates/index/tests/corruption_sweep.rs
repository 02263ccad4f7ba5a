//! The corruption sweep: on a small index, one byte of one file is flipped at a time, and
//! then `check` runs, the index is opened, a set of queries runs and every stored document is
//! read. Every flip must be found by `check`; every query and document read must either fail
//! with an error or give exactly what the sound index gives (never a wrong answer); nothing
//! may panic. The files are every segment file (positions included) and the manifest.
//!
//! The test suite flips 40 bytes per file (the first and last 8 and 24 spread between:
//! `APCACHE_SWEEP_EDGE` and `APCACHE_SWEEP_POSITIONS`); the documented full sweep flips 2,000 spread positions and
//! the first and last 64 bytes of each file, and every byte of a file shorter than that:
//!
//! ```sh
//! APCACHE_SWEEP_POSITIONS=2000 APCACHE_SWEEP_EDGE=64 \
//!     cargo test --release -p apcache-index --test corruption_sweep -- --nocapture
//! ```

use std::path::{Path, PathBuf};

use apcache_index::analyzer::Analyzer;
use apcache_index::check::check_index;
use apcache_index::indexer::{build_index, IndexOptions};
use apcache_index::ingest::Input;
use apcache_index::query::{parse_query, DefaultOperator};
use apcache_index::search::{IndexReader, SearchOptions, Searcher};

/// Queries over common and rare terms, conjunctions, disjunctions and exclusions, so that
/// most terms' metadata and the longest lists are read.
const QUERIES: &[&str] = &[
    "the",
    "of",
    "and in",
    "+was +is",
    "album OR river OR city OR film OR football OR music OR war OR church",
    "+united +states -war",
    "(a OR his) AND (born OR released)",
    "zyzzyva",
    "\"of the\"",
    "\"united states\" OR \"new york\"~2",
    "+\"in the\"~1 -river",
];

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A small one-segment index of the sample's first documents.
fn build(dir: &Path) -> PathBuf {
    let sample = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/enwiki-sample.tsv");
    let text = std::fs::read_to_string(sample).unwrap();
    let head: String = text.lines().take(120).map(|l| format!("{l}\n")).collect();
    let input = dir.join("input.tsv");
    std::fs::write(&input, head).unwrap();
    let index = dir.join("index");
    build_index(
        vec![Input::from_arg(input)],
        &index,
        &IndexOptions::default(),
        |_, _| {},
    )
    .unwrap();
    index
}

/// Each query's answer (total and hits), every term's postings as the query path reads them
/// (its metadata and postings verified on first use) and every stored document, or the
/// error, printed.
fn answers(index: &Path) -> Vec<Result<String, String>> {
    let reader = match IndexReader::open(index) {
        Ok(reader) => reader,
        Err(e) => return vec![Err(e.to_string())],
    };
    let searcher = Searcher::new(&reader);
    let analyzer = Analyzer::english();
    let mut out = Vec::new();
    for text in QUERIES {
        let query = parse_query(text, &analyzer, DefaultOperator::Or).unwrap();
        for options in [
            SearchOptions {
                k: 10,
                count: true,
                ..SearchOptions::default()
            },
            SearchOptions {
                k: 0,
                count: true,
                ..SearchOptions::default()
            },
        ] {
            out.push(
                searcher
                    .search(&query, &options)
                    .map(|r| format!("{text}: {} {:?}", r.total_hits, r.hits))
                    .map_err(|e| e.to_string()),
            );
        }
    }
    for segment in reader.segments() {
        let mut terms = segment.dictionary().stream();
        let (mut docs, mut freqs) = (Vec::new(), Vec::new());
        while let Some((term, _)) = fst::Streamer::next(&mut terms) {
            let term = String::from_utf8_lossy(term).into_owned();
            out.push(match segment.lookup(&term) {
                Ok(Some(entry)) => segment
                    .read_postings(&entry, &mut docs, &mut freqs)
                    .map(|()| format!("{term}: {docs:?} {freqs:?}"))
                    .map_err(|e| e.to_string()),
                Ok(None) => Ok(format!("{term}: absent")),
                Err(e) => Err(e.to_string()),
            });
        }
        for local in 0..segment.meta().documents() {
            out.push(
                segment
                    .stored(local)
                    .map(|d| format!("{}: {}", d.title, d.body))
                    .map_err(|e| e.to_string()),
            );
        }
    }
    out
}

/// The positions to flip in a file of `len` bytes: the first and last `edge`, and `spread`
/// more spread evenly between; every byte when that covers the file.
fn positions(len: usize, spread: usize, edge: usize) -> Vec<usize> {
    if len <= spread + 2 * edge {
        return (0..len).collect();
    }
    let mut at: Vec<usize> = (0..edge).chain(len - edge..len).collect();
    let inner = len - 2 * edge;
    at.extend((0..spread).map(|i| edge + i * inner / spread));
    at.sort_unstable();
    at.dedup();
    at
}

#[derive(Default, Debug)]
struct Tally {
    flips: u64,
    found_by_check: u64,
    failed_to_open: u64,
    /// Flips that made at least one query, term read or document read fail.
    refused_by_reads: u64,
    answers_refused: u64,
    answers_equal: u64,
    wrong_answers: Vec<String>,
}

#[test]
fn every_flipped_byte_is_found_by_check_and_never_gives_a_wrong_answer() {
    let work = tempfile::tempdir().unwrap();
    let index = build(work.path());
    assert!(check_index(&index).unwrap().is_clean());
    let sound = answers(&index);
    assert!(sound.iter().all(Result::is_ok), "{sound:?}");

    let mut files: Vec<PathBuf> = std::fs::read_dir(&index)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap() != apcache_index::writer_lock::LOCK)
        .collect();
    files.sort();
    assert_eq!(
        files.len(),
        8,
        "a segment's six files, its positions and the manifest: {files:?}"
    );

    let spread = env_usize("APCACHE_SWEEP_POSITIONS", 24);
    let edge = env_usize("APCACHE_SWEEP_EDGE", 8);
    let mut total = Tally::default();
    for file in &files {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let original = std::fs::read(file).unwrap();
        let mut tally = Tally::default();
        for at in positions(original.len(), spread, edge) {
            let mut bytes = original.clone();
            bytes[at] ^= 1 << (at % 8);
            std::fs::write(file, &bytes).unwrap();
            tally.flips += 1;
            let report = check_index(&index);
            if report.map_or(true, |r| !r.is_clean()) {
                tally.found_by_check += 1;
            }
            let got = answers(&index);
            if got.len() == 1 && got[0].is_err() {
                tally.failed_to_open += 1;
            } else {
                assert_eq!(got.len(), sound.len(), "{name} byte {at}");
                if got.iter().any(Result::is_err) {
                    tally.refused_by_reads += 1;
                }
                for (got, want) in got.iter().zip(&sound) {
                    match got {
                        Err(_) => tally.answers_refused += 1,
                        Ok(text) if Ok(text) == want.as_ref() => tally.answers_equal += 1,
                        Ok(text) => tally.wrong_answers.push(format!(
                            "{name} byte {at}: {} instead of {}",
                            &text[..text.len().min(120)],
                            &want.as_ref().unwrap()[..120.min(want.as_ref().unwrap().len())]
                        )),
                    }
                }
            }
        }
        std::fs::write(file, &original).unwrap();
        eprintln!(
            "{name:>18}: {:>5} flips, {:>5} found by check, {:>5} failed to open, \
             {:>5} refused by reads, {:>6} answers refused, {:>8} equal, {} wrong",
            tally.flips,
            tally.found_by_check,
            tally.failed_to_open,
            tally.refused_by_reads,
            tally.answers_refused,
            tally.answers_equal,
            tally.wrong_answers.len()
        );
        total.flips += tally.flips;
        total.found_by_check += tally.found_by_check;
        total.failed_to_open += tally.failed_to_open;
        total.refused_by_reads += tally.refused_by_reads;
        total.answers_refused += tally.answers_refused;
        total.answers_equal += tally.answers_equal;
        total.wrong_answers.extend(tally.wrong_answers);
    }
    eprintln!(
        "{:>18}: {:>5} flips, {:>5} found by check, {:>5} failed to open, \
         {:>5} refused by reads, {:>6} answers refused, {:>8} equal, {} wrong",
        "all files",
        total.flips,
        total.found_by_check,
        total.failed_to_open,
        total.refused_by_reads,
        total.answers_refused,
        total.answers_equal,
        total.wrong_answers.len()
    );
    assert!(
        total.wrong_answers.is_empty(),
        "wrong answers: {:#?}",
        &total.wrong_answers[..total.wrong_answers.len().min(10)]
    );
    assert_eq!(total.found_by_check, total.flips, "flips check missed");
    // The sound index is whole again.
    assert_eq!(answers(&index), sound);
}
