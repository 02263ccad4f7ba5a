//! `apcache-bench codecs`: size and speed of every codec on real posting lists, beside the
//! `bitpacking` and `stream-vbyte` crates measured in the same run.
//!
//! Speed and the peer comparison use full 256-posting blocks (the peers take only whole
//! blocks); sizes are also given over all postings, short last blocks included, which is what
//! an index stores. Each figure is the median of several timed passes.

use std::hint::black_box;
use std::time::{Duration, Instant};

use apcache_codec::{codec_by_name, Isa, BLOCK_LEN, CODEC_NAMES};
use serde::Serialize;

use crate::codec_paths::{measure_paths, paths_to_text, PathFigures};
use crate::peers::{all_peers, MeasuredCodec};
use crate::posting_lists::{BlockSet, PostingLists};
use crate::stats::median_seconds;

/// How long and how often to measure.
#[derive(Debug, Clone)]
pub struct CodecBenchConfig {
    /// Timed passes per figure (the median is reported).
    pub runs: usize,
    /// Minimum duration of one pass; short passes repeat the work.
    pub min_pass: Duration,
}

impl Default for CodecBenchConfig {
    fn default() -> Self {
        CodecBenchConfig {
            runs: 7,
            min_pass: Duration::from_millis(30),
        }
    }
}

/// Size and speed of one codec on the full blocks.
#[derive(Debug, Clone, Serialize)]
pub struct CodecFigures {
    /// Codec name.
    pub name: String,
    /// Bits per document id.
    pub docs_bits_per_int: f64,
    /// Bits per frequency.
    pub freqs_bits_per_int: f64,
    /// Decode speed over document ids and frequencies together, million integers per second.
    pub decode_mints_per_s: f64,
    /// Encode speed over both, million integers per second.
    pub encode_mints_per_s: f64,
    /// Decode speed of document ids alone.
    pub docs_decode_mints_per_s: f64,
    /// Decode speed of frequencies alone.
    pub freqs_decode_mints_per_s: f64,
}

/// Size of one codec over every posting, short blocks included.
#[derive(Debug, Clone, Serialize)]
pub struct WholePostings {
    /// Codec name.
    pub name: String,
    /// Bits per document id.
    pub docs_bits_per_int: f64,
    /// Bits per frequency.
    pub freqs_bits_per_int: f64,
    /// Bytes of document ids and frequencies as a fraction of `raw`'s.
    pub fraction_of_raw: f64,
}

/// One of the codec goals, checked on this run's figures.
#[derive(Debug, Clone, Serialize)]
pub struct TargetCheck {
    /// What is compared.
    pub target: String,
    /// The measured ratio.
    pub value: f64,
    /// The goal (`value <= goal` for sizes, `value >= goal` for speeds).
    pub goal: f64,
    /// Whether the goal is met.
    pub met: bool,
}

/// What the posting lists were built from.
#[derive(Debug, Clone, Serialize)]
pub struct CorpusFigures {
    /// Documents tokenised.
    pub documents: usize,
    /// Tokens.
    pub tokens: u64,
    /// Distinct terms.
    pub terms: usize,
    /// Postings.
    pub postings: usize,
    /// Full blocks (the speed comparison's data).
    pub full_blocks: usize,
    /// Integers in full blocks (document ids; as many frequencies).
    pub full_block_ints: usize,
}

/// Everything `apcache-bench codecs` reports.
#[derive(Debug, Clone, Serialize)]
pub struct CodecBenchReport {
    /// The instruction set apcache's SIMD codecs decode with.
    pub isa: String,
    /// The data.
    pub corpus: CorpusFigures,
    /// apcache's codecs on full blocks.
    pub codecs: Vec<CodecFigures>,
    /// The peers on the same blocks.
    pub peers: Vec<CodecFigures>,
    /// apcache's codecs over all postings.
    pub whole_postings: Vec<WholePostings>,
    /// Each codec with SIMD paths, and each kernel, at every instruction-set level.
    pub paths: Vec<PathFigures>,
    /// The codec goals, checked.
    pub targets: Vec<TargetCheck>,
}

/// Errors of the codec benchmark.
#[derive(Debug, thiserror::Error)]
pub enum CodecBenchError {
    /// A codec failed on valid data, or decoded it wrongly: a bug.
    #[error("codec {codec} failed: {message}")]
    Codec {
        /// The codec.
        codec: String,
        /// What went wrong.
        message: String,
    },
    /// There is no full block to measure (the input is too small).
    #[error("no term has {BLOCK_LEN} postings; give the benchmark more documents")]
    TooSmall,
}

/// Encoded blocks of one set.
struct Encoded {
    docs: Vec<u8>,
    freqs: Vec<u8>,
    doc_offsets: Vec<usize>,
    freq_offsets: Vec<usize>,
}

fn fail(codec: &dyn MeasuredCodec, message: impl Into<String>) -> CodecBenchError {
    CodecBenchError::Codec {
        codec: codec.name(),
        message: message.into(),
    }
}

fn encode_set(codec: &dyn MeasuredCodec, set: &BlockSet) -> Result<Encoded, CodecBenchError> {
    let mut encoded = Encoded {
        docs: Vec::new(),
        freqs: Vec::new(),
        doc_offsets: vec![0],
        freq_offsets: vec![0],
    };
    for i in 0..set.len() {
        let (docs, freqs) = set.block(i);
        codec
            .encode_docs(docs[0], docs, &mut encoded.docs)
            .map_err(|m| fail(codec, m))?;
        codec
            .encode_freqs(freqs, &mut encoded.freqs)
            .map_err(|m| fail(codec, m))?;
        encoded.doc_offsets.push(encoded.docs.len());
        encoded.freq_offsets.push(encoded.freqs.len());
    }
    Ok(encoded)
}

/// Decodes every block once and checks it against the source.
fn verify(
    codec: &dyn MeasuredCodec,
    set: &BlockSet,
    encoded: &Encoded,
) -> Result<(), CodecBenchError> {
    let mut out = [0u32; BLOCK_LEN];
    for i in 0..set.len() {
        let (docs, freqs) = set.block(i);
        let out = &mut out[..docs.len()];
        let used = codec
            .decode_docs(docs[0], &encoded.docs[encoded.doc_offsets[i]..], out)
            .map_err(|m| fail(codec, m))?;
        let expected: Vec<u32> = if codec.decodes_gaps() {
            let mut prev = docs[0];
            docs.iter()
                .map(|&d| {
                    let g = d - prev;
                    prev = d;
                    g
                })
                .collect()
        } else {
            docs.to_vec()
        };
        if out != expected.as_slice() || used != encoded.doc_offsets[i + 1] - encoded.doc_offsets[i]
        {
            return Err(fail(
                codec,
                format!("block {i}: document ids do not round-trip"),
            ));
        }
        let used = codec
            .decode_freqs(&encoded.freqs[encoded.freq_offsets[i]..], out)
            .map_err(|m| fail(codec, m))?;
        if out != freqs || used != encoded.freq_offsets[i + 1] - encoded.freq_offsets[i] {
            return Err(fail(
                codec,
                format!("block {i}: frequencies do not round-trip"),
            ));
        }
    }
    Ok(())
}

fn bits_per_int(bytes: usize, ints: usize) -> f64 {
    if ints == 0 {
        0.0
    } else {
        bytes as f64 * 8.0 / ints as f64
    }
}

fn mints(ints: usize, seconds: f64) -> f64 {
    ints as f64 / seconds / 1e6
}

/// Measures one codec on the full blocks.
fn measure(
    codec: &dyn MeasuredCodec,
    set: &BlockSet,
    config: &CodecBenchConfig,
) -> Result<CodecFigures, CodecBenchError> {
    let encoded = encode_set(codec, set)?;
    verify(codec, set, &encoded)?;
    let ints = set.docs.len();
    let encode_s = median_seconds(config.runs, config.min_pass, || {
        black_box(encode_set(codec, set).ok());
    });
    let mut out = [0u32; BLOCK_LEN];
    let docs_s = median_seconds(config.runs, config.min_pass, || {
        for i in 0..set.len() {
            let base = set.docs[set.bounds[i]];
            let _ = codec.decode_docs(base, &encoded.docs[encoded.doc_offsets[i]..], &mut out);
            black_box(&mut out);
        }
    });
    let freqs_s = median_seconds(config.runs, config.min_pass, || {
        for i in 0..set.len() {
            let _ = codec.decode_freqs(&encoded.freqs[encoded.freq_offsets[i]..], &mut out);
            black_box(&mut out);
        }
    });
    Ok(CodecFigures {
        name: codec.name(),
        docs_bits_per_int: bits_per_int(encoded.docs.len(), ints),
        freqs_bits_per_int: bits_per_int(encoded.freqs.len(), ints),
        decode_mints_per_s: mints(2 * ints, docs_s + freqs_s),
        encode_mints_per_s: mints(2 * ints, encode_s),
        docs_decode_mints_per_s: mints(ints, docs_s),
        freqs_decode_mints_per_s: mints(ints, freqs_s),
    })
}

/// Decodes the DIDs and the frequencies of every block of `encoded` once.
fn decode_all(codec: &dyn MeasuredCodec, set: &BlockSet, encoded: &Encoded) {
    let mut out = [0u32; BLOCK_LEN];
    for i in 0..set.len() {
        let base = set.docs[set.bounds[i]];
        let _ = codec.decode_docs(base, &encoded.docs[encoded.doc_offsets[i]..], &mut out);
        black_box(&mut out);
        let _ = codec.decode_freqs(&encoded.freqs[encoded.freq_offsets[i]..], &mut out);
        black_box(&mut out);
    }
}

/// `a`'s decoding speed (DIDs and frequencies) over `b`'s, from passes that alternate between
/// the two: the median of the rounds' ratios. On a shared machine a load that comes and goes
/// then weighs on both sides of each ratio, where figures timed one codec after the other can
/// each catch a different load.
fn alternating_decode_ratio(
    a: &dyn MeasuredCodec,
    b: &dyn MeasuredCodec,
    set: &BlockSet,
    config: &CodecBenchConfig,
) -> Result<f64, CodecBenchError> {
    let (encoded_a, encoded_b) = (encode_set(a, set)?, encode_set(b, set)?);
    let ratios: Vec<f64> = (0..config.runs.max(1))
        .map(|_| {
            let seconds_a = median_seconds(1, config.min_pass, || decode_all(a, set, &encoded_a));
            let seconds_b = median_seconds(1, config.min_pass, || decode_all(b, set, &encoded_b));
            seconds_b / seconds_a
        })
        .collect();
    Ok(crate::stats::median(&ratios))
}

fn whole_postings(
    codec: &dyn MeasuredCodec,
    full: &BlockSet,
    tail: &BlockSet,
) -> Result<(usize, usize, usize), CodecBenchError> {
    let mut docs_bytes = 0;
    let mut freqs_bytes = 0;
    for set in [full, tail] {
        let encoded = encode_set(codec, set)?;
        verify(codec, set, &encoded)?;
        docs_bytes += encoded.docs.len();
        freqs_bytes += encoded.freqs.len();
    }
    Ok((docs_bytes, freqs_bytes, full.docs.len() + tail.docs.len()))
}

/// Runs the benchmark on `lists`; `progress` is told the name of each codec as it starts.
pub fn run(
    lists: &PostingLists,
    config: &CodecBenchConfig,
    mut progress: impl FnMut(&str),
) -> Result<CodecBenchReport, CodecBenchError> {
    let blocks = lists.blocks();
    if blocks.full.is_empty() {
        return Err(CodecBenchError::TooSmall);
    }
    let mut codecs = Vec::new();
    let mut whole = Vec::new();
    let mut raw_bytes = 0usize;
    for name in CODEC_NAMES {
        progress(name);
        let codec = codec_by_name(name).map_err(|e| CodecBenchError::Codec {
            codec: name.to_string(),
            message: e.to_string(),
        })?;
        codecs.push(measure(&codec, &blocks.full, config)?);
        let (docs, freqs, ints) = whole_postings(&codec, &blocks.full, &blocks.tail)?;
        if *name == "raw" {
            raw_bytes = docs + freqs;
        }
        whole.push(WholePostings {
            name: name.to_string(),
            docs_bits_per_int: bits_per_int(docs, ints),
            freqs_bits_per_int: bits_per_int(freqs, ints),
            fraction_of_raw: (docs + freqs) as f64 / raw_bytes.max(1) as f64,
        });
    }
    let mut peers = Vec::new();
    let peer_codecs = all_peers();
    for peer in &peer_codecs {
        progress(&peer.name());
        peers.push(measure(peer.as_ref(), &blocks.full, config)?);
    }
    progress("streamvbyte-delta and the C library, alternating");
    let svb = codec_by_name("streamvbyte-delta").map_err(|e| CodecBenchError::Codec {
        codec: "streamvbyte-delta".to_string(),
        message: e.to_string(),
    })?;
    let alternating = match peer_codecs
        .iter()
        .find(|p| p.name().starts_with("streamvbyte C"))
    {
        Some(c) => Some(alternating_decode_ratio(
            &svb,
            c.as_ref(),
            &blocks.full,
            config,
        )?),
        None => None,
    };
    progress("each instruction-set level");
    let paths = measure_paths(&blocks.full, config)?;
    let mut targets = check_targets(&codecs, &peers, &whole);
    if let Some(ratio) = alternating {
        targets.push(TargetCheck {
            target: "streamvbyte-delta / C library decode, alternating passes".to_string(),
            value: ratio,
            goal: 1.0,
            met: ratio >= 1.0,
        });
    }
    Ok(CodecBenchReport {
        isa: Isa::detect().name().to_string(),
        corpus: CorpusFigures {
            documents: lists.documents,
            tokens: lists.tokens,
            terms: lists.lists.len(),
            postings: lists.postings(),
            full_blocks: blocks.full.len(),
            full_block_ints: blocks.full.docs.len(),
        },
        codecs,
        peers,
        whole_postings: whole,
        paths,
        targets,
    })
}

fn check_targets(
    codecs: &[CodecFigures],
    peers: &[CodecFigures],
    whole: &[WholePostings],
) -> Vec<TargetCheck> {
    let ours = |name: &str| codecs.iter().find(|c| c.name == name);
    let peer = |prefix: &str| peers.iter().find(|c| c.name.starts_with(prefix));
    let mut targets = Vec::new();
    let mut at_most = |target: &str, value: f64, goal: f64| {
        targets.push(TargetCheck {
            target: target.to_string(),
            value,
            goal,
            met: value <= goal,
        });
    };
    if let (Some(p), Some(b)) = (ours("pfor-delta"), peer("bitpacking BitPacker8x")) {
        at_most(
            "pfor-delta DID bits / BitPacker8x delta DID bits",
            p.docs_bits_per_int / b.docs_bits_per_int,
            0.90,
        );
    }
    for w in whole.iter().filter(|w| w.name.starts_with("pfor-delta")) {
        at_most(
            &format!("{} whole postings / raw", w.name),
            w.fraction_of_raw,
            0.25,
        );
    }
    let mut at_least = |target: &str, value: f64, goal: f64| {
        targets.push(TargetCheck {
            target: target.to_string(),
            value,
            goal,
            met: value >= goal,
        });
    };
    if let Some(b) = peer("bitpacking BitPacker8x") {
        if let Some(p) = ours("pfor-delta-simd") {
            at_least(
                "pfor-delta-simd DID decode / BitPacker8x delta decode",
                p.docs_decode_mints_per_s / b.docs_decode_mints_per_s,
                0.7,
            );
        }
        if let Some(p) = ours("bitpack-delta-simd") {
            at_least(
                "bitpack-delta-simd DID decode / BitPacker8x delta decode",
                p.docs_decode_mints_per_s / b.docs_decode_mints_per_s,
                1.0,
            );
        }
    }
    // The PFor and bit-packing codecs at or above BitPacker4x, the `bitpacking` crate's
    // 128-value blocks, on each kind of integer.
    if let Some(b) = peer("bitpacking BitPacker4x") {
        for name in ["pfor-delta-simd", "bitpack-delta-simd"] {
            if let Some(p) = ours(name) {
                at_least(
                    &format!("{name} DID decode / BitPacker4x"),
                    p.docs_decode_mints_per_s / b.docs_decode_mints_per_s,
                    1.0,
                );
                at_least(
                    &format!("{name} freq decode / BitPacker4x"),
                    p.freqs_decode_mints_per_s / b.freqs_decode_mints_per_s,
                    1.0,
                );
            }
        }
    }
    if let (Some(s), Some(p)) = (ours("streamvbyte-delta"), peer("stream-vbyte")) {
        at_least(
            "streamvbyte-delta decode / stream-vbyte decode",
            s.decode_mints_per_s / p.decode_mints_per_s,
            1.0,
        );
    }
    if let (Some(s), Some(p)) = (ours("streamvbyte-delta"), peer("streamvbyte C")) {
        at_least(
            "streamvbyte-delta decode / streamvbyte C library decode",
            s.decode_mints_per_s / p.decode_mints_per_s,
            1.0,
        );
    }
    targets
}

/// Times building the posting lists (for the report's header).
pub fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let start = Instant::now();
    let value = f();
    (value, start.elapsed())
}

impl CodecBenchReport {
    /// The report as aligned text tables.
    pub fn to_text(&self) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        let c = &self.corpus;
        let _ = writeln!(s, "{} documents, {} tokens, {} terms, {} postings; {} full blocks ({} DIDs) measured; SIMD level {}", c.documents, c.tokens, c.terms, c.postings, c.full_blocks, c.full_block_ints, self.isa);
        let _ = writeln!(s, "\nfull 256-posting blocks (median of passes; M ints/s):");
        let _ = writeln!(
            s,
            "{:<36} {:>9} {:>10} {:>10} {:>10} {:>10} {:>10}",
            "codec", "DID bits", "freq bits", "DID dec", "freq dec", "decode", "encode"
        );
        for f in self.codecs.iter().chain(&self.peers) {
            let _ = writeln!(
                s,
                "{:<36} {:>9.2} {:>10.2} {:>10.0} {:>10.0} {:>10.0} {:>10.0}",
                f.name,
                f.docs_bits_per_int,
                f.freqs_bits_per_int,
                f.docs_decode_mints_per_s,
                f.freqs_decode_mints_per_s,
                f.decode_mints_per_s,
                f.encode_mints_per_s
            );
        }
        let _ = writeln!(s, "\nall postings (short last blocks included):");
        let _ = writeln!(
            s,
            "{:<36} {:>9} {:>10} {:>10}",
            "codec", "DID bits", "freq bits", "of raw"
        );
        for w in &self.whole_postings {
            let _ = writeln!(
                s,
                "{:<36} {:>9.2} {:>10.2} {:>9.1}%",
                w.name,
                w.docs_bits_per_int,
                w.freqs_bits_per_int,
                100.0 * w.fraction_of_raw
            );
        }
        let _ = writeln!(
            s,
            "\neach instruction-set level on the same blocks (median of passes):"
        );
        s.push_str(&paths_to_text(&self.paths));
        let _ = writeln!(s, "\ngoals:");
        for t in &self.targets {
            let _ = writeln!(
                s,
                "{:<60} {:>6.3} (goal {}{}) {}",
                t.target,
                t.value,
                if t.target.contains("decode") {
                    ">= "
                } else {
                    "<= "
                },
                t.goal,
                if t.met { "met" } else { "NOT MET" }
            );
        }
        s
    }
}
