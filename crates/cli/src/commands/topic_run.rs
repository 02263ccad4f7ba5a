//! `apcache search --topics FILE`: every topic of a TREC topic file (or `qid<TAB>query` or
//! `qid:query` lines) searched, on a fixed pool of query threads, and the rankings written as
//! a TREC run (`--trec`) or for people.
//!
//! Topic text is real-world text (`c++`, `u.s.`, `don't`, `AIDS: treatment`), so it is read
//! as a bag of words (`--parse plain`, the default here) and no topic can fail to parse;
//! `--parse lucene` reads it as query syntax, and then a topic that does not parse stops the
//! run with its number. The queries go through the same serving stack and live service as
//! `apcache serve` (`--mode`, `--tier-dir`, ... apply), a window of them admitted at a time
//! (`apcache_tier::serving::run_batch`), so the prefetcher sees them as live traffic.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Context};
use apcache_cli::options::QUEUE_PER_THREAD;
use apcache_index::plain_query::plain_query;
use apcache_index::query::{parse_query, Query};
use apcache_index::search::LoadMode;
use apcache_tier::serving::{run_batch, LiveConfig, LiveRequest, LiveService};
use apcache_tier::stack::ServingStack;
use apcache_tier::ServingMode;
use apcache_trec::{read_topics, RunWriter, TopicFormat};
use clap::{Args, ValueEnum};
use serde_json::json;

use super::search::SearchArgs;

/// How query text is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ParseArg {
    /// Every term the analyzer finds, as optional clauses (a bag of words); never fails.
    Plain,
    /// Lucene's query syntax (`+a -b`, `AND`, parentheses).
    Lucene,
}

/// The form of a topic file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TopicFormatArg {
    /// `<top>`/`<num>`/`<title>` (SGML) or `<topic number="..">`/`<query>` (XML).
    Trec,
    /// `qid<TAB>query` lines.
    Tsv,
    /// `qid:query` lines (Million Query), or `qid:priority:query` (Million Query 2009).
    Colon,
}

/// The options of a topic run.
#[derive(Debug, Clone, Args)]
pub struct TopicArgs {
    /// Search every topic of this file (TREC `<top>` or `<topic>` topics, `qid<TAB>query` or
    /// `qid:query` lines) instead of one query.
    #[arg(long)]
    pub topics: Option<PathBuf>,
    /// The topic file's form (default: detected from its text).
    #[arg(long, value_enum)]
    pub topics_format: Option<TopicFormatArg>,
    /// How query text is read: `plain` (a bag of words; the default with --topics) or
    /// `lucene` (query syntax; the default for one query).
    #[arg(long, value_enum)]
    pub parse: Option<ParseArg>,
    /// Write the standard six-column TREC run (`qid Q0 docid rank score tag`).
    #[arg(long)]
    pub trec: bool,
    /// The run's tag, its last column.
    #[arg(long, default_value = "apcache")]
    pub run_tag: String,
    /// Write the run or the results to this file instead of standard output.
    #[arg(long)]
    pub output: Option<PathBuf>,
    /// Query threads for --topics (a fixed pool; default: the CPU count).
    #[arg(long)]
    pub threads: Option<usize>,
}

impl TopicArgs {
    /// Refuses the options that mean nothing without --topics.
    pub fn check_single_query(&self) -> anyhow::Result<()> {
        let given = [
            ("--trec", self.trec),
            ("--run-tag", self.run_tag != "apcache"),
            ("--output", self.output.is_some()),
            ("--threads", self.threads.is_some()),
            ("--topics-format", self.topics_format.is_some()),
        ];
        if let Some((flag, _)) = given.iter().find(|(_, given)| *given) {
            bail!("{flag} applies to a topic run: give --topics FILE");
        }
        Ok(())
    }
}

/// Runs the topics of `args.topics.topics`.
pub fn run(args: &SearchArgs) -> anyhow::Result<()> {
    let topic_args = &args.topics;
    let path = topic_args.topics.as_ref().expect("called with --topics");
    if args.query_args.load_mode() == LoadMode::Direct {
        bail!("--load direct does not apply to --topics, which runs through the serving stack");
    }
    let threads = topic_args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()));
    if threads == 0 {
        bail!("--threads must be at least 1");
    }
    let topics = read_topics(
        path,
        topic_args.topics_format.map(|f| match f {
            TopicFormatArg::Trec => TopicFormat::Trec,
            TopicFormatArg::Tsv => TopicFormat::Tsv,
            TopicFormatArg::Colon => TopicFormat::Colon,
        }),
    )?;

    let mode = args.serving.mode()?.unwrap_or(ServingMode::Base);
    let config = args.serving.config(mode, &args.dir)?;
    let stack = Arc::new(
        ServingStack::assemble(&args.dir, &config, |step| eprintln!("{step}"))
            .with_context(|| format!("cannot serve {}", args.dir.display()))?,
    );
    for warning in &stack.warnings {
        eprintln!("warning: {warning}");
    }
    let analyzer = stack.reader.analyzer();
    let parse = topic_args.parse.unwrap_or(ParseArg::Plain);
    let queries: Vec<Query> = topics
        .iter()
        .map(|topic| match parse {
            ParseArg::Plain => Ok(plain_query(&topic.query, &analyzer)),
            ParseArg::Lucene => {
                parse_query(&topic.query, &analyzer, args.query_args.default_operator())
                    .with_context(|| {
                        format!(
                            "topic {} (line {}): cannot parse {:?} as query syntax (--parse \
                             plain reads it as words)",
                            topic.id, topic.line, topic.query
                        )
                    })
            }
        })
        .collect::<anyhow::Result<_>>()?;

    let window = threads * QUEUE_PER_THREAD;
    let service = LiveService::start(
        stack.clone(),
        LiveConfig {
            threads,
            queue_depth: window,
        },
    )?;
    let options = args.query_args.options(args.k, args.count);
    let started = Instant::now();
    let answers = run_batch(
        &service,
        queries.iter().map(|query| LiveRequest {
            query: query.clone(),
            options,
            deadline: None,
            collection: None,
        }),
        window,
    )?;
    let took = started.elapsed();
    service.shutdown();

    let results = topics
        .iter()
        .zip(answers)
        .map(|(topic, answer)| {
            answer
                .map(|answer| answer.result)
                .with_context(|| format!("topic {} failed", topic.id))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let without_hits = results.iter().filter(|r| r.hits.is_empty()).count();

    let out: Box<dyn Write> = match &topic_args.output {
        Some(file) => Box::new(
            File::create(file).with_context(|| format!("cannot create {}", file.display()))?,
        ),
        None => Box::new(io::stdout().lock()),
    };
    let mut out = BufWriter::new(out);
    let mut run_lines = 0;
    if topic_args.trec {
        let mut run = RunWriter::new(out, &topic_args.run_tag)?;
        for (topic, result) in topics.iter().zip(&results) {
            let ranking = result
                .hits
                .iter()
                .map(|hit| Ok((stack.reader.document_id(hit.doc)?, hit.score)))
                .collect::<Result<Vec<_>, apcache_index::IndexError>>()?;
            run.write_topic(&topic.id, ranking)?;
        }
        run_lines = run.lines();
        run.finish()?;
    } else {
        for ((topic, query), result) in topics.iter().zip(&queries).zip(&results) {
            let hits = super::search::shown_hits(&stack.reader, result)?;
            if args.json {
                let hits: Vec<_> = hits
                    .iter()
                    .map(|h| json!({"id": h.id, "score": h.score, "title": h.title}))
                    .collect();
                let line = json!({
                    "qid": topic.id,
                    "text": topic.query,
                    "query": query.to_string(),
                    "total": {"value": result.total_hits, "exact": result.total_hits_exact},
                    "hits": hits,
                });
                writeln!(out, "{line}")?;
                continue;
            }
            let total = if result.total_hits_exact {
                format!("{} hits", result.total_hits)
            } else {
                format!("at least {} hits", result.total_hits)
            };
            writeln!(out, "topic {}: {}  ({total})", topic.id, topic.query)?;
            for (rank, hit) in hits.iter().enumerate() {
                writeln!(
                    out,
                    "{:>6}  {:>10}  {:>8.4}  {}",
                    rank + 1,
                    hit.id,
                    hit.score,
                    hit.title
                )?;
            }
            writeln!(out)?;
        }
        out.flush()?;
    }
    let seconds = took.as_secs_f64();
    eprintln!(
        "{} topics ({} without hits) in {:.2} s, {:.0} topics/s on {threads} query threads, \
         mode {mode}{}",
        topics.len(),
        without_hits,
        seconds,
        topics.len() as f64 / seconds.max(1e-9),
        if topic_args.trec {
            format!("; {run_lines} run lines, tag {}", topic_args.run_tag)
        } else {
            String::new()
        }
    );
    Ok(())
}
