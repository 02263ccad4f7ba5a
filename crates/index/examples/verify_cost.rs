//! What verifying checksums costs on the query path:
//! `cargo run --release -p apcache-index --example verify_cost -- INDEX QUERIES.jsonl`, where
//! QUERIES.jsonl holds `{"query": ...}` lines (the search-benchmark-game's format).
//!
//! The index's files are read into the page cache first, so that what is timed is the
//! checksums, not the storage. Then, in one process:
//! - per term of the queries, the first lookup and postings read (which verify the term's
//!   metadata and postings) against the second (which only test the verified bit);
//! - per query, the first search (its terms verified on the way) against the second;
//! - CRC32C's own speed over the verified bytes.

use std::collections::BTreeSet;
use std::time::Instant;

use apcache_index::query::{parse_query, DefaultOperator};
use apcache_index::search::{IndexReader, SearchOptions, Searcher};

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() as f64 * p) as usize).min(sorted.len() - 1)]
}

fn summary(name: &str, mut micros: Vec<f64>) {
    micros.sort_by(f64::total_cmp);
    let mean = micros.iter().sum::<f64>() / micros.len() as f64;
    println!(
        "{name:<34} n={:<6} mean {mean:>8.2} us  p50 {:>8.2}  p99 {:>8.2}  max {:>9.2}",
        micros.len(),
        percentile(&micros, 0.5),
        percentile(&micros, 0.99),
        micros[micros.len() - 1]
    );
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let (Some(index), Some(file)) = (args.get(1), args.get(2)) else {
        return Err("usage: verify_cost INDEX QUERIES.jsonl".into());
    };
    let index = std::path::Path::new(index);
    // Into the page cache.
    for entry in std::fs::read_dir(index)? {
        let path = entry?.path();
        if path.is_file() {
            std::hint::black_box(std::fs::read(&path)?);
        }
    }
    let reader = IndexReader::open(index)?;
    let analyzer = reader.analyzer();
    let mut queries = Vec::new();
    let mut terms = BTreeSet::new();
    for line in std::fs::read_to_string(file)?.lines() {
        let Ok(value) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let Some(text) = value["query"].as_str() else {
            continue;
        };
        if let Ok(query) = parse_query(text, &analyzer, DefaultOperator::Or) {
            terms.extend(query.terms().into_iter().map(str::to_string));
            queries.push(query);
        }
    }
    // Term by term; the query passes below open a reader of their own, whose terms start
    // unverified.
    let mut first = Vec::new();
    let mut second = Vec::new();
    let mut bytes = 0u64;
    for term in &terms {
        for segment in reader.segments() {
            let timed = |bytes: &mut u64| -> Result<Option<f64>, Box<dyn std::error::Error>> {
                let start = Instant::now();
                let Some(entry) = segment.lookup(term)? else {
                    return Ok(None);
                };
                let postings = segment.verified_postings(&entry)?;
                let took = start.elapsed().as_secs_f64() * 1e6;
                *bytes += postings.len() as u64;
                Ok(Some(took))
            };
            if let Some(took) = timed(&mut bytes)? {
                first.push(took);
                second.push(timed(&mut 0)?.expect("found before"));
            }
        }
    }
    println!(
        "{} queries, {} distinct terms, {:.1} MB of their postings",
        queries.len(),
        terms.len(),
        bytes as f64 / 1e6
    );
    summary("term, first read (verifies)", first.clone());
    summary("term, second read (bit set)", second);
    let total_first: f64 = first.iter().sum();
    println!(
        "verifying every term once: {:.1} ms, {:.2} GB/s",
        total_first / 1e3,
        bytes as f64 / (total_first * 1e3)
    );

    let reader = IndexReader::open(index)?;
    let searcher = Searcher::new(&reader);
    let options = SearchOptions {
        k: 10,
        count: true,
        ..SearchOptions::default()
    };
    let pass = |times: &mut Vec<f64>| -> Result<(), Box<dyn std::error::Error>> {
        for query in &queries {
            let start = Instant::now();
            std::hint::black_box(searcher.search(query, &options)?);
            times.push(start.elapsed().as_secs_f64() * 1e6);
        }
        Ok(())
    };
    let (mut cold, mut warm, mut warm2) = (Vec::new(), Vec::new(), Vec::new());
    pass(&mut cold)?;
    pass(&mut warm)?;
    pass(&mut warm2)?;
    summary("query TOP_10+COUNT, first pass", cold);
    summary("query TOP_10+COUNT, second pass", warm);
    summary("query TOP_10+COUNT, third pass", warm2);
    Ok(())
}
