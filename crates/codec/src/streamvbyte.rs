//! `streamvbyte-delta`: Stream VByte (Lemire, Kurz, Rupp) of d-gaps and of frequencies.
//!
//! Control bytes come first, one per four values (2 bits per value, value `i` in bits
//! `2*(i%4)`, holding its byte length minus one; unused codes of the last byte are zero), then
//! the data bytes, each value little-endian in 1 to 4 bytes. Keeping lengths apart from data
//! lets a decoder expand four values with one byte shuffle chosen by the control byte.

use crate::codec::check_len;
use crate::delta::{prefix_sum_scalar, to_gaps};
use crate::error::take;
use crate::{BlockCodec, CodecError, Isa, BLOCK_LEN};

/// Byte length (1 to 4) of `v` in Stream VByte.
#[inline]
fn byte_len(v: u32) -> usize {
    match v {
        0..=0xFF => 1,
        0x100..=0xFFFF => 2,
        0x1_0000..=0xFF_FFFF => 3,
        _ => 4,
    }
}

/// Shuffle masks and data lengths for each control byte, built at compile time.
struct Tables {
    shuffle: [[u8; 16]; 256],
    length: [u8; 256],
}

static TABLES: Tables = {
    let mut shuffle = [[0x80u8; 16]; 256];
    let mut length = [0u8; 256];
    let mut control = 0;
    while control < 256 {
        let mut offset = 0u8;
        let mut i = 0;
        while i < 4 {
            let len = ((control >> (2 * i)) & 3) as u8 + 1;
            let mut k = 0;
            while k < len {
                shuffle[control][i * 4 + k as usize] = offset + k;
                k += 1;
            }
            offset += len;
            i += 1;
        }
        length[control] = offset;
        control += 1;
    }
    Tables { shuffle, length }
};

fn encode(values: &[u32], out: &mut Vec<u8>) {
    let ctrl_start = out.len();
    out.resize(ctrl_start + values.len().div_ceil(4), 0);
    for (i, &v) in values.iter().enumerate() {
        let len = byte_len(v);
        out[ctrl_start + i / 4] |= ((len - 1) as u8) << (2 * (i % 4));
        out.extend_from_slice(&v.to_le_bytes()[..len]);
    }
}

/// Decodes values `from..` of the block with portable code; returns the data bytes consumed.
fn decode_scalar_from(
    ctrl: &[u8],
    data: &[u8],
    from: usize,
    mut pos: usize,
    out: &mut [u32],
) -> Result<usize, CodecError> {
    for (i, v) in out.iter_mut().enumerate().skip(from) {
        let len = usize::from((ctrl[i / 4] >> (2 * (i % 4))) & 3) + 1;
        let bytes =
            take(data.get(pos..).unwrap_or(&[]), len).map_err(|_| CodecError::Truncated {
                needed: pos + len,
                available: data.len(),
            })?;
        let mut word = [0u8; 4];
        word[..len].copy_from_slice(bytes);
        *v = u32::from_le_bytes(word);
        pos += len;
    }
    Ok(pos)
}

/// Decodes `out.len()` values, applying the prefix sum from `base` when `delta` is set.
fn decode(
    input: &[u8],
    delta: Option<u32>,
    isa: Isa,
    out: &mut [u32],
) -> Result<usize, CodecError> {
    check_len(out.len())?;
    let n = out.len();
    let ctrl = take(input, n.div_ceil(4))?;
    if !n.is_multiple_of(4) && ctrl[ctrl.len() - 1] >> (2 * (n % 4)) != 0 {
        return Err(CodecError::Corrupt(
            "streamvbyte control codes past the block",
        ));
    }
    let data = &input[ctrl.len()..];
    // The prefix sum's value before value `done`.
    let carry = |done: usize, out: &[u32]| match (done, delta) {
        (0, Some(base)) => base,
        (_, Some(_)) => out[done - 1],
        _ => 0,
    };
    let (mut done, mut pos) = (0, 0);
    #[cfg(target_arch = "x86_64")]
    {
        if isa >= Isa::Avx512 {
            // SAFETY: an Isa at Avx512 is only obtained after detecting its features.
            (done, pos) = unsafe { x86::decode_sixteens(ctrl, data, delta, out) };
        }
        if isa >= Isa::Sse41 {
            let from = carry(done, out);
            // SAFETY: an Isa at Sse41 or above is only obtained after detecting SSSE3 and
            // SSE4.1; `done` is a multiple of 4.
            (done, pos) = unsafe { x86::decode_quads(ctrl, data, done, pos, from, delta, out) };
        }
    }
    let _ = isa;
    let acc = carry(done, out);
    let end = decode_scalar_from(ctrl, data, done, pos, out)?;
    if delta.is_some() {
        prefix_sum_scalar(acc, &mut out[done..]);
    }
    Ok(ctrl.len() + end)
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::TABLES;
    use crate::delta::x86::{scan16, scan4};
    use std::arch::x86_64::*;

    /// Decodes whole quads from value `from` (a multiple of 4) and data byte `pos` while 16
    /// bytes can be loaded safely; with `delta`, the prefix sum goes on from `carry`. Returns
    /// (values, data bytes) decoded so far.
    ///
    /// # Safety
    /// The CPU must support SSSE3 and SSE4.1. (`ctrl` must hold a control byte per whole quad
    /// of `out`, which indexing checks.)
    #[target_feature(enable = "ssse3,sse4.1")]
    pub(super) unsafe fn decode_quads(
        ctrl: &[u8],
        data: &[u8],
        from: usize,
        mut pos: usize,
        carry: u32,
        delta: Option<u32>,
        out: &mut [u32],
    ) -> (usize, usize) {
        let quads = out.len() / 4;
        let mut carry = _mm_set1_epi32(carry as i32);
        let mut q = from / 4;
        while q < quads && pos + 16 <= data.len() {
            let control = usize::from(ctrl[q]);
            // SAFETY: `pos + 16 <= data.len()` (the loop's condition) and a shuffle mask is 16
            // bytes; unaligned loads.
            let (raw, mask) = unsafe {
                (
                    _mm_loadu_si128(data.as_ptr().add(pos) as *const __m128i),
                    _mm_loadu_si128(TABLES.shuffle[control].as_ptr() as *const __m128i),
                )
            };
            let mut v = _mm_shuffle_epi8(raw, mask);
            if delta.is_some() {
                (v, carry) = scan4(v, carry);
            }
            // SAFETY: `q < out.len() / 4`, so `out[4 * q..4 * q + 4]` is in bounds, borrowed
            // mutably; an unaligned store.
            unsafe { _mm_storeu_si128(out.as_mut_ptr().add(4 * q) as *mut __m128i, v) };
            pos += usize::from(TABLES.length[control]);
            q += 1;
        }
        (4 * q, pos)
    }

    /// Decodes sixteen values (four control bytes) a step while 64 bytes can be loaded safely:
    /// each quad's data lands in its own 128-bit lane, one byte shuffle expands all four, and
    /// the prefix sum runs over sixteen lanes. Returns (values, data bytes).
    ///
    /// # Safety
    /// The CPU must support the features of [`crate::Isa::Avx512`]. (`ctrl` must hold a control
    /// byte per whole quad of `out`, which indexing checks.)
    #[target_feature(enable = "avx2,avx512f,avx512bw,avx512vbmi,avx512vpopcntdq")]
    pub(super) unsafe fn decode_sixteens(
        ctrl: &[u8],
        data: &[u8],
        delta: Option<u32>,
        out: &mut [u32],
    ) -> (usize, usize) {
        let steps = out.len() / 16;
        let mut carry = _mm512_set1_epi32(delta.unwrap_or(0) as i32);
        let mut pos = 0;
        let mut step = 0;
        while step < steps && pos + 64 <= data.len() {
            let c = &ctrl[4 * step..4 * step + 4];
            let (c0, c1, c2, c3) = (
                usize::from(c[0]),
                usize::from(c[1]),
                usize::from(c[2]),
                usize::from(c[3]),
            );
            let at1 = pos + usize::from(TABLES.length[c0]);
            let at2 = at1 + usize::from(TABLES.length[c1]);
            let at3 = at2 + usize::from(TABLES.length[c2]);
            let lane = |at: usize| {
                // SAFETY: every quad's data starts at most 48 bytes after `pos` (three quads of
                // at most 16 bytes before it) and `pos + 64 <= data.len()`, so the 16 bytes
                // from `at` are in `data`; an unaligned load.
                unsafe { _mm_loadu_si128(data.as_ptr().add(at) as *const __m128i) }
            };
            // SAFETY: a shuffle row is 16 bytes; an unaligned load.
            let shuffle =
                |c: usize| unsafe { _mm_loadu_si128(TABLES.shuffle[c].as_ptr() as *const __m128i) };
            let raw = _mm512_inserti32x4::<3>(
                _mm512_inserti32x4::<2>(
                    _mm512_inserti32x4::<1>(_mm512_castsi128_si512(lane(pos)), lane(at1)),
                    lane(at2),
                ),
                lane(at3),
            );
            let mask = _mm512_inserti32x4::<3>(
                _mm512_inserti32x4::<2>(
                    _mm512_inserti32x4::<1>(_mm512_castsi128_si512(shuffle(c0)), shuffle(c1)),
                    shuffle(c2),
                ),
                shuffle(c3),
            );
            let mut v = _mm512_shuffle_epi8(raw, mask);
            if delta.is_some() {
                (v, carry) = scan16(v, carry);
            }
            // SAFETY: `step < out.len() / 16`, so `out[16 * step..16 * step + 16]` is in bounds,
            // borrowed mutably; an unaligned store.
            unsafe { _mm512_storeu_si512(out.as_mut_ptr().add(16 * step) as *mut _, v) };
            pos = at3 + usize::from(TABLES.length[c3]);
            step += 1;
        }
        (16 * step, pos)
    }
}

/// Stream VByte of d-gaps for DIDs, Stream VByte for frequencies; SSSE3 decoding, sixteen
/// values a step with AVX-512.
#[derive(Debug, Clone, Copy)]
pub struct StreamVByteDelta {
    isa: Isa,
}

impl StreamVByteDelta {
    /// The codec decoding with the best instruction set of this CPU.
    pub fn new() -> Self {
        Self::with_isa(Isa::detect())
    }
    /// The codec decoding with `isa` (lowered to what this CPU supports).
    pub fn with_isa(isa: Isa) -> Self {
        StreamVByteDelta {
            isa: isa.supported(),
        }
    }
}

impl Default for StreamVByteDelta {
    fn default() -> Self {
        Self::new()
    }
}

impl BlockCodec for StreamVByteDelta {
    fn name(&self) -> &'static str {
        "streamvbyte-delta"
    }
    fn encode_docs(&self, base: u32, docs: &[u32], out: &mut Vec<u8>) -> Result<(), CodecError> {
        check_len(docs.len())?;
        let mut gaps = [0u32; BLOCK_LEN];
        to_gaps(base, docs, &mut gaps);
        encode(&gaps[..docs.len()], out);
        Ok(())
    }
    fn decode_docs(&self, base: u32, input: &[u8], out: &mut [u32]) -> Result<usize, CodecError> {
        decode(input, Some(base), self.isa, out)
    }
    fn encode_freqs(&self, freqs: &[u32], out: &mut Vec<u8>) -> Result<(), CodecError> {
        check_len(freqs.len())?;
        encode(freqs, out);
        Ok(())
    }
    fn decode_freqs(&self, input: &[u8], out: &mut [u32]) -> Result<usize, CodecError> {
        decode(input, None, self.isa, out)
    }
}
