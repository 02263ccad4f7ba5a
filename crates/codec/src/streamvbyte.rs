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

/// Shuffle masks and data lengths for each control byte, built at compile time. Aligned so
/// that each 16-byte mask is too.
#[repr(C, align(64))]
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

/// The data bytes of `n` values whose control bytes are `ctrl` (the codes past `n` being zero):
/// `n` plus the sum of the 2-bit codes, summed eight control bytes at a time.
fn data_len(ctrl: &[u8], n: usize) -> usize {
    const LOW: u64 = 0x3333_3333_3333_3333;
    const NIBBLES: u64 = 0x0F0F_0F0F_0F0F_0F0F;
    // Sums of the two codes of each nibble (at most 6), then of each byte (at most 12).
    let byte_sums = |word: u64| {
        let nibbles = (word & LOW) + ((word >> 2) & LOW);
        (nibbles & NIBBLES) + ((nibbles >> 4) & NIBBLES)
    };
    let mut chunks = ctrl.chunks_exact(8);
    // Eight control bytes add at most 12 to each byte of `bytes`, and a block has at most
    // eight such chunks: at most 96 per byte.
    let mut bytes = 0u64;
    for chunk in &mut chunks {
        bytes += byte_sums(u64::from_le_bytes(chunk.try_into().expect("eight bytes")));
    }
    let mut last = [0u8; 8];
    last[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
    bytes += byte_sums(u64::from_le_bytes(last));
    // Pairs of bytes into 16-bit lanes (at most 192 each), then all four lanes into the top one.
    let pairs = (bytes & 0x00FF_00FF_00FF_00FF) + ((bytes >> 8) & 0x00FF_00FF_00FF_00FF);
    n + (pairs.wrapping_mul(0x0001_0001_0001_0001) >> 48) as usize
}

/// Decodes `out.len()` values with portable code from data that holds all their bytes.
fn decode_scalar(ctrl: &[u8], data: &[u8], out: &mut [u32]) {
    let mut pos = 0;
    for (i, v) in out.iter_mut().enumerate() {
        let code = (ctrl[i / 4] >> (2 * (i % 4))) & 3;
        let len = usize::from(code) + 1;
        *v = match data.get(pos..pos + 4) {
            Some(word) => {
                u32::from_le_bytes(word.try_into().expect("four bytes"))
                    & (u32::MAX >> (24 - 8 * code))
            }
            None => {
                let mut word = [0u8; 4];
                word[..len].copy_from_slice(&data[pos..pos + len]);
                u32::from_le_bytes(word)
            }
        };
        pos += len;
    }
}

/// Decodes `out.len()` values, applying the prefix sum from `base` when `delta` is set.
///
/// A truncated block is an error before anything is decoded: an input that could not hold
/// the longest data of `n` values is checked against the data length its control bytes give.
/// The SIMD paths then read without checks.
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
    let truncated = |len: usize| CodecError::Truncated {
        needed: ctrl.len() + len,
        available: input.len(),
    };
    #[cfg(target_arch = "x86_64")]
    if isa >= Isa::Sse41 {
        if data.len() < 4 * n + x86::SLACK {
            let len = data_len(ctrl, n);
            if data.len() < len {
                return Err(truncated(len));
            }
        }
        // SAFETY: an Isa at Sse41 or above is only obtained after detecting SSSE3 and SSE4.1
        // (and the higher levels' features for them); `data` holds the values' data, or
        // `4 * n + SLACK` bytes.
        return Ok(ctrl.len() + unsafe { x86::decode(ctrl, data, delta, isa, out) });
    }
    let _ = isa;
    let len = data_len(ctrl, n);
    let data = take(data, len).map_err(|_| truncated(len))?;
    decode_scalar(ctrl, data, out);
    if let Some(base) = delta {
        prefix_sum_scalar(base, out);
    }
    Ok(ctrl.len() + len)
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::TABLES;
    use crate::Isa;
    use std::arch::x86_64::*;

    /// Bytes past the longest data of `n` values (`4 * n` bytes) that let every quad load 16
    /// bytes from the input: a partial last quad of `r` values starts at most `4 * r` bytes
    /// before that end, so at least 4 bytes before it.
    pub(super) const SLACK: usize = 12;

    /// Decodes the `out.len()` values of control bytes `ctrl` from `data`; returns the data
    /// bytes read.
    ///
    /// # Safety
    /// The CPU must support the features of `isa`, which is at least [`Isa::Sse41`]; `ctrl`
    /// holds `out.len().div_ceil(4)` control bytes (codes past `out.len()` zero), and `data`
    /// holds at least their data bytes or at least `4 * out.len() + SLACK` bytes.
    pub(super) unsafe fn decode(
        ctrl: &[u8],
        data: &[u8],
        delta: Option<u32>,
        isa: Isa,
        out: &mut [u32],
    ) -> usize {
        let n = out.len();
        // Every quad whose 16-byte load stays in `data`: all full ones with enough slack,
        // else all but the last three full ones (the four quads from quad `q` take at least
        // 16 bytes, so quad `q`'s load ends by the end of the data when `q + 4 <= n / 4`).
        let direct = if data.len() >= 4 * n + SLACK {
            n / 4
        } else {
            (n / 4).saturating_sub(3)
        };
        let run = Run {
            ctrl: ctrl.as_ptr(),
            data: data.as_ptr(),
            out: out.as_mut_ptr(),
            quads: direct,
        };
        // SAFETY: quad `q < direct` loads 16 bytes in `data` (above), reads control byte `q`
        // of `ctrl` and writes `out[4 * q..4 * q + 4]`, in bounds as `direct <= n / 4`; the
        // caller vouches for the CPU.
        let (pos, carry) = unsafe { run.decode(delta, isa) };
        if 4 * direct == n {
            return pos;
        }
        // The rest (at most three full quads and a partial one: 60 data bytes) from a
        // zero-padded copy, into a buffer with room for whole quads.
        let mut bytes = [0u8; 64];
        let rest = &data[pos..];
        let copied = rest.len().min(bytes.len());
        bytes[..copied].copy_from_slice(&rest[..copied]);
        let mut values = [0u32; 16];
        let tail = Run {
            ctrl: ctrl[direct..].as_ptr(),
            data: bytes.as_ptr(),
            out: values.as_mut_ptr(),
            quads: ctrl.len() - direct,
        };
        // SAFETY: at most four quads, whose data starts within the first 48 bytes, so every
        // 16-byte load is in `bytes`; their control bytes are the last `tail.quads` of
        // `ctrl`, and they write at most 16 values.
        let (used, _) = unsafe { tail.decode(delta.map(|_| carry), isa) };
        out[4 * direct..].copy_from_slice(&values[..n - 4 * direct]);
        // The length table counts the zero codes past `n` as one-byte values.
        pos + used - (4 * ctrl.len() - n)
    }

    /// Quads to decode: control byte `q` of `ctrl` gives the lengths of the four values that
    /// go to `out[4 * q..4 * q + 4]`, read from `data` after the previous quads' bytes.
    pub(super) struct Run {
        ctrl: *const u8,
        data: *const u8,
        out: *mut u32,
        quads: usize,
    }

    impl Run {
        /// Decodes the quads with the kernel of `isa`, summing from `delta`'s carry when set;
        /// returns the data bytes read and the carry after them.
        ///
        /// # Safety
        /// The CPU must support `isa` (at least SSE4.1); for each quad `q < quads`, the 16 bytes
        /// from where its data starts are readable, control byte `q` is readable and `out[4 *
        /// q..4 * q + 4]` is writable.
        unsafe fn decode(self, delta: Option<u32>, isa: Isa) -> (usize, u32) {
            // SAFETY: the caller's.
            unsafe {
                if isa >= Isa::Avx512 {
                    return match delta {
                        Some(carry) => self.quads_avx512::<true>(carry),
                        None => self.quads_avx512::<false>(0),
                    };
                }
                match (isa >= Isa::Avx2, delta) {
                    (true, Some(carry)) => self.quads_avx2::<true>(carry),
                    (true, None) => self.quads_avx2::<false>(0),
                    (false, Some(carry)) => self.quads_sse41::<true>(carry),
                    (false, None) => self.quads_sse41::<false>(0),
                }
            }
        }
    }

    /// One quad: control byte `control`, data at `data`, values to `out`. With `DELTA`, they
    /// are summed from `carry`, returned advanced by their sum: the carry's chain is one add
    /// a quad, the sum within the quad and its broadcast are off it.
    ///
    /// # Safety
    /// The CPU must support SSSE3 and SSE4.1; the 16 bytes from `data` are readable and the 4
    /// values from `out` writable.
    #[inline]
    #[target_feature(enable = "ssse3,sse4.1")]
    unsafe fn quad<const DELTA: bool>(
        control: usize,
        data: *const u8,
        out: *mut u32,
        carry: __m128i,
    ) -> __m128i {
        // SAFETY: the caller's; a shuffle row is 16 bytes, aligned. Unaligned load and store.
        unsafe {
            let raw = _mm_loadu_si128(data.cast());
            let mask = _mm_load_si128(TABLES.shuffle[control].as_ptr().cast());
            let mut v = _mm_shuffle_epi8(raw, mask);
            if !DELTA {
                _mm_storeu_si128(out.cast(), v);
                return carry;
            }
            v = _mm_add_epi32(v, _mm_slli_si128::<4>(v));
            v = _mm_add_epi32(v, _mm_slli_si128::<8>(v));
            _mm_storeu_si128(out.cast(), _mm_add_epi32(v, carry));
            _mm_add_epi32(carry, _mm_shuffle_epi32::<0xFF>(v))
        }
    }

    /// 32 one-byte values (eight control bytes of zeros) from the 32 bytes at `data` to `out`,
    /// widened without shuffle masks; with `DELTA`, summed from `carry` in 16-bit lanes, and
    /// the carry advanced is returned.
    ///
    /// # Safety
    /// The CPU must support SSE4.1; the 32 bytes from `data` are readable and the 32 values
    /// from `out` writable.
    #[inline]
    #[target_feature(enable = "sse4.1")]
    unsafe fn ones<const DELTA: bool>(
        data: *const u8,
        out: *mut u32,
        mut carry: __m128i,
    ) -> __m128i {
        for k in 0..4 {
            // SAFETY: bytes `8k..8k + 8` and values `8k..8k + 8` (`k < 4`) are the caller's;
            // unaligned loads and stores.
            unsafe {
                let bytes = _mm_loadl_epi64(data.add(8 * k).cast());
                let (lo, hi) = if DELTA {
                    // Sums of up to four bytes in 16-bit lanes, [a, a+b, a+b+c, a+..+d,
                    // b+..+e, .., e+..+h]: the high four plus the fourth are the sums of
                    // the first five to eight.
                    let mut w = _mm_cvtepu8_epi16(bytes);
                    w = _mm_add_epi16(w, _mm_slli_si128::<2>(w));
                    w = _mm_add_epi16(w, _mm_slli_si128::<4>(w));
                    let lo = _mm_cvtepu16_epi32(w);
                    let hi = _mm_add_epi32(lo, _mm_unpackhi_epi16(w, _mm_setzero_si128()));
                    let sums = (_mm_add_epi32(lo, carry), _mm_add_epi32(hi, carry));
                    carry = _mm_add_epi32(carry, _mm_shuffle_epi32::<0xFF>(hi));
                    sums
                } else {
                    (
                        _mm_cvtepu8_epi32(bytes),
                        _mm_cvtepu8_epi32(_mm_srli_si128::<4>(bytes)),
                    )
                };
                _mm_storeu_si128(out.add(8 * k).cast(), lo);
                _mm_storeu_si128(out.add(8 * k + 4).cast(), hi);
            }
        }
        carry
    }

    /// Two quads with 256-bit vectors: control bytes `c0` and `c1`, their data at `data` and
    /// `len[c0]` bytes on, their 8 values to `out`. With `DELTA`, summed from the broadcast
    /// `carry` (low half), which is returned advanced.
    ///
    /// # Safety
    /// The CPU must support AVX2; the 16 bytes from each quad's data are readable and the 8
    /// values from `out` writable.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn pair<const DELTA: bool>(
        c0: usize,
        c1: usize,
        data: *const u8,
        out: *mut u32,
        carry: __m256i,
    ) -> __m256i {
        // SAFETY: the caller's; shuffle rows are 16 bytes, aligned. Unaligned loads and store.
        unsafe {
            let second = data.add(usize::from(TABLES.length[c0]));
            let raw = _mm256_inserti128_si256::<1>(
                _mm256_castsi128_si256(_mm_loadu_si128(data.cast())),
                _mm_loadu_si128(second.cast()),
            );
            let mask = _mm256_inserti128_si256::<1>(
                _mm256_castsi128_si256(_mm_load_si128(TABLES.shuffle[c0].as_ptr().cast())),
                _mm_load_si128(TABLES.shuffle[c1].as_ptr().cast()),
            );
            let mut v = _mm256_shuffle_epi8(raw, mask);
            if !DELTA {
                _mm256_storeu_si256(out.cast(), v);
                return carry;
            }
            // Sums within each quad, then the first quad's total ([t0 | t1] broadcast per
            // half, swapped to [t1 | t0]) added to the second, and both totals to the carry.
            v = _mm256_add_epi32(v, _mm256_slli_si256::<4>(v));
            v = _mm256_add_epi32(v, _mm256_slli_si256::<8>(v));
            let totals = _mm256_shuffle_epi32::<0xFF>(v);
            let swapped = _mm256_permute2x128_si256::<0x01>(totals, totals);
            let v = _mm256_add_epi32(
                v,
                _mm256_blend_epi32::<0xF0>(_mm256_setzero_si256(), swapped),
            );
            _mm256_storeu_si256(out.cast(), _mm256_add_epi32(v, carry));
            _mm256_add_epi32(carry, _mm256_add_epi32(totals, swapped))
        }
    }

    /// [`ones`] with 512-bit vectors: sixteen bytes widened at a time, summed by [`scan16`].
    ///
    /// # Safety
    /// The CPU must support AVX-512F; the 32 bytes from `data` are readable and the 32 values
    /// from `out` writable.
    #[inline]
    #[target_feature(enable = "avx2,avx512f")]
    unsafe fn ones_avx512<const DELTA: bool>(
        data: *const u8,
        out: *mut u32,
        carry: __m128i,
    ) -> __m128i {
        let mut wide = _mm512_broadcastd_epi32(carry);
        for k in 0..2 {
            // SAFETY: bytes `16k..16k + 16` and values `16k..16k + 16` (`k < 2`) are the
            // caller's; unaligned loads and stores.
            unsafe {
                let v = _mm512_cvtepu8_epi32(_mm_loadu_si128(data.add(16 * k).cast()));
                if DELTA {
                    let (sums, next) = crate::delta::x86::scan16(v, wide);
                    _mm512_storeu_si512(out.add(16 * k).cast(), sums);
                    wide = next;
                } else {
                    _mm512_storeu_si512(out.add(16 * k).cast(), v);
                }
            }
        }
        _mm512_castsi512_si128(wide)
    }

    impl Run {
        /// Decodes the quads, eight at a time from one 64-bit word of control bytes (a word of
        /// zeros is 32 one-byte values). With `DELTA`, the prefix sum starts from `carry`.
        /// Returns the data bytes read and the carry after them.
        ///
        /// # Safety
        /// As [`Run::decode`], for SSSE3 and SSE4.1.
        #[target_feature(enable = "ssse3,sse4.1")]
        unsafe fn quads_sse41<const DELTA: bool>(self, carry: u32) -> (usize, u32) {
            let Run {
                ctrl,
                data,
                out,
                quads,
            } = self;
            let mut carry = _mm_set1_epi32(carry as i32);
            let (mut pos, mut q) = (0, 0);
            // SAFETY: quad `q < quads`'s control byte, the 16 bytes from its data at
            // `data + pos` and its values `out[4 * q..4 * q + 4]` are the caller's; eight zero
            // control bytes are 32 values of 32 data bytes. Unaligned loads.
            unsafe {
                while q + 8 <= quads {
                    let keys = ctrl.add(q).cast::<u64>().read_unaligned();
                    if keys == 0 {
                        carry = ones::<DELTA>(data.add(pos), out.add(4 * q), carry);
                        pos += 32;
                    } else {
                        for k in 0..8 {
                            let c = usize::from((keys >> (8 * k)) as u8);
                            carry = quad::<DELTA>(c, data.add(pos), out.add(4 * (q + k)), carry);
                            pos += usize::from(TABLES.length[c]);
                        }
                    }
                    q += 8;
                }
                while q < quads {
                    let c = usize::from(*ctrl.add(q));
                    carry = quad::<DELTA>(c, data.add(pos), out.add(4 * q), carry);
                    pos += usize::from(TABLES.length[c]);
                    q += 1;
                }
            }
            (pos, _mm_cvtsi128_si32(carry) as u32)
        }

        /// [`Run::quads_sse41`] in VEX encoding, with two quads a step in 256-bit vectors.
        ///
        /// # Safety
        /// As [`Run::decode`], for AVX2.
        #[target_feature(enable = "avx2")]
        unsafe fn quads_avx2<const DELTA: bool>(self, carry: u32) -> (usize, u32) {
            // SAFETY: the caller's; AVX2 is enabled here.
            unsafe { self.quads_pairs::<DELTA, false>(carry) }
        }

        /// [`Run::quads_avx2`] with runs of one-byte values widened sixteen at a time in
        /// 512-bit vectors ([`ones_avx512`]).
        ///
        /// # Safety
        /// As [`Run::decode`], for AVX-512F.
        #[target_feature(enable = "avx2,avx512f")]
        unsafe fn quads_avx512<const DELTA: bool>(self, carry: u32) -> (usize, u32) {
            // SAFETY: the caller's; AVX2 and AVX-512F are enabled here.
            unsafe { self.quads_pairs::<DELTA, true>(carry) }
        }

        /// The body of [`Run::quads_avx2`] and [`Run::quads_avx512`], inlined into each so that
        /// it compiles with their features; `WIDE_ONES` takes the AVX-512 path for one-byte
        /// runs.
        ///
        /// # Safety
        /// As [`Run::decode`]; AVX2, and AVX-512F where `WIDE_ONES`, are enabled in the caller.
        #[inline(always)]
        unsafe fn quads_pairs<const DELTA: bool, const WIDE_ONES: bool>(
            self,
            carry: u32,
        ) -> (usize, u32) {
            let Run {
                ctrl,
                data,
                out,
                quads,
            } = self;
            let (mut pos, mut q) = (0, 0);
            // SAFETY: as in `quads_sse41`; a pair's second quad is the next quad. The caller
            // enables AVX2 (and AVX-512F for `WIDE_ONES`), which the intrinsics need.
            unsafe {
                let mut wide = _mm256_set1_epi32(carry as i32);
                let mut carry = _mm256_castsi256_si128(wide);
                while q + 8 <= quads {
                    let keys = ctrl.add(q).cast::<u64>().read_unaligned();
                    if keys == 0 {
                        carry = if WIDE_ONES {
                            ones_avx512::<DELTA>(data.add(pos), out.add(4 * q), carry)
                        } else {
                            ones::<DELTA>(data.add(pos), out.add(4 * q), carry)
                        };
                        wide = _mm256_broadcastd_epi32(carry);
                        pos += 32;
                    } else {
                        for k in (0..8).step_by(2) {
                            let c0 = usize::from((keys >> (8 * k)) as u8);
                            let c1 = usize::from((keys >> (8 * k + 8)) as u8);
                            let at = out.add(4 * (q + k));
                            wide = pair::<DELTA>(c0, c1, data.add(pos), at, wide);
                            pos += usize::from(TABLES.length[c0]) + usize::from(TABLES.length[c1]);
                        }
                        carry = _mm256_castsi256_si128(wide);
                    }
                    q += 8;
                }
                while q < quads {
                    let c = usize::from(*ctrl.add(q));
                    carry = quad::<DELTA>(c, data.add(pos), out.add(4 * q), carry);
                    pos += usize::from(TABLES.length[c]);
                    q += 1;
                }
                (pos, _mm_cvtsi128_si32(carry) as u32)
            }
        }
    }
}

/// Stream VByte of d-gaps for DIDs, Stream VByte for frequencies; SSSE3 decoding (in VEX
/// encoding with AVX2).
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Values whose byte lengths vary by position: runs of one-byte values (whole words of zero
    /// control bytes among them) between runs of mixed lengths.
    fn values(len: usize, seed: u32) -> Vec<u32> {
        (0..len as u32)
            .map(|i| {
                let x = (i ^ seed).wrapping_mul(2_654_435_761);
                match (i / 40 + seed) % 3 {
                    0 => x >> 26,
                    1 => x >> (8 * (x % 4)),
                    _ => x,
                }
            })
            .collect()
    }

    #[test]
    fn every_level_decodes_every_length_with_and_without_bytes_after() {
        for len in 0..=BLOCK_LEN {
            for seed in 0..3 {
                let values = values(len, seed);
                let mut bytes = Vec::new();
                encode(&values, &mut bytes);
                assert_eq!(
                    data_len(&bytes[..len.div_ceil(4)], len),
                    bytes.len() - len.div_ceil(4)
                );
                let mut expected = values.clone();
                prefix_sum_scalar(7, &mut expected);
                let mut padded = bytes.clone();
                padded.extend_from_slice(&[0xFF; 4 * BLOCK_LEN + 16]);
                for isa in Isa::all_supported() {
                    for input in [&bytes, &padded] {
                        let mut out = vec![0; len];
                        assert_eq!(decode(input, None, isa, &mut out), Ok(bytes.len()));
                        assert_eq!(out, values, "{isa:?} {len} {seed}");
                        assert_eq!(decode(input, Some(7), isa, &mut out), Ok(bytes.len()));
                        assert_eq!(out, expected, "{isa:?} {len} {seed} delta");
                    }
                    if !bytes.is_empty() {
                        let mut out = vec![0; len];
                        assert!(matches!(
                            decode(&bytes[..bytes.len() - 1], None, isa, &mut out),
                            Err(CodecError::Truncated { .. })
                        ));
                    }
                }
            }
        }
    }
}
