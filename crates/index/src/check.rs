//! `CheckIndex`: verifies every checksum and every structural invariant of a committed index.
//!
//! Checksums catch flipped bytes; the structural checks catch what a checksum cannot: a writer
//! bug that wrote a consistent-looking but wrong file. For every segment the check walks the
//! dictionary (terms strictly increasing, ordinals dense), every term's metadata (postings laid
//! out contiguously, skip entries consecutive), decodes every block (it fills exactly the bytes
//! the skip entries give it, DIDs strictly increasing and held by the segment, the skip entry's
//! first/last DID, maximum frequency and minimum document length equal to the block's), and
//! compares every count with the manifest's. Across segments, no DID may be in two segments.
//!
//! Problems are collected, not returned as the first error, so one run names everything that
//! is wrong; a segment whose files fail their checksums is not walked further.
//!
//! Warnings are what leaves the index consistent but deserves attention: an index an
//! interrupted build left (its manifest says it holds part of its input), and files an
//! interrupted writer left in the directory (unreferenced segment files, its `*.tmp`), which the next
//! writer removes.

use std::path::Path;

use apcache_codec::BLOCK_LEN;
use fst::Streamer;
use serde::Serialize;

use crate::format::{FileKind, FramedFile};
use crate::manifest::{Manifest, MANIFEST};
use crate::schema::field_terms;
use crate::search::{length_to_norm, Bm25, TermEntry};
use crate::segment::{SegmentMeta, SegmentReader};
use crate::IndexError;

/// One thing found wrong.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// The file (or segment) it is in.
    pub file: String,
    /// What is wrong.
    pub what: String,
}

impl std::fmt::Display for Problem {
    /// `file: what`, the file named once: many errors already start with it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let named = self
            .what
            .strip_prefix(self.file.as_str())
            .is_some_and(|rest| rest.starts_with([':', ' ']));
        if named || self.file.is_empty() {
            f.write_str(&self.what)
        } else {
            write!(f, "{}: {}", self.file, self.what)
        }
    }
}

/// What `check` verified and found.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CheckReport {
    /// Whether the index is one an interrupted build left, holding part of its input (its
    /// note is among the warnings). `apcache check` fails on it unless told to accept it.
    pub partial: bool,
    /// Segments in the manifest.
    pub segments: usize,
    /// Files whose checksums were recomputed.
    pub files_verified: usize,
    /// Bytes whose checksums were recomputed.
    pub bytes_verified: u64,
    /// Documents checked.
    pub documents: u64,
    /// Terms checked.
    pub terms: u64,
    /// Postings decoded and checked.
    pub postings: u64,
    /// Everything found wrong; empty for a sound index.
    pub problems: Vec<Problem>,
    /// What is not wrong but deserves attention: an incomplete index (`file` is the
    /// manifest), each file an interrupted writer left.
    pub warnings: Vec<Problem>,
}

impl CheckReport {
    /// True when nothing is wrong (warnings aside).
    pub fn is_clean(&self) -> bool {
        self.problems.is_empty()
    }

    fn problem(&mut self, file: &str, what: impl Into<String>) {
        self.problems.push(Problem {
            file: file.to_string(),
            what: what.into(),
        });
    }
}

/// The warning for a file an interrupted writer left.
const LEFTOVER: &str = "not named by the manifest: left by an interrupted writer (or being \
                        written by one at work now); the next writer removes it";

/// Checks the index in `dir`. Fails only when there is no index to check; everything wrong
/// with one is in the report's problems.
pub fn check_index(dir: &Path) -> Result<CheckReport, IndexError> {
    let mut report = CheckReport::default();
    let manifest = match Manifest::load(dir) {
        Ok(manifest) => manifest,
        Err(IndexError::NoIndex(dir)) => return Err(IndexError::NoIndex(dir)),
        Err(e) => {
            report.problem(MANIFEST, e.to_string());
            return Ok(report);
        }
    };
    report.segments = manifest.segments.len();
    report.partial = manifest.build.is_some();
    if let Some(note) = manifest.incomplete_note() {
        report.warnings.push(Problem {
            file: MANIFEST.to_string(),
            what: note,
        });
    }
    match manifest.leftovers(dir) {
        Ok(leftovers) => {
            for file in leftovers {
                report.warnings.push(Problem {
                    file,
                    what: LEFTOVER.to_string(),
                });
            }
        }
        Err(e) => report.problem(&dir.display().to_string(), e.to_string()),
    }
    let mut runs: Vec<([u32; 2], &str)> = Vec::new();
    for segment in &manifest.segments {
        runs.extend(
            segment
                .docs
                .runs()
                .iter()
                .map(|r| (*r, segment.name.as_str())),
        );
        if !verify_files(dir, segment, &mut report) {
            continue;
        }
        match SegmentReader::open(dir, segment) {
            Ok(reader) => {
                check_segment(&reader, &mut report);
                // A read through a mapping that failed read zeros: what was checked with
                // them says nothing.
                if let Err(e) = reader.check_mapped_reads() {
                    report.problem(&segment.name, e.to_string());
                }
            }
            Err(e) => report.problem(&segment.name, e.to_string()),
        }
    }
    runs.sort_unstable();
    for pair in runs.windows(2) {
        let ([first, count], name) = pair[0];
        if u64::from(first) + u64::from(count) > u64::from(pair[1].0[0]) {
            report.problem(
                pair[1].1,
                format!("documents from {} are also in segment {name}", pair[1].0[0]),
            );
        }
    }
    Ok(report)
}

/// Recomputes the checksum of every file of `segment`; false if any is unsound.
fn verify_files(dir: &Path, segment: &SegmentMeta, report: &mut CheckReport) -> bool {
    let mut sound = true;
    let positions = segment
        .file(FileKind::Positions)
        .map(|_| FileKind::Positions);
    for kind in FileKind::SEGMENT_FILES.into_iter().chain(positions) {
        let Some(file) = segment.file(kind) else {
            report.problem(&segment.name, format!("no {} file", kind.extension()));
            sound = false;
            continue;
        };
        let path = segment.directory(dir).join(&file.name);
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) => {
                report.problem(&file.name, format!("cannot read: {e}"));
                sound = false;
                continue;
            }
        };
        report.files_verified += 1;
        report.bytes_verified += bytes.len() as u64;
        if bytes.len() as u64 != file.bytes {
            report.problem(
                &file.name,
                format!(
                    "{} bytes on disk, the manifest records {}",
                    bytes.len(),
                    file.bytes
                ),
            );
            sound = false;
        }
        match FramedFile::verify(&bytes, kind, &file.name) {
            Ok(_) => {
                let framed = FramedFile::parse(&bytes, kind, &file.name).expect("verified");
                if framed.crc != file.crc32c {
                    report.problem(
                        &file.name,
                        format!(
                            "checksum {:08x} differs from the manifest's {:08x}",
                            framed.crc, file.crc32c
                        ),
                    );
                    sound = false;
                }
            }
            Err(e) => {
                report.problem(&file.name, e.to_string());
                sound = false;
            }
        }
    }
    sound
}

/// Walks one segment whose files are sound.
fn check_segment(reader: &SegmentReader, report: &mut CheckReport) {
    let meta = reader.meta();
    let problems_before = report.problems.len();
    let name = |kind: FileKind| meta.file(kind).map_or("?", |f| f.name.as_str()).to_string();
    let (dict, terms_file, skip_file, post_file, norms_file) = (
        name(FileKind::Dictionary),
        name(FileKind::TermInfos),
        name(FileKind::Skip),
        name(FileKind::Postings),
        name(FileKind::Norms),
    );

    let documents = meta.documents();
    let lengths = reader.doc_lengths_in_order();
    let total_tokens: u64 = lengths.iter().map(|&l| u64::from(l)).sum();
    let bm25 = Bm25::of_lengths(&lengths);
    if total_tokens != meta.total_tokens {
        report.problem(
            &norms_file,
            format!(
                "document lengths sum to {total_tokens}, the manifest records {}",
                meta.total_tokens
            ),
        );
    }
    if let Some((local, &length)) = lengths
        .iter()
        .enumerate()
        .find(|&(local, &length)| reader.norm_byte(local as u32) != Some(length_to_norm(length)))
    {
        report.problem(
            &norms_file,
            format!(
                "document {local}'s norm byte is {:?}, its length {length} makes {}",
                reader.norm_byte(local as u32),
                length_to_norm(length)
            ),
        );
    }
    report.documents += u64::from(documents);
    // Each named text field's lengths and scorer: its terms' blocks are bounded with them.
    let mut field_lengths: std::collections::BTreeMap<&str, (Vec<u32>, Bm25)> =
        std::collections::BTreeMap::new();
    let field_norms_file = name(FileKind::FieldNorms);
    for field in reader.text_fields() {
        let lengths = field.norms.lengths();
        let tokens: u64 = lengths.iter().map(|&l| u64::from(l)).sum();
        let with_field = lengths.iter().filter(|&&l| l > 0).count() as u64;
        if (tokens, with_field) != (field.tokens, field.documents) {
            report.problem(
                &field_norms_file,
                format!(
                    "field [{}]: lengths sum to {tokens} in {with_field} documents, the table \
                     records {} in {}",
                    field.name, field.tokens, field.documents
                ),
            );
        }
        if let Some(local) = (0..lengths.len())
            .find(|&l| field.norms.norm_bytes().get(l) != Some(&length_to_norm(lengths[l])))
        {
            report.problem(
                &field_norms_file,
                format!(
                    "field [{}]: document {local}'s norm byte is not its length's",
                    field.name
                ),
            );
        }
        let bm25 = Bm25::of_lengths(&lengths);
        field_lengths.insert(field.name, (lengths, bm25));
    }

    let mut stream = reader.dictionary().stream();
    let mut previous: Option<Vec<u8>> = None;
    let mut expected_ordinal = 0u64;
    let mut postings_offset = 0u64;
    let mut next_skip = 0u64;
    let (mut postings, mut docs_bytes, mut freqs_bytes) = (0u64, 0u64, 0u64);
    let mut docs = [0u32; BLOCK_LEN];
    let mut freqs = [0u32; BLOCK_LEN];
    // The term's frequencies as the block loop decodes them, and its positions.
    let (mut term_freqs, mut positions) = (Vec::new(), Vec::new());
    while let Some((term, ordinal)) = stream.next() {
        let shown = String::from_utf8_lossy(term).into_owned();
        if previous.as_deref().is_some_and(|p| p >= term) {
            report.problem(&dict, format!("term {shown:?} out of order"));
        }
        previous = Some(term.to_vec());
        if ordinal != expected_ordinal {
            report.problem(
                &dict,
                format!("term {shown:?} has ordinal {ordinal}, expected {expected_ordinal}"),
            );
        }
        expected_ordinal += 1;
        let info = match reader.term_info(ordinal) {
            Ok(info) => info,
            Err(e) => {
                report.problem(&terms_file, e.to_string());
                continue;
            }
        };
        let term_problem = |report: &mut CheckReport, file: &str, what: String| {
            report.problem(file, format!("term {shown:?}: {what}"));
        };
        // The lengths and scorer the term's blocks were bounded with: its text field's.
        let named_field = std::str::from_utf8(term)
            .ok()
            .and_then(field_terms::text_field_of)
            .map(|(field, _)| field)
            .filter(|field| !field.is_empty());
        let (term_lengths, term_bm25) = match named_field {
            None => (&lengths, &bm25),
            Some(field) => match field_lengths.get(field) {
                Some((lengths, bm25)) => (lengths, bm25),
                None => {
                    term_problem(
                        report,
                        &field_norms_file,
                        format!("no norms of its field [{field}]"),
                    );
                    continue;
                }
            },
        };
        // The per-term checksums queries verify (the files' own are verified above).
        if let Err(e) = reader.entry(ordinal) {
            term_problem(report, &terms_file, e.to_string());
        }
        if info.doc_freq == 0 {
            term_problem(report, &terms_file, "document frequency 0".into());
            continue;
        }
        if info.postings_offset != postings_offset {
            term_problem(
                report,
                &terms_file,
                format!(
                    "postings at {}, expected {postings_offset} (terms' postings are contiguous)",
                    info.postings_offset
                ),
            );
        }
        if u64::from(info.first_skip) != next_skip {
            term_problem(
                report,
                &terms_file,
                format!("first skip entry {}, expected {next_skip}", info.first_skip),
            );
        }
        postings_offset = info.postings_offset + info.postings_bytes();
        next_skip = u64::from(info.first_skip) + info.stored_skip_entries() as u64;
        docs_bytes += u64::from(info.docs_bytes);
        freqs_bytes += u64::from(info.freqs_bytes);
        let bytes = match reader.verified_postings(&TermEntry { ordinal, info }) {
            Ok(bytes) => bytes,
            Err(e) => {
                term_problem(report, &post_file, e.to_string());
                continue;
            }
        };
        let n = info.doc_freq as usize;
        term_freqs.clear();
        let mut last_doc: Option<u32> = None;
        let mut total_freq = 0u64;
        let (mut docs_at, mut freqs_at) = (0usize, info.docs_bytes as usize);
        for block in 0..info.blocks() {
            let entry = match reader.skip_entry(&info, block) {
                Ok(entry) => entry,
                Err(e) => {
                    term_problem(report, &skip_file, e.to_string());
                    break;
                }
            };
            let len = BLOCK_LEN.min(n - block * BLOCK_LEN);
            if entry.docs_offset as usize != docs_at || entry.freqs_offset as usize != freqs_at {
                term_problem(
                    report,
                    &skip_file,
                    format!(
                        "block {block} at offsets {}/{}, expected {docs_at}/{freqs_at}",
                        entry.docs_offset, entry.freqs_offset
                    ),
                );
                break;
            }
            let decoded = match info.lone_posting() {
                // Kept in the record: no bytes to decode.
                Some((doc, freq)) => {
                    (docs[0], freqs[0]) = (doc, freq.wrapping_sub(1));
                    Ok(())
                }
                None => reader
                    .codec()
                    .decode_docs(entry.first_doc, &bytes[docs_at..], &mut docs[..len])
                    .and_then(|used| {
                        docs_at += used;
                        reader
                            .codec()
                            .decode_freqs(&bytes[freqs_at..], &mut freqs[..len])
                    })
                    .map(|used| freqs_at += used),
            };
            if let Err(e) = decoded {
                term_problem(report, &post_file, format!("block {block}: {e}"));
                break;
            }
            let block_docs = &docs[..len];
            if block_docs[0] != entry.first_doc || block_docs[len - 1] != entry.last_doc {
                term_problem(
                    report,
                    &skip_file,
                    format!(
                        "block {block}: skip entry says DIDs {}..={}, the block holds {}..={}",
                        entry.first_doc,
                        entry.last_doc,
                        block_docs[0],
                        block_docs[len - 1]
                    ),
                );
            }
            let increasing = block_docs.windows(2).all(|w| w[0] < w[1])
                && last_doc.is_none_or(|last| last < block_docs[0]);
            if !increasing {
                term_problem(
                    report,
                    &post_file,
                    format!("block {block}: DIDs not strictly increasing"),
                );
                break;
            }
            last_doc = Some(block_docs[len - 1]);
            let mut max_freq = 0;
            let mut min_len = u32::MAX;
            let (mut best, mut best_key) = ((0, 0), f32::NEG_INFINITY);
            for (&doc, &stored) in block_docs.iter().zip(&freqs[..len]) {
                let freq = stored.wrapping_add(1);
                term_freqs.push(freq);
                if freq == 0 {
                    term_problem(report, &post_file, format!("block {block}: frequency 0"));
                }
                max_freq = max_freq.max(freq);
                total_freq += u64::from(freq);
                match meta
                    .docs
                    .local(doc)
                    .and_then(|l| term_lengths.get(l as usize).copied())
                {
                    Some(length) => {
                        min_len = min_len.min(length);
                        let key = term_bm25.saturation_key(freq, length);
                        if key > best_key {
                            (best, best_key) = ((freq, length), key);
                        }
                    }
                    None => {
                        term_problem(
                            report,
                            &post_file,
                            format!("block {block}: DID {doc} is not in the segment"),
                        );
                        break;
                    }
                }
            }
            // The format keeps lengths as their norm bytes.
            let (best, min_norm) = ((best.0, length_to_norm(best.1)), length_to_norm(min_len));
            if (entry.best_freq, entry.best_norm) != best {
                term_problem(
                    report,
                    &skip_file,
                    format!(
                        "block {block}: skip entry's best posting (freq {}, norm {}) is not the block's ({}, {})",
                        entry.best_freq, entry.best_norm, best.0, best.1
                    ),
                );
            }
            if entry.max_freq != max_freq || entry.min_norm != min_norm {
                term_problem(
                    report,
                    &skip_file,
                    format!(
                        "block {block}: skip entry bounds (max freq {}, min norm {}) differ from the block's ({max_freq}, {min_norm})",
                        entry.max_freq, entry.min_norm
                    ),
                );
            }
        }
        if docs_at != info.docs_bytes as usize || freqs_at != info.postings_bytes() as usize {
            term_problem(
                report,
                &post_file,
                format!(
                    "blocks end at {docs_at}/{freqs_at}, term metadata says {}/{}",
                    info.docs_bytes,
                    info.postings_bytes()
                ),
            );
        } else if total_freq != info.total_term_freq {
            term_problem(
                report,
                &terms_file,
                format!(
                    "total term frequency {}, the postings sum to {total_freq}",
                    info.total_term_freq
                ),
            );
        }
        // Positions: verified against their checksum and decoded whole with the frequencies
        // read above (which decoding checks they add up to), when every block was read.
        if reader.has_positions() && term_freqs.len() == n {
            let entry = TermEntry { ordinal, info };
            if let Err(e) = reader.read_positions(&entry, &term_freqs, &mut positions) {
                term_problem(report, &name(FileKind::Positions), e.to_string());
            }
        }
        postings += n as u64;
        if report.problems.len() - problems_before > 100 {
            report.problem(
                &meta.name,
                "more than 100 problems; the rest of the segment is not checked",
            );
            return;
        }
    }
    report.terms += expected_ordinal;
    report.postings += postings;
    let counts = [
        ("terms", expected_ordinal, meta.terms),
        ("postings", postings, meta.postings),
        ("DID block bytes", docs_bytes, meta.docs_bytes),
        ("frequency block bytes", freqs_bytes, meta.freqs_bytes),
        ("skip entries", next_skip, reader.skip_entries() as u64),
        (
            "postings file bytes",
            postings_offset,
            reader.postings_len() as u64,
        ),
    ];
    for (what, found, recorded) in counts {
        if found != recorded {
            report.problem(
                &meta.name,
                format!("{what}: {found} found, {recorded} recorded"),
            );
        }
    }
    match reader.count_stored() {
        Ok(stored) if stored == u64::from(documents) => {}
        Ok(stored) => report.problem(
            &name(FileKind::Store),
            format!("{stored} stored documents, the segment has {documents}"),
        ),
        Err(e) => report.problem(&name(FileKind::Store), e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::Problem;

    #[test]
    fn a_problem_names_its_file_once() {
        let problem = |file: &str, what: &str| {
            Problem {
                file: file.into(),
                what: what.into(),
            }
            .to_string()
        };
        let named = "seg_000004.dict: checksum mismatch (footer 0x00000001, computed 0x00000002)";
        assert_eq!(problem("seg_000004.dict", named), named);
        assert_eq!(
            problem("seg_000004.terms", "seg_000004.terms is corrupt: a record"),
            "seg_000004.terms is corrupt: a record"
        );
        assert_eq!(
            problem("seg_000004.post", "a block does not decode"),
            "seg_000004.post: a block does not decode"
        );
        // A file whose name only starts another's is still named.
        assert_eq!(
            problem("seg_000004.pos", "seg_000004.post: short"),
            "seg_000004.pos: seg_000004.post: short"
        );
    }
}
