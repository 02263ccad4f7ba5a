//! `apcache search --topics`: topic files in every form (a Web track file as shipped among
//! them), TREC run output, plain and Lucene parsing, and the errors of a malformed file.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::{apcache, path, run, sample};

/// The bundled sample indexed in `dir`.
fn build_sample_index(dir: &Path) -> PathBuf {
    let index = dir.join("index");
    apcache(&["index", path(&sample()), "-o", path(&index)]);
    index
}

fn search(index: &Path, args: &[&str]) -> Output {
    let mut all = vec!["search", path(index)];
    all.extend_from_slice(args);
    run(&all)
}

fn stdout(output: &Output) -> String {
    assert!(
        output.status.success(),
        "apcache failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone()).unwrap()
}

#[test]
fn topic_runs_in_both_forms_agree_with_single_searches() {
    let dir = tempfile::tempdir().unwrap();
    let index = build_sample_index(dir.path());
    let tsv = dir.path().join("topics.tsv");
    std::fs::write(&tsv, "7\triver valley\n8\tc++ u.s.: don't\n9\t!!!\n").unwrap();
    let sgml = dir.path().join("topics.sgml");
    std::fs::write(
        &sgml,
        "<top>\n<num> Number: 7\n<title> river valley\n<desc> Description:\nx\n</top>\n\
         <top>\n<num> Number: 8\n<title> c++ u.s.: don't\n</top>\n<top>\n<num> Number: 9\n<title> !!!\n</top>\n",
    )
    .unwrap();

    let run = stdout(&search(
        &index,
        &[
            "--topics",
            tsv.to_str().unwrap(),
            "--trec",
            "--run-tag",
            "t1",
            "-k",
            "5",
            "--threads",
            "2",
        ],
    ));
    let from_sgml = stdout(&search(
        &index,
        &[
            "--topics",
            sgml.to_str().unwrap(),
            "--trec",
            "--run-tag",
            "t1",
            "-k",
            "5",
            "--threads",
            "1",
        ],
    ));
    assert_eq!(run, from_sgml);

    let lines: Vec<Vec<&str>> = run.lines().map(|l| l.split(' ').collect()).collect();
    assert_eq!(lines.len(), 10, "five hits for 7 and 8, none for 9:\n{run}");
    for (i, line) in lines.iter().enumerate() {
        assert_eq!(line.len(), 6);
        assert_eq!(line[0], if i < 5 { "7" } else { "8" });
        assert_eq!(
            (line[1], line[3], line[5]),
            ("Q0", (i % 5 + 1).to_string().as_str(), "t1")
        );
    }

    // Topic 7 as one query (its words are plain) ranks the same.
    let single: serde_json::Value = serde_json::from_str(&stdout(&search(
        &index,
        &["river valley", "-k", "5", "--json"],
    )))
    .unwrap();
    let ids: Vec<&str> = single["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["id"].as_str().unwrap())
        .collect();
    let run_ids: Vec<&str> = lines[..5].iter().map(|l| l[2]).collect();
    assert_eq!(ids, run_ids);

    // Readable output names each topic.
    let readable = stdout(&search(
        &index,
        &["--topics", tsv.to_str().unwrap(), "-k", "2"],
    ));
    assert!(readable.contains("topic 8: c++ u.s.: don't"), "{readable}");
    assert!(readable.contains("topic 9: !!!  (0 hits)"), "{readable}");
}

/// A Web track 2009 topic file as shipped: a byte-order mark, an XML declaration, a DOCTYPE
/// whose internal subset holds `>`s, the root `<webtrack2009>`, subtopics.
const WEB_TRACK_2009: &str = "\u{feff}<?xml version=\"1.0\" encoding=\"UTF-8\"?>
<!DOCTYPE webtrack2009 [
<!ELEMENT webtrack2009 (topic+)>
<!ELEMENT topic (query, description, subtopic+)>
<!ATTLIST topic number CDATA #REQUIRED type (ambiguous|faceted) #REQUIRED>
<!ELEMENT subtopic (#PCDATA)>
<!ATTLIST subtopic number CDATA #REQUIRED type (nav|inf) #REQUIRED>
]>
<webtrack2009>
<topic number=\"7\" type=\"faceted\">
  <query>river valley</query>
  <description>
  Find rivers and the valleys they cut.
  </description>
  <subtopic number=\"1\" type=\"inf\">
  Which valleys were cut by rivers?
  </subtopic>
</topic>
<topic number=\"8\" type=\"ambiguous\">
  <query>railway station</query>
  <description>
  Find railway stations.
  </description>
  <subtopic number=\"1\" type=\"nav\">
  Find a railway station's home page.
  </subtopic>
</topic>
</webtrack2009>
";

#[test]
fn a_web_track_file_as_shipped_runs_as_its_queries_do() {
    let dir = tempfile::tempdir().unwrap();
    let index = build_sample_index(dir.path());
    let web = dir.path().join("wt09.topics.full.xml");
    std::fs::write(&web, WEB_TRACK_2009).unwrap();
    let tsv = dir.path().join("topics.tsv");
    std::fs::write(&tsv, "7\triver valley\n8\trailway station\n").unwrap();
    let colon = dir.path().join("topics.colon");
    std::fs::write(&colon, "7:river valley\n8:railway station\n").unwrap();

    let run_of = |file: &Path, extra: &[&str]| {
        let mut args = vec!["--topics", file.to_str().unwrap(), "--trec", "-k", "5"];
        args.extend_from_slice(extra);
        stdout(&search(&index, &args))
    };
    let from_web = run_of(&web, &[]);
    let qids: Vec<&str> = from_web
        .lines()
        .map(|line| line.split(' ').next().unwrap())
        .collect();
    let expected: Vec<&str> = ["7"; 5].into_iter().chain(["8"; 5]).collect();
    assert_eq!(qids, expected, "five hits a topic:\n{from_web}");
    assert_eq!(from_web, run_of(&tsv, &[]));
    assert_eq!(from_web, run_of(&colon, &[]));
    assert_eq!(from_web, run_of(&web, &["--topics-format", "trec"]));
    assert_eq!(from_web, run_of(&colon, &["--topics-format", "colon"]));

    // A topic left open before the root closes is refused with its line.
    let broken = dir.path().join("broken.xml");
    std::fs::write(&broken, WEB_TRACK_2009.replacen("</topic>", "", 1)).unwrap();
    let output = search(&index, &["--topics", broken.to_str().unwrap(), "--trec"]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("line 19: <topic> inside the topic opened at line 10"),
        "{stderr}"
    );
}

#[test]
fn lucene_parsing_names_the_topic_that_fails() {
    let dir = tempfile::tempdir().unwrap();
    let index = build_sample_index(dir.path());
    let tsv = dir.path().join("topics.tsv");
    std::fs::write(&tsv, "1\triver\n2\tu.s. state: washington\n").unwrap();
    let output = search(
        &index,
        &["--topics", tsv.to_str().unwrap(), "--parse", "lucene"],
    );
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("topic 2 (line 2)"), "{stderr}");
    assert!(stderr.contains("field queries"), "{stderr}");
}

#[test]
fn a_malformed_topic_file_is_an_error_with_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let index = build_sample_index(dir.path());
    let bad = dir.path().join("bad.txt");
    std::fs::write(
        &bad,
        "<top>\n<num> Number: 1\n<title> x\n</top>\n<top>\n<title> y\n</top>\n",
    )
    .unwrap();
    let output = search(&index, &["--topics", bad.to_str().unwrap()]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("line 5: the topic opened here has no <num>"),
        "{stderr}"
    );
    // Options of a run need --topics.
    let output = search(&index, &["river", "--trec"]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--trec applies to a topic run"), "{stderr}");
}
