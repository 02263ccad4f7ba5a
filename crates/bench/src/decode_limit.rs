//! `apcache-bench decode-limit`: how close decoding runs to the memory's limit.
//!
//! A query over the longest posting lists is bound by decoding, and decoding by how fast the
//! core turns compressed bytes into integers. The ceiling is the memory system: a loop that
//! does nothing but read (or copy) memory. This benchmark measures that ceiling on this
//! machine, then, for the index's longest lists (in the page cache, so storage does not
//! count), the whole list decoded (every DID and frequency, as an exhaustive union or a
//! count that cannot use document frequencies does), a single-term TOP_10 (block-max
//! pruning decodes only the blocks that may enter the top 10) and a single-term COUNT (the
//! document frequency, nothing decoded), and prints the rates side by side.

use std::hint::black_box;
use std::time::{Duration, Instant};

use apcache_index::query::Query;
use apcache_index::search::{IndexReader, SearchOptions, Searcher};
use apcache_index::IndexError;
use serde::Serialize;

use crate::stats::median_seconds;

/// Bytes of the buffers the bandwidth loops stream through (far above any cache).
const STREAM_BYTES: usize = 256 << 20;

/// The memory's ceiling.
#[derive(Debug, Clone, Serialize)]
pub struct Bandwidth {
    /// A read-only pass summing 64-bit words, GB/s read.
    pub read_gb_s: f64,
    /// `memcpy` of a large buffer, GB/s copied (read once, written once).
    pub copy_gb_s: f64,
}

/// One list's figures.
#[derive(Debug, Clone, Serialize)]
pub struct ListFigures {
    /// The term.
    pub term: String,
    /// Its document frequency.
    pub doc_freq: u32,
    /// Its compressed postings (DID and frequency blocks).
    pub postings_bytes: u64,
    /// Whole-list decoding: DIDs and frequencies, million integers per second.
    pub decode_mints_s: f64,
    /// The same as GB/s of decoded integers written (4 bytes each).
    pub decode_out_gb_s: f64,
    /// The same as GB/s of compressed bytes read.
    pub decode_in_gb_s: f64,
    /// A TOP_10 of the term alone: microseconds.
    pub top10_us: f64,
    /// Its postings covered per second (the list's length over the time), millions.
    pub top10_mpostings_s: f64,
    /// A COUNT of the term alone: microseconds.
    pub count_us: f64,
}

/// Everything `apcache-bench decode-limit` reports.
#[derive(Debug, Clone, Serialize)]
pub struct DecodeLimitReport {
    /// The decoders' instruction set.
    pub isa: String,
    /// The memory's ceiling.
    pub bandwidth: Bandwidth,
    /// The longest lists, longest first.
    pub lists: Vec<ListFigures>,
}

/// Measures read and copy bandwidth, median of `runs` passes.
pub fn measure_bandwidth(runs: usize) -> Bandwidth {
    let words = STREAM_BYTES / 8;
    let source: Vec<u64> = (0..words as u64).collect();
    let mut target = vec![0u64; words];
    let read_s = median_seconds(runs, Duration::ZERO, || {
        // Four sums in flight, so the loop is bound by loads, not by the adds' latency.
        let mut sums = [0u64; 4];
        for chunk in source.chunks_exact(4) {
            for (s, &w) in sums.iter_mut().zip(chunk) {
                *s = s.wrapping_add(w);
            }
        }
        black_box(sums);
    });
    let copy_s = median_seconds(runs, Duration::ZERO, || {
        target.copy_from_slice(black_box(&source));
        black_box(&mut target);
    });
    Bandwidth {
        read_gb_s: STREAM_BYTES as f64 / read_s / 1e9,
        copy_gb_s: STREAM_BYTES as f64 / copy_s / 1e9,
    }
}

/// Measures the `lists` longest lists of the index's first segment, `runs` passes each.
pub fn run(
    reader: &IndexReader,
    lists: usize,
    runs: usize,
    mut progress: impl FnMut(&str),
) -> Result<DecodeLimitReport, IndexError> {
    progress("memory bandwidth");
    let bandwidth = measure_bandwidth(runs);
    let Some(segment) = reader.segments().first() else {
        return Ok(DecodeLimitReport {
            isa: apcache_codec::Isa::detect().name().to_string(),
            bandwidth,
            lists: Vec::new(),
        });
    };
    // The longest lists by postings.
    let mut longest: Vec<(u32, u64)> = Vec::new();
    for (ordinal, info) in (0u64..).zip(segment.term_infos()) {
        longest.push((info?.doc_freq, ordinal));
        if longest.len() > 4 * lists.max(1) {
            longest.sort_unstable_by(|a, b| b.cmp(a));
            longest.truncate(lists);
        }
    }
    longest.sort_unstable_by(|a, b| b.cmp(a));
    longest.truncate(lists);
    let terms = term_texts(segment, &longest);
    let searcher = Searcher::new(reader);
    let mut figures = Vec::new();
    let (mut docs, mut freqs) = (Vec::new(), Vec::new());
    for ((doc_freq, ordinal), term) in longest.into_iter().zip(terms) {
        progress(&term);
        let entry = segment.entry(ordinal)?;
        segment.read_postings(&entry, &mut docs, &mut freqs)?;
        let decode_s = median_seconds(runs, Duration::from_millis(50), || {
            let _ = segment.read_postings(&entry, &mut docs, &mut freqs);
            black_box((&docs, &freqs));
        });
        let query = Query::Term(term.clone());
        let time = |k: usize| -> Result<f64, IndexError> {
            let options = SearchOptions {
                k,
                ..SearchOptions::default()
            };
            searcher.search(&query, &options)?;
            let mut samples = Vec::with_capacity(runs);
            for _ in 0..runs.max(1) {
                let start = Instant::now();
                black_box(searcher.search(&query, &options)?);
                samples.push(start.elapsed().as_secs_f64());
            }
            samples.sort_by(f64::total_cmp);
            Ok(samples[samples.len() / 2])
        };
        let top10_s = time(10)?;
        let count_s = time(0)?;
        let ints = 2.0 * f64::from(doc_freq);
        figures.push(ListFigures {
            term,
            doc_freq,
            postings_bytes: entry.info.postings_bytes(),
            decode_mints_s: ints / decode_s / 1e6,
            decode_out_gb_s: 4.0 * ints / decode_s / 1e9,
            decode_in_gb_s: entry.info.postings_bytes() as f64 / decode_s / 1e9,
            top10_us: top10_s * 1e6,
            top10_mpostings_s: f64::from(doc_freq) / top10_s / 1e6,
            count_us: count_s * 1e6,
        });
    }
    Ok(DecodeLimitReport {
        isa: apcache_codec::Isa::detect().name().to_string(),
        bandwidth,
        lists: figures,
    })
}

/// The texts of the terms `(_, ordinal)`, in the same order (one pass over the dictionary).
fn term_texts(
    segment: &apcache_index::segment::SegmentReader,
    terms: &[(u32, u64)],
) -> Vec<String> {
    use fst::Streamer;
    let mut texts = vec![String::new(); terms.len()];
    let mut stream = segment.dictionary().stream();
    while let Some((key, ordinal)) = stream.next() {
        if let Some(i) = terms.iter().position(|&(_, o)| o == ordinal) {
            texts[i] = String::from_utf8_lossy(key).into_owned();
        }
    }
    texts
}

impl DecodeLimitReport {
    /// The report as aligned text.
    pub fn to_text(&self) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        let b = &self.bandwidth;
        let _ = writeln!(
            s,
            "memory: {:.1} GB/s read (sum of 64-bit words), {:.1} GB/s memcpy; decoders: {}",
            b.read_gb_s, b.copy_gb_s, self.isa
        );
        let _ = writeln!(
            s,
            "\n{:<12} {:>9} {:>10} {:>10} {:>9} {:>9} {:>8} {:>9} {:>11} {:>8}",
            "term",
            "postings",
            "bytes",
            "decode",
            "out GB/s",
            "of copy",
            "in GB/s",
            "TOP_10 µs",
            "M postings/s",
            "COUNT µs"
        );
        let _ = writeln!(s, "{:<12} {:>9} {:>10} {:>10}", "", "", "", "M ints/s");
        for l in &self.lists {
            let _ = writeln!(
                s,
                "{:<12} {:>9} {:>10} {:>10.0} {:>9.2} {:>8.0}% {:>8.2} {:>9.0} {:>11.0} {:>8.2}",
                l.term,
                l.doc_freq,
                l.postings_bytes,
                l.decode_mints_s,
                l.decode_out_gb_s,
                100.0 * l.decode_out_gb_s / b.copy_gb_s,
                l.decode_in_gb_s,
                l.top10_us,
                l.top10_mpostings_s,
                l.count_us
            );
        }
        let _ = writeln!(
            s,
            "\ndecode: every DID and frequency of the list (read_postings, page-cached); out GB/s: \
             4 bytes per integer written, against memcpy's rate; TOP_10 with block-max pruning; \
             COUNT answered from the document frequency"
        );
        s
    }
}
