//! Building an index: documents are read in batches on the calling thread and inverted by
//! several indexing threads, each with its own [`PostingTable`]; a table that outgrows its share
//! of the memory budget is flushed to a segment. At the end the segments are merged into one
//! (unless told not to), and the final commit names the result.
//!
//! How flushes are committed depends on what the directory holds:
//! - nothing: every flush is committed, so a killed build keeps what it flushed; those commits
//!   carry [`Manifest::build`], which marks the index incomplete until the final commit.
//! - an index, replaced (`force`): nothing is committed before the final commit. The new
//!   segments are written beside the old ones under new names (numbered after them) and listed
//!   only in memory, so the old index stays whole and searchable, its MANIFEST and files
//!   untouched, until the final commit replaces the MANIFEST; its files are removed after.
//!   A killed rebuild leaves the old index as it was, and new files that the next writer
//!   removes.
//!
//! An input without documents commits nothing and is an error.
//!
//! Three placements are flags, recorded in the report: where the tables' block arenas live
//! ([`ArenaPlacement`]), where flushed segments are written (`flush_dir`, e.g. a fast scratch
//! device; the manifest names them there until the merge), and where the merged segment is
//! written (`merge_dir`).

mod arena;
mod byte_slices;
mod document_terms;
mod posting_table;
mod tail_pool;

pub use arena::ArenaPlacement;
pub use posting_table::{FlushFormat, PostingTable};

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use apcache_codec::CodecKind;
use serde::Serialize;

use crate::analyzer::{Analyzer, AnalyzerConfig};
use crate::index_dir::{self, DirContents};
use crate::ingest::{Document, DocumentReader, Input, ReaderOptions, SkippedLine};
use crate::manifest::{BuildProgress, Manifest};
use crate::merge::{merge_all, next_segment_number, MergeReport};
use crate::schema::{Mapper, Mapping};
use crate::writer_lock::WriterLock;
use crate::IndexError;

/// How to build an index.
#[derive(Debug, Clone)]
pub struct IndexOptions {
    /// Codec of the posting blocks.
    pub codec: CodecKind,
    /// Indexing threads.
    pub threads: usize,
    /// Bound on the anonymous memory of the whole build, in bytes: the posting tables get what
    /// is left after reserves for the rest of the process and for each thread's flush.
    pub memory_budget: usize,
    /// The analyzer.
    pub analyzer: AnalyzerConfig,
    /// How the input is read.
    pub reader: ReaderOptions,
    /// Documents per batch handed to a thread.
    pub batch_docs: usize,
    /// Replace an index already in the directory.
    pub force: bool,
    /// Merge all segments into one at the end.
    pub merge: bool,
    /// Where the posting tables' block arenas live.
    pub arena: ArenaPlacement,
    /// Directory for flushed segments (default: the index directory).
    pub flush_dir: Option<PathBuf>,
    /// Directory for the merged segment (default: the index directory).
    pub merge_dir: Option<PathBuf>,
    /// Keep every occurrence's position, for phrase queries.
    pub positions: bool,
    /// The mapping JSON documents are indexed under (`None`: inferred from the documents, as
    /// Elasticsearch's dynamic mapping does).
    pub mapping: Option<Mapping>,
    /// The field whose value is a JSON document's `_id` when it has no `_id` (default `id`).
    pub id_field: Option<String>,
}

impl Default for IndexOptions {
    fn default() -> Self {
        IndexOptions {
            codec: CodecKind::PforDeltaSimd,
            threads: 2,
            memory_budget: 256 << 20,
            analyzer: AnalyzerConfig::default(),
            reader: ReaderOptions::default(),
            batch_docs: 512,
            force: false,
            merge: true,
            arena: ArenaPlacement::Anonymous,
            flush_dir: None,
            merge_dir: None,
            positions: true,
            mapping: None,
            id_field: Some("id".to_owned()),
        }
    }
}

/// What a build did and how long it took.
#[derive(Debug, Clone, Serialize)]
pub struct IndexReport {
    /// Documents indexed.
    pub documents: u64,
    /// Bad input lines (skipped).
    pub bad_lines: u64,
    /// The first bad lines, each with its file, line number and reason (as many as
    /// [`ReaderOptions::max_bad_line_examples`](crate::ingest::ReaderOptions) keeps).
    pub skipped_lines: Vec<SkippedLine>,
    /// Input bytes (decompressed).
    pub bytes_read: u64,
    /// Segments flushed.
    pub segments_flushed: u32,
    /// Segments in the committed index.
    pub segments: usize,
    /// Postings in the committed index.
    pub postings: u64,
    /// Wall-clock seconds of the whole build.
    pub total_seconds: f64,
    /// Seconds the indexing threads spent inverting documents (summed over threads).
    pub ingest_seconds: f64,
    /// Seconds spent writing segments (transform and write, summed over threads).
    pub flush_seconds: f64,
    /// Seconds spent merging segments (read, merge, encode, write and fsync the merged one).
    pub merge_seconds: f64,
    /// Seconds spent committing manifests (fsync and rename) and removing merged files.
    pub sync_seconds: f64,
    /// Documents per second, wall clock.
    pub docs_per_second: f64,
    /// Input megabytes per second, wall clock.
    pub mb_per_second: f64,
    /// The codec.
    pub codec: String,
    /// Threads.
    pub threads: usize,
    /// Memory budget in bytes.
    pub memory_budget: usize,
    /// Where the block arenas lived.
    pub arena: ArenaPlacement,
    /// Bytes of the largest block arena one table allocated.
    pub arena_bytes: u64,
    /// Where flushed segments were written.
    pub flush_dir: PathBuf,
    /// Where the merged segment was written (absent without a merge).
    pub merge_dir: Option<PathBuf>,
    /// Peak resident memory of the process (Linux `VmHWM`), mapped index files included.
    pub peak_rss_bytes: Option<u64>,
    /// Peak anonymous resident memory (heap), sampled every 10 ms: what the budget bounds.
    pub peak_anon_bytes: Option<u64>,
}

/// Memory of the process besides the posting tables: the reader, batches in flight, code
/// and libraries, the allocator arenas of several threads, and what freed memory they keep
/// (measured: the peak of a build of the four corpus parts sat 3-9 MiB over the budget with
/// 48 MiB here).
const PROCESS_RESERVE: usize = 60 << 20;
/// Working memory of one flush besides its table: file buffers, the dictionary builder,
/// allocator slack (measured: about 26 MiB for a 330 MiB table).
const FLUSH_RESERVE: usize = 32 << 20;

/// The memory one table may fill before it is flushed: the budget less the reserves, shared
/// by the threads. A budget too small for the reserves (tests use them to force many
/// segments) gives each table a quarter of its plain share, and cannot be kept.
fn table_share(budget: usize, threads: usize) -> usize {
    let threads = threads.max(1);
    let reserved = PROCESS_RESERVE + threads * FLUSH_RESERVE;
    let share = (budget.saturating_sub(reserved) / threads).max(budget / threads / 4);
    // A table's positions live in one pool of 32-bit addresses.
    share.min(byte_slices::ByteSlices::MAX_BYTES / 2)
}

/// Shared state of the indexing threads.
struct Shared<'a> {
    dir: &'a Path,
    flush_dir: Option<PathBuf>,
    options: &'a IndexOptions,
    analyzer: Analyzer,
    /// The segments flushed so far, with [`Manifest::build`] set.
    manifest: Mutex<Manifest>,
    /// Commit each flush (a build into an empty directory), or only the end (a rebuild).
    commit_flushes: bool,
    /// Documents the reader has handed out, recorded by each flush's commit.
    documents_read: AtomicU64,
    next_segment: AtomicU32,
    ingest_ns: AtomicU64,
    flush_ns: AtomicU64,
    sync_ns: AtomicU64,
    arena_bytes: AtomicU64,
}

fn add_ns(counter: &AtomicU64, since: Instant) {
    counter.fetch_add(since.elapsed().as_nanos() as u64, Ordering::Relaxed);
}

impl Shared<'_> {
    /// The format of flushed segments: the index's own, or, when they will be merged anyway,
    /// what is written fastest.
    fn flush_format(&self) -> FlushFormat {
        if self.options.merge {
            FlushFormat::BEFORE_MERGE
        } else {
            FlushFormat::searchable(self.options.codec)
        }
    }

    fn flush(&self, table: &mut PostingTable) -> Result<(), IndexError> {
        if table.documents() == 0 {
            return Ok(());
        }
        self.arena_bytes
            .fetch_max(table.arena_bytes() as u64, Ordering::Relaxed);
        let start = Instant::now();
        let mut meta = table.flush(self.flush_format())?;
        meta.dir = self.flush_dir.clone();
        add_ns(&self.flush_ns, start);
        let start = Instant::now();
        let mut manifest = self
            .manifest
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        manifest.segments.push(meta);
        manifest
            .segments
            .sort_by_key(|s| s.docs.runs().first().map(|r| r[0]));
        if self.commit_flushes {
            if let Some(build) = &mut manifest.build {
                build.documents_read = self.documents_read.load(Ordering::Relaxed);
            }
            manifest.commit(self.dir)?;
        }
        add_ns(&self.sync_ns, start);
        Ok(())
    }

    fn worker(
        &self,
        batches: crossbeam_channel::Receiver<(u32, Vec<Document>)>,
    ) -> Result<(), IndexError> {
        let mut table = PostingTable::new(self.options.arena.clone(), self.options.positions)?;
        let share = table_share(self.options.memory_budget, self.options.threads);
        for (first, batch) in batches {
            let start = Instant::now();
            if !table.has_segment() {
                let name = format!(
                    "seg_{:06}",
                    self.next_segment.fetch_add(1, Ordering::Relaxed)
                );
                let out = self.flush_dir.as_deref().unwrap_or(self.dir);
                table.begin_segment(out, &name)?;
            }
            for (i, doc) in batch.iter().enumerate() {
                table.add_document(first + i as u32, doc, &self.analyzer)?;
            }
            add_ns(&self.ingest_ns, start);
            if table.bytes() >= share {
                self.flush(&mut table)?;
            }
        }
        self.flush(&mut table)
    }
}

/// Hands the memory that the indexing threads' tables freed back to the system. The C
/// allocator keeps what a thread frees in that thread's arena, and the merge's threads allocate
/// in arenas of their own: without this the merge's working memory would come on top of the
/// tables' instead of in their place, past the memory budget.
fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `malloc_trim` only returns free pages of the allocator's heaps to the system;
    // it has no preconditions.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// The files a build may have written, to remove when it fails: its temporary files, and the
/// segments numbered from its first that no commit names, in the index directory and in the
/// placement directories. A build that created the directory and committed nothing removes
/// the directory too. Only apcache's own file names are touched ([`index_dir`]).
struct BuildFiles<'a> {
    dir: &'a Path,
    placements: [Option<PathBuf>; 2],
    first_segment: u32,
    created_dir: bool,
}

impl BuildFiles<'_> {
    /// Removes what the failed build wrote and no commit names. Best effort: a file that
    /// cannot be removed now is a leftover the next writer removes.
    fn remove_uncommitted(&self) {
        let committed = Manifest::load(self.dir).ok();
        let named: std::collections::HashSet<&str> = committed
            .iter()
            .flat_map(|m| &m.segments)
            .flat_map(|s| s.files.iter().map(|f| f.name.as_str()))
            .collect();
        let dirs =
            std::iter::once(self.dir).chain(self.placements.iter().flatten().map(|d| d.as_path()));
        for dir in dirs {
            let Ok(entries) = std::fs::read_dir(dir) else {
                continue;
            };
            for name in entries
                .flatten()
                .filter_map(|e| e.file_name().into_string().ok())
            {
                let ours = index_dir::segment_number(&name)
                    .is_some_and(|n| n >= self.first_segment && !named.contains(name.as_str()));
                let temporary = dir == self.dir && index_dir::is_own_temporary(&name);
                if ours || temporary {
                    let _ = std::fs::remove_file(dir.join(&name));
                }
            }
        }
        if self.created_dir && committed.is_none() {
            remove_created_dir(self.dir);
        }
    }
}

/// Removes a directory this build created and left without an index: its lock file, then the
/// directory if nothing else is in it.
fn remove_created_dir(dir: &Path) {
    let _ = std::fs::remove_file(dir.join(crate::writer_lock::LOCK));
    let _ = std::fs::remove_dir(dir);
}

/// What a build finds in its directory.
enum Previous {
    /// No index: the build commits as it goes.
    Nothing,
    /// An index that the build replaces at its final commit (`force`), with its manifest, or
    /// `None` when that does not load (it is replaced all the same).
    Index(Option<Manifest>),
}

/// Prepares `dir` (created, its writer lock held) for a new index: finds what it holds (an
/// index is an error without `force`) and removes what an interrupted writer left there.
fn prepare_dir(dir: &Path, force: bool) -> Result<Previous, IndexError> {
    // Checked again under the lock: the directory may have changed since.
    if index_dir::check_writable(dir)? != DirContents::Index {
        // With no manifest, every segment file is a leftover of a killed build.
        Manifest::new(AnalyzerConfig::default()).remove_unreferenced(dir)?;
        return Ok(Previous::Nothing);
    }
    if !force {
        return Err(IndexError::IndexExists(dir.to_path_buf()));
    }
    let previous = Manifest::load(dir).ok();
    // Without a readable manifest nothing can be told a leftover; the final commit's clean-up
    // removes the old files.
    if let Some(previous) = &previous {
        previous.remove_unreferenced(dir)?;
    }
    Ok(Previous::Index(previous))
}

/// The number of the build's first segment: after every segment the old index names and every
/// `seg_*` file in `dir`, so that no new file takes an old one's name.
fn first_segment_number(dir: &Path, previous: &Previous) -> Result<u32, IndexError> {
    let named = match previous {
        Previous::Index(Some(manifest)) => next_segment_number(manifest),
        _ => 0,
    };
    let entries = std::fs::read_dir(dir).map_err(|e| IndexError::io(dir, e))?;
    let on_disk = entries
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().into_string().ok()?;
            name.strip_prefix("seg_")?.get(..6)?.parse::<u32>().ok()
        })
        .max()
        .map_or(0, |n| n + 1);
    Ok(named.max(on_disk))
}

/// Removes the files of `old`'s segments outside `dir` that `new` does not name (those in
/// `dir` are leftovers of the new manifest, [`Manifest::remove_unreferenced`]).
fn remove_replaced(dir: &Path, old: &Manifest, new: &Manifest) {
    for segment in old.segments.iter().filter(|s| s.dir.is_some()) {
        let kept = new
            .segments
            .iter()
            .any(|s| s.name == segment.name && s.directory(dir) == segment.directory(dir));
        if !kept {
            for file in &segment.files {
                let _ = std::fs::remove_file(segment.directory(dir).join(&file.name));
            }
        }
    }
}

/// Where the documents of a build come from.
trait DocumentSource {
    /// Appends up to `max` documents to `out`; returns how many (0 at the end).
    fn next_batch(&mut self, max: usize, out: &mut Vec<Document>) -> Result<usize, IndexError>;
    /// Input bytes consumed so far.
    fn bytes_read(&self) -> u64;
    /// Bad input lines skipped.
    fn bad_lines(&self) -> u64;
    /// The first bad lines skipped.
    fn skipped_lines(&self) -> Vec<SkippedLine> {
        Vec::new()
    }
    /// The mapping of the documents read so far, and a number that changes when it grows.
    fn mapping(&self) -> (u64, Mapping);
}

impl DocumentSource for DocumentReader {
    fn next_batch(&mut self, max: usize, out: &mut Vec<Document>) -> Result<usize, IndexError> {
        Ok(DocumentReader::next_batch(self, max, out)?)
    }
    fn bytes_read(&self) -> u64 {
        self.report().bytes_read
    }
    fn bad_lines(&self) -> u64 {
        self.report().bad_line_count
    }
    fn skipped_lines(&self) -> Vec<SkippedLine> {
        self.report()
            .bad_lines
            .iter()
            .map(SkippedLine::from)
            .collect()
    }
    fn mapping(&self) -> (u64, Mapping) {
        (self.mapper().version(), self.mapper().mapping().clone())
    }
}

/// Documents already in memory (benchmarks, which time indexing apart from parsing).
struct InMemory<'a> {
    documents: &'a [Document],
    next: usize,
    bytes: u64,
}

impl DocumentSource for InMemory<'_> {
    fn next_batch(&mut self, max: usize, out: &mut Vec<Document>) -> Result<usize, IndexError> {
        let end = self.documents.len().min(self.next + max);
        for doc in &self.documents[self.next..end] {
            self.bytes += doc.input_bytes() as u64 + 1;
            out.push(doc.clone());
        }
        let added = end - self.next;
        self.next = end;
        Ok(added)
    }
    fn bytes_read(&self) -> u64 {
        self.bytes
    }
    fn bad_lines(&self) -> u64 {
        0
    }
    fn mapping(&self) -> (u64, Mapping) {
        (0, Mapping::title_body())
    }
}

/// Builds an index of `inputs` in `dir`. `progress` is called after each batch with the
/// documents and input bytes read so far.
pub fn build_index(
    inputs: Vec<Input>,
    dir: &Path,
    options: &IndexOptions,
    progress: impl FnMut(u64, u64),
) -> Result<IndexReport, IndexError> {
    check_options(options)?;
    let started = Instant::now();
    let input = inputs
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    let mapping = options.mapping.clone().unwrap_or_default();
    let mapper = Mapper::new(mapping, options.id_field.clone());
    let mut reader = DocumentReader::new(inputs, options.reader)?.with_mapper(mapper);
    build(&mut reader, &input, started, dir, options, progress)
}

/// Builds an index of documents already in memory (their DIDs are their positions); the
/// report's input bytes count titles and bodies.
pub fn build_index_from_documents(
    documents: &[Document],
    dir: &Path,
    options: &IndexOptions,
    progress: impl FnMut(u64, u64),
) -> Result<IndexReport, IndexError> {
    check_options(options)?;
    let mut source = InMemory {
        documents,
        next: 0,
        bytes: 0,
    };
    build(
        &mut source,
        "memory",
        Instant::now(),
        dir,
        options,
        progress,
    )
}

fn check_options(options: &IndexOptions) -> Result<(), IndexError> {
    if options.threads == 0 || options.batch_docs == 0 {
        return Err(IndexError::InvalidArgument(
            "threads and batch size must be at least 1".into(),
        ));
    }
    Ok(())
}

fn build(
    reader: &mut dyn DocumentSource,
    input: &str,
    started: Instant,
    dir: &Path,
    options: &IndexOptions,
    mut progress: impl FnMut(u64, u64),
) -> Result<IndexReport, IndexError> {
    let sampler = crate::memory::MemorySampler::start(Duration::from_millis(10));
    // Refused before anything is written there, the lock file included.
    index_dir::check_writable(dir)?;
    let created_dir = !dir.exists();
    std::fs::create_dir_all(dir).map_err(|e| IndexError::io(dir, e))?;
    let lock = WriterLock::acquire(dir)?;
    let previous = match prepare_dir(dir, options.force) {
        Ok(previous) => previous,
        Err(e) => {
            if created_dir {
                drop(lock);
                remove_created_dir(dir);
            }
            return Err(e);
        }
    };
    let first_segment = first_segment_number(dir, &previous)?;
    let flush_dir = placement_dir(dir, options.flush_dir.as_deref())?;
    let merge_dir = placement_dir(dir, options.merge_dir.as_deref())?;
    let written = BuildFiles {
        dir,
        placements: [flush_dir.clone(), merge_dir.clone()],
        first_segment,
        created_dir,
    };
    let result = build_locked(
        reader,
        input,
        started,
        dir,
        options,
        &mut progress,
        BuildPlan {
            previous,
            first_segment,
            flush_dir,
            merge_dir,
            sampler,
        },
    );
    if result.is_err() {
        drop(lock);
        written.remove_uncommitted();
    }
    result
}

/// What a build found and decided before it read its first document.
struct BuildPlan {
    previous: Previous,
    first_segment: u32,
    flush_dir: Option<PathBuf>,
    merge_dir: Option<PathBuf>,
    sampler: crate::memory::MemorySampler,
}

fn build_locked(
    reader: &mut dyn DocumentSource,
    input: &str,
    started: Instant,
    dir: &Path,
    options: &IndexOptions,
    progress: &mut impl FnMut(u64, u64),
    plan: BuildPlan,
) -> Result<IndexReport, IndexError> {
    let BuildPlan {
        previous,
        first_segment,
        flush_dir,
        merge_dir,
        sampler,
    } = plan;
    let mut manifest = Manifest::new(options.analyzer);
    if let Previous::Index(Some(old)) = &previous {
        manifest.generation = old.generation; // generations only grow
    }
    manifest.build = Some(BuildProgress {
        input: input.to_string(),
        documents_read: 0,
    });
    let shared = Shared {
        dir,
        flush_dir: flush_dir.clone(),
        options,
        analyzer: Analyzer::new(options.analyzer),
        manifest: Mutex::new(manifest),
        commit_flushes: matches!(previous, Previous::Nothing),
        documents_read: AtomicU64::new(0),
        next_segment: AtomicU32::new(first_segment),
        ingest_ns: AtomicU64::new(0),
        flush_ns: AtomicU64::new(0),
        sync_ns: AtomicU64::new(0),
        arena_bytes: AtomicU64::new(0),
    };
    let (sender, receiver) =
        crossbeam_channel::bounded::<(u32, Vec<Document>)>(options.threads * 2);
    let mut next_did: u64 = 0;
    let mut mapping_version = None;
    let read_result = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..options.threads)
            .map(|_| {
                let receiver = receiver.clone();
                let shared = &shared;
                scope.spawn(move || shared.worker(receiver))
            })
            .collect();
        drop(receiver);
        let read_result = (|| -> Result<(), IndexError> {
            loop {
                let mut batch = Vec::with_capacity(options.batch_docs);
                if reader.next_batch(options.batch_docs, &mut batch)? == 0 {
                    return Ok(());
                }
                let first = u32::try_from(next_did)
                    .ok()
                    .filter(|f| f.checked_add(batch.len() as u32).is_some())
                    .ok_or_else(|| {
                        IndexError::InvalidArgument("more than 2^32 documents".into())
                    })?;
                next_did += batch.len() as u64;
                // The fields of this batch are in the manifest before any flush commits it.
                let (version, mapping) = reader.mapping();
                if mapping_version != Some(version) {
                    mapping_version = Some(version);
                    shared
                        .manifest
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .mapping = Some(mapping);
                }
                shared.documents_read.store(next_did, Ordering::Relaxed);
                progress(next_did, reader.bytes_read());
                if sender.send((first, batch)).is_err() {
                    return Ok(()); // a worker failed; its error is reported below
                }
            }
        })();
        drop(sender);
        let mut worker_result = Ok(());
        for worker in workers {
            let result = worker.join().unwrap_or_else(|_| {
                Err(IndexError::InvalidArgument(
                    "an indexing thread panicked".into(),
                ))
            });
            if worker_result.is_ok() {
                worker_result = result;
            }
        }
        read_result.and(worker_result)
    });
    read_result?;
    if next_did == 0 {
        let skipped = match reader.bad_lines() {
            0 => String::new(),
            bad => format!(" ({bad} bad lines skipped)"),
        };
        return Err(IndexError::InvalidArgument(format!(
            "no documents in {input}{skipped}; nothing was committed"
        )));
    }
    let mut manifest = shared
        .manifest
        .into_inner()
        .unwrap_or_else(|p| p.into_inner());
    let next_segment = shared.next_segment.load(Ordering::Relaxed);
    let segments_flushed = next_segment - first_segment;
    // The final commit: the merge's, or, when it had nothing to do, one of its own.
    manifest.build = None;
    manifest.mapping = Some(reader.mapping().1);
    let generation = manifest.generation;
    let merge = if options.merge {
        release_freed_memory();
        merge_all(
            dir,
            &mut manifest,
            Some(options.codec),
            next_segment,
            merge_dir.as_deref(),
        )?
    } else {
        MergeReport::default()
    };
    if manifest.generation == generation {
        let start = Instant::now();
        manifest.commit(dir)?;
        add_ns(&shared.sync_ns, start);
    }
    let start = Instant::now();
    manifest.remove_unreferenced(dir)?;
    if let Previous::Index(Some(old)) = &previous {
        remove_replaced(dir, old, &manifest);
    }
    add_ns(&shared.sync_ns, start);
    let total = started.elapsed();
    let secs = |ns: &AtomicU64| Duration::from_nanos(ns.load(Ordering::Relaxed)).as_secs_f64();
    Ok(IndexReport {
        documents: manifest.documents(),
        bad_lines: reader.bad_lines(),
        skipped_lines: reader.skipped_lines(),
        bytes_read: reader.bytes_read(),
        segments_flushed,
        segments: manifest.segments.len(),
        postings: manifest.segments.iter().map(|s| s.postings).sum(),
        total_seconds: total.as_secs_f64(),
        ingest_seconds: secs(&shared.ingest_ns),
        flush_seconds: secs(&shared.flush_ns),
        merge_seconds: merge.merge_seconds,
        sync_seconds: secs(&shared.sync_ns) + merge.sync_seconds,
        docs_per_second: manifest.documents() as f64 / total.as_secs_f64(),
        mb_per_second: reader.bytes_read() as f64 / 1e6 / total.as_secs_f64(),
        codec: options.codec.name().to_string(),
        threads: options.threads,
        memory_budget: options.memory_budget,
        arena: options.arena.clone(),
        arena_bytes: shared.arena_bytes.load(Ordering::Relaxed),
        flush_dir: flush_dir.unwrap_or_else(|| dir.to_path_buf()),
        merge_dir: options
            .merge
            .then(|| merge_dir.unwrap_or_else(|| dir.to_path_buf())),
        peak_rss_bytes: crate::memory::peak_rss_bytes(),
        peak_anon_bytes: sampler.finish(),
    })
}

/// A placement directory as the manifest records it: created, absolute, and `None` when it is
/// the index directory itself.
fn placement_dir(index_dir: &Path, dir: Option<&Path>) -> Result<Option<PathBuf>, IndexError> {
    let Some(dir) = dir else { return Ok(None) };
    std::fs::create_dir_all(dir).map_err(|e| IndexError::io(dir, e))?;
    let dir = dir.canonicalize().map_err(|e| IndexError::io(dir, e))?;
    let index = index_dir
        .canonicalize()
        .map_err(|e| IndexError::io(index_dir, e))?;
    Ok((dir != index).then_some(dir))
}
