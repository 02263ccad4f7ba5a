//! Each instruction-set path of the codecs and their kernels, side by side on the same blocks.
//!
//! apcache picks its decoders at run time ([`Isa::detect`]) and keeps the lower paths as
//! fallbacks and test oracles. This table shows what each level is worth on real posting
//! lists: every codec that has SIMD paths decodes the same bytes at every level the CPU has,
//! and so do the kernels they are built from (bit unpacking in both layouts, the prefix sum of
//! d-gaps) and the popcount that counts a union's bitset. Every level's output is checked
//! against the scalar path's before it is timed.

use std::hint::black_box;

use apcache_codec::kernels::{
    pack_horizontal, pack_vertical, popcount_with_isa, prefix_sum, unpack_horizontal,
    unpack_vertical,
};
use apcache_codec::{codec_with_isa, Isa, BLOCK_LEN};
use serde::Serialize;

use crate::codec_bench::{CodecBenchConfig, CodecBenchError};
use crate::posting_lists::BlockSet;
use crate::stats::median_seconds;

/// The codecs whose decoding depends on the instruction set.
const SIMD_CODECS: [&str; 4] = [
    "streamvbyte-delta",
    "pfor-delta",
    "pfor-delta-simd",
    "bitpack-delta-simd",
];

/// One codec or kernel at every level the CPU has.
#[derive(Debug, Clone, Serialize)]
pub struct PathFigures {
    /// What is measured.
    pub kernel: String,
    /// The unit of `speeds`.
    pub unit: &'static str,
    /// `(level, speed)` for each supported level, lowest first.
    pub speeds: Vec<(String, f64)>,
}

fn bug(kernel: &str, message: String) -> CodecBenchError {
    CodecBenchError::Codec {
        codec: kernel.to_string(),
        message,
    }
}

/// The d-gaps of each block (the first gap from the block's own first DID, so 0) and each
/// block's bit width.
fn gaps_and_widths(set: &BlockSet) -> (Vec<u32>, Vec<u32>) {
    let mut gaps = Vec::with_capacity(set.docs.len());
    let mut widths = Vec::with_capacity(set.len());
    for i in 0..set.len() {
        let (docs, _) = set.block(i);
        let mut prev = docs[0];
        let mut max = 0;
        for &d in docs {
            let g = d - prev;
            prev = d;
            max |= g;
            gaps.push(g);
        }
        widths.push(32 - max.leading_zeros());
    }
    (gaps, widths)
}

/// Measures every codec with SIMD paths and every kernel on the full blocks of `set`.
pub fn measure_paths(
    set: &BlockSet,
    config: &CodecBenchConfig,
) -> Result<Vec<PathFigures>, CodecBenchError> {
    let levels = Isa::all_supported();
    let ints = set.docs.len();
    let mints = |seconds: f64| ints as f64 / seconds / 1e6;
    let time = |pass: &mut dyn FnMut()| median_seconds(config.runs, config.min_pass, pass);
    let mut rows = Vec::new();
    let mut out = [0u32; BLOCK_LEN];

    for name in SIMD_CODECS {
        let scalar = codec_with_isa(name, Isa::Scalar).map_err(|e| bug(name, e.to_string()))?;
        let mut bytes = Vec::new();
        let mut offsets = vec![0];
        for i in 0..set.len() {
            let (docs, _) = set.block(i);
            scalar
                .encode_docs(docs[0], docs, &mut bytes)
                .map_err(|e| bug(name, e.to_string()))?;
            offsets.push(bytes.len());
        }
        let mut speeds = Vec::new();
        for &isa in &levels {
            let codec = codec_with_isa(name, isa).map_err(|e| bug(name, e.to_string()))?;
            for i in 0..set.len() {
                let (docs, _) = set.block(i);
                let out = &mut out[..docs.len()];
                codec
                    .decode_docs(docs[0], &bytes[offsets[i]..], out)
                    .map_err(|e| bug(name, e.to_string()))?;
                if out != docs {
                    return Err(bug(
                        name,
                        format!("{} decodes block {i} wrongly", isa.name()),
                    ));
                }
            }
            let seconds = time(&mut || {
                for i in 0..set.len() {
                    let base = set.docs[set.bounds[i]];
                    let _ = codec.decode_docs(base, &bytes[offsets[i]..], &mut out);
                    black_box(&mut out);
                }
            });
            speeds.push((isa.name().to_string(), mints(seconds)));
        }
        rows.push(PathFigures {
            kernel: format!("{name} (DIDs)"),
            unit: "M ints/s",
            speeds,
        });
    }

    let (gaps, widths) = gaps_and_widths(set);
    let blocks = || gaps.chunks_exact(BLOCK_LEN).zip(&widths);
    let mut horizontal = Vec::new();
    let mut vertical = Vec::new();
    for (block, &bits) in blocks() {
        pack_horizontal(block, bits, &mut horizontal);
        let full: &[u32; BLOCK_LEN] = block.try_into().expect("full blocks");
        pack_vertical(full, bits, &mut vertical);
    }
    // Both layouts take `bits` bytes per 8 values: 32 * bits bytes per 256-value block.
    let starts: Vec<usize> = widths
        .iter()
        .scan(0, |at, &bits| {
            let start = *at;
            *at += 32 * bits as usize;
            Some(start)
        })
        .collect();
    let horizontal: Vec<&[u8]> = starts.iter().map(|&at| &horizontal[at..]).collect();
    let vertical: Vec<&[u8]> = starts.iter().map(|&at| &vertical[at..]).collect();

    let timing = Timing {
        levels: &levels,
        config,
        ints,
    };
    rows.push(timing.kernel(
        "bit unpacking, horizontal",
        &mut |isa| {
            for ((block, &bits), input) in blocks().zip(&horizontal) {
                unpack_horizontal(input, bits, &mut out, isa).map_err(|e| e.to_string())?;
                if out != block {
                    return Err("wrong values".into());
                }
            }
            Ok(())
        },
        &mut |isa| {
            let mut out = [0u32; BLOCK_LEN];
            for (&bits, input) in widths.iter().zip(&horizontal) {
                let _ = unpack_horizontal(input, bits, &mut out, isa);
                black_box(&mut out);
            }
        },
    )?);
    rows.push(timing.kernel(
        "bit unpacking, vertical, with prefix sum",
        &mut |isa| {
            for i in 0..set.len() {
                let (docs, _) = set.block(i);
                unpack_vertical(vertical[i], widths[i], Some(docs[0]), &mut out, isa)
                    .map_err(|e| e.to_string())?;
                if out != docs {
                    return Err("wrong values".into());
                }
            }
            Ok(())
        },
        &mut |isa| {
            let mut out = [0u32; BLOCK_LEN];
            for (i, input) in vertical.iter().enumerate() {
                let _ = unpack_vertical(
                    input,
                    widths[i],
                    Some(set.docs[set.bounds[i]]),
                    &mut out,
                    isa,
                );
                black_box(&mut out);
            }
        },
    )?);
    let mut summed = gaps.clone();
    rows.push(timing.kernel(
        "prefix sum of d-gaps",
        &mut |isa| {
            for (i, block) in gaps.chunks_exact(BLOCK_LEN).enumerate() {
                let mut values: [u32; BLOCK_LEN] = block.try_into().expect("full blocks");
                prefix_sum(set.docs[set.bounds[i]], &mut values, isa);
                if values != set.block(i).0 {
                    return Err("wrong values".into());
                }
            }
            Ok(())
        },
        &mut |isa| {
            for block in summed.chunks_exact_mut(BLOCK_LEN) {
                prefix_sum(0, block, isa);
            }
            black_box(&mut summed);
        },
    )?);

    // A union's bitset: the DIDs of every block marked, the pattern repeated up to the
    // window of an index of a few hundred thousand documents (8,192 words).
    let max_doc = set.docs.iter().copied().max().unwrap_or(0) as usize;
    let mut bits = vec![0u64; max_doc / 64 + 1];
    for &d in &set.docs {
        bits[d as usize / 64] |= 1 << (d % 64);
    }
    let pattern = bits.clone();
    while bits.len() < 8192 {
        bits.extend_from_slice(&pattern);
    }
    let expected: u64 = bits.iter().map(|w| u64::from(w.count_ones())).sum();
    let words = bits.len();
    let passes = ints.div_ceil(words * 64).max(1);
    let mut word_rate = Vec::new();
    for &isa in &levels {
        let got = popcount_with_isa(&bits, isa);
        if got != expected {
            return Err(bug(
                "popcount",
                format!("{} counts {got}, not {expected}", isa.name()),
            ));
        }
        let seconds = time(&mut || {
            for _ in 0..passes {
                black_box(popcount_with_isa(black_box(&bits), isa));
            }
        });
        word_rate.push((
            isa.name().to_string(),
            (passes * words) as f64 / seconds / 1e6,
        ));
    }
    rows.push(PathFigures {
        kernel: format!("popcount of a bitset ({words} words)"),
        unit: "M words/s",
        speeds: word_rate,
    });
    Ok(rows)
}

/// What each kernel is timed over.
struct Timing<'a> {
    levels: &'a [Isa],
    config: &'a CodecBenchConfig,
    ints: usize,
}

impl Timing<'_> {
    /// Checks `run`'s output at every level with `check`, then times it (`ints` values a
    /// pass).
    fn kernel(
        &self,
        label: &str,
        check: &mut dyn FnMut(Isa) -> Result<(), String>,
        run: &mut dyn FnMut(Isa),
    ) -> Result<PathFigures, CodecBenchError> {
        let mut speeds = Vec::new();
        for &isa in self.levels {
            check(isa).map_err(|m| bug(label, format!("{}: {m}", isa.name())))?;
            let seconds = median_seconds(self.config.runs, self.config.min_pass, || run(isa));
            speeds.push((isa.name().to_string(), self.ints as f64 / seconds / 1e6));
        }
        Ok(PathFigures {
            kernel: label.to_string(),
            unit: "M ints/s",
            speeds,
        })
    }
}

/// The rows as an aligned text table, one column per level.
pub fn paths_to_text(rows: &[PathFigures]) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let Some(first) = rows.first() else {
        return s;
    };
    let _ = write!(s, "{:<44} {:<10}", "path", "unit");
    for (level, _) in &first.speeds {
        let _ = write!(s, " {level:>9}");
    }
    let _ = writeln!(s, " {:>9}", "best/scl");
    for row in rows {
        let _ = write!(s, "{:<44} {:<10}", row.kernel, row.unit);
        for (_, speed) in &row.speeds {
            let _ = write!(s, " {speed:>9.0}");
        }
        let scalar = row.speeds.first().map_or(1.0, |(_, v)| *v);
        let best = row.speeds.iter().map(|(_, v)| *v).fold(0.0, f64::max);
        let _ = writeln!(s, " {:>8.2}x", best / scalar);
    }
    s
}
