//! Feeds arbitrary bytes to every codec's decoders, at every instruction-set level: decoding
//! must return a value or a typed error, never panic or read out of bounds, and the SIMD and
//! scalar paths must agree; selecting single frequencies must read what decoding them reads,
//! and a block offered as a bitset must name the DIDs decoding gives.
#![no_main]

use apcache_codec::{codec_with_isa, Isa, BLOCK_LEN, CODEC_NAMES};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else { return };
    let Some((base_bytes, input)) = rest.split_first_chunk::<4>() else { return };
    let base = u32::from_le_bytes(*base_bytes);
    let len = if selector & 1 == 1 { BLOCK_LEN } else { usize::from(selector >> 1) % (BLOCK_LEN + 1) };
    for name in CODEC_NAMES {
        let scalar = codec_with_isa(name, Isa::Scalar).expect("registered");
        let mut expected = vec![0u32; len];
        let expected_docs = scalar.decode_docs(base, input, &mut expected);
        for isa in Isa::all_supported() {
            let codec = codec_with_isa(name, isa).expect("registered");
            let mut out = vec![0u32; len];
            let got = codec.decode_docs(base, input, &mut out);
            assert_eq!(got.is_ok(), expected_docs.is_ok(), "{name} {isa:?}");
            if let Ok(used) = got {
                assert!(used <= input.len());
                assert_eq!(Ok(used), expected_docs.clone());
                assert_eq!(out, expected, "{name} {isa:?}");
            }
            // A block offered as a bitset decodes, to the DIDs of its bits.
            if let Ok(Some(words)) = codec.dense_docs(input, len) {
                assert!(got.is_ok(), "{name} {isa:?}: dense but undecodable");
                let from_bits: Vec<u32> = words
                    .chunks_exact(8)
                    .enumerate()
                    .flat_map(|(w, word)| {
                        let word = u64::from_le_bytes(word.try_into().expect("8 bytes"));
                        (0..64u32)
                            .filter(move |k| word >> k & 1 == 1)
                            .map(move |k| base.wrapping_add(64 * w as u32 + k))
                    })
                    .collect();
                assert_eq!(from_bits, out, "{name} {isa:?}: dense bits");
            }
            // Selecting frequencies gives what decoding them gives, wherever decoding succeeds.
            let decoded = codec.decode_freqs(input, &mut out).is_ok();
            let positions: Vec<u16> = (0..len as u16).rev().step_by(3).collect();
            let mut selected = vec![0u32; positions.len()];
            let select = codec.select_freqs(input, len, &positions, &mut selected);
            if decoded {
                assert!(select.is_ok(), "{name} {isa:?}: {select:?}");
                for (&p, &value) in positions.iter().zip(&selected) {
                    assert_eq!(value, out[usize::from(p)], "{name} {isa:?} at {p}");
                }
            }
        }
    }
});
