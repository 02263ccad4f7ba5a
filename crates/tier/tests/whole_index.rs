//! A postings cache sized at 100% of the index (as `cache_bytes_for_fraction` computes it,
//! segment rounding included) holds every term: once warm, it misses nothing, whatever the
//! segment size. Below 100% a fraction is of the postings bytes.

use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use apcache_index::search::SearchOptions;
use apcache_tier::loader::LoaderKind;
use apcache_tier::region::TierSpec;
use apcache_tier::serving::{LiveConfig, LiveRequest, LiveService};
use apcache_tier::stack::{
    cache_bytes_for_fraction, whole_index_cache_bytes, ServingConfig, ServingStack,
};
use apcache_tier::{CacheOptions, ServingMode};

mod common;
use common::{build, documents, queries};

#[test]
fn a_warm_cache_of_the_whole_index_never_misses() {
    let dir = tempfile::tempdir().unwrap();
    let reader = build(dir.path(), &documents(2000, 3), true);
    let queries = queries(300, 4);
    for segment_size in [4096, 32 << 10] {
        let whole = whole_index_cache_bytes(&reader, segment_size).unwrap();
        let postings: u64 = reader
            .segments()
            .iter()
            .map(|s| s.postings_len() as u64)
            .sum();
        assert!(whole >= postings, "{whole} < {postings}");
        let full = cache_bytes_for_fraction(&reader, segment_size, 1.0).unwrap();
        assert_eq!(
            full, whole,
            "100% is the whole index after segment rounding"
        );
        assert_eq!(
            cache_bytes_for_fraction(&reader, segment_size, 0.5).unwrap(),
            postings / 2,
            "50% is half the postings bytes"
        );
        let config = ServingConfig {
            mode: ServingMode::HybridPrefetch,
            cache_bytes: Some(full),
            tier: TierSpec::Anonymous,
            cache: CacheOptions {
                segment_size,
                ..CacheOptions::default()
            },
            loader: LoaderKind::Pread,
            ..ServingConfig::default()
        };
        let stack = Arc::new(ServingStack::assemble(dir.path(), &config, |_| {}).unwrap());
        let service = LiveService::start(
            stack,
            LiveConfig {
                threads: 1,
                queue_depth: 8,
            },
        )
        .unwrap();
        let run = || {
            for query in &queries {
                let (tx, rx) = mpsc::channel();
                let request = LiveRequest {
                    query: query.clone(),
                    options: SearchOptions::default(),
                    deadline: None,
                    collection: None,
                };
                let ticket = service
                    .submit(request, move |a| {
                        let _ = tx.send(a.is_ok());
                    })
                    .unwrap();
                assert!(rx.recv_timeout(Duration::from_secs(30)).unwrap());
                drop(ticket);
            }
        };
        run();
        let warm = service.counters();
        run();
        let after = service.counters();
        assert_eq!(
            after.cache_misses, warm.cache_misses,
            "{segment_size}-byte segments: a warm 100% cache missed"
        );
        assert!(after.cache_hits > warm.cache_hits);
        assert_eq!(after.cache.unwrap().evictions, 0);
        service.shutdown();
    }
}
