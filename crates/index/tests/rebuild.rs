//! Replacing an index (`force`): the old index stays whole and searchable, its MANIFEST and
//! files untouched, until the new build's final commit; an input with no documents commits
//! nothing.

use std::path::{Path, PathBuf};

use apcache_index::check::check_index;
use apcache_index::indexer::{build_index, IndexOptions};
use apcache_index::ingest::Input;
use apcache_index::{IndexError, Manifest};

fn sample() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/enwiki-sample.tsv")
}

/// The first `lines` lines of the sample, written to `dir/name`.
fn head(dir: &Path, name: &str, lines: usize) -> PathBuf {
    let text = std::fs::read_to_string(sample()).unwrap();
    let head: String = text.lines().take(lines).map(|l| format!("{l}\n")).collect();
    let path = dir.join(name);
    std::fs::write(&path, head).unwrap();
    path
}

/// Many flushed segments: a tiny budget and small batches.
fn options(force: bool, merge: bool) -> IndexOptions {
    IndexOptions {
        memory_budget: 1 << 20,
        batch_docs: 32,
        force,
        merge,
        ..IndexOptions::default()
    }
}

fn build(input: &Path, index: &Path, options: &IndexOptions) -> Result<u64, IndexError> {
    build_index(vec![Input::from_arg(input)], index, options, |_, _| {}).map(|r| r.documents)
}

/// The names in `dir`, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

/// `dir` holds the files its manifest names, `MANIFEST` and `LOCK`, and nothing else.
fn assert_only_committed(dir: &Path) {
    let manifest = Manifest::load(dir).unwrap();
    let mut expected: Vec<String> = manifest
        .segments
        .iter()
        .flat_map(|s| s.files.iter().map(|f| f.name.clone()))
        .chain(["LOCK".to_string(), "MANIFEST".to_string()])
        .collect();
    expected.sort();
    assert_eq!(listing(dir), expected);
}

/// Every file the manifest of `dir` names, with `MANIFEST` itself and their bytes.
fn committed_files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let manifest = Manifest::load(dir).unwrap();
    let mut files = vec![(
        "MANIFEST".to_string(),
        std::fs::read(dir.join("MANIFEST")).unwrap(),
    )];
    for segment in &manifest.segments {
        for file in &segment.files {
            let path = segment.directory(dir).join(&file.name);
            files.push((file.name.clone(), std::fs::read(path).unwrap()));
        }
    }
    files
}

fn forced_rebuild_keeps_the_old_index_until_its_final_commit(merge: bool) {
    let work = tempfile::tempdir().unwrap();
    let old_input = head(work.path(), "old.tsv", 300);
    let index = work.path().join("index");
    assert_eq!(
        build(&old_input, &index, &options(false, false)).unwrap(),
        300
    );
    let old = committed_files(&index);
    let old_names = listing(&index);
    let old_generation = Manifest::load(&index).unwrap().generation;
    assert!(old.len() > 7, "the old index has several segments");

    // While the new build reads (its flushes run on other threads), the old index is exactly
    // as it was and passes `check`.
    let mut calls = 0u32;
    let mut new_segments_seen = false;
    let report = build_index(
        vec![Input::from_arg(sample())],
        &index,
        &options(true, merge),
        |_, _| {
            calls += 1;
            if !calls.is_multiple_of(8) {
                return;
            }
            assert!(
                committed_files(&index) == old,
                "batch {calls}: the old index changed"
            );
            new_segments_seen |= listing(&index).iter().any(|n| !old_names.contains(n));
            if calls.is_multiple_of(32) {
                let check = check_index(&index).unwrap();
                assert!(check.is_clean(), "batch {calls}: {:?}", check.problems);
                assert_eq!(check.documents, 300);
            }
        },
    )
    .unwrap();
    assert!(
        new_segments_seen,
        "no flush happened while the input was read"
    );
    let lines = std::fs::read_to_string(sample()).unwrap().lines().count() as u64;
    assert_eq!(report.documents, lines);

    // After the final commit: only the new index, nothing of the old one left.
    let manifest = Manifest::load(&index).unwrap();
    assert!(manifest.build.is_none(), "the final commit is complete");
    assert_eq!(manifest.documents(), lines);
    assert_only_committed(&index);
    assert!(
        manifest.generation > old_generation,
        "generations only grow"
    );
    let check = check_index(&index).unwrap();
    assert!(check.is_clean() && check.warnings.is_empty(), "{check:?}");
}

#[test]
fn forced_rebuild_keeps_the_old_index_until_its_final_commit_merged() {
    forced_rebuild_keeps_the_old_index_until_its_final_commit(true);
}

#[test]
fn forced_rebuild_keeps_the_old_index_until_its_final_commit_unmerged() {
    forced_rebuild_keeps_the_old_index_until_its_final_commit(false);
}

#[test]
fn an_input_without_documents_commits_nothing() {
    let work = tempfile::tempdir().unwrap();
    let empty = work.path().join("empty.tsv");
    std::fs::write(&empty, "").unwrap();
    let index = work.path().join("index");
    let error = build(&empty, &index, &options(false, true)).unwrap_err();
    assert!(
        error
            .to_string()
            .contains(&format!("no documents in {}", empty.display())),
        "{error}"
    );
    assert!(matches!(
        Manifest::load(&index),
        Err(IndexError::NoIndex(_))
    ));

    // Over an existing index, with force: the old index stays.
    let old_input = head(work.path(), "old.tsv", 100);
    build(&old_input, &index, &options(false, true)).unwrap();
    let old = committed_files(&index);
    let error = build(&empty, &index, &options(true, true)).unwrap_err();
    assert!(error.to_string().contains("no documents in"), "{error}");
    assert!(committed_files(&index) == old, "the old index changed");
}

/// Builds the sample into `index` (which holds no index) and stops the build at its
/// `batches`-th batch: a progress callback that panics ends it after the flushes of what it had
/// read, before its final commit.
fn interrupt_build(index: &Path, batches: usize) {
    let mut read = 0;
    let interrupted = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        build_index(
            vec![Input::from_arg(sample())],
            index,
            &options(false, true),
            |_, _| {
                read += 1;
                assert!(read < batches, "interrupted");
            },
        )
    }));
    assert!(interrupted.is_err());
}

#[test]
fn an_interrupted_build_is_marked_incomplete() {
    let work = tempfile::tempdir().unwrap();
    let index = work.path().join("index");
    interrupt_build(&index, 20);
    let manifest = Manifest::load(&index).unwrap();
    let progress = manifest.build.as_ref().expect("marked incomplete");
    assert_eq!(progress.input, sample().display().to_string());
    assert!(manifest.documents() > 0 && manifest.documents() <= progress.documents_read);
    let note = format!(
        "incomplete: an interrupted build left {} documents",
        manifest.documents()
    );
    assert!(manifest.incomplete_note().unwrap().starts_with(&note));
    let check = check_index(&index).unwrap();
    assert!(check.is_clean(), "{:?}", check.problems);
    assert!(check.partial);
    // Readers refuse it: its answers would look whole.
    let refused = apcache_index::search::IndexReader::open(&index)
        .err()
        .unwrap();
    assert!(
        matches!(refused, IndexError::Partial { documents, .. } if documents == manifest.documents()),
        "{refused}"
    );
    assert!(
        check.warnings.iter().any(|w| w.what.starts_with(&note)),
        "{:?}",
        check.warnings
    );

    // A complete build is not marked.
    build(&sample(), &index, &options(true, true)).unwrap();
    assert!(Manifest::load(&index).unwrap().build.is_none());
    assert!(check_index(&index).unwrap().warnings.is_empty());
}

#[test]
fn leftovers_are_reported_by_check_and_removed_by_the_next_writer() {
    let work = tempfile::tempdir().unwrap();
    let input = head(work.path(), "input.tsv", 200);
    let index = work.path().join("index");
    build(&input, &index, &options(false, false)).unwrap();
    let clean = listing(&index);
    let leftovers = [
        "MANIFEST.tmp",
        "seg_000099.dict",
        "seg_000099.post.tmp",
        "seg_000100.store",
    ];
    for name in leftovers {
        std::fs::write(index.join(name), b"left by a killed writer").unwrap();
    }
    // A user's file beside the index, with a name like a temporary file's: never apcache's.
    let notes = index.join("notes.tmp");
    std::fs::write(&notes, b"the user's").unwrap();
    let check = check_index(&index).unwrap();
    assert!(check.is_clean(), "{:?}", check.problems);
    let mut warned: Vec<&str> = check.warnings.iter().map(|w| w.file.as_str()).collect();
    warned.sort();
    let mut expected = leftovers.to_vec();
    expected.sort();
    assert_eq!(warned, expected);

    // `merge` is a writer: it removes them all, and not the user's file.
    apcache_index::merge::merge_index(&index, None, None).unwrap();
    assert_eq!(Manifest::load(&index).unwrap().segments.len(), 1);
    std::fs::remove_file(&notes).unwrap();
    assert_only_committed(&index);

    // So does a build (forced, over the index), and one into a directory without a manifest.
    for name in leftovers {
        std::fs::write(index.join(name), b"left by a killed writer").unwrap();
    }
    std::fs::write(&notes, b"the user's").unwrap();
    build(&input, &index, &options(true, false)).unwrap();
    std::fs::remove_file(&notes).unwrap();
    assert_only_committed(&index);
    assert!(check_index(&index).unwrap().warnings.is_empty());
    assert_ne!(
        listing(&index),
        clean,
        "the forced build's segments are new ones"
    );
    std::fs::remove_file(index.join("MANIFEST")).unwrap();
    for name in leftovers {
        std::fs::write(index.join(name), b"left by a killed writer").unwrap();
    }
    // Without a manifest, a user's file makes it a directory that is not an index: refused,
    // and nothing in it removed.
    std::fs::write(&notes, b"the user's").unwrap();
    let before = listing(&index);
    let refused = build(&input, &index, &options(false, false)).unwrap_err();
    assert!(
        matches!(refused, IndexError::NotAnIndexDir { .. }),
        "{refused}"
    );
    assert_eq!(listing(&index), before);
    std::fs::remove_file(&notes).unwrap();
    build(&input, &index, &options(false, false)).unwrap();
    assert_only_committed(&index);
}

#[test]
fn a_rebuild_removes_the_old_segments_placed_outside_the_index() {
    let work = tempfile::tempdir().unwrap();
    let flush = tempfile::tempdir().unwrap();
    let input = head(work.path(), "input.tsv", 200);
    let index = work.path().join("index");
    let placed = IndexOptions {
        flush_dir: Some(flush.path().to_path_buf()),
        ..options(false, false)
    };
    build(&input, &index, &placed).unwrap();
    let old = committed_files(&index);
    assert!(std::fs::read_dir(flush.path()).unwrap().count() >= 12);

    build(&input, &index, &options(true, true)).unwrap();
    assert_eq!(std::fs::read_dir(flush.path()).unwrap().count(), 0);
    assert_only_committed(&index);
    assert!(committed_files(&index) != old);
    let check = check_index(&index).unwrap();
    assert!(check.is_clean() && check.warnings.is_empty(), "{check:?}");
}

/// Totals and top hits (documents, scores to 4 decimals) of a few queries, phrases among them.
fn answers(index: &Path) -> Vec<String> {
    use apcache_index::analyzer::Analyzer;
    use apcache_index::query::{parse_query, DefaultOperator};
    use apcache_index::search::{IndexReader, LoadMode, SearchOptions, Searcher};
    // An interrupted build's segments are compared too: accept a partial index.
    let reader = IndexReader::open_accepting_partial(index, LoadMode::Mmap, None).unwrap();
    let searcher = Searcher::new(&reader);
    let analyzer = Analyzer::english();
    let options = SearchOptions {
        k: 10,
        count: true,
        ..SearchOptions::default()
    };
    [
        "the",
        "river OR city",
        "+united +states",
        "album -band",
        "\"united states\"",
    ]
    .iter()
    .map(|text| {
        let query = parse_query(text, &analyzer, DefaultOperator::Or).unwrap();
        let result = searcher.search(&query, &options).unwrap();
        let hits: Vec<String> = result
            .hits
            .iter()
            .map(|h| format!("{}:{:.4}", h.doc, h.score))
            .collect();
        format!("{text}: {} {hits:?}", result.total_hits)
    })
    .collect()
}

#[test]
fn an_interrupted_builds_segments_answer_as_merged_ones_do() {
    let work = tempfile::tempdir().unwrap();
    let index = work.path().join("index");
    interrupt_build(&index, 30);
    // Flushed ahead of a merge: their dictionaries are term lists, their positions bit-packed.
    let manifest = Manifest::load(&index).unwrap();
    assert!(manifest.segments.len() > 1);
    assert!(manifest.segments.iter().all(|s| s.dictionary
        == apcache_index::segment::DictionaryKind::TermList
        && s.positions_codec == apcache_index::format::PositionsCodec::BitpackDeltaSimd));
    let before = answers(&index);
    assert!(before.iter().any(|a| !a.ends_with(" 0 []")), "{before:?}");
    apcache_index::merge::merge_index(&index, None, None).unwrap();
    let manifest = Manifest::load(&index).unwrap();
    assert_eq!(manifest.segments.len(), 1);
    assert_eq!(
        manifest.segments[0].dictionary,
        apcache_index::segment::DictionaryKind::Fst
    );
    assert_eq!(
        manifest.segments[0].positions_codec,
        apcache_index::format::PositionsCodec::PforDelta
    );
    assert_eq!(answers(&index), before);
}

#[test]
fn a_build_of_one_flush_ends_with_a_searchable_segment_whatever_the_codec() {
    // One flush with the flush's own posting codec: the merge must still rewrite it, since its
    // dictionary and positions are made for a merge.
    let work = tempfile::tempdir().unwrap();
    let input = head(work.path(), "few.tsv", 20);
    let index = work.path().join("index");
    let options = IndexOptions {
        codec: apcache_codec::CodecKind::BitpackDeltaSimd,
        ..IndexOptions::default()
    };
    build(&input, &index, &options).unwrap();
    let manifest = Manifest::load(&index).unwrap();
    let [segment] = manifest.segments.as_slice() else {
        panic!("{} segments", manifest.segments.len())
    };
    assert_eq!(segment.codec, "bitpack-delta-simd");
    assert!(segment.dictionary.is_fst());
    assert!(segment.positions_codec.is_default());
}
