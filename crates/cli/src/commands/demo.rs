//! `apcache demo`: the product in one command. Indexes the bundled sample (English Wikipedia),
//! runs a few searches through the serving path (APCache, `hybrid-prefetch`, its tier in
//! /dev/shm), prints their hits, then serves the index at http://127.0.0.1:7700/ui.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Instant;

use anyhow::Context;
use apcache_cli::options::default_sample;
use apcache_index::indexer::{build_index, IndexOptions};
use apcache_index::ingest::Input;
use apcache_index::query::{parse_query, DefaultOperator};
use apcache_index::search::SearchOptions;
use apcache_server::Catalog;
use apcache_tier::serving::LiveRequest;
use clap::Args;

use super::search::{print_hits, shown_hits};
use super::serve::{open_catalog, serve_catalog, server_config, ServeArgs};

/// Searches the demo runs before serving: a conjunction, a disjunction, a single term, an
/// exclusion, a phrase.
const QUERIES: [&str; 5] = [
    "+river +valley",
    "quantum physics",
    "symphony",
    "football -american",
    "\"united states\" navy",
];

/// Options of `apcache demo`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Documents to index (default: the bundled sample, data/enwiki-sample.tsv).
    #[arg(long)]
    input: Option<PathBuf>,
    /// Where to build the index (default: apcache-demo in the system's temporary directory).
    #[arg(long)]
    index_dir: Option<PathBuf>,
    /// Address to serve on.
    #[arg(long, default_value = "127.0.0.1:7700")]
    addr: SocketAddr,
    /// Exit after the searches instead of serving.
    #[arg(long)]
    no_serve: bool,
}

/// Runs `apcache demo`.
pub fn run(args: DemoArgs) -> anyhow::Result<()> {
    let input = args.input.unwrap_or_else(default_sample);
    if !input.exists() {
        anyhow::bail!(
            "{} is missing: run the demo from a clone of the repository, or pass --input FILE",
            input.display()
        );
    }
    let dir = args
        .index_dir
        .unwrap_or_else(|| std::env::temp_dir().join("apcache-demo"));
    println!("indexing {} into {}", input.display(), dir.display());
    let options = IndexOptions {
        force: true,
        ..IndexOptions::default()
    };
    let started = Instant::now();
    let report = build_index(vec![Input::from_arg(input)], &dir, &options, |_, _| {})
        .with_context(|| format!("cannot index into {}", dir.display()))?;
    println!(
        "indexed {} documents in {:.2} s\n",
        report.documents,
        started.elapsed().as_secs_f64()
    );

    // The serving path: APCache with its tier in /dev/shm where there is one.
    let tier = if std::path::Path::new("/dev/shm").is_dir() {
        "dir:/dev/shm"
    } else {
        "anonymous"
    };
    let mut argv = vec![
        "serve".to_string(),
        format!("sample={}", dir.display()),
        "--addr".into(),
        args.addr.to_string(),
        "--mode".into(),
        "hybrid-prefetch".into(),
        "--cache-size".into(),
        "64MiB".into(),
        "--tier".into(),
        tier.into(),
        "--loader".into(),
        "pread".into(),
    ];
    argv.insert(0, "apcache".into());
    let serve_args = <ServeWrapper as clap::Parser>::try_parse_from(&argv)
        .context("the demo's serving options")?
        .serve;
    let catalog = open_catalog(&serve_args)?;
    run_searches(&catalog, &dir)?;
    if args.no_serve {
        return Ok(());
    }
    serve_catalog(catalog, server_config(&serve_args)?)
}

/// `apcache serve`'s options, parsed the same way the command line would.
#[derive(Debug, clap::Parser)]
struct ServeWrapper {
    #[command(subcommand)]
    serve: ServeCommand,
}

#[derive(Debug, clap::Subcommand)]
enum ServeCommand {
    Serve(ServeArgs),
}

impl std::ops::Deref for ServeCommand {
    type Target = ServeArgs;
    fn deref(&self) -> &ServeArgs {
        match self {
            ServeCommand::Serve(args) => args,
        }
    }
}

/// Runs the demo's searches through the served index and prints their hits.
fn run_searches(catalog: &Catalog, dir: &std::path::Path) -> anyhow::Result<()> {
    let index = catalog
        .get("sample")
        .context("the demo index is not served")?;
    for text in QUERIES {
        let query = parse_query(text, &index.analyzer, DefaultOperator::Or)?;
        let started = Instant::now();
        let (tx, rx) = mpsc::channel();
        let _ticket = index.service.submit(
            LiveRequest {
                query: query.clone(),
                options: SearchOptions {
                    k: 3,
                    count: true,
                    ..SearchOptions::default()
                },
                deadline: None,
                collection: None,
            },
            move |answer| {
                let _ = tx.send(answer);
            },
        )?;
        let result = rx.recv().context("the query thread stopped")??.result;
        let hits = shown_hits(index.service.reader(), &result)?;
        println!("$ apcache search {} {text:?} -k 3 --count", dir.display());
        print_hits(&query, &result, started.elapsed(), &hits, 3);
        println!();
    }
    Ok(())
}
