//! A flipped byte in one term's postings, served in every mode: the queries that read the
//! term fail with an error naming the postings file and the term, every time (a damaged copy
//! is never cached as sound), while the other queries keep their exact answers.

use std::sync::Arc;
use std::time::Duration;

use apcache_index::format::{FileKind, HEADER_LEN};
use apcache_index::query::Query;
use apcache_index::search::{SearchOptions, Searcher};
use apcache_tier::loader::LoaderKind;
use apcache_tier::region::TierSpec;
use apcache_tier::serving::{LiveConfig, LiveRequest, LiveService};
use apcache_tier::stack::{ServingConfig, ServingStack};
use apcache_tier::{CacheOptions, ServingMode};

mod common;
use common::{ask, build, documents, queries};

fn answer(service: &LiveService, query: &Query) -> Result<(u64, Vec<u32>), String> {
    let request = LiveRequest {
        query: query.clone(),
        options: SearchOptions {
            k: 10,
            count: true,
            ..SearchOptions::default()
        },
        deadline: None,
        collection: None,
    };
    ask(service, request)
        .recv_timeout(Duration::from_secs(60))
        .unwrap()
}

#[test]
fn a_damaged_term_fails_its_queries_in_every_mode_and_no_other() {
    let dir = tempfile::tempdir().unwrap();
    let reader = build(dir.path(), &documents(3000, 5), true);
    let segment = &reader.segments()[0];
    // The longest list: the term with the most postings.
    let mut terms = segment.dictionary().stream();
    let mut longest = (String::new(), 0u64, 0u32);
    while let Some((term, ordinal)) = fst::Streamer::next(&mut terms) {
        let info = segment.term_info(ordinal).unwrap();
        if info.doc_freq > longest.2 {
            longest = (
                String::from_utf8(term.to_vec()).unwrap(),
                ordinal,
                info.doc_freq,
            );
        }
    }
    let (damaged, ordinal, _) = longest;
    let info = segment.term_info(ordinal).unwrap();
    let options = SearchOptions {
        k: 10,
        count: true,
        ..SearchOptions::default()
    };
    let searcher = Searcher::new(&reader);
    let others: Vec<(Query, (u64, Vec<u32>))> = queries(200, 9)
        .into_iter()
        .filter(|q| !q.terms().contains(&damaged.as_str()))
        .map(|q| {
            let r = searcher.search(&q, &options).unwrap();
            (q, (r.total_hits, r.hits.iter().map(|h| h.doc).collect()))
        })
        .collect();
    assert!(others.len() > 100);
    let postings_file = segment
        .meta()
        .file(FileKind::Postings)
        .unwrap()
        .name
        .clone();
    drop(reader);

    // Flip one bit in the middle of the term's postings.
    let path = dir.path().join(&postings_file);
    let mut bytes = std::fs::read(&path).unwrap();
    let at = HEADER_LEN + (info.postings_offset + info.postings_bytes() / 2) as usize;
    bytes[at] ^= 0x04;
    std::fs::write(&path, bytes).unwrap();

    let hit = Query::Term(damaged.clone());
    for mode in [
        ServingMode::Base,
        ServingMode::Hybrid,
        ServingMode::HybridPrefetch,
    ] {
        let cache = CacheOptions {
            segment_size: 4096,
            ..CacheOptions::default()
        };
        let config = ServingConfig {
            mode,
            cache_bytes: Some(256 * cache.segment_size as u64),
            tier: TierSpec::Anonymous,
            cache,
            loader: LoaderKind::Pread,
            ..ServingConfig::default()
        };
        let stack = Arc::new(ServingStack::assemble(dir.path(), &config, |_| {}).unwrap());
        let service = LiveService::start(
            stack,
            LiveConfig {
                threads: 2,
                queue_depth: 16,
            },
        )
        .unwrap();
        for attempt in 0..2 {
            let error = answer(&service, &hit).expect_err("a damaged term must not be answered");
            assert!(
                error.contains(&postings_file) && error.contains(&damaged),
                "{mode}, attempt {attempt}: {error}"
            );
        }
        for (query, want) in &others {
            assert_eq!(&answer(&service, query).unwrap(), want, "{mode}: {query}");
        }
        service.shutdown();
    }
}
