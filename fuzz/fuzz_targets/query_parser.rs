//! Arbitrary text through the query parser, with both default operators: parsing returns a
//! query or a typed error, never panics; a query it returns evaluates on the fixture index
//! without error (the index is sound, so no error is acceptable), and its printed form parses (unless
//! empty: words the analyzer drops entirely make a query that matches nothing).
#![no_main]

use apcache_index::analyzer::Analyzer;
use apcache_index::query::{parse_query_with_notes, DefaultOperator};
use apcache_index::search::{IndexReader, SearchOptions, Searcher};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

fn reader() -> &'static IndexReader {
    static READER: OnceLock<IndexReader> = OnceLock::new();
    READER.get_or_init(|| IndexReader::open(&apcache_fuzz::fixture().index()).expect("open"))
}

fn analyzer() -> &'static Analyzer {
    static ANALYZER: OnceLock<Analyzer> = OnceLock::new();
    ANALYZER.get_or_init(Analyzer::english)
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let analyzer = analyzer();
    for operator in [DefaultOperator::Or, DefaultOperator::And] {
        let Ok((query, _notes)) = parse_query_with_notes(text, analyzer, operator) else {
            continue;
        };
        let printed = query.to_string();
        // A query of words the analyzer drops entirely matches nothing and prints as "".
        assert!(
            printed.is_empty() || parse_query_with_notes(&printed, analyzer, DefaultOperator::Or).is_ok(),
            "{text:?} printed as {printed:?}, which does not parse"
        );
        let searcher = Searcher::new(reader());
        for options in [
            SearchOptions::default(),
            SearchOptions { k: 0, count: true, ..SearchOptions::default() },
            SearchOptions { k: 3, count: true, pruning: false, ..SearchOptions::default() },
        ] {
            if let Err(e) = searcher.search(&query, &options) {
                panic!("{text:?} ({query}) fails on a sound index: {e}");
            }
        }
    }
});
