//! `apcache serve-stdin`: the search-benchmark-game protocol, so that its clients and query
//! sets drive apcache as they drive other engines.
//!
//! Each input line is `COMMAND<TAB>query`; each gets one output line, flushed:
//! `COUNT` → the number of matching documents; `TOP_10`, `TOP_100`, `TOP_1000` → top-k
//! evaluation (pruned), printing 1; `TOP_10_COUNT`, `TOP_100_COUNT`, `TOP_1000_COUNT` → top-k
//! and the exact count, printing the count. Anything else, and a query that does not parse,
//! gets `UNSUPPORTED` (the reason goes to standard error).

use std::io::{BufRead, Write};
use std::path::PathBuf;

use anyhow::Context;
use apcache_index::query::parse_query;
use apcache_index::search::Searcher;
use clap::Args;

use apcache_cli::options::QueryArgs;

/// Options of `apcache serve-stdin`.
#[derive(Debug, Args)]
pub struct ServeStdinArgs {
    /// Index directory.
    dir: PathBuf,
    #[command(flatten)]
    query_args: QueryArgs,
}

/// What a command asks for: top k and whether to count.
fn command(name: &str) -> Option<(usize, bool)> {
    Some(match name {
        "COUNT" => (0, true),
        "TOP_10" => (10, false),
        "TOP_100" => (100, false),
        "TOP_1000" => (1000, false),
        "TOP_10_COUNT" => (10, true),
        "TOP_100_COUNT" => (100, true),
        "TOP_1000_COUNT" => (1000, true),
        _ => return None,
    })
}

/// Runs `apcache serve-stdin`.
pub fn run(args: ServeStdinArgs) -> anyhow::Result<()> {
    let reader = args.query_args.open(&args.dir)?;
    let analyzer = reader.analyzer();
    let searcher = Searcher::new(&reader);
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        let line = line.context("cannot read standard input")?;
        let answer = (|| -> Result<String, String> {
            let (name, text) = line
                .split_once('\t')
                .ok_or_else(|| "expected COMMAND<TAB>query".to_string())?;
            let (k, count) = command(name).ok_or_else(|| format!("unknown command {name}"))?;
            let query = parse_query(text, &analyzer, args.query_args.default_operator())
                .map_err(|e| e.to_string())?;
            let result = searcher
                .search(&query, &args.query_args.options(k, count))
                .map_err(|e| e.to_string())?;
            Ok(if count {
                result.total_hits.to_string()
            } else {
                "1".to_string()
            })
        })();
        match answer {
            Ok(answer) => writeln!(out, "{answer}")?,
            Err(reason) => {
                eprintln!("UNSUPPORTED {line:?}: {reason}");
                writeln!(out, "UNSUPPORTED")?;
            }
        }
        out.flush()?;
    }
    Ok(())
}
