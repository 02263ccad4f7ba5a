//! tantivy 0.27 as the indexing-throughput peer.
//!
//! apcache's indexing throughput is measured against tantivy's: the goal is "at least
//! tantivy 0.27's documents per second for the same text with a comparable analyzer and no
//! stored positions". [`index_with_tantivy`] builds a tantivy index of the same
//! [`Document`]s that apcache indexes, set up to do the same work:
//!
//! - one indexed text field, `text`, fed with the title and the body (two values, as apcache
//!   analyzes title and body one after the other as one field), with frequencies and field
//!   norms, without positions ([`IndexRecordOption::WithFreqs`]) unless asked for, not stored;
//! - `title` and `body` stored only, so that the doc store holds the text apcache's store holds,
//!   compressed like apcache's: zstd level 1 in blocks of 16 KiB;
//! - with [`TantivyTokenizer::Apcache`], the tokens are apcache's own, produced by
//!   [`Analyzer::default`] (UAX #29 words, lowercased, as Lucene's `StandardAnalyzer`), so the
//!   comparison measures the indexing machinery rather than the analyzers.
//!   [`TantivyTokenizer::Default`] is tantivy's `default` analyzer (`SimpleTokenizer`, removal
//!   of tokens of 40 bytes or more, lowercasing), which is cheaper and splits differently.
//!
//! The writer runs tantivy's default merge policy (`LogMergePolicy`), so background merges run
//! while documents are added and after the commit; [`TantivyIndexReport::merge_seconds`] counts
//! the wait for them, then the optional merge into one segment (apcache's build ends with one
//! segment by default, so the comparison sets `merge_to_one`).

use std::path::Path;
use std::time::Instant;

use apcache_index::analyzer::Analyzer;
use apcache_index::ingest::Document;
use serde::Serialize;
use tantivy::directory::MmapDirectory;
use tantivy::indexer::{IndexWriterOptions, NoMergePolicy};
use tantivy::schema::{IndexRecordOption, Schema, TextFieldIndexing, TextOptions, STORED};
use tantivy::store::{Compressor, ZstdCompressor};
use tantivy::tokenizer::{Token, TokenStream, Tokenizer};
use tantivy::{Index, IndexSettings, IndexWriter, TantivyDocument, TantivyError};

/// Name under which [`ApcacheTokenizer`] is registered with the index.
pub const APCACHE_TOKENIZER_NAME: &str = "apcache";

/// tantivy 0.27's least memory budget per indexing thread, in bytes (its private
/// `MEMORY_BUDGET_NUM_BYTES_MIN`, 15 MB: "the baseline consumption is 12MB"); a writer with less
/// is refused.
pub const MEMORY_BUDGET_PER_THREAD_MIN: usize = 15_000_000;

/// tantivy 0.27's bound on the memory budget per indexing thread: the budget must stay below
/// its private `MEMORY_BUDGET_NUM_BYTES_MAX`, `u32::MAX` less 1 MB.
pub const MEMORY_BUDGET_PER_THREAD_MAX: usize = u32::MAX as usize - 1_000_000 - 1;

/// The zstd level of the doc store, apcache's (`segment::store`).
const DOCSTORE_ZSTD_LEVEL: i32 = 1;

/// The raw size of a doc-store block, apcache's (16 KiB, `segment::store`).
const DOCSTORE_BLOCK_BYTES: usize = 16 * 1024;

/// Which analyzer tantivy indexes the `text` field with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TantivyTokenizer {
    /// tantivy's `default` analyzer: `SimpleTokenizer` (runs of alphanumeric characters),
    /// `RemoveLongFilter` (drops tokens of 40 bytes or more) and `LowerCaser`.
    Default,
    /// apcache's default analyzer ([`Analyzer::default`]) inside a tantivy tokenizer: exactly the
    /// terms apcache indexes.
    #[default]
    Apcache,
}

/// How to build the tantivy index.
#[derive(Debug, Clone)]
pub struct TantivyIndexOptions {
    /// Indexing threads (tantivy's worker threads); 0 is taken as 1. tantivy's own merge
    /// threads (4) come on top.
    pub threads: usize,
    /// Memory budget of all indexing threads together, in bytes. Each thread gets an equal
    /// share, raised to tantivy's minimum of [`MEMORY_BUDGET_PER_THREAD_MIN`] (15 MB) and
    /// lowered to [`MEMORY_BUDGET_PER_THREAD_MAX`] (about 4 GiB), so the budget used can be
    /// larger than asked; the report gives the share used.
    pub memory_budget: usize,
    /// After the commit and the background merges, merge every segment into one.
    pub merge_to_one: bool,
    /// The analyzer of the `text` field.
    pub tokenizer: TantivyTokenizer,
    /// Index positions too ([`IndexRecordOption::WithFreqsAndPositions`]), for phrase
    /// queries.
    pub positions: bool,
}

impl Default for TantivyIndexOptions {
    /// apcache's indexing defaults: 2 threads, 256 MiB, apcache's tokens, no final merge, no
    /// positions.
    fn default() -> Self {
        TantivyIndexOptions {
            threads: 2,
            memory_budget: 256 << 20,
            merge_to_one: false,
            tokenizer: TantivyTokenizer::Apcache,
            positions: false,
        }
    }
}

/// What a tantivy build did and how long it took.
#[derive(Debug, Clone, Serialize)]
pub struct TantivyIndexReport {
    /// Documents indexed.
    pub documents: u64,
    /// Seconds spent handing every document to the writer (`add_document`). The writer's
    /// queue is bounded, so this covers most of the inverting; the rest is in the commit.
    pub add_seconds: f64,
    /// Seconds of `commit()`: the threads finish and flush their segments, which are
    /// written and made searchable.
    pub commit_seconds: f64,
    /// Seconds waiting for the background merges (`wait_merging_threads`), plus, with
    /// `merge_to_one`, the merge of every segment into one.
    pub merge_seconds: f64,
    /// `add_seconds + commit_seconds + merge_seconds`.
    pub total_seconds: f64,
    /// `documents / total_seconds`.
    pub docs_per_second: f64,
    /// Searchable segments at the end.
    pub segments: usize,
    /// Total size of the files in the index directory at the end.
    pub index_bytes: u64,
    /// Indexing threads used.
    pub threads: usize,
    /// Memory budget per indexing thread used, in bytes (see
    /// [`TantivyIndexOptions::memory_budget`]).
    pub memory_budget_per_thread: usize,
}

/// Indexes `documents` with tantivy into `dir` and times it.
///
/// `dir` is created if needed. If it holds a tantivy index (a `meta.json`), that index is
/// deleted first; any other non-empty directory is refused with
/// [`TantivyError::InvalidArgument`], so that no unrelated file is removed.
pub fn index_with_tantivy(
    documents: &[Document],
    dir: &Path,
    options: &TantivyIndexOptions,
) -> Result<TantivyIndexReport, TantivyError> {
    prepare_directory(dir)?;

    let tokenizer_name = match options.tokenizer {
        TantivyTokenizer::Default => "default",
        TantivyTokenizer::Apcache => APCACHE_TOKENIZER_NAME,
    };
    let text_options = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(tokenizer_name)
            .set_index_option(if options.positions {
                IndexRecordOption::WithFreqsAndPositions
            } else {
                IndexRecordOption::WithFreqs
            })
            .set_fieldnorms(true),
    );
    let mut schema_builder = Schema::builder();
    let text = schema_builder.add_text_field("text", text_options);
    let title = schema_builder.add_text_field("title", STORED);
    let body = schema_builder.add_text_field("body", STORED);
    let schema = schema_builder.build();

    let settings = IndexSettings {
        docstore_compression: Compressor::Zstd(ZstdCompressor {
            compression_level: Some(DOCSTORE_ZSTD_LEVEL),
        }),
        docstore_blocksize: DOCSTORE_BLOCK_BYTES,
        ..IndexSettings::default()
    };
    let directory = MmapDirectory::open(dir)?;
    let index = Index::builder()
        .schema(schema)
        .settings(settings)
        .open_or_create(directory)?;
    index
        .tokenizers()
        .register(APCACHE_TOKENIZER_NAME, ApcacheTokenizer::default());

    let threads = options.threads.max(1);
    let memory_budget_per_thread = (options.memory_budget / threads)
        .clamp(MEMORY_BUDGET_PER_THREAD_MIN, MEMORY_BUDGET_PER_THREAD_MAX);
    let writer_options = IndexWriterOptions::builder()
        .num_worker_threads(threads)
        .memory_budget_per_thread(memory_budget_per_thread)
        .build();

    let start = Instant::now();
    let mut writer: IndexWriter = index.writer_with_options(writer_options)?;
    for document in documents {
        let mut tantivy_document = TantivyDocument::default();
        tantivy_document.add_text(text, &document.title);
        tantivy_document.add_text(text, &document.body);
        tantivy_document.add_text(title, &document.title);
        tantivy_document.add_text(body, &document.body);
        writer.add_document(tantivy_document)?;
    }
    let added = Instant::now();
    writer.commit()?;
    let committed = Instant::now();
    writer.wait_merging_threads()?;
    if options.merge_to_one {
        let segment_ids = index.searchable_segment_ids()?;
        if segment_ids.len() > 1 {
            // A fresh writer (the first one is gone with its merge threads); it takes no
            // documents, so one thread at the minimum budget will do.
            let merge_options = IndexWriterOptions::builder()
                .num_worker_threads(1)
                .memory_budget_per_thread(MEMORY_BUDGET_PER_THREAD_MIN)
                .build();
            let mut merger: IndexWriter = index.writer_with_options(merge_options)?;
            merger.set_merge_policy(Box::new(NoMergePolicy));
            merger.merge(&segment_ids).wait()?;
            merger.wait_merging_threads()?;
        }
    }
    let merged = Instant::now();

    let add_seconds = (added - start).as_secs_f64();
    let commit_seconds = (committed - added).as_secs_f64();
    let merge_seconds = (merged - committed).as_secs_f64();
    let total_seconds = (merged - start).as_secs_f64();
    let documents = documents.len() as u64;
    Ok(TantivyIndexReport {
        documents,
        add_seconds,
        commit_seconds,
        merge_seconds,
        total_seconds,
        docs_per_second: if total_seconds > 0.0 {
            documents as f64 / total_seconds
        } else {
            0.0
        },
        segments: index.searchable_segment_ids()?.len(),
        index_bytes: directory_bytes(dir)?,
        threads,
        memory_budget_per_thread,
    })
}

/// Creates `dir`, or empties it when it holds a tantivy index; refuses any other content.
fn prepare_directory(dir: &Path) -> Result<(), TantivyError> {
    std::fs::create_dir_all(dir)?;
    let entries = std::fs::read_dir(dir)?.collect::<Result<Vec<_>, _>>()?;
    if entries.is_empty() {
        return Ok(());
    }
    if !dir.join("meta.json").is_file() {
        return Err(TantivyError::InvalidArgument(format!(
            "{} is neither empty nor a tantivy index; not clearing it",
            dir.display()
        )));
    }
    for entry in entries {
        if entry.file_type()?.is_dir() {
            std::fs::remove_dir_all(entry.path())?;
        } else {
            std::fs::remove_file(entry.path())?;
        }
    }
    Ok(())
}

/// Total size of the files under `dir`, recursively.
fn directory_bytes(dir: &Path) -> std::io::Result<u64> {
    let mut total = 0;
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let file_type = entry.file_type()?;
        if file_type.is_dir() {
            total += directory_bytes(&entry.path())?;
        } else if file_type.is_file() {
            total += entry.metadata()?.len();
        }
    }
    Ok(total)
}

/// A tantivy [`Tokenizer`] that yields the terms of apcache's default [`Analyzer`], with their
/// positions. Offsets are not known (a lowercased term is not a slice of the text) and are left
/// at 0; the peer indexes no positions or offsets, so they do not matter.
///
/// The tokens of a text are collected before the stream is returned; their `String`s are kept
/// and reused from one text to the next, so a text costs no allocation once the buffers are
/// warm, like tantivy's own tokenizers.
#[derive(Default)]
pub struct ApcacheTokenizer {
    analyzer: Analyzer,
    /// Token buffers; the first `len` hold the current text's tokens.
    tokens: Vec<Token>,
}

impl Clone for ApcacheTokenizer {
    /// A tokenizer with the same analyzer and fresh buffers.
    fn clone(&self) -> Self {
        ApcacheTokenizer {
            analyzer: self.analyzer.clone(),
            tokens: Vec::new(),
        }
    }
}

impl Tokenizer for ApcacheTokenizer {
    type TokenStream<'a> = ApcacheTokenStream<'a>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> ApcacheTokenStream<'a> {
        let tokens = &mut self.tokens;
        let mut len = 0;
        self.analyzer
            .for_each_token_with_position(text, |position, term| {
                if len == tokens.len() {
                    tokens.push(Token::default());
                }
                let token = &mut tokens[len];
                token.text.clear();
                token.text.push_str(term);
                token.position = position as usize;
                token.offset_from = 0;
                token.offset_to = 0;
                token.position_length = 1;
                len += 1;
            });
        ApcacheTokenStream {
            tokens: &mut tokens[..len],
            next: 0,
            before_first: Token::default(),
        }
    }
}

/// The stream of [`ApcacheTokenizer`]: the tokens of one text.
pub struct ApcacheTokenStream<'a> {
    tokens: &'a mut [Token],
    /// Index of the token after the current one.
    next: usize,
    /// What [`TokenStream::token`] returns before the first `advance`.
    before_first: Token,
}

impl TokenStream for ApcacheTokenStream<'_> {
    fn advance(&mut self) -> bool {
        if self.next < self.tokens.len() {
            self.next += 1;
            true
        } else {
            false
        }
    }

    fn token(&self) -> &Token {
        match self.next {
            0 => &self.before_first,
            next => &self.tokens[next - 1],
        }
    }

    fn token_mut(&mut self) -> &mut Token {
        match self.next {
            0 => &mut self.before_first,
            next => &mut self.tokens[next - 1],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tantivy::collector::Count;
    use tantivy::query::TermQuery;
    use tantivy::Term;

    /// 200 documents; "zebra" (capitalized in some) is in exactly 7 of them: 0, 29, ..., 174.
    fn documents() -> Vec<Document> {
        (0..200)
            .map(|i| {
                let mut title = format!("Document number {i}");
                let mut body = format!(
                    "The quick brown fox {} jumps over the lazy dog, e-mail FOO@Example.COM {}.",
                    i % 13,
                    i * 7
                );
                if i % 29 == 0 {
                    if i % 2 == 0 {
                        title.push_str(" about a Zebra");
                    } else {
                        body.push_str(" A zebra, then ZEBRA again.");
                    }
                }
                Document {
                    id: Some(i.to_string()),
                    title,
                    body,
                    json: None,
                }
            })
            .collect()
    }

    fn check(tokenizer: TantivyTokenizer, merge_to_one: bool, name: &str) {
        let dir = std::env::temp_dir().join(format!(
            "apcache-tantivy-peer-{}-{name}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        let options = TantivyIndexOptions {
            threads: 2,
            memory_budget: 1 << 20, // raised to the minimum per thread
            merge_to_one,
            tokenizer,
            positions: false,
        };
        let documents = documents();
        let report = index_with_tantivy(&documents, &dir, &options).unwrap();
        assert_eq!(report.documents, 200);
        assert_eq!(
            report.memory_budget_per_thread,
            MEMORY_BUDGET_PER_THREAD_MIN
        );
        assert!(report.segments >= 1);
        if merge_to_one {
            assert_eq!(report.segments, 1);
        }
        assert!(report.index_bytes > 0);
        assert!(report.docs_per_second > 0.0);

        let index = Index::open_in_dir(&dir).unwrap();
        let searcher = index.reader().unwrap().searcher();
        assert_eq!(searcher.num_docs(), 200);
        assert_eq!(searcher.segment_readers().len(), report.segments);
        let text = index.schema().get_field("text").unwrap();
        let count = |word: &str| {
            let query = TermQuery::new(Term::from_field_text(text, word), IndexRecordOption::Basic);
            searcher.search(&query, &Count).unwrap()
        };
        assert_eq!(count("zebra"), 7);
        assert_eq!(count("Zebra"), 0);
        assert_eq!(count("fox"), 200);
        match tokenizer {
            // apcache keeps "example.com" whole; tantivy's tokenizer splits it.
            TantivyTokenizer::Apcache => assert_eq!(count("example.com"), 200),
            TantivyTokenizer::Default => assert_eq!(count("example"), 200),
        }

        // A second build into the same directory replaces the index.
        let report = index_with_tantivy(&documents[..10], &dir, &options).unwrap();
        assert_eq!(report.documents, 10);
        let index = Index::open_in_dir(&dir).unwrap();
        assert_eq!(index.reader().unwrap().searcher().num_docs(), 10);

        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn indexes_with_tantivys_default_tokenizer() {
        check(TantivyTokenizer::Default, false, "default");
    }

    #[test]
    fn indexes_with_apcaches_tokens_and_merges_to_one() {
        check(TantivyTokenizer::Apcache, true, "apcache");
    }

    #[test]
    fn the_tokenizer_yields_apcaches_terms_and_positions() {
        let text = "The Quick-Brown fox, e-mail: FOO@Example.COM İSTANBUL";
        let mut expected = Vec::new();
        Analyzer::default().for_each_token_with_position(text, |position, term| {
            expected.push((position as usize, term.to_owned()));
        });
        let mut tokenizer = ApcacheTokenizer::default();
        for _ in 0..2 {
            let mut stream = tokenizer.token_stream(text);
            let mut got = Vec::new();
            while let Some(token) = stream.next() {
                got.push((token.position, token.text.clone()));
            }
            assert_eq!(got, expected);
            assert!(!stream.advance());
        }
        assert!(tokenizer.token_stream("").next().is_none());
    }

    #[test]
    fn a_foreign_directory_is_not_cleared() {
        let dir = std::env::temp_dir().join(format!(
            "apcache-tantivy-peer-{}-foreign",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("keep.txt"), b"mine").unwrap();
        let result = index_with_tantivy(&documents(), &dir, &TantivyIndexOptions::default());
        assert!(matches!(result, Err(TantivyError::InvalidArgument(_))));
        assert!(dir.join("keep.txt").is_file());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
