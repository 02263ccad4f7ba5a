//! Times reading stored documents, as a result page does for its hits:
//! `cargo run --release -p apcache-index --example store_read -- INDEX [READS]`. Reads
//! documents at random (a fixed seed) with the index in the page cache, and prints the mean
//! and p99 per document.

use std::time::Instant;

use apcache_index::search::IndexReader;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let Some(index) = args.get(1) else {
        return Err("usage: store_read INDEX [READS]".into());
    };
    let reads: usize = args.get(2).map_or(Ok(20_000), |r| r.parse())?;
    let index = std::path::Path::new(index);
    for entry in std::fs::read_dir(index)? {
        let path = entry?.path();
        if path.is_file() {
            std::hint::black_box(std::fs::read(&path)?);
        }
    }
    let reader = IndexReader::open(index)?;
    let documents = reader.max_doc() as u32;
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut micros = Vec::with_capacity(reads);
    let mut bytes = 0usize;
    for _ in 0..reads {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let doc = (state % u64::from(documents)) as u32;
        let start = Instant::now();
        let (segment, local) = reader.locate(doc).ok_or("no such document")?;
        let stored = segment.stored(local)?;
        micros.push(start.elapsed().as_secs_f64() * 1e6);
        bytes += stored.title.len() + stored.body.len();
    }
    micros.sort_by(f64::total_cmp);
    let mean = micros.iter().sum::<f64>() / micros.len() as f64;
    println!(
        "{reads} documents read ({:.1} KB on average): mean {mean:.1} us, p50 {:.1}, p99 {:.1}",
        bytes as f64 / reads as f64 / 1e3,
        micros[micros.len() / 2],
        micros[micros.len() * 99 / 100]
    );
    Ok(())
}
