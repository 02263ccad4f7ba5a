//! The query engines apcache is compared with, shared by `apcache-bench peers`
//! ([`crate::query_bench`]) and `apcache-bench queries --peers` ([`crate::query_harness`]).
//!
//! - tantivy 0.27, in this process: an index built by
//!   [`index_with_tantivy`](crate::peers::tantivy_indexer::index_with_tantivy) with apcache's
//!   own tokens, and queries built from apcache's parsed trees by [`to_tantivy`] (tantivy's own
//!   parser reads Lucene syntax differently).
//! - Lucene 9.12, in its own JVM: `tools/lucene-peer` (`index` and `bench`), driven by
//!   [`lucene_index`] and [`lucene_bench`].
//!
//! For the harness, the peers index the documents of an apcache index, read back from its
//! document store in DID order ([`stored_documents`]), and keep their indexes in a directory
//! ([`PeerIndexes`]) where a later run over the same index finds and reuses them: each peer
//! index is keyed by the apcache manifest (segments, document runs, file checksums, analyzer;
//! not the generation) and the peer's build settings.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use apcache_index::analyzer::AnalyzerConfig;
use apcache_index::ingest::Document;
use apcache_index::query::Query;
use apcache_index::search::IndexReader;
use apcache_index::{IndexError, Manifest};
use serde::Serialize;
use tantivy::query::{BooleanQuery, Occur, Query as TantivyQuery, TermQuery};
use tantivy::schema::{Field, IndexRecordOption};
use tantivy::{Index, Term};

use crate::peers::tantivy_indexer::{
    index_with_tantivy, ApcacheTokenizer, TantivyIndexOptions, TantivyTokenizer,
    APCACHE_TOKENIZER_NAME,
};

/// The tantivy version the peer is built with.
pub const TANTIVY_VERSION: &str = "0.27";

/// The Lucene version of `tools/lucene-peer`.
pub const LUCENE_VERSION: &str = "9.12";

/// A peer engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PeerEngine {
    /// tantivy 0.27, in this process.
    Tantivy,
    /// Lucene 9.12, through `tools/lucene-peer` in its own JVM.
    Lucene,
}

impl PeerEngine {
    /// Every peer, in report order.
    pub const ALL: [PeerEngine; 2] = [PeerEngine::Tantivy, PeerEngine::Lucene];

    /// Its name in reports: `tantivy`, `lucene`.
    pub fn name(self) -> &'static str {
        match self {
            PeerEngine::Tantivy => "tantivy",
            PeerEngine::Lucene => "lucene",
        }
    }

    /// Its version.
    pub fn version(self) -> &'static str {
        match self {
            PeerEngine::Tantivy => TANTIVY_VERSION,
            PeerEngine::Lucene => LUCENE_VERSION,
        }
    }
}

/// Errors of the peers.
#[derive(Debug, thiserror::Error)]
pub enum PeerError {
    /// tantivy failed.
    #[error("tantivy: {0}")]
    Tantivy(#[from] tantivy::TantivyError),
    /// Lucene (the peer process) failed.
    #[error("lucene-peer: {0}")]
    Lucene(String),
    /// The apcache index could not be read.
    #[error("apcache index: {0}")]
    Index(#[from] IndexError),
    /// Files.
    #[error("{0}: {1}")]
    Io(PathBuf, std::io::Error),
    /// The peers cannot run on this index or with these settings.
    #[error("{0}")]
    Unsupported(String),
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> PeerError + '_ {
    move |e| PeerError::Io(path.to_path_buf(), e)
}

/// `query` as a tantivy query on `field`: term queries with frequencies (BM25), combined by
/// boolean queries with the same occurrences.
pub fn to_tantivy(query: &Query, field: Field) -> Box<dyn TantivyQuery> {
    match query {
        Query::Term(t) => Box::new(TermQuery::new(
            Term::from_field_text(field, t),
            IndexRecordOption::WithFreqs,
        )),
        Query::Bool(b) => {
            let mut clauses: Vec<(Occur, Box<dyn TantivyQuery>)> = Vec::new();
            clauses.extend(b.must.iter().map(|q| (Occur::Must, to_tantivy(q, field))));
            clauses.extend(
                b.should
                    .iter()
                    .map(|q| (Occur::Should, to_tantivy(q, field))),
            );
            clauses.extend(
                b.must_not
                    .iter()
                    .map(|q| (Occur::MustNot, to_tantivy(q, field))),
            );
            Box::new(BooleanQuery::new(clauses))
        }
        Query::Filter(inner) => Box::new(tantivy::query::ConstScoreQuery::new(
            to_tantivy(inner, field),
            0.0,
        )),
        Query::All => Box::new(tantivy::query::AllQuery),
        Query::Boost(inner, factor) => Box::new(tantivy::query::BoostQuery::new(
            to_tantivy(inner, field),
            factor.get(),
        )),
        Query::DisMax(d) => Box::new(tantivy::query::DisjunctionMaxQuery::with_tie_breaker(
            d.queries.iter().map(|q| to_tantivy(q, field)).collect(),
            d.tie_breaker.get(),
        )),
        Query::Range(range) => unreachable!("the peers index text only, not the field of {range}"),
        Query::Phrase(phrase) => {
            let terms = phrase
                .terms
                .iter()
                .map(|(offset, t)| (*offset as usize, Term::from_field_text(field, t)))
                .collect();
            Box::new(tantivy::query::PhraseQuery::new_with_offset_and_slop(
                terms,
                phrase.slop,
            ))
        }
    }
}

/// How both `bench peers` and the harness build a tantivy peer index: two indexing threads,
/// 256 MiB, apcache's tokens, positions (phrase queries), merged into one segment.
pub fn tantivy_index_options() -> TantivyIndexOptions {
    TantivyIndexOptions {
        threads: 2,
        memory_budget: 256 << 20,
        merge_to_one: true,
        tokenizer: TantivyTokenizer::Apcache,
        positions: true,
    }
}

/// Builds the tantivy peer index of `documents` in `dir` (see [`tantivy_index_options`]).
pub fn tantivy_index(documents: &[Document], dir: &Path) -> Result<(), PeerError> {
    index_with_tantivy(documents, dir, &tantivy_index_options())?;
    Ok(())
}

/// Opens the tantivy peer index in `dir` (apcache's tokenizer registered) and returns it with
/// its `text` field.
pub fn open_tantivy(dir: &Path) -> Result<(Index, Field), PeerError> {
    let index = Index::open_in_dir(dir)?;
    index
        .tokenizers()
        .register(APCACHE_TOKENIZER_NAME, ApcacheTokenizer::default());
    let text = index.schema().get_field("text")?;
    Ok((index, text))
}

/// Where `tools/lucene-peer` puts its jar, in this source tree.
pub fn default_lucene_jar() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tools/lucene-peer/target/lucene-peer.jar")
}

/// Where `tools/lucene-peer/build.sh --lucene10` puts the Lucene 10 jar, in this source tree.
pub fn default_lucene10_jar() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tools/lucene-peer/target10/lucene10-peer.jar")
}

/// The `java` that runs lucene-peer's Lucene 9 jar (the default Java, 17 or later).
pub const DEFAULT_JAVA: &str = "java";

/// The Temurin 25 JDK's `java`, which runs the Lucene 10 jar (Java 21 or later), where it is
/// installed.
pub fn temurin25_java() -> Option<PathBuf> {
    let java = PathBuf::from("/usr/lib/jvm/temurin-25-jdk-amd64/bin/java");
    java.is_file().then_some(java)
}

/// `Ok` when `jar` exists; else an error that says how to build it.
pub fn check_lucene_jar(jar: &Path) -> Result<(), PeerError> {
    if jar.is_file() {
        Ok(())
    } else {
        Err(PeerError::Unsupported(format!(
            "the lucene-peer jar {} does not exist: build it with `mvn -q -f tools/lucene-peer/pom.xml package` (Java 17+, Maven), or pass its path with --lucene-jar",
            jar.display()
        )))
    }
}

/// Writes `documents` as `tools/lucene-peer`'s corpus: one `title<TAB>body` line each, in
/// order, with TABs and line breaks inside the texts turned into spaces (line `i` is document
/// `i`).
pub fn write_lucene_corpus<'a>(
    documents: impl IntoIterator<Item = &'a Document>,
    path: &Path,
) -> Result<(), PeerError> {
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).map_err(io(path))?);
    let clean = |s: &str| s.replace(['\t', '\n', '\r'], " ");
    for doc in documents {
        writeln!(out, "{}\t{}", clean(&doc.title), clean(&doc.body)).map_err(io(path))?;
    }
    out.flush().map_err(io(path))
}

/// `java -jar jar index corpus dir`: (re)creates the Lucene peer index of `corpus` in `dir`.
pub fn lucene_index(java: &Path, jar: &Path, corpus: &Path, dir: &Path) -> Result<(), PeerError> {
    let status = Command::new(java)
        .arg("-jar")
        .arg(jar)
        .arg("index")
        .arg(corpus)
        .arg(dir)
        .arg("--positions")
        .stdout(Stdio::null())
        .status()
        .map_err(|e| PeerError::Lucene(format!("cannot run java: {e}")))?;
    if !status.success() {
        return Err(PeerError::Lucene("index failed".into()));
    }
    Ok(())
}

/// How `tools/lucene-peer bench` runs a query file.
#[derive(Debug, Clone, Copy)]
pub struct LuceneBenchOptions {
    /// Top hits (0: count only).
    pub k: usize,
    /// Count exactly beside the top k.
    pub count: bool,
    /// Untimed rounds (after the tool's own JIT warm-up of at least a second).
    pub warmup: usize,
    /// Timed rounds.
    pub repeat: usize,
}

/// One query line's result of `tools/lucene-peer bench`.
#[derive(Debug, Clone, PartialEq)]
pub enum LuceneOutcome {
    /// Its latency in each timed round, microseconds, and its exact hit count.
    Timed {
        /// One per timed round.
        latencies_us: Vec<f64>,
        /// Exact matches (counted outside the timing).
        total_hits: u64,
    },
    /// Lucene could not parse or run it: the tool's output line.
    Failed(String),
}

/// The `java -jar jar bench index queries_file ...` command for `options`.
pub fn lucene_bench_command(
    java: &Path,
    jar: &Path,
    index: &Path,
    queries_file: &Path,
    options: &LuceneBenchOptions,
) -> Command {
    let mut command = Command::new(java);
    command
        .arg("-jar")
        .arg(jar)
        .arg("bench")
        .arg(index)
        .arg(queries_file)
        .args(["-k", &options.k.to_string()])
        .args(["--warmup", &options.warmup.to_string()])
        .args(["--repeat", &options.repeat.to_string()]);
    if options.count {
        command.arg("--count");
    }
    command
}

/// `java -jar jar bench index queries_file ...`: every line of `queries_file` timed in each
/// round, single-threaded; one outcome per line, in order.
pub fn lucene_bench(
    java: &Path,
    jar: &Path,
    index: &Path,
    queries_file: &Path,
    options: &LuceneBenchOptions,
) -> Result<Vec<LuceneOutcome>, PeerError> {
    let output = lucene_bench_command(java, jar, index, queries_file, options)
        .output()
        .map_err(|e| PeerError::Lucene(format!("cannot run java: {e}")))?;
    if !output.status.success() {
        return Err(PeerError::Lucene(
            String::from_utf8_lossy(&output.stderr).into_owned(),
        ));
    }
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(LuceneOutcome::parse)
        .collect()
}

impl LuceneOutcome {
    /// One per-query line of `tools/lucene-peer bench`.
    pub fn parse(line: &str) -> Result<LuceneOutcome, PeerError> {
        let value: serde_json::Value =
            serde_json::from_str(line).map_err(|e| PeerError::Lucene(format!("{e}: {line}")))?;
        Ok(match value["latencies_us"].as_array() {
            Some(latencies) => LuceneOutcome::Timed {
                latencies_us: latencies.iter().filter_map(|v| v.as_f64()).collect(),
                total_hits: value["total_hits"].as_u64().unwrap_or(0),
            },
            None => LuceneOutcome::Failed(line.to_string()),
        })
    }
}

/// Every document of the index `reader` reads, title and body from its document store, in DID
/// order (document `i` of the result is DID `i`).
pub fn stored_documents(reader: &IndexReader) -> Result<Vec<Document>, PeerError> {
    let max_doc = u32::try_from(reader.max_doc()).map_err(|_| {
        PeerError::Unsupported(format!("{} documents is too many", reader.max_doc()))
    })?;
    let mut documents = Vec::with_capacity(max_doc as usize);
    for doc in 0..max_doc {
        let (segment, local) = reader.locate(doc).ok_or_else(|| {
            PeerError::Unsupported(format!("document {doc} is in no segment of the index"))
        })?;
        let stored = segment.stored(local)?;
        documents.push(Document {
            id: None,
            title: stored.title,
            body: stored.body,
            json: None,
        });
    }
    Ok(documents)
}

/// The peers' indexes of one apcache index, kept in a directory and reused while the apcache
/// index is the same.
///
/// Layout: `tantivy/` (a tantivy index), `lucene/` (a Lucene index), and beside each a
/// `<engine>.key` file, written after a successful build, holding the key it was built for.
/// A build removes the key first, so an interrupted build is never taken for a finished one.
pub struct PeerIndexes {
    dir: PathBuf,
    key: String,
}

/// A peer index, ready to search.
#[derive(Debug, Clone, Serialize)]
pub struct PeerIndex {
    /// Its directory.
    pub dir: PathBuf,
    /// Seconds to build it in this run; `None` when an earlier run's was reused.
    pub built_s: Option<f64>,
}

impl PeerIndexes {
    /// The peers' indexes of the apcache index in `index_dir`, kept in `dir` (created if
    /// needed). Refuses an index whose analyzer is not the default: the peers index with the
    /// default analyzer's tokens (Lucene's `StandardAnalyzer`), so their matches would differ.
    pub fn new(index_dir: &Path, dir: &Path) -> Result<PeerIndexes, PeerError> {
        let mut manifest = Manifest::load(index_dir)?;
        if manifest.analyzer != AnalyzerConfig::default() {
            return Err(PeerError::Unsupported(format!(
                "the index {} was built with stop words or stemming ({:?}); the peers analyze with Lucene's StandardAnalyzer only: build the index without --stop-words/--stem",
                index_dir.display(),
                manifest.analyzer
            )));
        }
        // The generation changes at every commit, even one that leaves the documents alone.
        manifest.generation = 0;
        let key = serde_json::to_string(&manifest)
            .map_err(|e| PeerError::Unsupported(format!("cannot key the manifest: {e}")))?;
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        Ok(PeerIndexes {
            dir: dir.to_path_buf(),
            key,
        })
    }

    /// The directory they are kept in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where `engine`'s index is kept.
    pub fn index_dir(&self, engine: PeerEngine) -> PathBuf {
        self.dir.join(engine.name())
    }

    fn key_file(&self, engine: PeerEngine) -> PathBuf {
        self.dir.join(format!("{}.key", engine.name()))
    }

    /// Whether `engine`'s index in the directory was built for this apcache index (and
    /// [`PeerIndexes::get`] will reuse it).
    pub fn is_current(&self, engine: PeerEngine) -> bool {
        let index_dir = self.index_dir(engine);
        let present = match engine {
            PeerEngine::Tantivy => index_dir.join("meta.json").is_file(),
            PeerEngine::Lucene => std::fs::read_dir(&index_dir)
                .map(|entries| {
                    entries
                        .flatten()
                        .any(|e| e.file_name().to_string_lossy().starts_with("segments_"))
                })
                .unwrap_or(false),
        };
        present
            && std::fs::read_to_string(self.key_file(engine))
                .is_ok_and(|key| key == self.key_of(engine))
    }

    fn key_of(&self, engine: PeerEngine) -> String {
        let settings = match engine {
            PeerEngine::Tantivy => {
                format!("tantivy {TANTIVY_VERSION}: {:?}", tantivy_index_options())
            }
            PeerEngine::Lucene => format!("lucene-peer {LUCENE_VERSION}: index"),
        };
        format!("{settings}\n{}\n", self.key)
    }

    /// `engine`'s index, built from the documents of `reader` (the apcache index these indexes
    /// belong to) unless the one in the directory was built for the same apcache index. The
    /// documents are read into `documents` when it is `None` and a build needs them, so that
    /// several builds read them once.
    pub fn get(
        &self,
        engine: PeerEngine,
        lucene_jar: Option<&Path>,
        reader: &IndexReader,
        documents: &mut Option<Vec<Document>>,
    ) -> Result<PeerIndex, PeerError> {
        let index_dir = self.index_dir(engine);
        let key_file = self.key_file(engine);
        if self.is_current(engine) {
            return Ok(PeerIndex {
                dir: index_dir,
                built_s: None,
            });
        }
        match std::fs::remove_file(&key_file) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(PeerError::Io(key_file, e)),
        }
        let documents = match documents {
            Some(documents) => documents,
            None => documents.insert(stored_documents(reader)?),
        };
        let start = Instant::now();
        match engine {
            PeerEngine::Tantivy => tantivy_index(documents, &index_dir)?,
            PeerEngine::Lucene => {
                let jar = lucene_jar
                    .ok_or_else(|| PeerError::Unsupported("no lucene-peer jar given".into()))?;
                check_lucene_jar(jar)?;
                let corpus = self.dir.join("lucene-corpus.tsv");
                write_lucene_corpus(documents.iter(), &corpus)?;
                let built = lucene_index(Path::new(DEFAULT_JAVA), jar, &corpus, &index_dir);
                let _ = std::fs::remove_file(&corpus);
                built?;
            }
        }
        let built_s = start.elapsed().as_secs_f64();
        std::fs::write(&key_file, self.key_of(engine)).map_err(io(&key_file))?;
        Ok(PeerIndex {
            dir: index_dir,
            built_s: Some(built_s),
        })
    }
}

/// The default directory of the peers' indexes of the apcache index in `index_dir`:
/// `$TMPDIR/apcache-peers/<name>-<hash of its absolute path>`, the same for every run on it.
pub fn default_peer_dir(index_dir: &Path) -> PathBuf {
    let absolute = std::fs::canonicalize(index_dir).unwrap_or_else(|_| index_dir.to_path_buf());
    let name: String = absolute
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "index".into())
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    // FNV-1a: stable across runs and builds (std's hasher is not).
    let hash = absolute
        .to_string_lossy()
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
        });
    std::env::temp_dir()
        .join("apcache-peers")
        .join(format!("{name}-{hash:016x}"))
}
