//! Cancellation reaches the evaluators wherever they are: a query whose flag is raised while
//! it runs returns `IndexError::Cancelled` within milliseconds, even inside one document's
//! long sloppy-phrase sweep, and a query whose flag is up before it starts does no work on
//! any evaluation path.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use apcache_index::analyzer::Analyzer;
use apcache_index::indexer::{build_index_from_documents, IndexOptions};
use apcache_index::ingest::Document;
use apcache_index::query::{parse_query, DefaultOperator, Query};
use apcache_index::search::{CancelScope, IndexReader, SearchOptions, Searcher};
use apcache_index::IndexError;

/// How long after the flag is raised a query may still run. Checks come every few hundred
/// microseconds or less; the bound leaves room for a loaded machine and the test profile.
const STOP_BOUND: Duration = Duration::from_millis(150);

/// 30 documents of a word of their own (`d0`, `d1`, ...), every tenth `y`, then the word `w`
/// 40,000 times, then `x`: a phrase of `w` repeated and then `x` sweeps through every `w` of
/// each document before it reaches its one match at the end.
fn dense_index(dir: &std::path::Path) -> IndexReader {
    let docs: Vec<Document> = (0..30)
        .map(|i| {
            let y = if i % 10 == 0 { " y" } else { "" };
            Document {
                id: Some(i.to_string()),
                title: String::new(),
                body: format!("d{i}{y} {}x", "w ".repeat(40_000)),
                json: None,
            }
        })
        .collect();
    build_index_from_documents(&docs, dir, &IndexOptions::default(), |_, _| {}).unwrap();
    IndexReader::open(dir).unwrap()
}

fn parse(text: &str) -> Query {
    parse_query(text, &Analyzer::default(), DefaultOperator::Or).unwrap()
}

/// Runs `query` with `options` inside a scope whose flag another thread raises after `delay`;
/// returns the result and how long after the flag the search returned.
fn run_cancelled_after(
    reader: &IndexReader,
    query: &Query,
    options: &SearchOptions,
    delay: Duration,
) -> (Result<u64, IndexError>, Duration) {
    let flag = Arc::new(AtomicBool::new(false));
    let _scope = CancelScope::enter(flag.clone());
    let raised = std::thread::spawn(move || {
        std::thread::sleep(delay);
        flag.store(true, Ordering::Relaxed);
        Instant::now()
    });
    let result = Searcher::new(reader)
        .search(query, options)
        .map(|r| r.total_hits);
    let returned = Instant::now();
    let raised = raised.join().unwrap();
    (result, returned.saturating_duration_since(raised))
}

#[test]
fn a_long_sloppy_phrase_stops_soon_after_its_flag_is_raised() {
    let dir = tempfile::tempdir().unwrap();
    let reader = dense_index(dir.path());
    // 63 cursors over one list of 40,000 positions in each document, each step searching the
    // queue and the repeat group: a large part of a second in each document, between two
    // postings, and seconds in all uncancelled.
    // Built directly, as the parser would build `"w w ... w x"~8`.
    let mut terms: Vec<(u32, String)> = (0..63).map(|i| (i, "w".to_string())).collect();
    terms.push((63, "x".to_string()));
    let query = Query::Phrase(apcache_index::query::PhraseQuery { terms, slop: 8 });
    assert_eq!(query.clauses(), 64);
    for (k, count, pruning) in [(10, false, true), (0, true, false), (10, true, false)] {
        let options = SearchOptions {
            k,
            count,
            pruning,
            ..SearchOptions::default()
        };
        let (result, after) =
            run_cancelled_after(&reader, &query, &options, Duration::from_millis(50));
        assert!(
            matches!(result, Err(IndexError::Cancelled)),
            "k {k}: {result:?}"
        );
        assert!(
            after < STOP_BOUND,
            "k {k}: stopped {after:?} after the flag"
        );
    }
}

#[test]
fn a_raised_flag_stops_every_evaluation_path_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let reader = dense_index(dir.path());
    let queries = [
        "w",
        "+w +w",
        "w x y",
        "+w +x +y",
        "+w +x -y",
        "w -x",
        "+(w x) (y d1) -d2",
        "\"w w\"",
        "\"w w w\"",
        "\"x y\"~3",
        "\"w w w\"~2",
    ];
    for text in queries {
        let query = parse(text);
        for (k, count, pruning) in [(10, false, true), (0, true, false), (10, true, false)] {
            let options = SearchOptions {
                k,
                count,
                pruning,
                ..SearchOptions::default()
            };
            let free = Searcher::new(&reader).search(&query, &options);
            assert!(free.is_ok(), "{text}: {free:?}");
            let _scope = CancelScope::enter(Arc::new(AtomicBool::new(true)));
            let cancelled = Searcher::new(&reader).search(&query, &options);
            assert!(
                matches!(cancelled, Err(IndexError::Cancelled)),
                "{text}, k {k}: {:?}",
                cancelled.map(|r| r.total_hits)
            );
        }
    }
}
