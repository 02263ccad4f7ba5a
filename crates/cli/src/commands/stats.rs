//! `apcache stats`: what an index holds and how big each part is.

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::Context;
use apcache_index::format::FileKind;
use apcache_index::Manifest;
use apcache_tier::cgroup::format_bytes;
use clap::Args;
use serde_json::json;

/// Options of `apcache stats`.
#[derive(Debug, Args)]
pub struct StatsArgs {
    /// Index directory.
    dir: PathBuf,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

/// Bytes of a posting uncompressed: a 4-byte document id and a 4-byte frequency.
const RAW_POSTING_BYTES: u64 = 8;

/// Runs `apcache stats`.
pub fn run(args: StatsArgs) -> anyhow::Result<()> {
    let manifest =
        Manifest::load(&args.dir).with_context(|| format!("cannot open {}", args.dir.display()))?;
    let stats = Stats::of(&manifest);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&stats.json())?);
    } else {
        print!("{}", stats.text());
    }
    Ok(())
}

/// The counts and sizes `apcache stats` reports, summed over the segments.
#[derive(Debug, Clone, PartialEq)]
struct Stats {
    /// What to say of an index an interrupted build left; `None` for a complete one.
    incomplete: Option<String>,
    documents: u64,
    segments: usize,
    terms: u64,
    postings: u64,
    /// The codecs of the segments, each once, in segment order.
    codecs: Vec<String>,
    /// Bytes of each kind of segment file, in [`FileKind::SEGMENT_FILES`] order.
    file_bytes: Vec<(FileKind, u64)>,
    /// Bytes of DID blocks in the postings files.
    docs_bytes: u64,
    /// Bytes of frequency blocks in the postings files.
    freqs_bytes: u64,
    /// The mapping in Elasticsearch's JSON form, and its fields with their types.
    mapping: Option<serde_json::Value>,
    fields: Vec<(String, &'static str)>,
}

impl Stats {
    fn of(manifest: &Manifest) -> Stats {
        let mut codecs: Vec<String> = Vec::new();
        for segment in &manifest.segments {
            if !codecs.contains(&segment.codec) {
                codecs.push(segment.codec.clone());
            }
        }
        Stats {
            incomplete: manifest.incomplete_note(),
            documents: manifest.documents(),
            segments: manifest.segments.len(),
            terms: manifest.segments.iter().map(|s| s.terms).sum(),
            postings: manifest.segments.iter().map(|s| s.postings).sum(),
            codecs,
            file_bytes: FileKind::SEGMENT_FILES
                .into_iter()
                .map(|kind| (kind, manifest.file_bytes(kind)))
                .chain(
                    // Positions and columns: a row only for an index that has them.
                    FileKind::OPTIONAL_SEGMENT_FILES
                        .into_iter()
                        .map(|kind| (kind, manifest.file_bytes(kind)))
                        .filter(|(_, bytes)| *bytes > 0),
                )
                .collect(),
            docs_bytes: manifest.segments.iter().map(|s| s.docs_bytes).sum(),
            freqs_bytes: manifest.segments.iter().map(|s| s.freqs_bytes).sum(),
            mapping: manifest.mapping.as_ref().map(|m| m.to_json()),
            fields: manifest.mapping.as_ref().map_or_else(Vec::new, |mapping| {
                mapping
                    .fields()
                    .map(|(name, field_type)| (name.to_owned(), field_type.name()))
                    .collect()
            }),
        }
    }

    fn total_bytes(&self) -> u64 {
        self.file_bytes.iter().map(|(_, bytes)| bytes).sum()
    }

    fn store_bytes(&self) -> u64 {
        self.file_bytes
            .iter()
            .filter(|(kind, _)| *kind == FileKind::Store)
            .map(|(_, bytes)| bytes)
            .sum()
    }

    /// Bytes a query may read: every file but the document store.
    fn searchable_bytes(&self) -> u64 {
        self.total_bytes() - self.store_bytes()
    }

    fn has_positions(&self) -> bool {
        self.file_bytes
            .iter()
            .any(|(kind, bytes)| *kind == FileKind::Positions && *bytes > 0)
    }

    fn raw_postings_bytes(&self) -> u64 {
        self.postings * RAW_POSTING_BYTES
    }

    /// The compressed postings (DID and frequency blocks) as a fraction of raw.
    fn postings_fraction_of_raw(&self) -> f64 {
        match self.raw_postings_bytes() {
            0 => 0.0,
            raw => (self.docs_bytes + self.freqs_bytes) as f64 / raw as f64,
        }
    }

    /// The report as JSON: sizes in bytes, fractions between 0 and 1.
    fn json(&self) -> serde_json::Value {
        let mut bytes = serde_json::Map::new();
        for (kind, kind_bytes) in &self.file_bytes {
            bytes.insert(kind.extension().to_owned(), json!(kind_bytes));
        }
        json!({
            "complete": self.incomplete.is_none(),
            "incomplete": self.incomplete,
            "documents": self.documents,
            "segments": self.segments,
            "terms": self.terms,
            "postings": self.postings,
            "codec": self.codecs.first(),
            "codecs": self.codecs,
            "bytes": bytes,
            "total_bytes": self.total_bytes(),
            "searchable_bytes": self.searchable_bytes(),
            "store_bytes": self.store_bytes(),
            "positions": self.has_positions(),
            "docs_bytes": self.docs_bytes,
            "freqs_bytes": self.freqs_bytes,
            "raw_postings_bytes": self.raw_postings_bytes(),
            "postings_fraction_of_raw": self.postings_fraction_of_raw(),
            "mapping": self.mapping,
        })
    }

    /// The report as aligned text for a person.
    fn text(&self) -> String {
        let codec = match self.codecs.as_slice() {
            [] => "none (no segments)".to_owned(),
            codecs => codecs.join(", "),
        };
        let mut out = String::new();
        if let Some(note) = &self.incomplete {
            let _ = writeln!(out, "{note}\n");
        }
        let mut line = |key: &str, value: &str| {
            let _ = writeln!(out, "{key:<18}{value}");
        };
        line("documents", &self.documents.to_string());
        line("segments", &self.segments.to_string());
        line("terms", &self.terms.to_string());
        line("postings", &self.postings.to_string());
        line("codec", &codec);
        line(
            "positions",
            if self.has_positions() {
                "kept (phrase queries work)"
            } else {
                "none (built with --no-positions: phrase queries fail)"
            },
        );
        out.push('\n');

        let total = self.total_bytes();
        let mut rows: Vec<[String; 4]> = vec![[
            "file kind".into(),
            "bytes".into(),
            "size".into(),
            "share".into(),
        ]];
        for (kind, bytes) in &self.file_bytes {
            rows.push([
                kind.extension().to_owned(),
                bytes.to_string(),
                format_bytes(*bytes),
                percent(*bytes, total),
            ]);
        }
        rows.push([
            "total".into(),
            total.to_string(),
            format_bytes(total),
            percent(total, total),
        ]);
        let widths: Vec<usize> = (0..4)
            .map(|column| {
                rows.iter()
                    .map(|row| row[column].chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        for [kind, bytes, size, share] in &rows {
            let _ = writeln!(
                out,
                "{kind:<w0$}  {bytes:>w1$}  {size:>w2$}  {share:>w3$}",
                w0 = widths[0],
                w1 = widths[1],
                w2 = widths[2],
                w3 = widths[3],
            );
        }
        out.push('\n');

        let compressed = self.docs_bytes + self.freqs_bytes;
        let postings = if self.postings == 0 {
            "no postings".to_owned()
        } else {
            format!(
                "{:.1}% of raw: {} against {} at {RAW_POSTING_BYTES} bytes a posting",
                self.postings_fraction_of_raw() * 100.0,
                format_bytes(compressed),
                format_bytes(self.raw_postings_bytes()),
            )
        };
        let searchable = self.searchable_bytes();
        let store = self.store_bytes();
        let mut line = |key: &str, value: &str| {
            let _ = writeln!(out, "{key:<18}{value}");
        };
        line("postings size", &postings);
        line(
            "searchable bytes",
            &format!(
                "{} ({searchable} bytes, every file but the store)",
                format_bytes(searchable)
            ),
        );
        line(
            "store bytes",
            &format!("{} ({store} bytes)", format_bytes(store)),
        );
        if !self.fields.is_empty() {
            out.push_str("\nfields (apcache stats --json shows the mapping)\n");
            let width = self
                .fields
                .iter()
                .map(|(name, _)| name.len())
                .max()
                .unwrap_or(0);
            for (name, field_type) in &self.fields {
                let _ = writeln!(out, "  {name:<width$}  {field_type}");
            }
        }
        out
    }
}

/// `part` as a percentage of `whole`, with one decimal.
fn percent(part: u64, whole: u64) -> String {
    if whole == 0 {
        return "-".to_owned();
    }
    format!("{:.1}%", part as f64 * 100.0 / whole as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats() -> Stats {
        Stats {
            incomplete: None,
            documents: 1000,
            segments: 2,
            terms: 5000,
            postings: 100_000,
            codecs: vec!["bp128".into()],
            file_bytes: vec![
                (FileKind::Dictionary, 20_000),
                (FileKind::TermInfos, 30_000),
                (FileKind::Skip, 1_000),
                (FileKind::Postings, 200_000),
                (FileKind::Norms, 1_000),
                (FileKind::Store, 748_000),
            ],
            docs_bytes: 150_000,
            freqs_bytes: 50_000,
            mapping: None,
            fields: vec![],
        }
    }

    #[test]
    fn text_is_a_table_without_json() {
        let text = stats().text();
        let expected = "\
documents         1000
segments          2
terms             5000
postings          100000
codec             bp128
positions         none (built with --no-positions: phrase queries fail)

file kind    bytes       size   share
dict         20000   19.5 KiB    2.0%
terms        30000   29.3 KiB    3.0%
skip          1000     1000 B    0.1%
post        200000  195.3 KiB   20.0%
norms         1000     1000 B    0.1%
store       748000  730.5 KiB   74.8%
total      1000000  976.6 KiB  100.0%

postings size     25.0% of raw: 195.3 KiB against 781.2 KiB at 8 bytes a posting
searchable bytes  246.1 KiB (252000 bytes, every file but the store)
store bytes       730.5 KiB (748000 bytes)
";
        assert_eq!(text, expected, "\n{text}");
        assert!(!text.contains('{'));
    }

    #[test]
    fn json_keeps_its_keys_and_adds_the_totals() {
        let json = stats().json();
        assert_eq!(json["documents"], 1000);
        assert_eq!(json["codec"], "bp128");
        assert_eq!(json["bytes"]["post"], 200_000);
        assert_eq!(json["docs_bytes"], 150_000);
        assert_eq!(json["freqs_bytes"], 50_000);
        assert_eq!(json["postings_fraction_of_raw"], 0.25);
        assert_eq!(json["searchable_bytes"], 252_000);
        assert_eq!(json["store_bytes"], 748_000);
        assert_eq!(json["total_bytes"], 1_000_000);
    }

    #[test]
    fn an_incomplete_index_says_so_first() {
        let note =
            "incomplete: an interrupted build left 1000 documents; re-run apcache index --force";
        let incomplete = Stats {
            incomplete: Some(note.into()),
            ..stats()
        };
        let text = incomplete.text();
        assert!(text.starts_with(&format!("{note}\n\ndocuments ")), "{text}");
        assert!(!stats().text().contains("incomplete"));
        assert_eq!(incomplete.json()["complete"], false);
        assert_eq!(incomplete.json()["incomplete"], note);
        assert_eq!(stats().json()["complete"], true);
    }

    #[test]
    fn an_empty_index_divides_by_nothing() {
        let empty = Stats {
            incomplete: None,
            documents: 0,
            segments: 0,
            terms: 0,
            postings: 0,
            codecs: vec![],
            file_bytes: FileKind::SEGMENT_FILES.map(|kind| (kind, 0)).to_vec(),
            docs_bytes: 0,
            freqs_bytes: 0,
            mapping: None,
            fields: vec![],
        };
        let text = empty.text();
        assert!(
            text.contains("codec             none (no segments)"),
            "{text}"
        );
        assert!(text.contains("postings size     no postings"), "{text}");
        assert!(!text.contains("NaN"), "{text}");
        assert_eq!(empty.json()["postings_fraction_of_raw"], 0.0);
    }
}
