//! What the tests of JSON documents share: an index built from documents' JSON lines.

use apcache_index::indexer::{build_index, IndexOptions};
use apcache_index::ingest::Input;
use apcache_index::schema::Mapping;
use apcache_index::search::IndexReader;
use serde_json::Value;

/// Writes `documents` as JSON lines in `dir` and builds an index of them under `mapping` in
/// `dir/index`: merged into one segment, or left as the segments of two threads with
/// interleaved runs of documents (three documents a batch).
pub fn build_json_index(
    documents: &[Value],
    mapping: Mapping,
    dir: &std::path::Path,
    merge: bool,
) -> IndexReader {
    std::fs::create_dir_all(dir).unwrap();
    let input = dir.join("docs.jsonl");
    let lines: Vec<String> = documents.iter().map(Value::to_string).collect();
    std::fs::write(&input, lines.join("\n") + "\n").unwrap();
    let index = dir.join("index");
    let options = IndexOptions {
        mapping: Some(mapping),
        merge,
        batch_docs: 3,
        threads: 2,
        ..IndexOptions::default()
    };
    build_index(vec![Input::Path(input)], &index, &options, |_, _| {}).unwrap();
    IndexReader::open(&index).unwrap()
}
