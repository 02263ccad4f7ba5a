//! Times queries through the tantivy peer index, query by query, for comparing with
//! `apcache-index`'s `time_queries` example: `time_tantivy APCACHE_INDEX TANTIVY_INDEX FILE
//! [ROUNDS]`, where FILE holds `TOP_10|TOP_1000|COUNT<TAB>query` lines (parsed by apcache,
//! translated by `to_tantivy`). With `PER_QUERY=1`, prints each query's mean latency.

use std::time::Instant;

use apcache_bench::peer_engines::{open_tantivy, to_tantivy};
use apcache_index::query::{parse_query, DefaultOperator};
use apcache_index::search::IndexReader;
use tantivy::collector::{Count, TopDocs};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let (Some(index), Some(peer), Some(file)) = (args.get(1), args.get(2), args.get(3)) else {
        return Err("usage: time_tantivy APCACHE_INDEX TANTIVY_INDEX FILE [ROUNDS]".into());
    };
    let rounds: usize = args.get(4).map_or(Ok(1), |r| r.parse())?;
    let reader = IndexReader::open(std::path::Path::new(index))?;
    let analyzer = reader.analyzer();
    let (tantivy, field) = open_tantivy(std::path::Path::new(peer))?;
    let searcher = tantivy.reader()?.searcher();
    let mut queries = Vec::new();
    for line in std::fs::read_to_string(file)?.lines() {
        let Some((mode, text)) = line.split_once('\t') else {
            continue;
        };
        let k = match mode {
            "COUNT" => 0,
            "TOP_10" => 10,
            "TOP_1000" => 1000,
            _ => continue,
        };
        if let Ok(query) = parse_query(text, &analyzer, DefaultOperator::Or) {
            queries.push((
                mode.to_string(),
                to_tantivy(&query, field),
                k,
                text.to_string(),
            ));
        }
    }
    let mut per_query = vec![0f64; queries.len()];
    for _ in 0..rounds {
        for (q, (_, query, k, _)) in queries.iter().enumerate() {
            let start = Instant::now();
            if *k == 0 {
                searcher.search(query, &Count)?;
            } else {
                searcher.search(query, &TopDocs::with_limit(*k).order_by_score())?;
            }
            per_query[q] += start.elapsed().as_secs_f64() * 1e6;
        }
    }
    let mut by_mode = std::collections::BTreeMap::<&str, (f64, usize)>::new();
    for (q, (mode, _, _, text)) in queries.iter().enumerate() {
        let micros = per_query[q] / rounds as f64;
        if std::env::var_os("PER_QUERY").is_some() {
            println!("{micros:10.1} us  {mode}\t{text}");
        }
        let entry = by_mode.entry(mode).or_default();
        entry.0 += micros;
        entry.1 += 1;
    }
    for (mode, (micros, n)) in by_mode {
        println!("{mode}: {n} queries, mean {:.1} us", micros / n as f64);
    }
    Ok(())
}
