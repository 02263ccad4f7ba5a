//! The live service in every serving mode against plain evaluation: requests submitted from
//! several client threads at once, a small cache, two query threads; every answer must equal
//! `Searcher`'s, and the cache modes must actually serve from the tier. Also: a full queue is
//! refused at once, a request past its deadline is not run, a dropped ticket cancels.

use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use apcache_index::search::{SearchOptions, Searcher};
use apcache_tier::loader::LoaderKind;
use apcache_tier::region::TierSpec;
use apcache_tier::serving::{LiveConfig, LiveError, LiveRequest, LiveService};
use apcache_tier::stack::{ServingConfig, ServingStack};
use apcache_tier::{CacheOptions, ServingMode};

mod common;
use common::{ask, build, documents, phrases, queries};

fn stack(dir: &std::path::Path, mode: ServingMode, cache_segments: u64) -> Arc<ServingStack> {
    let cache = CacheOptions {
        segment_size: 4096,
        ..CacheOptions::default()
    };
    let config = ServingConfig {
        mode,
        cache_bytes: Some(cache_segments * cache.segment_size as u64),
        tier: TierSpec::Anonymous,
        cache,
        loader: LoaderKind::Pread,
        ..ServingConfig::default()
    };
    Arc::new(ServingStack::assemble(dir, &config, |_| {}).unwrap())
}

#[test]
fn every_mode_answers_like_plain_evaluation() {
    let dir = tempfile::tempdir().unwrap();
    let reader = build(dir.path(), &documents(3000, 7), true);
    let queries = queries(400, 11);
    let options = SearchOptions {
        k: 10,
        count: true,
        ..SearchOptions::default()
    };
    let searcher = Searcher::new(&reader);
    let want: Vec<(u64, Vec<u32>)> = queries
        .iter()
        .map(|q| {
            let r = searcher.search(q, &options).unwrap();
            (r.total_hits, r.hits.iter().map(|h| h.doc).collect())
        })
        .collect();
    for mode in [
        ServingMode::Base,
        ServingMode::BasePrefetch { lookahead: 4 },
        ServingMode::Hybrid,
        ServingMode::HybridPrefetch,
    ] {
        let service = LiveService::start(
            stack(dir.path(), mode, 64),
            LiveConfig {
                threads: 2,
                queue_depth: queries.len(),
            },
        )
        .unwrap();
        // Three client threads submit interleaved slices at once.
        let answers: Vec<_> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..3)
                .map(|c| {
                    let (service, queries) = (&service, &queries);
                    scope.spawn(move || {
                        (c..queries.len())
                            .step_by(3)
                            .map(|i| {
                                let rx = ask(
                                    service,
                                    LiveRequest {
                                        query: queries[i].clone(),
                                        options,
                                        deadline: None,
                                        collection: None,
                                    },
                                );
                                (i, rx)
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().unwrap())
                .collect()
        });
        for (i, rx) in answers {
            let got = rx.recv_timeout(Duration::from_secs(60)).unwrap().unwrap();
            assert_eq!(got, want[i], "{mode}: query {i} ({})", queries[i]);
        }
        let counters = service.counters();
        assert_eq!(counters.completed, queries.len() as u64, "{mode}");
        if mode.uses_cache() {
            assert!(
                counters.cache_hits > 0,
                "{mode}: nothing served from the tier"
            );
            assert!(counters.cache.unwrap().terms_loaded > 0, "{mode}");
        }
        service.shutdown();
    }
}

/// Phrases read positions from the tier in the cache modes (and answer as plain evaluation
/// does); term and boolean queries never load positions.
#[test]
fn phrase_positions_are_served_from_the_tier() {
    let dir = tempfile::tempdir().unwrap();
    let reader = build(dir.path(), &documents(3000, 5), true);
    let searcher = Searcher::new(&reader);
    let options = SearchOptions {
        k: 10,
        count: true,
        ..SearchOptions::default()
    };
    let run = |mode: ServingMode, queries: &[apcache_index::query::Query]| {
        // 48 segments of 4 KiB: less than the phrases' postings and positions, so entries are
        // evicted and loaded again while queries run.
        let service = LiveService::start(
            stack(dir.path(), mode, 48),
            LiveConfig {
                threads: 2,
                queue_depth: queries.len(),
            },
        )
        .unwrap();
        let answers: Vec<_> = queries
            .iter()
            .map(|q| {
                ask(
                    &service,
                    LiveRequest {
                        query: q.clone(),
                        options,
                        deadline: None,
                        collection: None,
                    },
                )
            })
            .collect();
        for (query, rx) in queries.iter().zip(answers) {
            let got = rx.recv_timeout(Duration::from_secs(60)).unwrap().unwrap();
            let want = searcher.search(query, &options).unwrap();
            let want = (want.total_hits, want.hits.iter().map(|h| h.doc).collect());
            assert_eq!(got, want, "{mode}: {query}");
        }
        let counters = service.counters();
        service.shutdown();
        counters
    };
    let phrase_queries = phrases(150, 9);
    for mode in [
        ServingMode::Base,
        ServingMode::BasePrefetch { lookahead: 4 },
        ServingMode::Hybrid,
        ServingMode::HybridPrefetch,
    ] {
        let counters = run(mode, &phrase_queries);
        if mode.uses_cache() {
            let cache = counters.cache.unwrap();
            assert!(cache.positions_loaded > 0, "{mode}: no positions cached");
            assert!(cache.evictions > 0, "{mode}: the cache never filled");
        }
    }
    let counters = run(ServingMode::HybridPrefetch, &queries(150, 3));
    let cache = counters.cache.unwrap();
    assert!(cache.terms_loaded > 0);
    assert_eq!(cache.positions_loaded, 0, "term queries loaded positions");
}

#[test]
fn refusals_deadlines_and_cancellation() {
    let dir = tempfile::tempdir().unwrap();
    build(dir.path(), &documents(2000, 3), true);
    let queries = queries(50, 5);
    let service = LiveService::start(
        stack(dir.path(), ServingMode::Base, 0),
        LiveConfig {
            threads: 1,
            queue_depth: 2,
        },
    )
    .unwrap();
    let request = |i: usize, deadline: Option<Instant>| LiveRequest {
        query: queries[i].clone(),
        options: SearchOptions::default(),
        deadline,
        collection: None,
    };

    // A deadline already past: answered without running.
    let rx = ask(&service, request(0, Some(Instant::now())));
    assert!(rx.recv().unwrap().unwrap_err().contains("deadline"));

    // Submissions beyond the queue's depth are refused at once (the one query thread is
    // kept busy by a burst; some of the burst must be refused, none may be lost).
    let mut receivers = Vec::new();
    let mut refused = 0;
    for i in 0..200 {
        let (tx, rx) = mpsc::channel();
        match service.submit(request(i % queries.len(), None), move |a| {
            let _ = tx.send(a.is_ok());
        }) {
            Ok(ticket) => {
                std::mem::forget(ticket);
                receivers.push(rx);
            }
            Err(LiveError::Overloaded(waiting)) => {
                assert!(waiting >= 2);
                refused += 1;
            }
            Err(e) => panic!("{e}"),
        }
    }
    assert!(
        refused > 0,
        "a burst of 200 never found the queue of 2 full"
    );
    for rx in receivers {
        assert!(rx.recv_timeout(Duration::from_secs(30)).unwrap());
    }
    assert_eq!(service.counters().rejected, refused);

    // A ticket dropped before its query runs: cancelled, not run.
    let (tx, rx) = mpsc::channel();
    let blocker = ask(&service, request(1, None));
    let ticket = service
        .submit(request(2, None), move |a| {
            let _ = tx.send(a.map(|_| ()).map_err(|e| e.to_string()));
        })
        .unwrap();
    drop(ticket);
    blocker.recv().unwrap().unwrap();
    let outcome = rx.recv().unwrap();
    // It may have been taken before the drop; if not, it was cancelled.
    if let Err(e) = outcome {
        assert!(e.contains("cancelled"), "{e}");
    }
    service.shutdown();
    assert!(matches!(
        service.submit(request(3, None), |_| {}),
        Err(LiveError::ShuttingDown)
    ));
}

/// One client, one request at a time: in `hybrid-prefetch` the query thread prepares each
/// job itself (the worker has nothing queued to run ahead of), and the cache still fills and
/// serves, with every answer exact. A tiny cache makes preparations wait for room.
#[test]
fn one_request_at_a_time_is_prepared_by_its_query_thread() {
    let dir = tempfile::tempdir().unwrap();
    let reader = build(dir.path(), &documents(3000, 13), true);
    let queries = queries(300, 17);
    let options = SearchOptions {
        k: 10,
        count: true,
        ..SearchOptions::default()
    };
    let searcher = Searcher::new(&reader);
    for cache_segments in [16, 256] {
        let service = LiveService::start(
            stack(dir.path(), ServingMode::HybridPrefetch, cache_segments),
            LiveConfig {
                threads: 2,
                queue_depth: 4,
            },
        )
        .unwrap();
        for round in 0..2 {
            for query in &queries {
                let want = searcher.search(query, &options).unwrap();
                let got = ask(
                    &service,
                    LiveRequest {
                        query: query.clone(),
                        options,
                        deadline: None,
                        collection: None,
                    },
                )
                .recv_timeout(Duration::from_secs(60))
                .unwrap()
                .unwrap();
                assert_eq!(
                    got,
                    (want.total_hits, want.hits.iter().map(|h| h.doc).collect()),
                    "{cache_segments} segments, round {round}: {query}"
                );
            }
        }
        let counters = service.counters();
        assert_eq!(counters.completed, 2 * queries.len() as u64);
        assert!(counters.cache_hits > 0 && counters.cache.unwrap().terms_loaded > 0);
        service.shutdown();
    }
}
