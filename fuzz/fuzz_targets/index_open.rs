//! Mutated index files: one file of the fixture index (the manifest, the dictionary, term
//! metadata, skip data, postings, norms, document map or store) gets bytes flipped, cut or
//! appended; then the index is opened, queried and checked. Nothing may panic or hang; a query
//! either fails or returns exactly what it returns on the sound index (never a wrong answer);
//! and `check` finds every mutation. The file is restored after each input.
#![no_main]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use apcache_index::analyzer::Analyzer;
use apcache_index::check::check_index;
use apcache_index::query::{parse_query, DefaultOperator, Query};
use apcache_index::search::{IndexReader, SearchOptions, Searcher};
use libfuzzer_sys::fuzz_target;

/// One file of the sound index, with its bytes.
struct Original {
    path: PathBuf,
    bytes: Vec<u8>,
}

struct Sound {
    files: Vec<Original>,
    /// The fixture's queries, parsed once.
    queries: Vec<Query>,
    /// Each query's total and hits on the sound index, printed.
    answers: Vec<String>,
}

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).expect("readable").flatten().collect();
    entries.sort_by_key(|entry| entry.path());
    for entry in entries {
        let path = entry.path();
        if path.is_dir() {
            files_under(&path, out);
        } else if path.file_name().is_some_and(|n| n != "LOCK" && n != "write.lock") {
            out.push(path);
        }
    }
}

fn answers(dir: &Path, queries: &[Query]) -> Result<Vec<String>, String> {
    let reader = IndexReader::open(dir).map_err(|e| e.to_string())?;
    let searcher = Searcher::new(&reader);
    let mut out = Vec::new();
    for query in queries {
        for options in [
            SearchOptions { k: 10, count: true, ..SearchOptions::default() },
            SearchOptions::default(),
        ] {
            out.push(match searcher.search(query, &options) {
                Ok(result) => format!("{} {:?}", result.total_hits, result.hits),
                Err(e) => format!("error: {e}"),
            });
        }
    }
    Ok(out)
}

fn sound() -> &'static Sound {
    static SOUND: OnceLock<Sound> = OnceLock::new();
    SOUND.get_or_init(|| {
        let dir = apcache_fuzz::fixture().index();
        let mut paths = Vec::new();
        files_under(&dir, &mut paths);
        let files = paths
            .into_iter()
            .map(|path| Original { bytes: std::fs::read(&path).expect("readable"), path })
            .collect();
        let analyzer = Analyzer::english();
        let queries = apcache_fuzz::QUERIES
            .iter()
            .map(|text| parse_query(text, &analyzer, DefaultOperator::Or).expect("a valid query"))
            .collect::<Vec<_>>();
        let answers = answers(&dir, &queries).expect("the sound index opens");
        assert!(answers.iter().all(|a| !a.starts_with("error")), "{answers:?}");
        Sound { files, queries, answers }
    })
}

fuzz_target!(|data: &[u8]| {
    let sound = sound();
    let Some((&selector, edits)) = data.split_first() else { return };
    let file = &sound.files[usize::from(selector) % sound.files.len()];
    let mut bytes = file.bytes.clone();
    // Each edit is 4 bytes: a position (3 bytes, wrapped to the file) and an XOR mask; a zero
    // mask cuts the file there, a mask on a position past the end appends.
    for edit in edits.chunks_exact(4).take(8) {
        let position = usize::from(edit[0]) | usize::from(edit[1]) << 8 | usize::from(edit[2]) << 16;
        let mask = edit[3];
        if bytes.is_empty() {
            break;
        }
        match (mask, position % (bytes.len() + 1)) {
            (0, at) => bytes.truncate(at),
            (_, at) if at == bytes.len() => bytes.push(mask),
            (_, at) => bytes[at] ^= mask,
        }
    }
    if bytes == file.bytes {
        return;
    }
    std::fs::write(&file.path, &bytes).expect("writable");
    let dir = apcache_fuzz::fixture().index();
    let report = check_index(&dir);
    let got = answers(&dir, &sound.queries);
    std::fs::write(&file.path, &file.bytes).expect("restoring");

    let name = file.path.display();
    match &report {
        Ok(report) => assert!(!report.is_clean(), "check misses a change to {name}"),
        Err(_) => {} // an error is a finding too: the manifest is unreadable
    }
    if let Ok(got) = got {
        for (got, sound) in got.iter().zip(&sound.answers) {
            assert!(
                got.starts_with("error") || got == sound,
                "a wrong answer after changing {name}: {got} instead of {sound}"
            );
        }
    }
});
