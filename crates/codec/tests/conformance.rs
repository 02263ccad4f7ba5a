//! One conformance suite for every registered codec, at every instruction-set level this CPU
//! supports: round trips at the awkward lengths and values, identical bytes and decodes across
//! levels, and typed errors (never panics) for truncated or random input.

use apcache_codec::{codec_with_isa, BlockCodec, Isa, BLOCK_LEN, CODEC_NAMES};
use proptest::prelude::*;

const LENGTHS: &[usize] = &[0, 1, 2, 3, 4, 5, 7, 8, 9, 31, 127, 128, 129, 200, 255, 256];

fn all_codecs() -> Vec<(Isa, Box<dyn BlockCodec>)> {
    let mut codecs = Vec::new();
    for isa in Isa::all_supported() {
        for name in CODEC_NAMES {
            codecs.push((isa, codec_with_isa(name, isa).expect("registered")));
        }
    }
    codecs
}

/// Encodes docs and freqs, checks the round trip and that every level yields the same bytes.
fn check_round_trip(base: u32, docs: &[u32], freqs: &[u32]) {
    for name in CODEC_NAMES {
        let mut reference: Option<(Vec<u8>, Vec<u8>)> = None;
        for isa in Isa::all_supported() {
            let codec = codec_with_isa(name, isa).unwrap();
            let (mut doc_bytes, mut freq_bytes) = (Vec::new(), Vec::new());
            codec.encode_docs(base, docs, &mut doc_bytes).unwrap();
            codec.encode_freqs(freqs, &mut freq_bytes).unwrap();
            // Trailing bytes after the block must not be read.
            let mut padded = doc_bytes.clone();
            padded.extend_from_slice(&[0xAB; 40]);
            let mut out = vec![0u32; docs.len()];
            let used = codec.decode_docs(base, &padded, &mut out).unwrap();
            assert_eq!(used, doc_bytes.len(), "{name} {isa:?}: docs bytes consumed");
            assert_eq!(out, docs, "{name} {isa:?}: docs round trip");
            // A block stored as a bitset names the same documents.
            if let Some(bits) = codec.dense_docs(&padded, docs.len()).unwrap() {
                let from_bits: Vec<u32> = bits
                    .chunks_exact(8)
                    .enumerate()
                    .flat_map(|(w, word)| {
                        let word = u64::from_le_bytes(word.try_into().unwrap());
                        (0..64u32)
                            .filter(move |k| word >> k & 1 == 1)
                            .map(move |k| base + 64 * w as u32 + k)
                    })
                    .collect();
                assert_eq!(from_bits, docs, "{name} {isa:?}: dense bits");
            }
            // Alone (no byte to read past it) and followed by others (room for wide reads).
            let mut padded = freq_bytes.clone();
            padded.extend_from_slice(&[0xAB; 40]);
            for input in [&freq_bytes, &padded] {
                let mut out = vec![0u32; freqs.len()];
                let used = codec.decode_freqs(input, &mut out).unwrap();
                assert_eq!(
                    used,
                    freq_bytes.len(),
                    "{name} {isa:?}: freqs bytes consumed"
                );
                assert_eq!(out, freqs, "{name} {isa:?}: freqs round trip");
            }
            // Every position, last first, and one twice: selection reads any order.
            let twice = (!freqs.is_empty()).then_some(0);
            let positions: Vec<u16> = (0..freqs.len() as u16).rev().chain(twice).collect();
            let mut selected = vec![0u32; positions.len()];
            codec
                .select_freqs(&freq_bytes, freqs.len(), &positions, &mut selected)
                .unwrap_or_else(|e| panic!("{name} {isa:?}: select on its own block: {e}"));
            for (&position, &value) in positions.iter().zip(&selected) {
                assert_eq!(
                    Some(&value),
                    freqs.get(usize::from(position)),
                    "{name} {isa:?}: selected frequency {position}"
                );
            }
            let past = [freqs.len() as u16];
            assert!(
                codec
                    .select_freqs(&freq_bytes, freqs.len(), &past, &mut [0])
                    .is_err(),
                "{name} {isa:?}: a position past the block is an error"
            );
            match &reference {
                None => reference = Some((doc_bytes, freq_bytes)),
                Some((d, f)) => {
                    assert_eq!(
                        &doc_bytes, d,
                        "{name} {isa:?}: docs bytes differ across levels"
                    );
                    assert_eq!(
                        &freq_bytes, f,
                        "{name} {isa:?}: freq bytes differ across levels"
                    );
                }
            }
        }
    }
}

fn sorted_from_gaps(base: u32, gaps: &[u32]) -> Vec<u32> {
    let mut acc = base;
    gaps.iter()
        .map(|&g| {
            acc = acc.saturating_add(g);
            acc
        })
        .collect()
}

#[test]
fn awkward_lengths_and_values() {
    for &len in LENGTHS {
        let patterns: Vec<(u32, Vec<u32>, Vec<u32>)> = vec![
            (0, vec![0; len], vec![0; len]),
            (5, (0..len as u32).map(|i| 5 + i).collect(), vec![1; len]),
            (
                0,
                (0..len as u32).map(|i| i * 1000).collect(),
                (0..len as u32).collect(),
            ),
            (u32::MAX, vec![u32::MAX; len], vec![u32::MAX; len]),
            (
                0,
                (0..len)
                    .map(|i| if i % 17 == 3 { u32::MAX } else { i as u32 })
                    .collect(),
                (0..len as u32).map(|i| i % 3).collect(),
            ),
            (
                7,
                sorted_from_gaps(
                    7,
                    &(0..len as u32)
                        .map(|i| if i % 50 == 0 { 1 << 24 } else { 1 })
                        .collect::<Vec<_>>(),
                ),
                (0..len as u32)
                    .map(|i| if i == 9 { 1 << 30 } else { 2 })
                    .collect(),
            ),
            (
                0,
                (0..len as u32).rev().collect(),
                (0..len as u32).rev().collect(),
            ),
        ];
        for (base, docs, freqs) in patterns {
            check_round_trip(base, &docs, &freqs);
        }
    }
}

#[test]
fn every_bit_width_round_trips_in_full_and_tail_blocks() {
    for bits in 0..=32u32 {
        for len in [BLOCK_LEN, BLOCK_LEN - 1, 100] {
            let max = if bits == 32 {
                u32::MAX
            } else {
                (1u32 << bits).wrapping_sub(1)
            };
            let gaps: Vec<u32> = (0..len as u32)
                .map(|i| if i % 7 == 0 { max } else { max / 3 })
                .collect();
            let mut acc = 0u32;
            let docs: Vec<u32> = gaps
                .iter()
                .map(|g| {
                    acc = acc.wrapping_add(*g);
                    acc
                })
                .collect();
            check_round_trip(0, &docs, &gaps);
        }
    }
}

#[test]
fn oversized_blocks_are_refused() {
    for (isa, codec) in all_codecs() {
        let mut out = Vec::new();
        assert!(
            codec.encode_docs(0, &[1; BLOCK_LEN + 1], &mut out).is_err(),
            "{} {isa:?}",
            codec.name()
        );
        let mut dst = vec![0; BLOCK_LEN + 1];
        assert!(
            codec.decode_freqs(&[0; 4096], &mut dst).is_err(),
            "{} {isa:?}",
            codec.name()
        );
    }
}

#[test]
fn every_truncation_is_an_error() {
    let docs: Vec<u32> = sorted_from_gaps(
        3,
        &(0..256u32)
            .map(|i| (i * 7919) % 5000 + if i == 40 { 1 << 20 } else { 0 })
            .collect::<Vec<_>>(),
    );
    let freqs: Vec<u32> = (0..256u32)
        .map(|i| if i % 9 == 0 { 700 } else { i % 4 })
        .collect();
    for (isa, codec) in all_codecs() {
        for (values, is_docs) in [(&docs, true), (&freqs, false)] {
            let mut bytes = Vec::new();
            if is_docs {
                codec.encode_docs(3, values, &mut bytes).unwrap();
            } else {
                codec.encode_freqs(values, &mut bytes).unwrap();
            }
            for cut in 0..bytes.len() {
                let mut out = vec![0u32; values.len()];
                let result = if is_docs {
                    codec.decode_docs(3, &bytes[..cut], &mut out)
                } else {
                    codec.decode_freqs(&bytes[..cut], &mut out)
                };
                assert!(
                    result.is_err(),
                    "{} {isa:?}: truncated to {cut} of {} decoded",
                    codec.name(),
                    bytes.len()
                );
            }
        }
    }
}

fn sorted_block() -> impl Strategy<Value = (u32, Vec<u32>)> {
    (
        any::<u32>(),
        prop_oneof![
            prop::collection::vec(0u32..4, 0..=BLOCK_LEN),
            // Strictly increasing and dense: the bitset form.
            prop::collection::vec(1u32..5, 0..=BLOCK_LEN),
            prop::collection::vec(0u32..300, 0..=BLOCK_LEN),
            prop::collection::vec(prop_oneof![9 => 0u32..64, 1 => any::<u32>()], 0..=BLOCK_LEN),
            prop::collection::vec(0u32..(1 << 20), 0..=BLOCK_LEN),
        ],
    )
        .prop_map(|(base, gaps)| {
            let base = base % (1 << 31);
            (base, sorted_from_gaps(base, &gaps))
        })
}

/// A full block of gaps (and one of frequencies) where a share of the values carry up to
/// `high_bits` bits above `low_bits`: few outliers make PFor choose VByte exceptions, many
/// the bitmap form, and the high widths cover 1-, 2- and 4-byte aligned high parts.
fn full_block_with_exceptions() -> impl Strategy<Value = (u32, Vec<u32>, Vec<u32>)> {
    // Per value: its low bits, whether it is an outlier (below `percent` of 100), its high bits.
    let draws = prop::collection::vec((any::<u32>(), 0u32..100, any::<u32>()), 2 * BLOCK_LEN);
    (0u32..12, 1u32..=20, 1u32..=100, 0u32..(1 << 30), draws).prop_map(
        |(low_bits, high_bits, percent, base, draws)| {
            let values: Vec<u32> = draws
                .iter()
                .map(|&(low, roll, high)| {
                    let low = low & ((1 << low_bits) - 1);
                    if roll < percent {
                        low | (high % (1 << high_bits)).max(1) << low_bits
                    } else {
                        low
                    }
                })
                .collect();
            let (gaps, freqs) = values.split_at(BLOCK_LEN);
            (base, sorted_from_gaps(base, gaps), freqs.to_vec())
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn full_blocks_with_exceptions_round_trip((base, docs, freqs) in full_block_with_exceptions()) {
        check_round_trip(base, &docs, &freqs);
    }

    #[test]
    fn sorted_blocks_round_trip((base, docs) in sorted_block(), freqs in prop::collection::vec(prop_oneof![8 => 0u32..8, 1 => any::<u32>()], 0..=BLOCK_LEN)) {
        check_round_trip(base, &docs, &freqs);
    }

    #[test]
    fn unsorted_blocks_round_trip(base in any::<u32>(), values in prop::collection::vec(any::<u32>(), 0..=BLOCK_LEN)) {
        check_round_trip(base, &values, &values);
    }

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..1200), len in 0usize..=BLOCK_LEN, base in any::<u32>()) {
        for (_, codec) in all_codecs() {
            let mut out = vec![0u32; len];
            if let Ok(used) = codec.decode_docs(base, &bytes, &mut out) {
                prop_assert!(used <= bytes.len());
            }
            if let Ok(used) = codec.decode_freqs(&bytes, &mut out) {
                prop_assert!(used <= bytes.len());
            }
        }
    }

    #[test]
    fn selection_reads_random_bytes_as_decoding_does(bytes in prop::collection::vec(any::<u8>(), 0..1200), len in prop_oneof![Just(BLOCK_LEN), 0usize..=BLOCK_LEN], positions in prop::collection::vec(any::<u16>(), 1..20)) {
        for (isa, codec) in all_codecs() {
            let positions: Vec<u16> = positions.iter().map(|&p| p % (len as u16 + 1)).collect();
            let mut decoded = vec![0u32; len];
            let decodes = codec.decode_freqs(&bytes, &mut decoded).is_ok();
            let mut selected = vec![0u32; positions.len()];
            let selects = codec.select_freqs(&bytes, len, &positions, &mut selected);
            let in_block = positions.iter().all(|&p| usize::from(p) < len);
            if decodes && in_block {
                prop_assert!(selects.is_ok(), "{} {:?}: {:?}", codec.name(), isa, selects);
                for (&p, &value) in positions.iter().zip(&selected) {
                    prop_assert_eq!(value, decoded[usize::from(p)], "{} {:?} at {}", codec.name(), isa, p);
                }
            }
            if !in_block {
                prop_assert!(selects.is_err());
            }
        }
    }

    #[test]
    fn scalar_and_simd_decode_random_bytes_alike(bytes in prop::collection::vec(any::<u8>(), 0..1200), len in prop_oneof![Just(BLOCK_LEN), 0usize..=BLOCK_LEN], base in any::<u32>()) {
        for name in CODEC_NAMES {
            let scalar = codec_with_isa(name, Isa::Scalar).unwrap();
            for isa in Isa::all_supported() {
                let codec = codec_with_isa(name, isa).unwrap();
                let (mut a, mut b) = (vec![0u32; len], vec![0u32; len]);
                let ra = scalar.decode_docs(base, &bytes, &mut a);
                let rb = codec.decode_docs(base, &bytes, &mut b);
                prop_assert_eq!(ra.is_ok(), rb.is_ok(), "{} {:?}", name, isa);
                if ra.is_ok() {
                    prop_assert_eq!(ra, rb);
                    prop_assert_eq!(&a, &b);
                }
                let ra = scalar.decode_freqs(&bytes, &mut a);
                let rb = codec.decode_freqs(&bytes, &mut b);
                prop_assert_eq!(ra.is_ok(), rb.is_ok(), "{} {:?} frequencies", name, isa);
                if ra.is_ok() {
                    prop_assert_eq!(ra, rb);
                    prop_assert_eq!(&a, &b);
                }
            }
        }
    }
}

#[test]
fn dense_blocks_take_the_bitset_form_in_the_smallest_form_codecs() {
    let every_other: Vec<u32> = (0..BLOCK_LEN as u32).map(|i| 1000 + 2 * i).collect();
    for name in CODEC_NAMES {
        let codec = codec_with_isa(name, Isa::detect()).unwrap();
        let mut bytes = Vec::new();
        codec.encode_docs(1000, &every_other, &mut bytes).unwrap();
        let dense = codec.dense_docs(&bytes, BLOCK_LEN).unwrap();
        let expected = matches!(*name, "pfor-delta" | "pfor-delta-simd");
        assert_eq!(dense.is_some(), expected, "{name}");
        if expected {
            // Header, word count, eight words of 64 documents.
            assert_eq!(bytes.len(), 2 + 8 * 8, "{name}");
        }
    }
}
