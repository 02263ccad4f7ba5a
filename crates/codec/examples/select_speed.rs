//! Times reading a few frequencies of a block (`BlockCodec::select_freqs`) against decoding
//! the whole block, for blocks of `pfor-delta-simd` frequencies with no, few and many
//! exceptions: `cargo run --release -p apcache-codec --example select_speed`. Prints
//! nanoseconds per block; the break-even sets `SELECT_MAX` in the index's term cursor.

use std::time::Instant;

use apcache_codec::{codec_by_name, BLOCK_LEN};

/// A well-mixed 64-bit value of `i` (a multiplicative hash), for repeatable blocks.
fn mix(i: u64) -> u64 {
    let x = i.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x ^ (x >> 29)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let codec = codec_by_name("pfor-delta-simd")?;
    let blocks_per_kind = 1000;
    let reps = 200;
    for (kind, outliers_per_mille) in [("no exceptions", 0u64), ("few", 3), ("many", 40)] {
        let mut blocks = Vec::new();
        for b in 0..blocks_per_kind {
            let freqs: Vec<u32> = (0..BLOCK_LEN as u64)
                .map(|i| {
                    let r = mix(b * BLOCK_LEN as u64 + i);
                    if r % 1000 < outliers_per_mille {
                        (r >> 20) as u32 % 200
                    } else {
                        (r >> 10) as u32 % 3
                    }
                })
                .collect();
            let mut bytes = Vec::new();
            codec.encode_freqs(&freqs, &mut bytes)?;
            blocks.push(bytes);
        }
        let mut out = [0u32; BLOCK_LEN];
        let mut sink = 0u64;
        let start = Instant::now();
        for _ in 0..reps {
            for block in &blocks {
                codec.decode_freqs(block, &mut out)?;
                sink += u64::from(out[7]);
            }
        }
        let per_block =
            |took: std::time::Duration| took.as_nanos() as f64 / (reps * blocks.len()) as f64;
        print!("{kind:>14}: decode {:5.1} ns", per_block(start.elapsed()));
        for m in [1usize, 2, 4, 8, 16, 32] {
            let positions: Vec<u16> = (0..m).map(|i| (i * 251 / m + 3) as u16).collect();
            let start = Instant::now();
            for _ in 0..reps {
                for block in &blocks {
                    codec.select_freqs(block, BLOCK_LEN, &positions, &mut out)?;
                    sink += u64::from(out[0]);
                }
            }
            print!(" | select {m} {:5.1}", per_block(start.elapsed()));
        }
        println!("  (checksum {sink})");
    }
    Ok(())
}
