//! The codec experiment end to end on a small slice of the bundled sample: every
//! configuration is built, measured and reported, with sizes in the order compression
//! promises and the same matches whatever the codec.

use apcache_bench::codec_experiment::{self, CodecExperimentConfig, Placement, CONFIGURATIONS};
use apcache_index::ingest::Document;

fn sample(limit: usize) -> Vec<Document> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/enwiki-sample.tsv");
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .take(limit)
        .filter_map(|line| line.split_once('\t'))
        .map(|(title, body)| Document {
            id: None,
            title: title.to_string(),
            body: body.to_string(),
            json: None,
        })
        .collect()
}

#[test]
fn every_configuration_is_measured_and_sizes_are_ordered() {
    let documents = sample(1500);
    let dram = tempfile::tempdir().unwrap();
    let tier = tempfile::tempdir().unwrap();
    let config = CodecExperimentConfig {
        placements: vec![
            Placement {
                label: "dram".into(),
                dir: dram.path().to_path_buf(),
                note: "test".into(),
            },
            Placement {
                label: "tier".into(),
                dir: tier.path().to_path_buf(),
                note: "test".into(),
            },
        ],
        queries: 40,
        warmup: 0,
        repeat: 1,
        min_repetition_s: 0.0,
        memory_budget: 64 << 20,
        ..CodecExperimentConfig::default()
    };
    let report = codec_experiment::run(&documents, &config, |_| {}).unwrap();

    let names: Vec<&str> = report
        .sizes
        .iter()
        .map(|s| s.configuration.as_str())
        .collect();
    let expected: Vec<&str> = CONFIGURATIONS.iter().map(|(name, _)| *name).collect();
    assert_eq!(names, expected);
    let size = |codec: &str| {
        let row = report.sizes.iter().find(|s| s.codec == codec).unwrap();
        row.docs_bytes + row.freqs_bytes
    };
    assert!(size("raw") > size("vbyte"), "raw > vbyte");
    assert!(size("vbyte") > size("pfor-delta"), "vbyte > pfor-delta");
    assert!(
        size("vbyte-delta") < size("vbyte"),
        "delta coding helps vbyte"
    );
    assert_eq!(report.sizes[0].postings_fraction, 1.0);

    // 7 configurations x 6 workloads x 2 placements, all sane, and the same matches per
    // workload whatever the codec or placement.
    assert_eq!(report.runs.len(), 7 * 6 * 2);
    for run in &report.runs {
        assert_eq!(run.queries, 40 * run.passes, "{run:?}");
        assert_eq!(run.passes, 1, "{run:?}");
        assert!(run.qps > 0.0 && run.qps.is_finite(), "{run:?}");
        let latency = &run.latency;
        assert!(
            latency.p50_us <= latency.p99_us && latency.p99_us <= latency.p999_us,
            "{run:?}"
        );
        let base = report
            .runs
            .iter()
            .find(|r| r.workload == run.workload && r.configuration == "Base")
            .unwrap();
        assert_eq!(run.total_hits, base.total_hits, "{run:?}");
    }
    let text = report.to_text();
    for name in expected {
        assert!(text.contains(name));
    }
    let out = tempfile::tempdir().unwrap();
    let written = report.write_to(out.path()).unwrap();
    assert_eq!(written.len(), 3);
    let csv = std::fs::read_to_string(out.path().join("codecs-experiment.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 7 * 6 * 2);
}
