//! What a result-cache hit costs inside the process: the key of a query built and looked up,
//! the stored top 10 unpacked, for every policy and allocator.
//! `cargo run --release -p apcache-tier --example result_cache_hit`

use std::time::Instant;

use apcache_index::query::{BoolQuery, Query};
use apcache_index::search::{Hit, SearchOptions};
use apcache_tier::result_cache::{
    AllocatorKind, CachedResult, Matching, PolicyKind, ResultCache, ResultCacheConfig,
};

fn main() {
    let options = SearchOptions::default();
    let queries: Vec<Query> = (0..10_000u32)
        .map(|i| {
            Query::Bool(BoolQuery {
                must: vec![],
                should: vec![
                    Query::Term(format!("word{}", i % 997)),
                    Query::Term(format!("term{i}")),
                ],
                must_not: vec![],
            })
        })
        .collect();
    let result = CachedResult {
        total_hits: 12_345,
        total_hits_exact: false,
        hits: (0..10)
            .map(|i| Hit {
                doc: i * 1000,
                score: 20.0 - i as f32,
            })
            .collect(),
    };
    for policy in PolicyKind::ALL {
        for allocator in AllocatorKind::ALL {
            let cache = ResultCache::new(ResultCacheConfig {
                bytes: 64 << 20,
                policy,
                allocator,
                matching: Matching::Isomorphic,
                min_postings: 0,
                shards: 1,
                seed: 1,
            });
            for q in &queries {
                let key = cache.key(1, &cache.evaluated_form(q), &options);
                cache.insert(&key, &result, &[], 100);
            }
            let mut ns = Vec::with_capacity(200_000);
            for round in 0..20 {
                for q in &queries {
                    let started = Instant::now();
                    let key = cache.key(1, &cache.evaluated_form(q), &options);
                    let hit = cache.get(&key);
                    ns.push(started.elapsed().as_nanos() as u64);
                    assert!(hit.is_some() || round > 0);
                }
            }
            ns.sort_unstable();
            let mean = ns.iter().sum::<u64>() as f64 / ns.len() as f64;
            println!(
                "{:<7} {:<9} hit (key, lookup, unpack): mean {:>6.0} ns, p50 {:>6} ns, p99 {:>6} ns; allocation p50 {:?} ns, p99 {:?} ns",
                policy.name(),
                allocator.name(),
                mean,
                ns[ns.len() / 2],
                ns[ns.len() * 99 / 100],
                cache.allocation_ns(0.5),
                cache.allocation_ns(0.99)
            );
        }
    }
}
