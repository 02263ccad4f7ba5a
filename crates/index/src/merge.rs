//! Merging segments: a k-way merge of several segments into one, and the commit that swaps them.
//!
//! Segments hold global DIDs (a [`DocMap`] names which), so a merge rebases nothing: the merged
//! segment's DocMap is the union of the inputs' runs, its norms and stored documents are laid
//! out in global DID order, and every term's postings are the inputs' lists merged by DID.
//! Merging every segment of an index leaves one segment whose DocMap is the single run
//! `[0, N)`, which is what queries like best: one dictionary lookup and one list per term.
//!
//! Memory stays small whatever the index size: terms stream from the inputs' dictionaries in
//! order (an FST union), one term's lists are held at a time plus a few 1 MiB batches of
//! encoded terms, and store blocks are copied one at a time. The work is shared: two threads
//! read, merge and encode the postings of parts of the term space in turns (cut at terms of
//! the largest input), a third appends their output in term order, building the dictionary
//! and writing the files, and the calling thread copies the stored documents.
//!
//! Crash safety is the indexer's: the merged segment is written under temporary names, renamed,
//! fsynced, and only then committed by a new manifest that names it instead of its inputs. A
//! crash before that commit leaves the old manifest and unreferenced files, which the next
//! writer removes.

use std::path::Path;
use std::time::Instant;

use fst::Streamer;
use serde::Serialize;

use crate::columns::{ColumnKind, Columns, ColumnsBuilder};
use crate::format::{FieldLengths, PositionsCodec};
use crate::manifest::Manifest;
use apcache_codec::CodecKind;

use crate::search::Bm25;
use crate::segment::{
    DocMap, EncodedTerms, SegmentMeta, SegmentReader, SegmentWriter, StoreWriter, TermEncoder,
};
use crate::writer_lock::WriterLock;
use crate::IndexError;

/// What a merge did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct MergeReport {
    /// Segments merged.
    pub segments_in: usize,
    /// Segments in the committed index afterwards.
    pub segments_out: usize,
    /// Documents in the merged segment.
    pub documents: u64,
    /// Distinct terms in the merged segment.
    pub terms: u64,
    /// Postings in the merged segment.
    pub postings: u64,
    /// Seconds spent writing the merged segment (read, merge, encode, write, fsync).
    pub merge_seconds: f64,
    /// Seconds spent committing the manifest and removing the inputs.
    pub sync_seconds: f64,
}

/// Merges the segments `inputs` of the index in `index_dir` into segment `name`, written to
/// `out_dir` with `codec`. Returns the merged segment's metadata (its `dir` is unset: the
/// caller decides how the manifest names it). Commits nothing.
pub fn merge_segments(
    index_dir: &Path,
    inputs: &[SegmentMeta],
    out_dir: &Path,
    name: &str,
    codec: CodecKind,
) -> Result<SegmentMeta, IndexError> {
    if inputs.is_empty() {
        return Err(IndexError::InvalidArgument("nothing to merge".into()));
    }
    let readers = inputs
        .iter()
        .map(|meta| SegmentReader::open(index_dir, meta))
        .collect::<Result<Vec<_>, _>>()?;

    // The merged DocMap: every input run in global order, each tagged with its segment.
    let mut runs: Vec<(u32, u32, usize)> = inputs
        .iter()
        .enumerate()
        .flat_map(|(s, meta)| meta.docs.runs().iter().map(move |r| (r[0], r[1], s)))
        .collect();
    runs.sort_unstable();
    let mut docs = DocMap::default();
    let mut lengths = Vec::new();
    let mut next_local = vec![0u32; readers.len()];
    for &(first, count, s) in &runs {
        if docs.runs().last().is_some_and(|r| r[0] + r[1] > first) {
            return Err(IndexError::corrupt(
                &inputs[s].name,
                format!("document {first} is also in another segment"),
            ));
        }
        docs.push_run(first, count);
        for _ in 0..count {
            let local = next_local[s];
            lengths.push(readers[s].doc_length(local).ok_or_else(|| {
                IndexError::corrupt(&inputs[s].name, "norms shorter than the DocMap")
            })?);
            next_local[s] += 1;
        }
    }

    // Three stages: encoding threads merge and encode the postings of their parts of the term
    // space, a writing thread appends their batches in term order (building the dictionary and
    // writing the files), and this thread copies the stored documents.
    let codec_impl = codec.build();
    let field_lengths = merge_field_lengths(&readers, &runs);
    let mut writer = SegmentWriter::create(out_dir, name, codec, docs.clone(), lengths.clone())?;
    writer.set_field_lengths(&field_lengths)?;
    // The encoding threads read the field scorings while the writer moves to its own thread.
    let field_scorings = writer.field_scorings().to_vec();
    // Positions survive a merge only if every input has them.
    let positions = readers.iter().all(SegmentReader::has_positions);
    if positions {
        writer.keep_positions(PositionsCodec::PforDelta)?;
    }
    let bm25 = Bm25::of_lengths(&lengths);
    let encoder = TermEncoder::new(&*codec_impl, &bm25, &docs, &lengths, name)
        .with_fields(&field_scorings)
        .with_positions_codec(writer.positions_codec());
    let parts = term_parts(&readers);
    let store = writer.take_store()?;
    let merged = std::thread::scope(|scope| {
        let mut outputs = Vec::with_capacity(ENCODERS);
        let mut encoders = Vec::with_capacity(ENCODERS);
        for first in 0..ENCODERS {
            let (sender, output) = crossbeam_channel::bounded::<Encoded>(2);
            let (returned, spare) = crossbeam_channel::bounded::<EncodedTerms>(3);
            outputs.push((output, returned));
            let (readers, parts) = (&readers, &parts);
            encoders.push(scope.spawn(move || -> Result<(), IndexError> {
                for part in parts.iter().skip(first).step_by(ENCODERS) {
                    merge_postings(readers, part, positions, encoder, &sender, &spare)?;
                    sender
                        .send(Encoded::PartEnd)
                        .map_err(|_| writer_stopped())?;
                }
                Ok(())
            }));
        }
        let part_count = parts.len();
        let writing = scope.spawn(move || -> Result<SegmentWriter, IndexError> {
            let mut writer = writer;
            for part in 0..part_count {
                let (output, returned) = &outputs[part % ENCODERS];
                while let Encoded::Batch(batch) = output.recv().map_err(|_| encoder_stopped())? {
                    writer.add_encoded(&batch)?;
                    let _ = returned.try_send(*batch);
                }
            }
            Ok(writer)
        });
        let copied = copy_stores(inputs, &readers, &runs, store);
        let encoded: Vec<Result<(), IndexError>> = encoders
            .into_iter()
            .map(|encoder| {
                encoder.join().unwrap_or_else(|_| {
                    Err(IndexError::InvalidArgument(
                        "a merge's encoding thread panicked".into(),
                    ))
                })
            })
            .collect();
        let written = writing.join().unwrap_or_else(|_| {
            Err(IndexError::InvalidArgument(
                "the merge's writing thread panicked".into(),
            ))
        });
        // A thread that fails closes its channels, which stops the others with errors of
        // their own (`writer_stopped`, `encoder_stopped`): report the first failure's.
        let first_failure = encoded
            .into_iter()
            .filter_map(Result::err)
            .find(|e| !is_stopped(e));
        match (first_failure, written, copied) {
            (_, Err(e), _) if !is_stopped(&e) => Err(e),
            (Some(e), _, _) | (None, Err(e), _) | (None, _, Err(e)) => Err(e),
            (None, Ok(writer), Ok(store)) => Ok((writer, store)),
        }
    });
    // A failed read of an input's mapping read zeros, which may now be in the output.
    for reader in &readers {
        reader.check_mapped_reads()?;
    }
    let (mut writer, store) = merged?;
    writer.put_store(store);
    if readers.iter().any(|r| r.columns().is_some()) {
        writer.add_columns(&merge_columns(&readers, &runs, docs.len())?)?;
    }
    writer.finish()
}

/// The lengths of the merged segment's documents in each named text field, in global order.
fn merge_field_lengths(readers: &[SegmentReader], runs: &[(u32, u32, usize)]) -> FieldLengths {
    let mut merged = FieldLengths::new();
    let mut next_local = vec![0u32; readers.len()];
    let mut at = 0u32;
    for &(_, count, s) in runs {
        let first_local = next_local[s];
        for field in readers[s].text_fields() {
            for i in 0..count {
                let length = field.norms.length(first_local + i).unwrap_or(0);
                if length > 0 {
                    merged.set(field.name, at + i, length);
                }
            }
        }
        next_local[s] += count;
        at += count;
    }
    merged
}

/// The columns of the merged segment: every input document's values, in global order.
fn merge_columns(
    readers: &[SegmentReader],
    runs: &[(u32, u32, usize)],
    documents: u32,
) -> Result<Vec<u8>, IndexError> {
    let columns: Vec<Option<Columns<'_>>> = readers.iter().map(SegmentReader::columns).collect();
    let mut builder = ColumnsBuilder::default();
    let mut next_local = vec![0u32; readers.len()];
    let mut merged = 0u32;
    let (mut numbers, mut ordinals) = (Vec::new(), Vec::new());
    let failed = |e: crate::columns::ColumnsError| {
        IndexError::InvalidArgument(format!("merging columns: {e}"))
    };
    for &(_, count, s) in runs {
        for _ in 0..count {
            let local = next_local[s];
            next_local[s] += 1;
            if let Some(columns) = &columns[s] {
                for (field, kind) in columns.fields() {
                    match kind {
                        ColumnKind::Numeric => {
                            let column = columns.numeric(field).expect("listed");
                            column.values(local, &mut numbers);
                            for &value in &numbers {
                                builder.add_numeric(field, merged, value).map_err(failed)?;
                            }
                        }
                        ColumnKind::Keyword => {
                            let column = columns.keyword(field).expect("listed");
                            column.ordinals(local, &mut ordinals);
                            for &ordinal in &ordinals {
                                let value = column.value(ordinal).map_err(failed)?;
                                builder.add_keyword(field, merged, value).map_err(failed)?;
                            }
                        }
                    }
                }
            }
            merged += 1;
        }
    }
    builder.finish(documents).map_err(failed)
}

/// Copies the stored documents of every run, in global order, into `store`.
fn copy_stores(
    inputs: &[SegmentMeta],
    readers: &[SegmentReader],
    runs: &[(u32, u32, usize)],
    mut store: StoreWriter,
) -> Result<StoreWriter, IndexError> {
    // Stored documents: no store block spans a run, so each run's blocks are copied verbatim.
    let stores = readers
        .iter()
        .map(|r| r.store_reader())
        .collect::<Result<Vec<_>, _>>()?;
    let mut local_runs: Vec<_> = inputs.iter().map(|m| m.docs.local_runs()).collect();
    for &(_, count, s) in runs {
        let locals = local_runs[s]
            .next()
            .filter(|r| r.len() == count as usize)
            .ok_or_else(|| IndexError::corrupt(&inputs[s].name, "DocMap runs changed"))?;
        SegmentWriter::copy_stored(
            &mut store,
            &stores[s],
            locals,
            inputs[s].documents(),
            &inputs[s].name,
        )?;
    }
    Ok(store)
}

/// Bytes of encoded terms handed to the writing thread at a time.
const BATCH_BYTES: usize = 1 << 20;

/// Threads encoding the merged postings.
const ENCODERS: usize = 2;

/// Parts of the term space the encoding threads take in turns. More parts than threads keep
/// a part holding the longest lists from leaving the other thread idle for long (the writer
/// takes the parts in order, so a thread ahead waits once its output channel is full).
const TERM_PARTS: u64 = 64;

/// What an encoding thread hands the writing thread.
enum Encoded {
    /// The next terms of the current part.
    Batch(Box<EncodedTerms>),
    /// The current part is complete.
    PartEnd,
}

/// A range of terms `[from, to)`; `None` is unbounded.
struct TermPart {
    from: Option<Vec<u8>>,
    to: Option<Vec<u8>>,
}

/// Cuts the term space into about [`TERM_PARTS`] ranges of as many terms of the input with the
/// most terms (one dictionary walk per cut).
fn term_parts(readers: &[SegmentReader]) -> Vec<TermPart> {
    let largest = readers.iter().max_by_key(|r| r.meta().terms);
    let terms = largest.map_or(0, |r| r.meta().terms);
    let mut cuts: Vec<Vec<u8>> = (1..TERM_PARTS)
        .filter_map(|i| largest?.term_at(i * terms / TERM_PARTS))
        .collect();
    cuts.dedup();
    let mut parts = Vec::with_capacity(cuts.len() + 1);
    let mut from = None;
    for cut in cuts {
        parts.push(TermPart {
            from: from.take(),
            to: Some(cut.clone()),
        });
        from = Some(cut);
    }
    parts.push(TermPart { from, to: None });
    parts
}

const WRITER_STOPPED: &str = "the merge's writing thread stopped";
const ENCODER_STOPPED: &str = "a merge's encoding thread stopped";

fn writer_stopped() -> IndexError {
    IndexError::InvalidArgument(WRITER_STOPPED.into())
}

fn encoder_stopped() -> IndexError {
    IndexError::InvalidArgument(ENCODER_STOPPED.into())
}

/// Whether `error` only says that another thread of the merge stopped first.
fn is_stopped(error: &IndexError) -> bool {
    matches!(error, IndexError::InvalidArgument(m) if m == WRITER_STOPPED || m == ENCODER_STOPPED)
}

/// One input's list of the term being merged: DIDs, frequencies and (when kept) positions.
#[derive(Default, Clone)]
struct InputList {
    docs: Vec<u32>,
    freqs: Vec<u32>,
    positions: Vec<u32>,
}

/// Encodes every term of `part` of `readers` with its lists merged by DID (and its positions,
/// when `positions`), sending batches to `batches` (and reusing the buffers that come back on
/// `spare`).
fn merge_postings(
    readers: &[SegmentReader],
    part: &TermPart,
    positions: bool,
    mut encoder: TermEncoder<'_>,
    batches: &crossbeam_channel::Sender<Encoded>,
    spare: &crossbeam_channel::Receiver<EncodedTerms>,
) -> Result<(), IndexError> {
    let mut union = fst::map::OpBuilder::new();
    for reader in readers {
        union = union.add(
            reader
                .dictionary()
                .range(part.from.as_deref(), part.to.as_deref()),
        );
    }
    let mut union = union.union();
    let mut lists: Vec<InputList> = vec![InputList::default(); readers.len()];
    let mut merged = InputList::default();
    let mut present = Vec::with_capacity(readers.len());
    let mut entries: Vec<_> = readers.iter().map(|r| r.entries_in_order()).collect();
    let mut batch = spare.try_recv().unwrap_or_default();
    batch.clear();
    while let Some((term, ordinals)) = union.next() {
        present.clear();
        for ordinal in ordinals {
            let reader = &readers[ordinal.index];
            // Verified on the way: a merge never copies damage into a new segment.
            let entry = entries[ordinal.index].get(ordinal.value)?;
            let list = &mut lists[ordinal.index];
            reader.read_postings(&entry, &mut list.docs, &mut list.freqs)?;
            if positions {
                reader.read_positions(&entry, &list.freqs, &mut list.positions)?;
            }
            present.push(ordinal.index);
        }
        merge_by_doc(&lists, &present, &mut merged);
        let merged_positions = positions.then_some(merged.positions.as_slice());
        encoder.encode(
            term,
            &merged.docs,
            &merged.freqs,
            merged_positions,
            &mut batch,
        )?;
        if batch.bytes() >= BATCH_BYTES {
            let mut next = spare.try_recv().unwrap_or_default();
            next.clear();
            batches
                .send(Encoded::Batch(Box::new(std::mem::replace(
                    &mut batch, next,
                ))))
                .map_err(|_| writer_stopped())?;
        }
    }
    if !batch.is_empty() {
        batches
            .send(Encoded::Batch(Box::new(batch)))
            .map_err(|_| writer_stopped())?;
    }
    Ok(())
}

/// Merges the sorted lists `lists[i]` for `i` in `present` into `out` (cleared first), with
/// their positions when they have them.
///
/// Lists from indexing threads interleave in runs of a batch's documents, so the merge copies
/// whole stretches: from the list with the smallest head, everything below the next-smallest
/// head at once.
fn merge_by_doc(lists: &[InputList], present: &[usize], out: &mut InputList) {
    out.docs.clear();
    out.freqs.clear();
    out.positions.clear();
    let mut at = vec![0usize; present.len()];
    let mut positions_at = vec![0usize; present.len()];
    loop {
        let mut best: Option<(usize, u32)> = None;
        let mut second = u32::MAX;
        for (k, &i) in present.iter().enumerate() {
            let Some(&head) = lists[i].docs.get(at[k]) else {
                continue;
            };
            match best {
                Some((_, b)) if head >= b => second = second.min(head),
                _ => {
                    if let Some((_, b)) = best {
                        second = second.min(b);
                    }
                    best = Some((k, head));
                }
            }
        }
        let Some((k, _)) = best else { return };
        let list = &lists[present[k]];
        let start = at[k];
        // At least one posting: equal heads (a corrupt input) must not stall the merge; the
        // writer rejects the duplicate DID.
        let end = start + list.docs[start..].partition_point(|&d| d < second).max(1);
        out.docs.extend_from_slice(&list.docs[start..end]);
        out.freqs.extend_from_slice(&list.freqs[start..end]);
        if !list.positions.is_empty() {
            let count: usize = list.freqs[start..end].iter().map(|&f| f as usize).sum();
            let from = positions_at[k];
            let to = (from + count).min(list.positions.len());
            out.positions.extend_from_slice(&list.positions[from..to]);
            positions_at[k] = to;
        }
        at[k] = end;
    }
}

/// Name of the next new segment of `manifest`.
pub(crate) fn next_segment_number(manifest: &Manifest) -> u32 {
    manifest
        .segments
        .iter()
        .filter_map(|s| s.name.strip_prefix("seg_")?.parse::<u32>().ok())
        .max()
        .map_or(0, |n| n + 1)
}

/// Merges every segment of the index in `dir` into one (written with `codec`, or the first
/// segment's codec when `None`, into `out_dir`, or `dir` when `None`), commits, and removes the
/// merged segments' files.
pub fn merge_index(
    dir: &Path,
    codec: Option<CodecKind>,
    out_dir: Option<&Path>,
) -> Result<MergeReport, IndexError> {
    let _lock = WriterLock::acquire(dir)?;
    let mut manifest = Manifest::load(dir)?;
    // Files a killed writer left behind (the lock says no writer is at work).
    manifest.remove_unreferenced(dir)?;
    let number = next_segment_number(&manifest);
    let merged = merge_all(dir, &mut manifest, codec, number, out_dir);
    if merged.is_err() {
        // What the failed merge wrote (its temporary files, a merged segment no commit names)
        // is removed now rather than by the next writer, so a full disk is freed.
        if let Ok(committed) = Manifest::load(dir) {
            let _ = committed.remove_unreferenced(dir);
            if let Some(out) = out_dir.filter(|out| *out != dir) {
                remove_segment_files(out, number, &committed);
            }
        }
    }
    merged
}

/// Removes from `dir` the files of segment `number` (written or half-written) unless
/// `committed` names them.
fn remove_segment_files(dir: &Path, number: u32, committed: &Manifest) {
    let named = |name: &str| {
        committed
            .segments
            .iter()
            .any(|s| s.files.iter().any(|f| f.name == name))
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for name in entries
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
    {
        if crate::index_dir::segment_number(&name) == Some(number) && !named(&name) {
            let _ = std::fs::remove_file(dir.join(name));
        }
    }
}

/// Merges every segment of `manifest` into segment number `number` and commits; does nothing
/// for an index that already has one segment in `dir` with the wanted codec.
pub(crate) fn merge_all(
    dir: &Path,
    manifest: &mut Manifest,
    codec: Option<CodecKind>,
    number: u32,
    out_dir: Option<&Path>,
) -> Result<MergeReport, IndexError> {
    let segments_in = manifest.segments.len();
    let codec = match (codec, manifest.segments.first()) {
        (Some(codec), _) => codec,
        (None, Some(first)) => {
            first
                .codec
                .parse::<CodecKind>()
                .map_err(|source| IndexError::Codec {
                    file: first.name.clone(),
                    source,
                })?
        }
        (None, None) => return Ok(MergeReport::default()),
    };
    if let [only] = manifest.segments.as_slice() {
        // A lone segment is kept as it is only when it is what a merge would write: in place,
        // with the codec asked for, an FST and `pfor-delta` positions (a segment flushed ahead
        // of a merge has neither).
        let as_merged = only.dictionary.is_fst() && only.positions_codec.is_default();
        if only.dir.as_deref() == out_dir && only.codec == codec.name() && as_merged {
            return Ok(MergeReport {
                segments_in,
                segments_out: 1,
                documents: u64::from(only.documents()),
                terms: only.terms,
                postings: only.postings,
                ..MergeReport::default()
            });
        }
    }
    let started = Instant::now();
    let name = format!("seg_{number:06}");
    let mut merged = merge_segments(
        dir,
        &manifest.segments,
        out_dir.unwrap_or(dir),
        &name,
        codec,
    )?;
    merged.dir = out_dir.map(Path::to_path_buf);
    let merge_seconds = started.elapsed().as_secs_f64();
    let started = Instant::now();
    let old = std::mem::replace(&mut manifest.segments, vec![merged]);
    manifest.commit(dir)?;
    for segment in &old {
        let seg_dir = segment.directory(dir);
        for file in &segment.files {
            let _ = std::fs::remove_file(seg_dir.join(&file.name));
        }
    }
    manifest.remove_unreferenced(dir)?;
    let merged = &manifest.segments[0];
    Ok(MergeReport {
        segments_in,
        segments_out: 1,
        documents: u64::from(merged.documents()),
        terms: merged.terms,
        postings: merged.postings,
        merge_seconds,
        sync_seconds: started.elapsed().as_secs_f64(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The stretch-copying merge equals sorting the union, positions travelling with
        /// their postings.
        #[test]
        fn merge_by_doc_sorts_the_union(assignment in proptest::collection::vec((0usize..4, 1u32..4), 0..600)) {
            let mut lists: Vec<InputList> = vec![Default::default(); 4];
            for (doc, &(list, freq)) in assignment.iter().enumerate() {
                let list = &mut lists[list];
                list.docs.push(doc as u32);
                list.freqs.push(freq);
                list.positions.extend((0..freq).map(|p| doc as u32 * 10 + p));
            }
            let present: Vec<usize> = (0..4).filter(|&i| !lists[i].docs.is_empty()).collect();
            let mut merged = InputList::default();
            merge_by_doc(&lists, &present, &mut merged);
            let want: Vec<u32> = (0..assignment.len() as u32).collect();
            prop_assert_eq!(&merged.docs, &want);
            prop_assert_eq!(&merged.freqs, &assignment.iter().map(|a| a.1).collect::<Vec<_>>());
            let positions: Vec<u32> = assignment
                .iter()
                .enumerate()
                .flat_map(|(doc, &(_, freq))| (0..freq).map(move |p| doc as u32 * 10 + p))
                .collect();
            prop_assert_eq!(merged.positions, positions);
        }
    }
}
