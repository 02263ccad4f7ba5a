//! Prints the analyzer's tokens of each `title<TAB>body` line of a file, space-separated, one
//! line per document: the same output as `tools/lucene-peer tokens`, to diff the analyzers.
//!
//! `cargo run --release -p apcache-index --example tokens -- FILE > apcache.tokens`

use std::io::{BufRead, Write};

use apcache_index::analyzer::Analyzer;

fn main() -> std::io::Result<()> {
    let path = std::env::args().nth(1).expect("usage: tokens FILE");
    let analyzer = Analyzer::default();
    let file = std::io::BufReader::new(std::fs::File::open(path)?);
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for line in file.lines() {
        let line = line?;
        let (title, body) = line.split_once('\t').unwrap_or(("", &line));
        let mut tokens = analyzer.tokens(title);
        tokens.extend(analyzer.tokens(body));
        writeln!(out, "{}", tokens.join(" "))?;
    }
    Ok(())
}
