//! Arbitrary bytes as an input file of each format and compression: the document reader
//! returns documents, counts bad lines, or fails with a typed error; it never panics, and a
//! line it accepts is a document with a body.
#![no_main]

use apcache_index::ingest::{BadLinePolicy, DocumentReader, Input, InputFormat, ReaderOptions};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

/// File names by extension: the reader picks the decompressor from it.
const NAMES: [&str; 5] = ["in.tsv", "in.jsonl", "in.gz", "in.xz", "in.zst"];

fn scratch() -> &'static tempfile::TempDir {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| tempfile::tempdir().expect("a temporary directory"))
}

fuzz_target!(|data: &[u8]| {
    let Some((&selector, content)) = data.split_first() else { return };
    let path = scratch().path().join(NAMES[usize::from(selector) % NAMES.len()]);
    std::fs::write(&path, content).expect("writing the input");
    let format = InputFormat::ALL[usize::from(selector >> 3) % InputFormat::ALL.len()];
    let bad_lines = if selector & 0x80 == 0 { BadLinePolicy::Skip } else { BadLinePolicy::Reject };
    let options = ReaderOptions {
        format,
        bad_lines,
        max_line_bytes: 4096,
        ..ReaderOptions::default()
    };
    let mut reader = DocumentReader::new([Input::from_arg(&path)], options).expect("the file exists");
    let mut batch = Vec::new();
    loop {
        match reader.next_batch(64, &mut batch) {
            Ok(0) | Err(_) => break,
            Ok(_) => batch.clear(),
        }
    }
    let report = reader.report();
    assert!(report.bad_lines.len() <= options.max_bad_line_examples);
    assert!(report.bad_lines.len() as u64 <= report.bad_line_count);
});
