//! The result cache in the live service, under concurrent clients with a tiny heap, for every
//! matching kind, policy and allocator: every answer, cached or not, is exactly what
//! evaluating the query gives (the same documents, scores and totals), and repeated queries
//! are answered from the cache.

use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use apcache_index::query::{BoolQuery, Query};
use apcache_index::search::{SearchOptions, Searcher};
use apcache_tier::result_cache::{
    AllocatorKind, Matching, PolicyKind, ResultCache, ResultCacheConfig,
};
use apcache_tier::serving::{LiveConfig, LiveRequest, LiveService, ServeConfig, Server};
use apcache_tier::stack::{ServingConfig, ServingStack};
use apcache_tier::ServingMode;

mod common;
use common::{build, documents, queries, term, Rng};

type Answer = (u64, bool, Vec<(u32, u32)>);

fn ask(service: &LiveService, query: &Query, options: SearchOptions) -> (Answer, bool) {
    let (tx, rx) = mpsc::channel();
    let request = LiveRequest {
        query: query.clone(),
        options,
        deadline: None,
        collection: None,
    };
    let ticket = service
        .submit(request, move |answer| {
            let answer = answer.expect("an answer");
            let _ = tx.send((
                (
                    answer.result.total_hits,
                    answer.result.total_hits_exact,
                    answer
                        .result
                        .hits
                        .iter()
                        .map(|h| (h.doc, h.score.to_bits()))
                        .collect(),
                ),
                answer.from_cache,
            ));
        })
        .unwrap();
    let got = rx.recv_timeout(Duration::from_secs(60)).unwrap();
    drop(ticket);
    got
}

/// Queries that repeat, in permuted forms too, with disjunctions of terms whose terms are
/// then asked alone (what partial matching answers from sections).
fn workload(n: usize, seed: u64) -> Vec<Query> {
    let base = queries(60, seed);
    let mut rng = Rng(seed ^ 0x5eed);
    let mut out = Vec::new();
    for _ in 0..n {
        let q = base[rng.zipf(base.len())].clone();
        let q = match q {
            Query::Bool(b) if rng.next().is_multiple_of(2) => {
                let mut should = b.should.clone();
                should.reverse();
                let mut must = b.must.clone();
                must.reverse();
                Query::Bool(BoolQuery {
                    must,
                    should,
                    must_not: b.must_not.clone(),
                })
            }
            Query::Bool(b) if rng.next().is_multiple_of(3) && !b.should.is_empty() => {
                b.should[rng.next() as usize % b.should.len()].clone()
            }
            q => q,
        };
        out.push(q);
        if rng.next().is_multiple_of(5) {
            out.push(term(rng.zipf(40)));
        }
    }
    out
}

#[test]
fn cached_answers_equal_evaluation_under_concurrent_clients() {
    let dir = tempfile::tempdir().unwrap();
    let reader = build(dir.path(), &documents(3000, 21), true);
    let searcher = Searcher::new(&reader);
    let work = workload(400, 5);
    let mut total_hits = 0;
    for (matching, policy, allocator, shards) in [
        (Matching::Exact, PolicyKind::Lru, AllocatorKind::FirstFit, 1),
        (
            Matching::Isomorphic,
            PolicyKind::S3Fifo,
            AllocatorKind::Tlsf,
            2,
        ),
        (
            Matching::Partial1,
            PolicyKind::Dlirs,
            AllocatorKind::Tlsf,
            1,
        ),
        (
            Matching::Partial1,
            PolicyKind::Random,
            AllocatorKind::FirstFit,
            3,
        ),
    ] {
        let config = ResultCacheConfig {
            bytes: 6 << 10,
            policy,
            allocator,
            matching,
            min_postings: 0,
            shards,
            seed: 3,
        };
        let evaluate = ResultCache::new(config);
        let stack = ServingStack::assemble(
            dir.path(),
            &ServingConfig {
                mode: ServingMode::Base,
                result_cache: Some(config),
                ..ServingConfig::default()
            },
            |_| {},
        )
        .unwrap();
        let service = LiveService::start(
            Arc::new(stack),
            LiveConfig {
                threads: 2,
                queue_depth: 64,
            },
        )
        .unwrap();
        let hits: usize = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..4)
                .map(|c| {
                    let (service, work, searcher, evaluate) =
                        (&service, &work, &searcher, &evaluate);
                    scope.spawn(move || {
                        let mut hits = 0;
                        for (i, query) in work.iter().enumerate().skip(c).step_by(4) {
                            let options = SearchOptions {
                                k: 10,
                                count: i.is_multiple_of(3),
                                ..SearchOptions::default()
                            };
                            let (got, cached) = ask(service, query, options);
                            let want = searcher
                                .search(&evaluate.evaluated_form(query), &options)
                                .unwrap();
                            let want: Answer = (
                                want.total_hits,
                                want.total_hits_exact,
                                want.hits
                                    .iter()
                                    .map(|h| (h.doc, h.score.to_bits()))
                                    .collect(),
                            );
                            assert_eq!(
                                got, want,
                                "{matching:?} {policy:?}: {query} (cached: {cached})"
                            );
                            hits += usize::from(cached);
                        }
                        hits
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).sum()
        });
        let counters = service.counters();
        assert_eq!(counters.result_cache_hits as usize, hits);
        assert!(hits > 0, "{matching:?}: no answer came from the cache");
        let cache = service.stack().result_cache.as_ref().unwrap().counters();
        assert!(cache.bytes <= 6 << 10);
        if matching == Matching::Partial1 {
            assert!(cache.section_hits > 0, "{policy:?}: no section was used");
        }
        total_hits += hits;
        service.shutdown();
    }
    assert!(total_hits > 100);
}

/// The benchmarks' harness ([`Server`]) in front of the same cache, its heap in DRAM or in the
/// tier: a repeated queue is answered from it, with the answers evaluation gives.
#[test]
fn the_benchmark_harness_answers_repeats_from_the_cache() {
    let dir = tempfile::tempdir().unwrap();
    let reader = build(dir.path(), &documents(2000, 31), true);
    let searcher = Searcher::new(&reader);
    let work = workload(200, 9);
    let options = SearchOptions {
        k: 10,
        count: true,
        ..SearchOptions::default()
    };
    for (mode, in_tier) in [
        (ServingMode::Base, false),
        (ServingMode::HybridPrefetch, false),
        (ServingMode::Base, true),
    ] {
        let config = ResultCacheConfig {
            bytes: 1 << 20,
            policy: PolicyKind::Lru,
            allocator: AllocatorKind::Tlsf,
            matching: Matching::Partial1,
            min_postings: 0,
            shards: 1,
            seed: 1,
        };
        let stack = ServingStack::assemble(
            dir.path(),
            &ServingConfig {
                mode,
                cache_bytes: mode.uses_cache().then_some(4 << 20),
                cache: apcache_tier::CacheOptions {
                    segment_size: 4096,
                    ..apcache_tier::CacheOptions::default()
                },
                result_cache: Some(config),
                result_cache_in_tier: in_tier,
                tier: apcache_tier::region::TierSpec::Directory(dir.path().join("tier")),
                ..ServingConfig::default()
            },
            |_| {},
        )
        .unwrap();
        let serve_config = ServeConfig {
            mode,
            threads: 2,
            search: options,
            warm_read: 4096,
            warm_emulation: None,
        };
        let server = Server::new(
            dir.path(),
            &stack.reader,
            stack.cache.as_ref(),
            serve_config,
        )
        .unwrap()
        .with_result_cache(stack.result_cache.as_ref());
        let first = server.run(&work).unwrap();
        let second = server.run(&work).unwrap();
        assert_eq!(second.result_cache_hits, work.len() as u64, "{mode}");
        assert!(first.result_cache_hits < work.len() as u64, "{mode}");
        let cache = stack.result_cache.as_ref().unwrap();
        for (i, query) in work.iter().enumerate() {
            let want = searcher
                .search(&cache.evaluated_form(query), &options)
                .unwrap();
            let want_docs: Vec<u32> = want.hits.iter().map(|h| h.doc).collect();
            for report in [&first, &second] {
                let got = &report.outcomes[i];
                assert_eq!(
                    (got.total_hits, &got.docs),
                    (want.total_hits, &want_docs),
                    "{mode}: {query}"
                );
            }
        }
    }
}
