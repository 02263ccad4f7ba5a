//! `apcache bench codecs --json` on the bundled sample reports every codec and every peer with
//! sane figures.

use std::process::Command;

use apcache_codec::CODEC_NAMES;

#[test]
fn bench_codecs_reports_every_codec_and_peer() {
    let output = Command::new(env!("CARGO_BIN_EXE_apcache-bench"))
        .args(["codecs", "--json", "--runs", "1", "--min-pass-ms", "1"])
        .output()
        .expect("run apcache");
    assert!(
        output.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    let codecs = report["codecs"].as_array().expect("codecs");
    let names: Vec<&str> = codecs.iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(names, CODEC_NAMES);
    let bits = |name: &str| {
        codecs.iter().find(|c| c["name"] == name).unwrap()["docs_bits_per_int"]
            .as_f64()
            .unwrap()
    };
    assert_eq!(bits("raw"), 32.0);
    assert!(
        bits("vbyte") > bits("pfor-delta"),
        "PFor must beat VByte on real lists"
    );
    for codec in codecs
        .iter()
        .chain(report["peers"].as_array().expect("peers"))
    {
        for field in [
            "decode_mints_per_s",
            "encode_mints_per_s",
            "freqs_bits_per_int",
        ] {
            let v = codec[field].as_f64().unwrap();
            assert!(v.is_finite() && v > 0.0, "{}: {field} = {v}", codec["name"]);
        }
    }
    assert!(report["peers"].as_array().unwrap().len() >= 3);
}
