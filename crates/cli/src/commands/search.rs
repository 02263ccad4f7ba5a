//! `apcache search`: run one query and show the ranked results, or a file of TREC topics
//! (`--topics`, in `topic_run.rs`) and write a run.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use apcache_cli::options::{open_index, QueryArgs, ServingArgs};
use apcache_index::highlight::{HighlightOptions, Highlighter};
use apcache_index::plain_query::plain_query;
use apcache_index::query::{parse_query_in_fields, DefaultFields, Query};
use apcache_index::search::{
    IndexReader, LoadMode, SearchOptions, SearchResult, Searcher, SortedResult,
};
use apcache_index::segment::{snippet, StoredDocument};
use apcache_server::sort_keys::Sort;
use apcache_tier::serving::{LiveConfig, LiveRequest, LiveService};
use apcache_tier::stack::ServingStack;
use clap::Args;
use serde_json::json;

use super::topic_run::{self, TopicArgs};

/// Options of `apcache search`.
#[derive(Debug, Args)]
pub struct SearchArgs {
    /// Index directory.
    pub(super) dir: PathBuf,
    /// The query (Lucene syntax: words, +required, -prohibited, AND, OR, NOT, parentheses).
    /// A query may start with `-` (`'-river'`).
    #[arg(
        required_unless_present = "topics",
        conflicts_with = "topics",
        allow_hyphen_values = true
    )]
    query: Option<String>,
    /// Hits to show (per topic with --topics).
    #[arg(short, default_value_t = 10)]
    pub(super) k: usize,
    /// Count every matching document exactly. Without it, the total is exact only when
    /// pruning skipped nothing, and a lower bound otherwise ("at least N").
    #[arg(long)]
    pub(super) count: bool,
    #[command(flatten)]
    pub(super) query_args: QueryArgs,
    /// Run the query through a serving stack (`--mode`, `--tier-dir`, `--cache-size`...)
    /// instead of reading the index directly.
    #[command(flatten)]
    pub(super) serving: ServingArgs,
    #[command(flatten)]
    pub(super) topics: TopicArgs,
    /// Run the query this many times and report each run's time: with serving flags and
    /// `--result-cache-size`, the runs after the first are answered from the result cache.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    repeat: u32,
    /// Show where the query's words matched: fragments of each hit's body with them marked
    /// (bold on a terminal, `<em>...</em>` otherwise and in JSON), instead of its start.
    #[arg(long)]
    highlight: bool,
    /// Print JSON (with --topics, one object per topic, a line each).
    #[arg(long)]
    pub(super) json: bool,
    /// Order the hits by fields instead of the score: `field`, `field:asc`, `field:desc`,
    /// `_score`, `_doc`, comma-separated; ties keep the index order.
    #[arg(long, value_delimiter = ',', value_name = "FIELD[:asc|desc]")]
    sort: Vec<String>,
    /// Show these fields of each hit's document (dotted names, comma-separated): in the text
    /// output as `field: value` lines, in JSON as its `_source`.
    #[arg(long, value_delimiter = ',', value_name = "FIELD")]
    fields: Vec<String>,
    /// The text fields words without a field search (comma-separated, `title^3` to boost
    /// one); every text field of the mapping by default. A word matches in any of them, the
    /// scores of the fields that match added up (Lucene's multi-field query parser).
    #[arg(long, value_delimiter = ',', value_name = "FIELD[^BOOST]")]
    default_field: Vec<String>,
}

/// One run of the query: how long it took, whether the result cache answered it, and whether
/// approximately (`partial2`: from the entry of a subset of the query's terms).
#[derive(Debug, Clone, Copy)]
struct Run {
    took: Duration,
    from_cache: bool,
    approximate: bool,
}

/// A hit as shown: the document's id, score, title, snippet and source.
pub struct ShownHit {
    /// The document number.
    pub doc: u32,
    /// Its `_id` (its number when the documents have no ids of their own).
    pub id: String,
    /// BM25 score (NaN when a sort by fields did not compute it).
    pub score: f32,
    /// Stored title.
    pub title: String,
    /// The start of the stored body.
    pub snippet: String,
    /// The document as given (`_source`).
    pub source: serde_json::Value,
    /// Its sort values as the APIs show them, when the search sorted by fields.
    pub sort: Option<Vec<serde_json::Value>>,
}

/// The stored fields of the documents `hits` (number, score) names.
fn shown(
    reader: &IndexReader,
    hits: impl Iterator<Item = (u32, f32, Option<Vec<serde_json::Value>>)>,
) -> anyhow::Result<Vec<ShownHit>> {
    let mut shown = Vec::new();
    for (doc, score, sort) in hits {
        let stored = match reader.locate(doc) {
            Some((segment, local)) => Some(
                segment
                    .stored(local)
                    .with_context(|| format!("cannot read stored document {doc}"))?,
            ),
            None => None,
        };
        let source = stored
            .as_ref()
            .map_or(serde_json::Value::Null, StoredDocument::source_json);
        let (title, body) = stored.map_or_else(Default::default, |s| (s.title, s.body));
        shown.push(ShownHit {
            doc,
            id: reader.document_id(doc)?,
            score,
            title,
            snippet: snippet(&body, 160),
            source,
            sort,
        });
    }
    Ok(shown)
}

/// The stored fields of `result`'s hits.
pub fn shown_hits(reader: &IndexReader, result: &SearchResult) -> anyhow::Result<Vec<ShownHit>> {
    shown(reader, result.hits.iter().map(|h| (h.doc, h.score, None)))
}

/// The stored fields of a sorted search's hits, with their sort values as the APIs show them.
fn shown_sorted_hits(
    reader: &IndexReader,
    result: &SortedResult,
    sort: &Sort,
) -> anyhow::Result<Vec<ShownHit>> {
    shown(
        reader,
        result.hits.iter().map(|h| {
            (
                h.doc,
                h.score.unwrap_or(f32::NAN),
                Some(sort.shown(&h.values)),
            )
        }),
    )
}

/// The fields of `source` that `--fields` names (all of it without `--fields`).
fn selected_fields(source: &serde_json::Value, fields: &[String]) -> serde_json::Value {
    if fields.is_empty() {
        return source.clone();
    }
    let mut out = serde_json::Map::new();
    for field in fields {
        let mut value = Some(source);
        for part in field.split('.') {
            value = value.and_then(|v| v.get(part));
        }
        if let Some(value) = value {
            out.insert(field.clone(), value.clone());
        }
    }
    serde_json::Value::Object(out)
}

/// Prints a result for people: a header line with the total, then one line per hit (rank,
/// id, score, title) and its snippet.
pub fn print_hits(
    query: &Query,
    result: &SearchResult,
    took: Duration,
    hits: &[ShownHit],
    k: usize,
) {
    let took_ms = took.as_secs_f64() * 1000.0;
    if result.total_hits_exact {
        println!("{} hits for {query} ({took_ms:.2} ms)", result.total_hits);
    } else {
        println!(
            "at least {} hits for {query} ({took_ms:.2} ms; pruning skipped documents that \
             cannot enter the top {k}: --count counts them all)",
            result.total_hits
        );
    }
    if hits.is_empty() {
        return;
    }
    println!("{:>4}  {:>8}  {:>8}  title", "rank", "id", "score");
    for (rank, hit) in hits.iter().enumerate() {
        // A sort by fields computes no score.
        let score = if hit.score.is_nan() {
            "-".to_owned()
        } else {
            format!("{:.4}", hit.score)
        };
        println!("{:>4}  {:>8}  {score:>8}  {}", rank + 1, hit.id, hit.title);
        if !hit.snippet.is_empty() {
            println!("{:>26}{}", "", hit.snippet);
        }
    }
}

/// Runs `query` `--repeat` times through a live service over a freshly assembled stack.
fn search_served(
    args: &SearchArgs,
    query: Query,
    options: SearchOptions,
    mode: apcache_tier::ServingMode,
) -> anyhow::Result<(Arc<ServingStack>, SearchResult, Vec<Run>)> {
    let config = args.serving.config(mode, &args.dir)?;
    let stack = Arc::new(
        ServingStack::assemble(&args.dir, &config, |step| eprintln!("{step}"))
            .with_context(|| format!("cannot serve {}", args.dir.display()))?,
    );
    let service = LiveService::start(
        stack.clone(),
        LiveConfig {
            threads: 1,
            queue_depth: 1,
        },
    )?;
    let mut runs = Vec::new();
    let mut last = None;
    for _ in 0..args.repeat {
        let (tx, rx) = std::sync::mpsc::channel();
        let started = Instant::now();
        let _ticket = service.submit(
            LiveRequest {
                query: query.clone(),
                options,
                deadline: None,
                collection: None,
            },
            move |answer| {
                let _ = tx.send(answer);
            },
        )?;
        let answer = rx.recv().context("the query thread stopped")??;
        runs.push(Run {
            took: started.elapsed(),
            from_cache: answer.from_cache,
            approximate: answer.approximate,
        });
        last = Some(answer.result);
    }
    service.shutdown();
    Ok((stack, last.expect("at least one run"), runs))
}

/// The runs of `--repeat`, one line each.
fn print_runs(runs: &[Run]) {
    for (i, run) in runs.iter().enumerate() {
        println!(
            "run {:>3}: {:>10.1} µs{}",
            i + 1,
            run.took.as_secs_f64() * 1e6,
            match (run.from_cache, run.approximate) {
                (true, true) => "  (result cache, approximate)",
                (true, false) => "  (result cache)",
                _ => "",
            }
        );
    }
}

/// Runs `apcache search`.
pub fn run(args: SearchArgs) -> anyhow::Result<()> {
    if args.topics.topics.is_some() {
        return topic_run::run(&args);
    }
    let text = args
        .query
        .clone()
        .expect("clap requires a query without --topics");
    args.topics.check_single_query()?;
    let started = Instant::now();
    let options = args.query_args.options(args.k, args.count);
    let served_mode = args.serving.mode()?;
    let allow_partial = args.serving.allow_partial;
    let reader = match served_mode {
        Some(_) => open_index(&args.dir, LoadMode::Mmap, allow_partial)?,
        None => args.query_args.open(&args.dir, allow_partial)?,
    };
    let fields = DefaultFields::parse(&args.default_field)
        .map_err(|e| anyhow::anyhow!("--default-field: {e}"))?;
    if !args.default_field.is_empty() && reader.mapping().joined_text() {
        anyhow::bail!(
            "--default-field: this index joins its text fields into one (tab-separated \
             documents); its words are searched together"
        );
    }
    let (query, notes) = if args.topics.parse == Some(topic_run::ParseArg::Plain) {
        let query = fields
            .spread(plain_query(&text, &reader.analyzer()), reader.mapping())
            .map_err(|e| anyhow::anyhow!("--default-field: {e}"))?;
        (query, Vec::new())
    } else {
        parse_query_in_fields(
            &text,
            &reader.analyzer(),
            args.query_args.default_operator(),
            reader.mapping(),
            &fields,
        )
        .with_context(|| format!("cannot parse the query {text:?}"))?
    };
    let notes: Vec<String> = notes.iter().map(ToString::to_string).collect();
    if !args.sort.is_empty() {
        if served_mode.is_some() {
            anyhow::bail!("--sort reads the index directly: leave out the serving flags");
        }
        let sort = Sort::parse_native(&args.sort.join(","), reader.mapping())
            .map_err(|e| anyhow::anyhow!("--sort: {}", e.reason))?;
        let result = Searcher::new(&reader)
            .search_sorted(&query, &sort.keys, args.k, None)
            .context("search failed")?;
        let hits = shown_sorted_hits(&reader, &result, &sort)?;
        let converted = SearchResult {
            total_hits: result.total_hits,
            total_hits_exact: true,
            hits: Vec::new(),
            stats: result.stats,
        };
        return print_result(
            &args,
            &query,
            &converted,
            started.elapsed(),
            hits,
            &notes,
            &[],
            false,
        );
    }
    let (result, hits, runs) = match served_mode {
        Some(mode) => {
            drop(reader);
            let (stack, result, runs) = search_served(&args, query.clone(), options, mode)?;
            let hits = shown_hits(&stack.reader, &result)?;
            (result, hits, runs)
        }
        None => {
            let searcher = Searcher::new(&reader);
            let mut runs = Vec::new();
            let mut last = None;
            for _ in 0..args.repeat {
                let started = Instant::now();
                last = Some(searcher.search(&query, &options).context("search failed")?);
                runs.push(Run {
                    took: started.elapsed(),
                    from_cache: false,
                    approximate: false,
                });
            }
            let result = last.expect("at least one run");
            let hits = shown_hits(&reader, &result)?;
            (result, hits, runs)
        }
    };
    let took = started.elapsed();
    // The answer shown is the last run's.
    let approximate = runs.last().is_some_and(|r| r.approximate);
    print_result(
        &args,
        &query,
        &result,
        took,
        hits,
        &notes,
        &runs,
        approximate,
    )
}

/// Prints the hits of a search, highlighted when asked, as text or JSON.
#[allow(clippy::too_many_arguments)]
fn print_result(
    args: &SearchArgs,
    query: &Query,
    result: &SearchResult,
    took: Duration,
    hits: Vec<ShownHit>,
    notes: &[String],
    runs: &[Run],
    approximate: bool,
) -> anyhow::Result<()> {
    let mut hits = hits;
    let mut highlights: Vec<Option<Vec<String>>> = vec![None; hits.len()];
    if args.highlight {
        let reader = IndexReader::open_accepting_partial(&args.dir, LoadMode::Mmap, None)
            .with_context(|| format!("cannot open the index in {}", args.dir.display()))?;
        let terminal = !args.json && std::io::stdout().is_terminal();
        let options = HighlightOptions {
            pre_tag: if terminal { "\x1b[1m" } else { "<em>" }.into(),
            post_tag: if terminal { "\x1b[0m" } else { "</em>" }.into(),
            fragment_size: 80,
            number_of_fragments: 2,
        };
        let highlighter = Highlighter::new(query);
        let analyzer = reader.analyzer();
        for (hit, shown) in hits.iter_mut().zip(&mut highlights) {
            let body = match reader.locate(hit.doc) {
                Some((segment, local)) => {
                    segment
                        .stored(local)
                        .with_context(|| format!("cannot read stored document {}", hit.doc))?
                        .body
                }
                None => String::new(),
            };
            let fragments = highlighter.fragments(&body, &analyzer, &options);
            if !fragments.is_empty() {
                hit.snippet = fragments.join(" … ");
            }
            *shown = Some(fragments);
        }
    }
    if args.json {
        let hits: Vec<_> = hits
            .iter()
            .zip(&highlights)
            .map(|(h, highlight)| {
                let score = if h.score.is_nan() { json!(null) } else { json!(h.score) };
                let mut hit = json!({"_id": h.id, "id": h.id, "score": score, "title": h.title, "snippet": h.snippet, "_source": selected_fields(&h.source, &args.fields)});
                if let Some(sort) = &h.sort {
                    hit["sort"] = json!(sort);
                }
                if let Some(fragments) = highlight {
                    hit["highlight"] = json!({"body": fragments});
                }
                hit
            })
            .collect();
        println!(
            "{}",
            json!({
                "query": query.to_string(),
                "total": {"value": result.total_hits, "exact": result.total_hits_exact},
                "approximate": approximate,
                "took_us": took.as_micros() as u64,
                "hits": hits,
                "notes": notes,
                "runs": runs
                    .iter()
                    .map(|r| json!({"took_us": r.took.as_secs_f64() * 1e6, "result_cache": r.from_cache, "approximate": r.approximate}))
                    .collect::<Vec<_>>(),
            })
        );
    } else {
        for note in notes {
            println!("note: {note}");
        }
        if approximate {
            println!(
                "note: approximate: the result cache's answer for a subset of the query's terms, \
                 not the query's own evaluation"
            );
        }
        print_hits(query, result, took, &hits, args.k);
        for hit in hits.iter().filter(|_| !args.fields.is_empty()) {
            if hit.title.is_empty() {
                println!("{}:", hit.id);
            } else {
                println!("{} ({}):", hit.id, hit.title);
            }
            if let serde_json::Value::Object(fields) = selected_fields(&hit.source, &args.fields) {
                for (field, value) in fields {
                    println!("    {field}: {value}");
                }
            }
        }
        if runs.len() > 1 {
            print_runs(runs);
        }
    }
    Ok(())
}
