//! Times queries over an index, for profiling the evaluators without the CLI:
//! `cargo run --release -p apcache-index --example time_queries -- INDEX FILE [ROUNDS]`, where
//! FILE holds `TOP_10|TOP_1000|COUNT<TAB>query` lines. Prints the mean latency per mode, and
//! with `PER_QUERY=1` in the environment each query's mean latency and hits, slowest first.
//! `EVICT_MB=N` writes over N MiB of memory before each query (untimed), so that queries run
//! with cold caches, as they do among other engines' queries in `apcache-bench peers`.

use std::collections::BTreeMap;
use std::time::Instant;

use apcache_index::query::{parse_query, DefaultOperator};
use apcache_index::search::{IndexReader, SearchOptions, SearchStats, Searcher};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let (Some(index), Some(file)) = (args.get(1), args.get(2)) else {
        return Err("usage: time_queries INDEX FILE [ROUNDS]".into());
    };
    let rounds: usize = args.get(3).map_or(Ok(1), |r| r.parse())?;
    let reader = IndexReader::open(std::path::Path::new(index))?;
    let analyzer = reader.analyzer();
    let searcher = Searcher::new(&reader);
    let mut queries = Vec::new();
    for line in std::fs::read_to_string(file)?.lines() {
        let Some((mode, text)) = line.split_once('\t') else {
            continue;
        };
        let (k, count) = match mode {
            "COUNT" => (0, true),
            "TOP_10" => (10, false),
            "TOP_1000" => (1000, false),
            _ => continue,
        };
        if let Ok(query) = parse_query(text, &analyzer, DefaultOperator::Or) {
            let options = SearchOptions {
                k,
                count,
                ..SearchOptions::default()
            };
            queries.push((mode.to_string(), query, options, text.to_string()));
        }
    }
    let mut totals: BTreeMap<String, (f64, usize, SearchStats)> = BTreeMap::new();
    let mut per_query = vec![(0f64, 0u64); queries.len()];
    let evict_mb: usize = std::env::var("EVICT_MB").map_or(Ok(0), |mb| mb.parse())?;
    let mut evict = vec![0u8; evict_mb << 20];
    for _ in 0..rounds {
        for (q, (mode, query, options, _)) in queries.iter().enumerate() {
            for line in evict.chunks_mut(64) {
                line[0] = line[0].wrapping_add(1);
            }
            std::hint::black_box(&evict);
            let start = Instant::now();
            let result = searcher.search(query, options)?;
            let took = start.elapsed().as_secs_f64() * 1e6;
            per_query[q] = (per_query[q].0 + took, result.total_hits);
            let entry = totals.entry(mode.clone()).or_default();
            entry.0 += took;
            entry.1 += 1;
            entry.2 += result.stats;
        }
    }
    if std::env::var_os("PER_QUERY").is_some() {
        let mut order: Vec<usize> = (0..queries.len()).collect();
        order.sort_by(|&x, &y| per_query[y].0.total_cmp(&per_query[x].0));
        for q in order {
            let (mode, _, _, text) = &queries[q];
            let (micros, hits) = per_query[q];
            println!(
                "{:10.1} us {hits:>8} hits  {mode}\t{text}",
                micros / rounds as f64
            );
        }
    }
    for (mode, (micros, n, stats)) in totals {
        println!(
            "{mode}: {n} queries, mean {:.1} us, blocks decoded {:.1}/query, skipped {:.1}/query",
            micros / n as f64,
            stats.blocks_decoded as f64 / n as f64,
            stats.blocks_skipped as f64 / n as f64
        );
    }
    Ok(())
}
