//! Times one indexing thread's work on documents already in memory: inverting them into a
//! posting table, then flushing it, a few rounds, printing each round and the fastest.
//!
//! `cargo run --release -p apcache-index --example invert_speed -- FILE DOCS ROUNDS`

use std::io::BufRead;
use std::time::Instant;

use apcache_index::analyzer::Analyzer;
use apcache_index::indexer::{ArenaPlacement, FlushFormat, PostingTable};
use apcache_index::ingest::Document;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let usage = "usage: invert_speed FILE DOCS ROUNDS";
    let path = args.next().ok_or(usage)?;
    let limit: usize = args.next().ok_or(usage)?.parse()?;
    let rounds: usize = args.next().ok_or(usage)?.parse()?;
    let file = std::io::BufReader::new(std::fs::File::open(path)?);
    let mut documents = Vec::new();
    for line in file.lines().take(limit) {
        let line = line?;
        let (title, body) = line.split_once('\t').unwrap_or(("", &line));
        documents.push(Document {
            id: None,
            title: title.to_owned(),
            body: body.to_owned(),
            json: None,
        });
    }
    let analyzer = Analyzer::default();
    let dir = tempfile::tempdir()?;
    let (mut best_invert, mut best_flush, mut best_tokenize) = (f64::MAX, f64::MAX, f64::MAX);
    let mut tokens = 0u64;
    for _ in 0..rounds {
        tokens = 0;
        let start = Instant::now();
        for doc in &documents {
            for text in [doc.title.as_str(), doc.body.as_str()] {
                analyzer.for_each_token_with_position(text, |_, token| {
                    std::hint::black_box(token);
                    tokens += 1;
                });
            }
        }
        best_tokenize = best_tokenize.min(start.elapsed().as_secs_f64());
    }
    for round in 0..rounds {
        let mut table = PostingTable::new(ArenaPlacement::Anonymous, true)?;
        table.begin_segment(dir.path(), &format!("seg_{round:06}"))?;
        let start = Instant::now();
        for (did, doc) in documents.iter().enumerate() {
            table.add_document(did as u32, doc, &analyzer)?;
        }
        let invert = start.elapsed().as_secs_f64();
        let bytes = table.bytes();
        let start = Instant::now();
        table.flush(FlushFormat::BEFORE_MERGE)?;
        let flush = start.elapsed().as_secs_f64();
        best_invert = best_invert.min(invert);
        best_flush = best_flush.min(flush);
        println!(
            "round {round}: invert {invert:.3} s, flush {flush:.3} s, table {:.1} MiB",
            bytes as f64 / (1 << 20) as f64
        );
    }
    println!(
        "{} documents, {tokens} tokens: fastest analysis alone {best_tokenize:.3} s, \
         fastest invert {best_invert:.3} s, fastest flush {best_flush:.3} s",
        documents.len()
    );
    Ok(())
}
