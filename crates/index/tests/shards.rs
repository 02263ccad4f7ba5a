//! An index split into shards scores every document as one index of all of them does, when
//! each shard scores with the summed collection statistics (`CollectionStats`): the same
//! matches, counts summed, and bit-identical scores.

use std::collections::BTreeMap;

use apcache_index::indexer::{build_index_from_documents, IndexOptions};
use apcache_index::ingest::Document;
use apcache_index::query::{parse_query, DefaultOperator};
use apcache_index::search::{CollectionStats, IndexReader, SearchOptions, Searcher};

const WORDS: [&str; 12] = [
    "river", "city", "film", "music", "war", "church", "album", "born", "state", "new", "york",
    "team",
];

fn documents(count: usize) -> Vec<Document> {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    (0..count)
        .map(|id| {
            let len = 1 + (next() % 50) as usize;
            let body: Vec<&str> = (0..len)
                .map(|_| {
                    let r = next() % 1000;
                    WORDS[((WORDS.len() as u64 * r * r) / 1_000_000) as usize]
                })
                .collect();
            Document {
                id: Some(id.to_string()),
                title: String::new(),
                body: body.join(" "),
                json: None,
            }
        })
        .collect()
}

#[test]
fn shards_scored_with_summed_statistics_equal_one_index() {
    let docs = documents(3000);
    let work = tempfile::tempdir().unwrap();
    let options = IndexOptions::default();
    let whole_dir = work.path().join("whole");
    build_index_from_documents(&docs, &whole_dir, &options, |_, _| {}).unwrap();
    let whole = IndexReader::open(&whole_dir).unwrap();

    // Three shards by a hash of the id; each keeps the global numbers of its documents.
    let shard_of = |id: usize| (id.wrapping_mul(0x9E37_79B9) >> 7) % 3;
    let mut shards = Vec::new();
    for s in 0..3 {
        let (numbers, shard_docs): (Vec<u32>, Vec<Document>) = docs
            .iter()
            .enumerate()
            .filter(|(i, _)| shard_of(*i) == s)
            .map(|(i, d)| (i as u32, d.clone()))
            .unzip();
        let dir = work.path().join(format!("shard{s}"));
        build_index_from_documents(&shard_docs, &dir, &options, |_, _| {}).unwrap();
        shards.push((IndexReader::open(&dir).unwrap(), numbers));
    }

    let analyzer = whole.analyzer();
    let all = SearchOptions {
        k: 10_000,
        count: true,
        pruning: false,
        ..SearchOptions::default()
    };
    for text in [
        "river",
        "city film",
        "+new +york",
        "music OR war -church",
        "\"new york\"",
        "\"state team\"~3 album",
        "(born OR state) AND \"river city\"",
    ] {
        let query = parse_query(text, &analyzer, DefaultOperator::Or).unwrap();
        let want = Searcher::new(&whole).search(&query, &all).unwrap();
        let want: BTreeMap<u32, u32> = want
            .hits
            .iter()
            .map(|h| (h.doc, h.score.to_bits()))
            .collect();

        let mut stats = CollectionStats::default();
        for (reader, _) in &shards {
            stats.add(&CollectionStats::of_query(reader, &query).unwrap());
        }
        assert_eq!(stats.doc_count, whole.doc_count());
        let mut got = BTreeMap::new();
        let mut total = 0;
        for (reader, numbers) in &shards {
            let result = Searcher::with_collection_stats(reader, stats.clone())
                .search(&query, &all)
                .unwrap();
            total += result.total_hits;
            for hit in result.hits {
                got.insert(numbers[hit.doc as usize], hit.score.to_bits());
            }
        }
        assert_eq!(total as usize, want.len(), "{text}: counts");
        assert_eq!(got, want, "{text}: documents and scores");

        // Pruned top 10 per shard, merged: the same scores as the whole index's top 10.
        let top = SearchOptions::default();
        let mut merged: Vec<u32> = shards
            .iter()
            .flat_map(|(reader, _)| {
                Searcher::with_collection_stats(reader, stats.clone())
                    .search(&query, &top)
                    .unwrap()
                    .hits
                    .into_iter()
                    .map(|h| h.score.to_bits())
            })
            .collect();
        merged.sort_by(|a, b| f32::from_bits(*b).total_cmp(&f32::from_bits(*a)));
        merged.truncate(10);
        let whole_top: Vec<u32> = Searcher::new(&whole)
            .search(&query, &top)
            .unwrap()
            .hits
            .iter()
            .map(|h| h.score.to_bits())
            .collect();
        assert_eq!(merged, whole_top, "{text}: top 10 scores");
    }
}
