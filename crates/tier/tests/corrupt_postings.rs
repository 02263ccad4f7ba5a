//! One damaged byte, in a term's postings or in a group of term records, served in every mode:
//! `base`, `base-prefetch`, `hybrid` and `hybrid-prefetch` (with the metadata copied into the
//! tier's directory, and from storage), and the postings decoded at open (`LoadMode::Direct`).
//! Each time the index opens; a query that reads a damaged term fails with an error naming the
//! file and the term, every time (a damaged copy is never cached as sound), and is counted;
//! every other query keeps its exact answer.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use apcache_index::format::term_groups::GROUP_TERMS;
use apcache_index::format::{FileKind, TermGroups, FOOTER_LEN, HEADER_LEN};
use apcache_index::query::Query;
use apcache_index::search::{IndexReader, LoadMode, SearchOptions, Searcher};
use apcache_index::segment::SegmentReader;
use apcache_tier::loader::LoaderKind;
use apcache_tier::region::TierSpec;
use apcache_tier::serving::{LiveConfig, LiveRequest, LiveService};
use apcache_tier::stack::{ServingConfig, ServingStack};
use apcache_tier::{CacheOptions, ServingMode};

mod common;
use common::{ask, build, documents, phrases, queries, word};

/// A query's total and its hits' DIDs.
type Answer = (u64, Vec<u32>);

fn options() -> SearchOptions {
    SearchOptions {
        k: 10,
        count: true,
        ..SearchOptions::default()
    }
}

/// A one-segment index, its queries (terms, conjunctions, disjunctions and phrases over its
/// frequent words) and their answers while it is sound.
struct Sound {
    dir: tempfile::TempDir,
    answers: Vec<(Query, Answer)>,
}

impl Sound {
    fn build() -> Sound {
        let dir = tempfile::tempdir().unwrap();
        let reader = build(dir.path(), &documents(3000, 5), true);
        assert_eq!(reader.segments().len(), 1);
        let searcher = Searcher::new(&reader);
        let mut all = queries(200, 9);
        all.extend(phrases(40, 3));
        // Every frequent word alone, so that each damaged one is asked for by itself.
        all.extend((0..40).map(|i| Query::Term(word(i))));
        let answers = all
            .into_iter()
            .map(|q| {
                let r = searcher.search(&q, &options()).unwrap();
                let answer = (r.total_hits, r.hits.iter().map(|h| h.doc).collect());
                (q, answer)
            })
            .collect();
        Sound { dir, answers }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn file(&self, kind: FileKind) -> String {
        let reader = IndexReader::open(self.path()).unwrap();
        reader.segments()[0].meta().file(kind).unwrap().name.clone()
    }

    /// XORs byte `at` of the body of the segment's file of `kind` with `mask`.
    fn flip(&self, kind: FileKind, at: u64, mask: u8) {
        let path = self.path().join(self.file(kind));
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[HEADER_LEN + at as usize] ^= mask;
        std::fs::write(&path, bytes).unwrap();
    }
}

/// The ordinal of `term` in the segment.
fn ordinal(segment: &SegmentReader, term: &str) -> u64 {
    segment.dictionary().get(term).unwrap()
}

/// The text of term `ordinal`.
fn text(segment: &SegmentReader, ordinal: u64) -> String {
    String::from_utf8(segment.term_at(ordinal).unwrap()).unwrap()
}

/// What one way of serving answered.
#[derive(Default)]
struct Tally {
    failed: u64,
}

/// Checks `got`, the answer to `query`: a query that reads a term of `damaged` fails with an
/// error naming `file` and one of its damaged terms (a query whose evaluation never reads it
/// may answer, and then exactly); a query on one damaged term alone always fails; every other
/// query gets the sound answer.
fn check(
    how: &str,
    query: &Query,
    want: &Answer,
    got: Result<Answer, String>,
    damaged: &[String],
    file: &str,
    tally: &mut Tally,
) {
    let touched: Vec<&String> = damaged
        .iter()
        .filter(|t| query.terms().contains(&t.as_str()))
        .collect();
    match got {
        Err(error) => {
            assert!(
                !touched.is_empty(),
                "{how}: {query} reads no damaged term, yet failed: {error}"
            );
            assert!(
                error.contains(file) && touched.iter().any(|t| error.contains(&format!("{t:?}"))),
                "{how}: {query}: the error must name {file} and the term: {error}"
            );
            tally.failed += 1;
        }
        Ok(answer) => {
            assert!(
                !matches!(query, Query::Term(t) if touched.contains(&t)),
                "{how}: {query} reads a damaged term, yet was answered"
            );
            assert_eq!(&answer, want, "{how}: {query}");
        }
    }
}

/// Serves the index in `sound`'s directory, damaged in `file` so that the terms `damaged` are
/// unreadable, in every mode and with its postings decoded at open, twice over its queries.
fn serve_everywhere(sound: &Sound, damaged: &[String], file: &str) {
    let asked = sound
        .answers
        .iter()
        .filter(|(q, _)| matches!(q, Query::Term(t) if damaged.contains(t)))
        .count();
    assert!(asked > 0, "no query asks for a damaged term: {damaged:?}");
    let tier = tempfile::tempdir().unwrap();
    let cache = CacheOptions {
        segment_size: 4096,
        ..CacheOptions::default()
    };
    let cached = |mode, placed: bool| ServingConfig {
        mode,
        cache_bytes: Some(256 * cache.segment_size as u64),
        tier: if placed {
            TierSpec::Directory(tier.path().to_path_buf())
        } else {
            TierSpec::Anonymous
        },
        metadata_dir: placed.then(|| tier.path().to_path_buf()),
        cache,
        loader: LoaderKind::Pread,
        ..ServingConfig::default()
    };
    let configs = [
        cached(ServingMode::Base, false),
        cached(ServingMode::BasePrefetch { lookahead: 3 }, false),
        cached(ServingMode::Hybrid, true),
        cached(ServingMode::HybridPrefetch, true),
        cached(ServingMode::HybridPrefetch, false),
    ];
    for config in configs {
        let how = format!(
            "{}{}",
            config.mode,
            if config.metadata_dir.is_some() {
                " (metadata in the tier)"
            } else {
                ""
            }
        );
        let stack = ServingStack::assemble(sound.path(), &config, |_| {})
            .unwrap_or_else(|e| panic!("{how}: the index must open: {e}"));
        assert_eq!(
            stack.metadata_copies().is_some(),
            config.metadata_dir.is_some()
        );
        let service = LiveService::start(
            Arc::new(stack),
            LiveConfig {
                threads: 2,
                queue_depth: 16,
            },
        )
        .unwrap();
        let mut tally = Tally::default();
        for pass in 0..2 {
            for (query, want) in &sound.answers {
                let request = LiveRequest {
                    query: query.clone(),
                    options: options(),
                    deadline: None,
                    collection: None,
                };
                let got = ask(&service, request)
                    .recv_timeout(Duration::from_secs(60))
                    .unwrap();
                let how = format!("{how}, pass {pass}");
                check(&how, query, want, got, damaged, file, &mut tally);
            }
        }
        assert!(tally.failed >= 2 * asked as u64, "{how}");
        let counters = service.counters();
        assert_eq!(counters.failed, tally.failed, "{how}: failures counted");
        assert_eq!(counters.damaged, tally.failed, "{how}: damage counted");
        service.shutdown();
    }

    let direct = IndexReader::open_with(sound.path(), LoadMode::Direct)
        .expect("the index must open with its postings decoded");
    let segment = &direct.segments()[0];
    let left_out: Vec<String> = segment
        .direct()
        .unwrap()
        .damaged_terms()
        .iter()
        .map(|&o| text(segment, o))
        .collect();
    assert_eq!(left_out, damaged, "direct: the terms left out");
    let searcher = Searcher::new(&direct);
    let mut tally = Tally::default();
    for pass in 0..2 {
        for (query, want) in &sound.answers {
            let got = searcher
                .search(query, &options())
                .map(|r| (r.total_hits, r.hits.iter().map(|h| h.doc).collect()))
                .map_err(|e| e.to_string());
            check(
                &format!("direct, pass {pass}"),
                query,
                want,
                got,
                damaged,
                file,
                &mut tally,
            );
        }
    }
    assert!(tally.failed >= 2 * asked as u64, "direct");
}

#[test]
fn a_term_with_damaged_postings_fails_its_queries_in_every_mode_and_no_other() {
    let sound = Sound::build();
    // The longest list, which has a checksum of its own: only it is damaged.
    let (damaged, info) = {
        let reader = IndexReader::open(sound.path()).unwrap();
        let segment = &reader.segments()[0];
        let longest = (0..40)
            .map(word)
            .max_by_key(|t| segment.term(t).unwrap().unwrap().doc_freq)
            .unwrap();
        let info = segment.term(&longest).unwrap().unwrap();
        assert!(info.has_own_checksum());
        (longest, info)
    };
    sound.flip(
        FileKind::Postings,
        info.postings_offset + info.postings_bytes() / 2,
        0x04,
    );
    serve_everywhere(&sound, &[damaged], &sound.file(FileKind::Postings));
}

/// Damages the records of the group holding `term` in the term-info file: `pick` chooses,
/// from the group's records, the byte to change and the mask to XOR it with. Returns the
/// group's terms.
fn damage_group_of(sound: &Sound, term: &str, pick: fn(&[u8]) -> (usize, u8)) -> Vec<String> {
    let reader = IndexReader::open(sound.path()).unwrap();
    let segment = &reader.segments()[0];
    let group = ordinal(segment, term) / GROUP_TERMS;
    let terms = segment.meta().terms;
    let path = sound.path().join(sound.file(FileKind::TermInfos));
    let bytes = std::fs::read(&path).unwrap();
    let body = &bytes[HEADER_LEN..bytes.len() - FOOTER_LEN];
    let groups = TermGroups::new(body, terms).unwrap();
    let (records, _) = groups.group(group, segment.skip_entries()).unwrap();
    let (at, mask) = pick(records);
    let offset = records.as_ptr() as usize - body.as_ptr() as usize + at;
    sound.flip(FileKind::TermInfos, offset as u64, mask);
    let last = (group * GROUP_TERMS + GROUP_TERMS).min(terms);
    (group * GROUP_TERMS..last)
        .map(|o| text(segment, o))
        .collect()
}

#[test]
fn a_term_record_that_does_not_decode_fails_its_group_in_every_mode_and_no_other() {
    let sound = Sound::build();
    // The group's first byte is its first record's head, the term's document frequency and a
    // flag; zeroed, it claims no documents, which no record may.
    let damaged = damage_group_of(&sound, "w1", |records| (0, records[0]));
    let reader = IndexReader::open(sound.path()).unwrap();
    let segment = &reader.segments()[0];
    assert!(segment.term_info(ordinal(segment, &damaged[0])).is_err());
    drop(reader);
    serve_everywhere(&sound, &damaged, &sound.file(FileKind::TermInfos));
}

#[test]
fn a_term_record_that_decodes_to_other_values_fails_its_group_in_every_mode_and_no_other() {
    let sound = Sound::build();
    // A flip inside a group's records: the records may still decode, into other offsets and
    // lengths, which only the group's checksum tells from the real ones.
    let damaged = damage_group_of(&sound, "w2", |records| (records.len() / 2, 0x9e));
    serve_everywhere(&sound, &damaged, &sound.file(FileKind::TermInfos));
}
