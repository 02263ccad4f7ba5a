//! Building an index: documents are read in batches on the calling thread and inverted by
//! several indexing threads, each with its own [`PostingTable`]; a table that outgrows its share
//! of the memory budget is flushed to a segment, and every flush is committed.

mod posting_table;

pub use posting_table::PostingTable;

use std::path::Path;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::analyzer::{Analyzer, AnalyzerConfig};
use crate::ingest::{Document, DocumentReader, Input, ReaderOptions};
use crate::manifest::{Manifest, MANIFEST};
use crate::IndexError;

/// How to build an index.
#[derive(Debug, Clone)]
pub struct IndexOptions {
    /// Codec of the posting blocks.
    pub codec: String,
    /// Indexing threads.
    pub threads: usize,
    /// Bound on the memory of all posting tables together, in bytes.
    pub memory_budget: usize,
    /// The analyzer.
    pub analyzer: AnalyzerConfig,
    /// How the input is read.
    pub reader: ReaderOptions,
    /// Documents per batch handed to a thread.
    pub batch_docs: usize,
    /// Replace an index already in the directory.
    pub force: bool,
}

impl Default for IndexOptions {
    fn default() -> Self {
        IndexOptions {
            codec: "pfor-delta-simd".into(),
            threads: 2,
            memory_budget: 256 << 20,
            analyzer: AnalyzerConfig::default(),
            reader: ReaderOptions::default(),
            batch_docs: 512,
            force: false,
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
    /// Seconds spent committing manifests (fsync and rename).
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
}

/// Shared state of the indexing threads.
struct Shared<'a> {
    dir: &'a Path,
    options: &'a IndexOptions,
    analyzer: Analyzer,
    manifest: Mutex<Manifest>,
    next_segment: AtomicU32,
    ingest_ns: AtomicU64,
    flush_ns: AtomicU64,
    sync_ns: AtomicU64,
}

fn add_ns(counter: &AtomicU64, since: Instant) {
    counter.fetch_add(since.elapsed().as_nanos() as u64, Ordering::Relaxed);
}

impl Shared<'_> {
    fn flush(&self, table: &mut PostingTable) -> Result<(), IndexError> {
        if table.documents() == 0 {
            return Ok(());
        }
        let name = format!(
            "seg_{:06}",
            self.next_segment.fetch_add(1, Ordering::Relaxed)
        );
        let start = Instant::now();
        let meta = table.flush(self.dir, &name, &self.options.codec)?;
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
        manifest.commit(self.dir)?;
        add_ns(&self.sync_ns, start);
        Ok(())
    }

    fn worker(
        &self,
        batches: crossbeam_channel::Receiver<(u32, Vec<Document>)>,
    ) -> Result<(), IndexError> {
        let mut table = PostingTable::default();
        let share = self.options.memory_budget / self.options.threads.max(1);
        for (first, batch) in batches {
            let start = Instant::now();
            for (i, doc) in batch.iter().enumerate() {
                table.add_document(first + i as u32, doc, &self.analyzer);
            }
            add_ns(&self.ingest_ns, start);
            if table.bytes() >= share {
                self.flush(&mut table)?;
            }
        }
        self.flush(&mut table)
    }
}

/// Prepares `dir` for a new index: creates it, or with `force` clears an old index from it.
fn prepare_dir(dir: &Path, force: bool) -> Result<(), IndexError> {
    std::fs::create_dir_all(dir).map_err(|e| IndexError::io(dir, e))?;
    if dir.join(MANIFEST).exists() {
        if !force {
            return Err(IndexError::IndexExists(dir.to_path_buf()));
        }
        std::fs::remove_file(dir.join(MANIFEST)).map_err(|e| IndexError::io(dir, e))?;
    }
    for entry in std::fs::read_dir(dir)
        .map_err(|e| IndexError::io(dir, e))?
        .flatten()
    {
        if entry
            .file_name()
            .to_str()
            .is_some_and(|n| n.starts_with("seg_") || n.starts_with(MANIFEST))
        {
            std::fs::remove_file(entry.path()).map_err(|e| IndexError::io(&entry.path(), e))?;
        }
    }
    Ok(())
}

/// Builds an index of `inputs` in `dir`. `progress` is called after each batch with the
/// documents and input bytes read so far.
pub fn build_index(
    inputs: Vec<Input>,
    dir: &Path,
    options: &IndexOptions,
    mut progress: impl FnMut(u64, u64),
) -> Result<IndexReport, IndexError> {
    if options.threads == 0 || options.batch_docs == 0 {
        return Err(IndexError::InvalidArgument(
            "threads and batch size must be at least 1".into(),
        ));
    }
    apcache_codec::codec_by_name(&options.codec).map_err(|source| IndexError::Codec {
        file: "--codec".into(),
        source,
    })?;
    let started = Instant::now();
    let mut reader = DocumentReader::new(inputs, options.reader)?;
    prepare_dir(dir, options.force)?;
    let mut manifest = Manifest::new(options.analyzer);
    manifest.commit(dir)?;
    let shared = Shared {
        dir,
        options,
        analyzer: Analyzer::new(options.analyzer),
        manifest: Mutex::new(manifest),
        next_segment: AtomicU32::new(0),
        ingest_ns: AtomicU64::new(0),
        flush_ns: AtomicU64::new(0),
        sync_ns: AtomicU64::new(0),
    };
    let (sender, receiver) =
        crossbeam_channel::bounded::<(u32, Vec<Document>)>(options.threads * 2);
    let mut next_did: u64 = 0;
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
                progress(next_did, reader.report().bytes_read);
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
    let report = reader.into_report();
    let manifest = shared
        .manifest
        .into_inner()
        .unwrap_or_else(|p| p.into_inner());
    manifest.remove_unreferenced(dir)?;
    let total = started.elapsed();
    let secs = |ns: &AtomicU64| Duration::from_nanos(ns.load(Ordering::Relaxed)).as_secs_f64();
    Ok(IndexReport {
        documents: manifest.documents(),
        bad_lines: report.bad_line_count,
        bytes_read: report.bytes_read,
        segments_flushed: shared.next_segment.load(Ordering::Relaxed),
        segments: manifest.segments.len(),
        postings: manifest.segments.iter().map(|s| s.postings).sum(),
        total_seconds: total.as_secs_f64(),
        ingest_seconds: secs(&shared.ingest_ns),
        flush_seconds: secs(&shared.flush_ns),
        sync_seconds: secs(&shared.sync_ns),
        docs_per_second: manifest.documents() as f64 / total.as_secs_f64(),
        mb_per_second: report.bytes_read as f64 / 1e6 / total.as_secs_f64(),
        codec: options.codec.clone(),
        threads: options.threads,
        memory_budget: options.memory_budget,
    })
}
