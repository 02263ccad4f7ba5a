//! Fixtures the fuzz targets share: a small index of the bundled sample, built once per
//! process, and the queries every target that evaluates runs against it.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use apcache_index::indexer::{build_index, IndexOptions};
use apcache_index::ingest::Input;

/// Documents of the fixture index: enough for several blocks in the frequent terms' lists,
/// few enough that opening and checking it per input stays fast.
const FIXTURE_DOCS: usize = 300;

/// Each fixture document's body is cut to about this many bytes (at a word boundary): the
/// index keeps every structure a full one has (multi-block lists, skip data, store blocks),
/// while the files a target reads, checks and rewrites per input stay small.
const FIXTURE_BODY_BYTES: usize = 320;

/// Queries run on the fixture: terms, conjunctions, disjunctions and exclusions.
pub const QUERIES: &[&str] = &[
    "the",
    "album",
    "river OR city",
    "+united +states",
    "war -world",
    "(music OR film) AND american",
];

/// The fixture: a temporary directory holding the index `index/`, built on first use.
pub struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    /// The fixture index's directory.
    pub fn index(&self) -> PathBuf {
        self.dir.path().join("index")
    }
}

/// The process's fixture.
pub fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/enwiki-sample.tsv");
        let text = std::fs::read_to_string(&sample).expect("the bundled sample");
        let mut head = String::new();
        for line in text.lines().take(FIXTURE_DOCS) {
            let (title, body) = line.split_once('\t').unwrap_or((line, ""));
            let cut = body
                .char_indices()
                .find(|&(at, c)| at >= FIXTURE_BODY_BYTES && c == ' ')
                .map_or(body.len(), |(at, _)| at);
            head.push_str(title);
            head.push('\t');
            head.push_str(&body[..cut]);
            head.push('\n');
        }
        let input = dir.path().join("docs.tsv");
        std::fs::write(&input, head).expect("writing the fixture's input");
        build_index(
            vec![Input::from_arg(input)],
            &dir.path().join("index"),
            &IndexOptions::default(),
            |_, _| {},
        )
        .expect("building the fixture index");
        Fixture { dir }
    })
}
