//! Read errors under a live mapping: a file of an open index is truncated (to half its
//! length, or to nothing) while the index is open, after every query has run once, so that
//! every checksum the queries need has been verified already. A read of a lost page then
//! reaches the process as `SIGBUS`; the process must survive it, and every query and stored
//! document read must either fail with `MappedReadFailed` naming the truncated file or give
//! exactly what the sound index gives. Once one has failed, every later one that reads the
//! file must fail too (the lost page now reads as zeros): every query, for a file queries read;
//! every stored document, for the store. A `SIGBUS` outside the index's mappings must still
//! end the process.
//!
//! Files are cut at a page boundary: the kernel faults only on whole pages past the end, and
//! zeroes the rest of a page cut in its middle, which a mapping then reads without a fault
//! (as it would read any other write to the file under it).
//!
//! The kernel raises `SIGBUS` the same way for an I/O error of the device under a mapped page,
//! so these tests cover that path too.

use std::path::{Path, PathBuf};

use apcache_index::format::FileKind;
use apcache_index::indexer::{build_index, IndexOptions};
use apcache_index::ingest::Input;
use apcache_index::query::{parse_query, DefaultOperator};
use apcache_index::search::{IndexReader, SearchOptions, Searcher};
use apcache_index::IndexError;

/// Single terms (rare and frequent, so lists from all over the postings file), conjunctions,
/// disjunctions, exclusions and phrases.
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
    "telescope",
    "observatory OR galaxy",
    "zoo",
    "zinc OR zone OR zeppelin",
    "abbey OR abbot",
    "wrestling",
    "yacht",
];

/// An index of the whole bundled sample (1,744 articles: every file spans many pages).
fn build(dir: &Path) -> PathBuf {
    let sample = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/enwiki-sample.tsv");
    let index = dir.join("index");
    build_index(
        vec![Input::from_arg(sample)],
        &index,
        &IndexOptions::default(),
        |_, _| {},
    )
    .unwrap();
    index
}

/// One answer: a query's (top 10 with its count, or the count alone) or a stored document's.
type Answer = Result<String, IndexError>;

/// Every query, twice (top 10 with count, count only), then every stored document.
fn answers(reader: &IndexReader) -> Vec<(String, Answer)> {
    let searcher = Searcher::new(reader);
    let analyzer = reader.analyzer();
    let mut out = Vec::new();
    for text in QUERIES {
        let query = parse_query(text, &analyzer, DefaultOperator::Or).unwrap();
        for k in [10, 0] {
            let options = SearchOptions {
                k,
                count: true,
                ..SearchOptions::default()
            };
            out.push((
                format!("{text} (k {k})"),
                searcher
                    .search(&query, &options)
                    .map(|r| format!("{} {:?}", r.total_hits, r.hits)),
            ));
        }
    }
    for segment in reader.segments() {
        for local in 0..segment.meta().documents() {
            out.push((
                format!("document {local}"),
                segment
                    .stored(local)
                    .map(|d| format!("{}: {}", d.title, d.body)),
            ));
        }
    }
    out
}

/// The first half of a file of `len` bytes, in whole pages (nothing when under two pages).
fn half(len: u64) -> u64 {
    len / 2 / 4096 * 4096
}

/// Opens the index, answers everything once (verifying what it reads), cuts `kind`'s file to
/// `keep(len)` bytes, and answers everything again. Returns how many answers failed.
fn truncated_under(kind: FileKind, keep: fn(u64) -> u64) -> usize {
    let dir = tempfile::tempdir().unwrap();
    let index = build(dir.path());
    let reader = IndexReader::open(&index).unwrap();
    let sound = answers(&reader);
    assert!(sound.iter().all(|(_, a)| a.is_ok()));
    let name = &reader.segments()[0].meta().file(kind).unwrap().name;
    let path = index.join(name);
    let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    let len = file.metadata().unwrap().len();
    file.set_len(keep(len)).unwrap();

    let mut failed = 0;
    for ((what, before), (_, after)) in sound.iter().zip(answers(&reader)) {
        match after {
            Ok(answer) => {
                assert_eq!(
                    &answer,
                    before.as_ref().unwrap(),
                    "{what}: a wrong answer after {name} was cut"
                );
                // A failed read fails every later read of its file: documents read only the
                // store, queries every other file.
                let store_read = what.starts_with("document");
                assert!(
                    failed == 0 || (store_read && kind != FileKind::Store),
                    "{what} answered after an earlier read of {name} failed"
                );
            }
            Err(IndexError::MappedReadFailed { path: failed_path }) => {
                assert_eq!(failed_path, path, "{what}");
                failed += 1;
            }
            Err(e) => panic!("{what}: {e}, expected a failed read of {name}"),
        }
    }
    if kind == FileKind::Store {
        // Queries read no stored document: they are answered as before.
        let queries = QUERIES.len() * 2;
        for ((what, before), (_, after)) in sound.iter().zip(answers(&reader)).take(queries) {
            assert_eq!(after.ok(), before.as_ref().ok().cloned(), "{what}");
        }
    }
    eprintln!(
        "{name} cut from {len} to {} bytes: {failed} of {} answers failed",
        keep(len),
        sound.len()
    );
    let message = IndexReader::open(&index).err().map(|e| e.to_string());
    assert!(
        message.is_some_and(|m| m.contains(name.as_str())),
        "a cut file is refused at open"
    );
    failed
}

#[test]
fn a_postings_file_cut_in_half_fails_the_queries_that_read_it() {
    let failed = truncated_under(FileKind::Postings, half);
    assert!(failed > 0);
}

#[test]
fn an_emptied_postings_file_fails_every_query() {
    // Every query here reads postings: the first fails, and every later one with it.
    let failed = truncated_under(FileKind::Postings, |_| 0);
    assert_eq!(failed, QUERIES.len() * 2);
}

#[test]
fn a_store_cut_in_half_fails_its_documents_and_no_query() {
    let failed = truncated_under(FileKind::Store, half);
    assert!(failed > 0);
}

#[test]
fn an_emptied_store_fails_every_document() {
    let failed = truncated_under(FileKind::Store, |_| 0);
    assert_eq!(failed, 1_744);
}

#[test]
fn cut_metadata_norms_and_positions_fail_their_readers() {
    for kind in [
        FileKind::TermInfos,
        FileKind::Skip,
        FileKind::Norms,
        FileKind::Positions,
        FileKind::Dictionary,
    ] {
        let failed = truncated_under(kind, half);
        assert!(failed > 0, "{kind:?}");
    }
}

/// Run by [`a_sigbus_outside_the_index_mappings_still_ends_the_process`] in a child process:
/// with the handler installed (an index is open), a read past the end of a file mapped
/// outside apcache's registry.
#[test]
fn foreign_mapping_child() {
    let Some(dir) = std::env::var_os("APCACHE_FOREIGN_MAPPING_DIR") else {
        return;
    };
    let dir = PathBuf::from(dir);
    let index = build(&dir);
    let _reader = IndexReader::open(&index).unwrap();
    let path = dir.join("foreign");
    std::fs::write(&path, vec![7u8; 1 << 16]).unwrap();
    let file = std::fs::File::open(&path).unwrap();
    // SAFETY: the test truncates the file under the mapping on purpose, to fault.
    let map = unsafe { memmap2::Mmap::map(&file) }.unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(0)
        .unwrap();
    let byte = std::hint::black_box(&map[1 << 15]);
    println!("read {byte} past the end");
}

#[test]
fn a_sigbus_outside_the_index_mappings_still_ends_the_process() {
    use std::os::unix::process::ExitStatusExt;
    let dir = tempfile::tempdir().unwrap();
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "foreign_mapping_child", "--nocapture"])
        .env("APCACHE_FOREIGN_MAPPING_DIR", dir.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert_eq!(status.signal(), Some(libc::SIGBUS), "{status:?}");
}
