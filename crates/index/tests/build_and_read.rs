//! Builds indices of the bundled sample and checks every posting list against a plain
//! in-memory inversion of the same documents (the exhaustive reference).

use std::collections::BTreeMap;
use std::path::PathBuf;

use apcache_index::analyzer::Analyzer;
use apcache_index::format::FileKind;
use apcache_index::indexer::{build_index, IndexOptions};
use apcache_index::ingest::{DocumentReader, Input, ReaderOptions};
use apcache_index::segment::SegmentReader;
use apcache_index::Manifest;

fn sample() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/enwiki-sample.tsv")
}

/// term -> (DIDs, freqs) of the first `limit` sample documents, and their titles.
type Lists = BTreeMap<String, (Vec<u32>, Vec<u32>)>;

fn reference(limit: usize) -> (Lists, Vec<String>) {
    let analyzer = Analyzer::default();
    let mut reader =
        DocumentReader::new([Input::from_arg(sample())], ReaderOptions::default()).unwrap();
    let mut lists = Lists::new();
    let mut titles = Vec::new();
    let mut did = 0u32;
    while let Some(doc) = reader.next_document().unwrap() {
        if titles.len() == limit {
            break;
        }
        for text in [&doc.title, &doc.body] {
            for token in analyzer.tokens(text) {
                let (docs, freqs) = lists.entry(token).or_default();
                if docs.last() == Some(&did) {
                    *freqs.last_mut().unwrap() += 1;
                } else {
                    docs.push(did);
                    freqs.push(1);
                }
            }
        }
        titles.push(doc.title);
        did += 1;
    }
    (lists, titles)
}

fn check_index(codec: &str, threads: usize, budget: usize, merge: bool) {
    let dir = tempfile::tempdir().unwrap();
    let options = IndexOptions {
        codec: codec.parse().unwrap(),
        threads,
        memory_budget: budget,
        batch_docs: 64,
        merge,
        ..IndexOptions::default()
    };
    let report = build_index(
        vec![Input::from_arg(sample())],
        dir.path(),
        &options,
        |_, _| {},
    )
    .unwrap();
    let (expected, titles) = reference(usize::MAX);
    assert_eq!(report.documents as usize, titles.len());
    let manifest = Manifest::load(dir.path()).unwrap();
    let readers: Vec<SegmentReader> = manifest
        .segments
        .iter()
        .map(|s| SegmentReader::open(dir.path(), s).unwrap())
        .collect();
    if merge {
        assert_eq!(readers.len(), 1, "a merged index has one segment");
        assert_eq!(readers[0].meta().docs.runs(), &[[0, titles.len() as u32]]);
    } else {
        assert!(
            readers.len() >= if budget < 1 << 20 { 2 } else { 1 },
            "a small budget must flush several segments"
        );
    }
    let (mut docs, mut freqs) = (Vec::new(), Vec::new());
    for (term, (want_docs, want_freqs)) in &expected {
        let (mut got_docs, mut got_freqs) = (Vec::new(), Vec::new());
        for reader in &readers {
            if let Some(entry) = reader.lookup(term).unwrap() {
                reader.read_postings(&entry, &mut docs, &mut freqs).unwrap();
                got_docs.extend_from_slice(&docs);
                got_freqs.extend_from_slice(&freqs);
            }
        }
        let mut pairs: Vec<(u32, u32)> = got_docs.into_iter().zip(got_freqs).collect();
        pairs.sort_unstable();
        let (got_docs, got_freqs): (Vec<u32>, Vec<u32>) = pairs.into_iter().unzip();
        assert_eq!(&got_docs, want_docs, "{codec}: DIDs of {term:?}");
        assert_eq!(&got_freqs, want_freqs, "{codec}: freqs of {term:?}");
    }
    let terms: u64 = readers.iter().map(|r| r.meta().terms).sum();
    assert!(terms >= expected.len() as u64);
    for reader in &readers {
        reader.verify_checksums().unwrap();
        // The same documents read past the page cache.
        let mut uncached = SegmentReader::open(dir.path(), reader.meta()).unwrap();
        uncached.read_store_uncached(dir.path()).unwrap();
        for (local, did) in reader.meta().docs.docs().enumerate() {
            let stored = reader.stored(local as u32).unwrap();
            assert_eq!(stored.title, titles[did as usize], "{codec}: stored {did}");
            assert_eq!(
                uncached.stored(local as u32).unwrap(),
                stored,
                "{codec}: uncached {did}"
            );
        }
    }
    let check = apcache_index::check::check_index(dir.path()).unwrap();
    assert!(check.is_clean(), "{codec}: {:?}", check.problems);
    assert_eq!(check.documents as usize, titles.len());
}

#[test]
fn one_thread_one_segment_pfor_simd() {
    check_index("pfor-delta-simd", 1, 256 << 20, true);
}

#[test]
fn two_threads_many_segments_every_codec() {
    for codec in apcache_codec::CODEC_NAMES {
        check_index(codec, 2, 600 << 10, false);
    }
}

#[test]
fn two_threads_many_segments_merged_every_codec() {
    for codec in apcache_codec::CODEC_NAMES {
        check_index(codec, 2, 600 << 10, true);
    }
}

#[test]
fn placement_flags_put_files_where_asked() {
    let dir = tempfile::tempdir().unwrap();
    let flush = tempfile::tempdir().unwrap();
    let merged = tempfile::tempdir().unwrap();
    let arena = tempfile::tempdir().unwrap();
    let options = IndexOptions {
        memory_budget: 200 << 20,
        batch_docs: 64,
        flush_dir: Some(flush.path().to_path_buf()),
        arena: apcache_index::indexer::ArenaPlacement::MappedFile(arena.path().to_path_buf()),
        merge: false,
        ..IndexOptions::default()
    };
    let report = build_index(
        vec![Input::from_arg(sample())],
        dir.path(),
        &options,
        |_, _| {},
    )
    .unwrap();
    assert!(report.segments > 1, "{report:?}");
    assert!(report.arena_bytes > 0, "{report:?}");
    let count = |d: &std::path::Path| std::fs::read_dir(d).unwrap().count();
    assert_eq!(
        count(dir.path()),
        2,
        "only MANIFEST and LOCK in the index directory"
    );
    assert_eq!(
        count(flush.path()),
        (FileKind::SEGMENT_FILES.len() + 1) * report.segments
    );
    assert_eq!(count(arena.path()), 0, "arena files are unlinked");
    assert!(apcache_index::check::check_index(dir.path())
        .unwrap()
        .is_clean());

    let merge = apcache_index::merge::merge_index(
        dir.path(),
        None,
        Some(&merged.path().canonicalize().unwrap()),
    )
    .unwrap();
    assert_eq!(
        (merge.segments_in, merge.segments_out),
        (report.segments, 1)
    );
    assert_eq!(count(flush.path()), 0, "merged inputs are removed");
    // The segment files and the positions.
    assert_eq!(count(merged.path()), FileKind::SEGMENT_FILES.len() + 1);
    let check = apcache_index::check::check_index(dir.path()).unwrap();
    assert!(check.is_clean(), "{:?}", check.problems);
    assert_eq!(check.documents, report.documents);
}

#[test]
fn an_existing_index_is_not_overwritten_without_force() {
    let dir = tempfile::tempdir().unwrap();
    let options = IndexOptions::default();
    build_index(
        vec![Input::from_arg(sample())],
        dir.path(),
        &options,
        |_, _| {},
    )
    .unwrap();
    let again = build_index(
        vec![Input::from_arg(sample())],
        dir.path(),
        &options,
        |_, _| {},
    );
    assert!(matches!(
        again,
        Err(apcache_index::IndexError::IndexExists(_))
    ));
    let forced = IndexOptions {
        force: true,
        ..IndexOptions::default()
    };
    build_index(
        vec![Input::from_arg(sample())],
        dir.path(),
        &forced,
        |_, _| {},
    )
    .unwrap();
}

/// A damaged store block is refused when read past the page cache too, naming the block; the
/// documents of the other blocks still read.
#[test]
fn uncached_store_reads_verify_each_block() {
    let dir = tempfile::tempdir().unwrap();
    let options = IndexOptions {
        threads: 1,
        ..IndexOptions::default()
    };
    let report = build_index(
        vec![Input::from_arg(sample())],
        dir.path(),
        &options,
        |_, _| {},
    );
    assert!(report.is_ok(), "{:?}", report.err());
    let manifest = Manifest::load(dir.path()).unwrap();
    let meta = &manifest.segments[0];
    let store = meta
        .directory(dir.path())
        .join(&meta.file(FileKind::Store).unwrap().name);
    let mut bytes = std::fs::read(&store).unwrap();
    // A byte early in the first block's zstd frame (past the 16-byte file header and the
    // block's 12-byte header).
    bytes[16 + 12 + 40] ^= 0x10;
    std::fs::write(&store, &bytes).unwrap();
    let mut reader = SegmentReader::open(dir.path(), meta).unwrap();
    reader.read_store_uncached(dir.path()).unwrap();
    let error = reader.stored(0).unwrap_err().to_string();
    assert!(error.contains("document store block 0"), "{error}");
    let last = meta.documents() - 1;
    assert!(reader.stored(last).is_ok(), "a document of another block");
}
