//! Query files in the formats benchmarks publish them in, read whole into [`QuerySpec`]s, in
//! file order, repetitions kept (a workload repeats queries on purpose).
//!
//! | format  | a line                                  | class            |
//! |---------|-----------------------------------------|------------------|
//! | `tasks` | `Class: query # comment` (luceneutil)   | `Class`          |
//! | `jsonl` | `{"query": "..", "tags": ["term", ..]}` | the first tag    |
//! | `trec`  | `id<TAB>query` or `id:query`            | none (empty)     |
//! | `plain` | `query`                                 | none (empty)     |
//!
//! Empty lines are skipped in every format, and lines starting with `#` in all but `jsonl`.
//! Lines that do not have their format's shape (no `:` in a task line, invalid JSON, no
//! `query` string) are counted with their line numbers, not read.
//!
//! [`QueryFormat::Auto`] decides by the file name first: `.tasks` is `tasks`; `.jsonl`,
//! `.ndjson` and `.json` are `jsonl`. Otherwise by the first 20 lines that are not skipped:
//! `jsonl` if each starts with `{`; `trec` if each is `id<TAB>query` (an id without
//! whitespace) or `id:query` with an id that starts with a digit and holds only ASCII letters,
//! digits, `-`, `_` and `.` (TREC topic numbers, `20001:obama family tree`); `tasks` if each
//! is `Class: query` with a class that starts with an ASCII capital and holds only ASCII
//! letters and digits (`HighTerm`, `Prefix3`); else `plain`. A plain query that happens to
//! look like one of these (a field query `Title:rust` on every line) needs the format named.

use std::path::{Path, PathBuf};

use crate::query_sets::QuerySpec;

/// The layout of a query file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueryFormat {
    /// Decide from the file name and its first lines (see the module documentation).
    Auto,
    /// luceneutil task lines, `Class: query # comment`.
    Tasks,
    /// search-benchmark-game JSON lines, `{"query": .., "tags": [..]}`.
    Jsonl,
    /// TREC topics, `id<TAB>query` or `id:query`.
    Trec,
    /// One query per line.
    Plain,
}

impl QueryFormat {
    /// The format's name, as the command line spells it.
    pub fn name(self) -> &'static str {
        match self {
            QueryFormat::Auto => "auto",
            QueryFormat::Tasks => "tasks",
            QueryFormat::Jsonl => "jsonl",
            QueryFormat::Trec => "trec",
            QueryFormat::Plain => "plain",
        }
    }
}

/// The queries of one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryFile {
    /// The format the file was read in (never `Auto`).
    pub format: QueryFormat,
    /// Every query, in file order.
    pub queries: Vec<QuerySpec>,
    /// Line numbers (from 1) of the lines that did not have the format's shape.
    pub malformed_lines: Vec<usize>,
}

/// Errors reading a query file.
#[derive(Debug, thiserror::Error)]
pub enum QueryFileError {
    /// The file could not be read.
    #[error("cannot read {0}: {1}")]
    Io(PathBuf, std::io::Error),
}

/// Reads the query file `path` in `format`.
pub fn read_query_file(path: &Path, format: QueryFormat) -> Result<QueryFile, QueryFileError> {
    let text =
        std::fs::read_to_string(path).map_err(|e| QueryFileError::Io(path.to_path_buf(), e))?;
    let format = match format {
        QueryFormat::Auto => detect_format(Some(path), &text),
        format => format,
    };
    Ok(parse_query_text(&text, format))
}

/// Reads the queries of `text` in `format` (`Auto` decides from the text alone).
pub fn parse_query_text(text: &str, format: QueryFormat) -> QueryFile {
    let format = match format {
        QueryFormat::Auto => detect_format(None, text),
        format => format,
    };
    let mut queries = Vec::new();
    let mut malformed_lines = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if is_skipped(line, format) {
            continue;
        }
        let parsed = match format {
            QueryFormat::Tasks => parse_task_line(line),
            QueryFormat::Jsonl => parse_json_line(line),
            QueryFormat::Trec => parse_trec_line(line),
            QueryFormat::Plain | QueryFormat::Auto => Some(QuerySpec {
                class: String::new(),
                text: line.trim().to_string(),
            }),
        };
        match parsed {
            Some(spec) if !spec.text.is_empty() => queries.push(spec),
            _ => malformed_lines.push(index + 1),
        }
    }
    QueryFile {
        format,
        queries,
        malformed_lines,
    }
}

/// Whether `line` is neither a query nor malformed: empty, or a comment.
fn is_skipped(line: &str, format: QueryFormat) -> bool {
    let line = line.trim();
    line.is_empty() || (format != QueryFormat::Jsonl && line.starts_with('#'))
}

/// The format of a query file named `path` (if known) holding `text`, as
/// [`QueryFormat::Auto`] decides it.
pub fn detect_format(path: Option<&Path>, text: &str) -> QueryFormat {
    let extension = path
        .and_then(|p| p.extension())
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    match extension.as_deref() {
        Some("tasks") => return QueryFormat::Tasks,
        Some("jsonl" | "ndjson" | "json") => return QueryFormat::Jsonl,
        _ => {}
    }
    let sample: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .take(20)
        .collect();
    if sample.is_empty() {
        return QueryFormat::Plain;
    }
    if sample.iter().all(|line| line.starts_with('{')) {
        QueryFormat::Jsonl
    } else if sample.iter().all(|line| looks_like_trec(line)) {
        QueryFormat::Trec
    } else if sample.iter().all(|line| looks_like_task(line)) {
        QueryFormat::Tasks
    } else {
        QueryFormat::Plain
    }
}

fn looks_like_trec(line: &str) -> bool {
    if let Some((id, _)) = line.split_once('\t') {
        return !id.is_empty() && !id.contains(char::is_whitespace);
    }
    let Some((id, _)) = line.split_once(':') else {
        return false;
    };
    id.starts_with(|c: char| c.is_ascii_digit())
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

fn looks_like_task(line: &str) -> bool {
    let Some((class, _)) = line.split_once(": ") else {
        return false;
    };
    class.starts_with(|c: char| c.is_ascii_uppercase())
        && class.chars().all(|c| c.is_ascii_alphanumeric())
}

/// A luceneutil task line, `Class: query # comment`: the class and the query.
pub fn parse_task_line(line: &str) -> Option<QuerySpec> {
    let (class, rest) = line.split_once(':')?;
    let query = rest.split(" #").next().unwrap_or("").trim();
    Some(QuerySpec {
        class: class.trim().to_string(),
        text: query.to_string(),
    })
}

/// A search-benchmark-game line, `{"query": .., "tags": [..]}`: the query and its first tag
/// (empty without tags).
pub fn parse_json_line(line: &str) -> Option<QuerySpec> {
    let value: serde_json::Value = serde_json::from_str(line).ok()?;
    let query = value.get("query")?.as_str()?;
    let tag = value
        .get("tags")
        .and_then(|tags| tags.get(0))
        .and_then(|tag| tag.as_str())
        .unwrap_or("");
    Some(QuerySpec {
        class: tag.to_string(),
        text: query.trim().to_string(),
    })
}

/// A TREC topic line, `id<TAB>query` (split at the first tab) or else `id:query` (at the
/// first colon): the query, without a class.
pub fn parse_trec_line(line: &str) -> Option<QuerySpec> {
    let (_, query) = line.split_once('\t').or_else(|| line.split_once(':'))?;
    Some(QuerySpec {
        class: String::new(),
        text: query.trim().to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(file: &QueryFile) -> Vec<&str> {
        file.queries.iter().map(|q| q.text.as_str()).collect()
    }

    #[test]
    fn reads_luceneutil_tasks_with_repetitions() {
        let text =
            "# comment\nHighTerm: the # freq=1\n\nAndHighHigh: +of +s # f\nHighTerm: the\nbroken\n";
        // Detection wants every line of the sample in the format.
        assert_eq!(detect_format(None, text), QueryFormat::Plain);
        let good = text.replace("broken\n", "");
        assert_eq!(detect_format(None, &good), QueryFormat::Tasks);
        let file = parse_query_text(text, QueryFormat::Tasks);
        assert_eq!(file.format, QueryFormat::Tasks);
        assert_eq!(texts(&file), ["the", "+of +s", "the"]);
        assert_eq!(file.queries[1].class, "AndHighHigh");
        assert_eq!(file.malformed_lines, [6]);
    }

    #[test]
    fn reads_benchmark_game_json_lines() {
        let text = "{\"query\": \"the\", \"tags\": [\"term\"]}\n{\"query\": \"a b\", \"tags\": [\"union\", \"global\"]}\n{\"query\": \"c\"}\nbad\n{\"tags\": []}\n";
        let file = parse_query_text(text, QueryFormat::Auto);
        assert_eq!(file.format, QueryFormat::Plain, "one line is not JSON");
        let file = parse_query_text(text, QueryFormat::Jsonl);
        assert_eq!(texts(&file), ["the", "a b", "c"]);
        let classes: Vec<&str> = file.queries.iter().map(|q| q.class.as_str()).collect();
        assert_eq!(classes, ["term", "union", ""]);
        assert_eq!(file.malformed_lines, [4, 5]);
        let good = "{\"query\": \"x\", \"tags\": [\"term\"]}\n";
        assert_eq!(
            parse_query_text(good, QueryFormat::Auto).format,
            QueryFormat::Jsonl
        );
    }

    #[test]
    fn reads_trec_topics_with_tabs_or_colons() {
        let colons = "20001:obama family tree\n20002:  wi-fi: hotspots \n";
        let file = parse_query_text(colons, QueryFormat::Auto);
        assert_eq!(file.format, QueryFormat::Trec);
        assert_eq!(texts(&file), ["obama family tree", "wi-fi: hotspots"]);
        let tabs = "q1\tred fox\nq2\tblue: whale\n";
        let file = parse_query_text(tabs, QueryFormat::Auto);
        assert_eq!(file.format, QueryFormat::Trec);
        assert_eq!(texts(&file), ["red fox", "blue: whale"]);
        assert!(file.queries.iter().all(|q| q.class.is_empty()));
    }

    #[test]
    fn reads_plain_queries_and_the_workload_generators_output() {
        let text = "+a +b\nrust search\n\n# not a query\na\\:b\n";
        let file = parse_query_text(text, QueryFormat::Auto);
        assert_eq!(file.format, QueryFormat::Plain);
        assert_eq!(texts(&file), ["+a +b", "rust search", "a\\:b"]);
        assert!(file.malformed_lines.is_empty());
        // A lower-case "field" is not a task class.
        assert_eq!(
            parse_query_text("title: rust\n", QueryFormat::Auto).format,
            QueryFormat::Plain
        );
    }

    #[test]
    fn extension_decides_before_content() {
        let dir = tempfile::tempdir().unwrap();
        let tasks = dir.path().join("q.tasks");
        std::fs::write(&tasks, "HighTerm: the\nlowercase: x\n").unwrap();
        let file = read_query_file(&tasks, QueryFormat::Auto).unwrap();
        assert_eq!(file.format, QueryFormat::Tasks);
        assert_eq!(texts(&file), ["the", "x"]);
        let plain = dir.path().join("q.txt");
        std::fs::write(&plain, "HighTerm: the\n").unwrap();
        let file = read_query_file(&plain, QueryFormat::Plain).unwrap();
        assert_eq!(texts(&file), ["HighTerm: the"]);
        assert!(read_query_file(&dir.path().join("missing"), QueryFormat::Auto).is_err());
    }
}
