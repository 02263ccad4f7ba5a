//! Horizontal bit-packing: values laid one after another in a little-endian bit stream.

use super::low_mask;
use crate::error::take;
use crate::{CodecError, Isa};

/// Bytes that `n` values of `bits` bits occupy.
#[inline]
pub(crate) fn packed_len(n: usize, bits: u32) -> usize {
    (n * bits as usize).div_ceil(8)
}

/// Appends `values`, each truncated to its low `bits` bits (`bits` in 0..=32).
pub(crate) fn pack(values: &[u32], bits: u32, out: &mut Vec<u8>) {
    debug_assert!(bits <= 32);
    if bits == 0 {
        return;
    }
    let mask = u64::from(low_mask(bits));
    let mut acc = 0u64;
    // Below 32 before each value, so a value of up to 32 bits always fits the accumulator;
    // whole 32-bit words leave it four bytes at a time.
    let mut filled = 0u32;
    out.reserve(packed_len(values.len(), bits));
    for &v in values {
        acc |= (u64::from(v) & mask) << filled;
        filled += bits;
        if filled >= 32 {
            out.extend_from_slice(&(acc as u32).to_le_bytes());
            acc >>= 32;
            filled -= 32;
        }
    }
    let rest = filled.div_ceil(8) as usize;
    out.extend_from_slice(&acc.to_le_bytes()[..rest]);
}

/// Reads 8 bytes at `at` as a little-endian u64, zero-filling past the end of `input`.
#[inline]
pub(crate) fn read_u64_padded(input: &[u8], at: usize) -> u64 {
    match input.get(at..at + 8) {
        Some(bytes) => u64::from_le_bytes(bytes.try_into().expect("8 bytes")),
        None => {
            let mut buf = [0u8; 8];
            let rest = input.get(at..).unwrap_or(&[]);
            buf[..rest.len()].copy_from_slice(rest);
            u64::from_le_bytes(buf)
        }
    }
}

/// Fills `out` with values of `bits` bits from the start of `input`; returns the bytes read.
/// With `isa` at [`Isa::Avx512`], sixteen values a step with VBMI byte permutations
/// The shortest run of values worth the VBMI unpacker's setup (its tables and masks): the
/// short blocks at the end of every posting list and of rare terms' lists stay with the
/// width-specialised scalar loop.
const VBMI_MIN_VALUES: usize = 64;

/// ([`super::vbmi`]); else with portable code.
pub(crate) fn unpack(
    input: &[u8],
    bits: u32,
    out: &mut [u32],
    isa: Isa,
) -> Result<usize, CodecError> {
    if bits > 32 {
        return Err(CodecError::Corrupt("bit width above 32"));
    }
    let len = packed_len(out.len(), bits);
    take(input, len)?;
    if bits == 0 {
        out.fill(0);
        return Ok(0);
    }
    #[cfg(target_arch = "x86_64")]
    if isa >= Isa::Avx512 && out.len() >= VBMI_MIN_VALUES {
        // SAFETY: an Isa at Avx512 is only obtained after detecting its features; `bits` is in
        // 1..=32 and `input` holds the `len` packed bytes (checked above).
        unsafe { super::vbmi::unpack(input, bits, out) };
        return Ok(len);
    }
    let _ = isa;
    // Eight values of `bits` bits fill `bits` bytes exactly: whole groups whose bytes and an
    // 8-byte read past them lie in `input` go through a loop specialised per width, whose
    // shifts and offsets are constants; the rest value by value.
    let groups = (input.len().saturating_sub(8) / bits as usize).min(out.len() / 8);
    let done = groups * 8;
    unpack_groups(input, bits, &mut out[..done]);
    let mask = u64::from(low_mask(bits));
    let bit = done * bits as usize;
    // The values left (short runs, such as a block's few exception high parts, which end
    // their input) read their bytes from a zero-padded copy, made once: read in place, each
    // value near the input's end would copy its own 8 bytes.
    let tail = &input[bit / 8..len];
    let mut padded = [0u8; TAIL_PAD];
    if tail.len() + 8 <= TAIL_PAD {
        padded[..tail.len()].copy_from_slice(tail);
        unpack_tail(&padded, bit % 8, bits, mask, &mut out[done..]);
    } else {
        // Reading on into the bytes after the packed ones (masked off) spares the padded copy.
        unpack_tail(input, bit, bits, mask, &mut out[done..]);
    }
    Ok(len)
}

/// Bytes of the padded copy the last values of [`unpack`] are read from: the packed bytes of
/// 64 values of 32 bits, and 8 bytes a read may run past them.
const TAIL_PAD: usize = 264;

/// Fills `out` with the values of `bits` bits (masked by `mask`) that start at bit `bit` of
/// `input`, each read as 8 bytes (zero past the end of `input`).
#[inline]
fn unpack_tail(input: &[u8], mut bit: usize, bits: u32, mask: u64, out: &mut [u32]) {
    for v in out {
        *v = ((read_u64_padded(input, bit / 8) >> (bit % 8)) & mask) as u32;
        bit += bits as usize;
    }
}

/// Unpacks `out.len() / 8` groups of eight `bits`-bit values (`bits` in 1..=32); `input`
/// holds 8 bytes past the last group.
fn unpack_groups(input: &[u8], bits: u32, out: &mut [u32]) {
    macro_rules! widths {
        ($($b:literal)*) => {
            match bits {
                $($b => unpack_groups_of::<$b>(input, out),)*
                _ => unreachable!("bit widths are 1..=32"),
            }
        };
    }
    widths!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32)
}

#[inline(always)]
fn unpack_groups_of<const B: usize>(input: &[u8], out: &mut [u32]) {
    let mask = u64::from(low_mask(B as u32));
    for (group, values) in out.chunks_exact_mut(8).enumerate() {
        let base = group * B;
        let window = &input[base..base + B + 8];
        for (i, v) in values.iter_mut().enumerate() {
            let bit = i * B;
            let at = bit / 8;
            let word = u64::from_le_bytes(window[at..at + 8].try_into().expect("8 bytes"));
            *v = ((word >> (bit % 8)) & mask) as u32;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use proptest::prelude::*;

    #[test]
    fn round_trips_every_width_at_every_level() {
        for bits in 0..=32u32 {
            for n in [0usize, 1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 100, 255, 256] {
                let values: Vec<u32> = (0..n as u32)
                    .map(|i| i.wrapping_mul(0x9E37_79B9) & low_mask(bits))
                    .collect();
                let mut packed = Vec::new();
                pack(&values, bits, &mut packed);
                assert_eq!(packed.len(), packed_len(n, bits));
                for isa in Isa::all_supported() {
                    // The packed bytes alone, so that a read past them would fault or differ.
                    let exact = packed.clone().into_boxed_slice();
                    let mut back = vec![0u32; n];
                    assert_eq!(unpack(&exact, bits, &mut back, isa).unwrap(), packed.len());
                    assert_eq!(back, values, "bits {bits} n {n} {isa:?}");
                }
            }
        }
    }

    #[test]
    fn writes_only_the_values_asked_for() {
        for isa in Isa::all_supported() {
            for bits in 1..=32u32 {
                for n in [1usize, 5, 16, 19] {
                    let packed = vec![0xFFu8; 64 * 4];
                    let mut out = vec![7u32; n + 20];
                    unpack(&packed, bits, &mut out[..n], isa).unwrap();
                    assert!(
                        out[n..].iter().all(|&v| v == 7),
                        "{isa:?} bits {bits} n {n}"
                    );
                    assert!(out[..n].iter().all(|&v| v == low_mask(bits)));
                }
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// Any bytes, any width, any count, any slack after them: every level decodes what the
        /// scalar path decodes (or fails alike), whatever follows the packed bytes.
        #[test]
        fn every_level_reads_any_bytes_as_scalar_does(
            bytes in prop::collection::vec(any::<u8>(), 0..1100),
            bits in 0u32..=33,
            n in 0usize..=300,
        ) {
            let mut expected = vec![0u32; n];
            let scalar = unpack(&bytes, bits, &mut expected, Isa::Scalar);
            for isa in Isa::all_supported() {
                let mut got = vec![u32::MAX; n];
                let result = unpack(&bytes, bits, &mut got, isa);
                prop_assert_eq!(&result, &scalar, "{:?}", isa);
                if result.is_ok() {
                    prop_assert_eq!(&got, &expected, "{:?} bits {} n {}", isa, bits, n);
                }
            }
        }

        /// Packed values round-trip at every level, the buffer ending right after them.
        #[test]
        fn every_level_round_trips(
            values in prop::collection::vec(any::<u32>(), 0..=300),
            bits in 0u32..=32,
        ) {
            let values: Vec<u32> = values.iter().map(|v| v & low_mask(bits)).collect();
            let mut packed = Vec::new();
            pack(&values, bits, &mut packed);
            for isa in Isa::all_supported() {
                let mut back = vec![0u32; values.len()];
                prop_assert_eq!(unpack(&packed, bits, &mut back, isa), Ok(packed.len()));
                prop_assert_eq!(&back, &values, "{:?} bits {}", isa, bits);
            }
        }
    }
}
