//! What the serving tests share: small random indices with Zipf-distributed words, and query
//! streams over their frequent words with many repeats.

#![allow(dead_code)] // each test binary uses a different part

use std::path::Path;
use std::sync::mpsc;

use apcache_index::indexer::{build_index_from_documents, IndexOptions};
use apcache_index::ingest::Document;
use apcache_index::query::{BoolQuery, PhraseQuery, Query};
use apcache_index::search::IndexReader;
use apcache_tier::serving::{LiveRequest, LiveService};

/// A tiny deterministic generator (xorshift), so the test needs no RNG crate.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// Word `i` of `n` with probability about proportional to 1/(i+1).
    pub fn zipf(&mut self, n: usize) -> usize {
        let u = (self.next() % 1_000_000) as f64 / 1_000_000.0;
        ((n as f64 + 1.0).powf(u) - 1.0) as usize % n
    }
}

pub fn word(i: usize) -> String {
    format!("w{i}")
}

pub const WORDS: usize = 300;

pub fn documents(count: usize, seed: u64) -> Vec<Document> {
    let mut rng = Rng(seed);
    (0..count)
        .map(|i| {
            let len = 5 + rng.next() as usize % 40;
            let body: Vec<String> = (0..len).map(|_| word(rng.zipf(WORDS))).collect();
            Document {
                id: None,
                title: format!("doc {i}"),
                body: body.join(" "),
                json: None,
            }
        })
        .collect()
}

pub fn term(i: usize) -> Query {
    Query::Term(word(i))
}

pub fn two(a: usize, b: usize, and: bool) -> Query {
    let (must, should) = if and {
        (vec![term(a), term(b)], vec![])
    } else {
        (vec![], vec![term(a), term(b)])
    };
    Query::Bool(BoolQuery {
        must,
        should,
        must_not: vec![],
    })
}

/// Single terms, ANDs and ORs over frequent words, with many repeats (a term often comes
/// back while an earlier query holding it is still queued).
pub fn queries(count: usize, seed: u64) -> Vec<Query> {
    let mut rng = Rng(seed);
    (0..count)
        .map(|_| {
            let a = rng.zipf(40);
            let b = rng.zipf(40);
            match rng.next() % 3 {
                0 => term(a),
                1 => two(a, b, true),
                _ => two(a, b, false),
            }
        })
        .collect()
}

/// Phrases of two or three frequent words, exact and sloppy, some alone and some OR'ed with
/// a term, with repeats.
pub fn phrases(count: usize, seed: u64) -> Vec<Query> {
    let mut rng = Rng(seed);
    (0..count)
        .map(|_| {
            let len = 2 + rng.next() as usize % 2;
            let terms = (0..len as u32).map(|i| (i, word(rng.zipf(30)))).collect();
            let slop = [0, 0, 2][rng.next() as usize % 3];
            let phrase = Query::Phrase(PhraseQuery { terms, slop });
            if rng.next().is_multiple_of(4) {
                Query::Bool(BoolQuery {
                    must: vec![],
                    should: vec![phrase, term(rng.zipf(40))],
                    must_not: vec![],
                })
            } else {
                phrase
            }
        })
        .collect()
}

pub fn build(dir: &Path, docs: &[Document], merge: bool) -> IndexReader {
    let options = IndexOptions {
        batch_docs: 700,
        memory_budget: if merge { 64 << 20 } else { 128 << 10 },
        merge,
        ..IndexOptions::default()
    };
    build_index_from_documents(docs, dir, &options, |_, _| {}).unwrap();
    IndexReader::open(dir).unwrap()
}

/// Submits `request` to `service`; the answer (total and DIDs, or the error's text) arrives
/// on the receiver. The ticket is kept alive (dropping it would cancel the request).
pub fn ask(
    service: &LiveService,
    request: LiveRequest,
) -> mpsc::Receiver<Result<(u64, Vec<u32>), String>> {
    let (tx, rx) = mpsc::channel();
    let ticket = service
        .submit(request, move |answer| {
            let _ = tx.send(
                answer
                    .map(|a| {
                        (
                            a.result.total_hits,
                            a.result.hits.iter().map(|h| h.doc).collect(),
                        )
                    })
                    .map_err(|e| e.to_string()),
            );
        })
        .unwrap();
    // Keep the ticket alive until the answer comes: dropping it would cancel the request.
    std::mem::forget(ticket);
    rx
}
