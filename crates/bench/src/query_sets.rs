//! The real query sets of `../shared/queries`: luceneutil task files (`Class: query # notes`)
//! and the search-benchmark-game's JSON lines (`{"query": .., "tags": [..]}`), selected by
//! class. [`crate::query_files`] reads whole query files of any format.

use std::path::{Path, PathBuf};

use crate::query_files::{parse_json_line, parse_task_line};

/// The luceneutil task classes of single terms, conjunctions and disjunctions.
pub const TERM_AND_OR_CLASSES: [&str; 9] = [
    "HighTerm",
    "MedTerm",
    "LowTerm",
    "AndHighHigh",
    "AndHighMed",
    "AndHighLow",
    "OrHighHigh",
    "OrHighMed",
    "OrHighLow",
];

/// The luceneutil phrase classes: exact (`"a b"`) and sloppy (`"a b"~4`).
pub const PHRASE_CLASSES: [&str; 6] = [
    "HighPhrase",
    "MedPhrase",
    "LowPhrase",
    "HighSloppyPhrase",
    "MedSloppyPhrase",
    "LowSloppyPhrase",
];

/// The luceneutil classes of long disjunctions (in `wikinightly.tasks`): three terms, two
/// terms with two stop words, and sentences of dozens of words.
pub const LONG_OR_CLASSES: [&str; 3] = ["Or3Terms", "Or2Terms2StopWords", "OrMany"];

/// The class the search-benchmark-game's unions of three or more words are reported under.
pub const LONG_UNION_CLASS: &str = "union3+";

/// One query with the class it is measured in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuerySpec {
    /// The task class (`HighTerm`, `AndHighMed`, ...) or the benchmark-game's first tag
    /// (`term`, `union`, `intersection`, ...).
    pub class: String,
    /// The query text, in Lucene syntax.
    pub text: String,
}

/// The directory `shared/` beside the repository (where `../shared` points from its root).
pub fn shared_dir() -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    [root.join("../shared"), PathBuf::from("/work/shared")]
        .into_iter()
        .find(|p| p.join("queries").is_dir())
}

/// Queries of the luceneutil task file `path` in the given classes, at most `per_class` of
/// each (the first ones, in file order), distinct within a class.
pub fn luceneutil_tasks(
    path: &Path,
    classes: &[&str],
    per_class: usize,
) -> std::io::Result<Vec<QuerySpec>> {
    let text = std::fs::read_to_string(path)?;
    let mut out: Vec<QuerySpec> = Vec::new();
    for line in text.lines() {
        if line.starts_with('#') {
            continue;
        }
        let Some(spec) = parse_task_line(line) else {
            continue;
        };
        if !classes.contains(&spec.class.as_str()) {
            continue;
        }
        let taken = out.iter().filter(|q| q.class == spec.class).count();
        if spec.text.is_empty() || taken >= per_class || out.contains(&spec) {
            continue;
        }
        out.push(spec);
    }
    Ok(out)
}

/// Queries of the search-benchmark-game file `path` whose first tag is one of `tags`, at most
/// `limit` per tag.
pub fn search_benchmark_game(
    path: &Path,
    tags: &[&str],
    limit: usize,
) -> std::io::Result<Vec<QuerySpec>> {
    let text = std::fs::read_to_string(path)?;
    let mut out: Vec<QuerySpec> = Vec::new();
    for line in text.lines() {
        let Some(spec) = parse_json_line(line) else {
            continue;
        };
        if tags.contains(&spec.class.as_str())
            && out.iter().filter(|q| q.class == spec.class).count() < limit
        {
            out.push(spec);
        }
    }
    Ok(out)
}

/// The search-benchmark-game's unions (first tag `union`) of at least `min_words` words, at
/// most `limit`, in class [`LONG_UNION_CLASS`].
pub fn search_benchmark_game_long_unions(
    path: &Path,
    min_words: usize,
    limit: usize,
) -> std::io::Result<Vec<QuerySpec>> {
    Ok(search_benchmark_game(path, &["union"], usize::MAX)?
        .into_iter()
        .filter(|q| q.text.split_whitespace().count() >= min_words)
        .take(limit)
        .map(|q| QuerySpec {
            class: LONG_UNION_CLASS.to_string(),
            text: q.text,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_both_formats() {
        let dir = std::env::temp_dir().join(format!("apcache-qs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let tasks = dir.join("t.tasks");
        std::fs::write(
            &tasks,
            "# comment\nHighTerm: the # freq=1\nAndHighHigh: +of +s # f\nHighTerm: of\nHighTerm: the\nPrefix3: sta*\n",
        )
        .unwrap();
        let q = luceneutil_tasks(&tasks, &["HighTerm", "AndHighHigh"], 5).unwrap();
        let texts: Vec<&str> = q.iter().map(|q| q.text.as_str()).collect();
        assert_eq!(texts, vec!["the", "+of +s", "of"]);
        let sbg = dir.join("q.jsonl");
        std::fs::write(
            &sbg,
            "{\"query\": \"the\", \"tags\": [\"term\"]}\n{\"query\": \"a b\", \"tags\": [\"union\", \"global\"]}\nbad\n",
        )
        .unwrap();
        let q = search_benchmark_game(&sbg, &["union"], 10).unwrap();
        assert_eq!(
            q,
            vec![QuerySpec {
                class: "union".into(),
                text: "a b".into()
            }]
        );
        std::fs::remove_dir_all(dir).unwrap();
    }
}
