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
//! encoded terms, and store blocks are copied one at a time. Two threads share the work: one
//! reads, merges and encodes the postings, the other builds the dictionary and writes.
//!
//! Crash safety is the indexer's: the merged segment is written under temporary names, renamed,
//! fsynced, and only then committed by a new manifest that names it instead of its inputs. A
//! crash before that commit leaves the old manifest and unreferenced files, which the next
//! writer removes.

use std::path::Path;
use std::time::Instant;

use fst::{IntoStreamer, Streamer};
use serde::Serialize;

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

    // Two stages on two threads: this one merges and encodes the postings, a second builds the
    // dictionary and writes the files; batches of encoded terms pass between them.
    let codec_impl = codec.build();
    let mut writer = SegmentWriter::create(out_dir, name, codec, docs.clone(), lengths.clone())?;
    // Positions survive a merge only if every input has them.
    let positions = readers.iter().all(SegmentReader::has_positions);
    if positions {
        writer.keep_positions()?;
    }
    let bm25 = Bm25::of_lengths(&lengths);
    let encoder = TermEncoder::new(&*codec_impl, &bm25, &docs, &lengths, name);
    let store = writer.take_store()?;
    let (mut writer, store) = std::thread::scope(|scope| {
        let (batches, received) = crossbeam_channel::bounded::<EncodedTerms>(2);
        let (returned, spare) = crossbeam_channel::bounded::<EncodedTerms>(3);
        let writing = scope.spawn(move || -> Result<SegmentWriter, IndexError> {
            let mut writer = writer;
            for batch in received {
                writer.add_encoded(&batch)?;
                let _ = returned.try_send(batch);
            }
            Ok(writer)
        });
        // A third thread copies the stored documents (mostly I/O).
        let copying = scope.spawn(|| copy_stores(inputs, &readers, &runs, store));
        let merged = merge_postings(&readers, positions, encoder, &batches, &spare);
        drop(batches);
        let written = writing.join().unwrap_or_else(|_| {
            Err(IndexError::InvalidArgument(
                "the merge's writing thread panicked".into(),
            ))
        });
        // A failed writer closes its channel, which stops the merging side with an error
        // of its own: report the writer's.
        let copied = copying.join().unwrap_or_else(|_| {
            Err(IndexError::InvalidArgument(
                "the merge's store thread panicked".into(),
            ))
        });
        match (written, merged, copied) {
            (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => Err(e),
            (Ok(writer), Ok(()), Ok(store)) => Ok((writer, store)),
        }
    })?;
    writer.put_store(store);
    writer.finish()
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

/// One input's list of the term being merged: DIDs, frequencies and (when kept) positions.
#[derive(Default, Clone)]
struct InputList {
    docs: Vec<u32>,
    freqs: Vec<u32>,
    positions: Vec<u32>,
}

/// Encodes every term of `readers` with its lists merged by DID (and its positions, when
/// `positions`), sending batches to `batches` (and reusing the buffers that come back on
/// `spare`).
fn merge_postings(
    readers: &[SegmentReader],
    positions: bool,
    mut encoder: TermEncoder<'_>,
    batches: &crossbeam_channel::Sender<EncodedTerms>,
    spare: &crossbeam_channel::Receiver<EncodedTerms>,
) -> Result<(), IndexError> {
    let mut union = fst::map::OpBuilder::new();
    for reader in readers {
        union = union.add(reader.dictionary().into_stream());
    }
    let mut union = union.union();
    let mut lists: Vec<InputList> = vec![InputList::default(); readers.len()];
    let mut merged = InputList::default();
    let mut present = Vec::with_capacity(readers.len());
    let mut batch = EncodedTerms::default();
    let closed = || IndexError::InvalidArgument("the merge's writing thread stopped".into());
    while let Some((term, ordinals)) = union.next() {
        present.clear();
        for ordinal in ordinals {
            let reader = &readers[ordinal.index];
            // Verified on the way: a merge never copies damage into a new segment.
            let entry = reader.entry(ordinal.value)?;
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
                .send(std::mem::replace(&mut batch, next))
                .map_err(|_| closed())?;
        }
    }
    if !batch.is_empty() {
        batches.send(batch).map_err(|_| closed())?;
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
    merge_all(dir, &mut manifest, codec, number, out_dir)
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
        if only.dir.as_deref() == out_dir && only.codec == codec.name() {
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
