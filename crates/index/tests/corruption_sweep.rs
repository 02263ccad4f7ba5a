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

/// A small index of the sample's first `documents` documents: one segment, or with
/// `segments` the unmerged segments of small flushes.
fn build(dir: &Path, documents: usize, segmented: bool) -> PathBuf {
    let sample = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/enwiki-sample.tsv");
    let text = std::fs::read_to_string(sample).unwrap();
    let head: String = text
        .lines()
        .take(documents)
        .map(|l| format!("{l}\n"))
        .collect();
    let input = dir.join("input.tsv");
    std::fs::write(&input, head).unwrap();
    let index = dir.join("index");
    let options = if segmented {
        IndexOptions {
            threads: 1,
            batch_docs: 40,
            memory_budget: 1 << 20,
            merge: false,
            ..IndexOptions::default()
        }
    } else {
        IndexOptions::default()
    };
    build_index(vec![Input::from_arg(input)], &index, &options, |_, _| {}).unwrap();
    index
}

/// How much of the index [`answers`] reads.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Reads {
    /// The queries, every term's postings and every stored document.
    Everything,
    /// The queries and their top hits' stored documents (an index too large to read whole
    /// after every flip).
    Queries,
}

/// Each query's answer (total and hits), every term's postings as the query path reads them
/// (its metadata and postings verified on first use) and every stored document, or the
/// error, printed.
fn answers(index: &Path, reads: Reads) -> Vec<Result<String, String>> {
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
            let answer = searcher
                .search(&query, &options)
                .map_err(|e| e.to_string())
                .and_then(|r| {
                    let mut line = format!("{text}: {} {:?}", r.total_hits, r.hits);
                    if reads == Reads::Queries {
                        // The hits' stored documents belong to the answer.
                        for hit in &r.hits {
                            let (segment, local) = reader.locate(hit.doc).ok_or("no segment")?;
                            let document = segment.stored(local).map_err(|e| e.to_string())?;
                            line.push_str(&format!(" | {}: {}", document.title, document.body));
                        }
                    }
                    Ok(line)
                });
            out.push(answer);
        }
    }
    if reads == Reads::Queries {
        return out;
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
    let index = build(work.path(), 120, false);
    let spread = env_usize("APCACHE_SWEEP_POSITIONS", 24);
    let edge = env_usize("APCACHE_SWEEP_EDGE", 8);
    sweep(&index, Some(8), Reads::Everything, |len| {
        positions(len, spread, edge)
    });
}

#[test]
fn flips_in_an_index_of_several_segments_are_found_and_never_answered() {
    let work = tempfile::tempdir().unwrap();
    let index = build(work.path(), 200, true);
    let segments = apcache_index::Manifest::load(&index)
        .unwrap()
        .segments
        .len();
    assert!(segments >= 3, "{segments} segments");
    let spread = env_usize("APCACHE_SWEEP_POSITIONS", 24) / 3;
    let edge = env_usize("APCACHE_SWEEP_EDGE", 8) / 2;
    sweep(&index, None, Reads::Everything, |len| {
        positions(len, spread, edge)
    });
}

/// Flips `APCACHE_SWEEP_FLIPS` (default 200) bytes at random places of the index in
/// `APCACHE_SWEEP_INDEX` (one at a time, each restored after), running `check` and the
/// queries after each; without the variable it does nothing. For large indexes, such as the
/// four corpus parts:
///
/// ```sh
/// APCACHE_SWEEP_INDEX=/tmp/idx4 APCACHE_SWEEP_FLIPS=400 \
///     cargo test --release -p apcache-index --test corruption_sweep -- --nocapture given_index
/// ```
///
/// The index is flipped in place and each byte restored after its flip: use a copy.
#[test]
fn random_flips_in_a_given_index() {
    let Ok(index) = std::env::var("APCACHE_SWEEP_INDEX") else {
        eprintln!("APCACHE_SWEEP_INDEX not set: nothing to do");
        return;
    };
    let flips = env_usize("APCACHE_SWEEP_FLIPS", 200);
    let files = std::fs::read_dir(&index).unwrap().count().max(1);
    let per_file = flips.div_ceil(files);
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    sweep(Path::new(&index), None, Reads::Queries, move |len| {
        let mut at: Vec<usize> = (0..per_file)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state % len as u64) as usize
            })
            .collect();
        at.sort_unstable();
        at.dedup();
        at
    });
}

/// Flips each of the bytes `positions` chooses in each file of `index` (the lock aside), one
/// at a time, and asserts that `check` finds every flip and no read answers wrongly.
fn sweep(
    index: &Path,
    expected_files: Option<usize>,
    reads: Reads,
    mut positions: impl FnMut(usize) -> Vec<usize>,
) {
    assert!(check_index(index).unwrap().is_clean());
    let sound = answers(index, reads);
    assert!(sound.iter().all(Result::is_ok), "{sound:?}");

    let mut files: Vec<PathBuf> = std::fs::read_dir(index)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap() != apcache_index::writer_lock::LOCK)
        .collect();
    files.sort();
    if let Some(expected) = expected_files {
        assert_eq!(
            files.len(),
            expected,
            "a segment's six files, its positions and the manifest: {files:?}"
        );
    }

    let mut total = Tally::default();
    for file in &files {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let original = std::fs::read(file).unwrap();
        let mut tally = Tally::default();
        for at in positions(original.len()) {
            let mut bytes = original.clone();
            bytes[at] ^= 1 << (at % 8);
            std::fs::write(file, &bytes).unwrap();
            tally.flips += 1;
            let report = check_index(index);
            if report.map_or(true, |r| !r.is_clean()) {
                tally.found_by_check += 1;
            }
            let got = answers(index, reads);
            if got.len() == 1 && got[0].is_err() {
                tally.failed_to_open += 1;
            } else {
                if got.iter().any(Result::is_err) {
                    tally.refused_by_reads += 1;
                }
                compare(&got, &sound, &format!("{name} byte {at}"), &mut tally);
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
    assert_eq!(answers(index, reads), sound);
}

/// Counts each answer of a damaged index as refused, equal to the sound one, or wrong.
fn compare(
    got: &[Result<String, String>],
    sound: &[Result<String, String>],
    context: &str,
    tally: &mut Tally,
) {
    assert_eq!(got.len(), sound.len(), "{context}");
    for (got, want) in got.iter().zip(sound) {
        match got {
            Err(_) => tally.answers_refused += 1,
            Ok(text) if Ok(text) == want.as_ref() => tally.answers_equal += 1,
            Ok(text) => {
                let want = want.as_ref().unwrap();
                tally.wrong_answers.push(format!(
                    "{context}: {} instead of {}",
                    &text[..text.len().min(120)],
                    &want[..want.len().min(120)]
                ))
            }
        }
    }
}
