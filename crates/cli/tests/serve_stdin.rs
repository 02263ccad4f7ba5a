//! `apcache serve-stdin` answers every input line, in order, whatever the line holds: a line
//! that is not UTF-8 and a line far past the size limits each get `UNSUPPORTED`, and the
//! lines after them are still answered.

mod common;

use std::io::Write;
use std::process::{Command, Stdio};

use common::{apcache, path, sample};

#[test]
fn every_line_is_answered_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("index");
    apcache(&["index", path(&sample()), "-o", path(&index)]);

    // A million distinct terms: megabytes of text, which must not become gigabytes.
    let huge: String = (0..1_000_000).map(|i| format!(" w{i}")).collect();
    // Past the clause limit, though within the byte limit.
    let many_terms: String = (0..2000).map(|i| format!(" t{i}")).collect();
    // One term written 1,024 times is within it, and runs as the term once; once more is past.
    let repeats = "+the ".repeat(1024);
    let mut input: Vec<u8> = Vec::new();
    input.extend_from_slice(b"COUNT\tthe\n");
    input.extend_from_slice(b"COUNT\tthe \xff\xfe\n");
    input.extend_from_slice(b"TOP_10_COUNT\tthe\n");
    input.extend_from_slice(format!("COUNT\t{huge}\n").as_bytes());
    input.extend_from_slice(b"TOP_10\tthe\n");
    input.extend_from_slice(format!("COUNT\t{many_terms}\n").as_bytes());
    input.extend_from_slice(format!("TOP_10_COUNT\t{repeats}\n").as_bytes());
    input.extend_from_slice(format!("COUNT\t{repeats} +the\n").as_bytes());
    input.extend_from_slice(b"NO_SUCH_COMMAND\tthe\n");
    input.extend_from_slice(b"COUNT\tthe");

    let mut child = Command::new(env!("CARGO_BIN_EXE_apcache"))
        .args(["serve-stdin", path(&index)])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run apcache serve-stdin");
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");

    let answers: Vec<&str> = stdout.lines().collect();
    assert_eq!(answers.len(), 10, "{stdout}\n{stderr}");
    let count: u64 = answers[0].parse().expect("a count");
    assert!(count > 0);
    assert_eq!(
        answers,
        [
            answers[0],
            "UNSUPPORTED",
            answers[0],
            "UNSUPPORTED",
            "1",
            "UNSUPPORTED",
            answers[0],
            "UNSUPPORTED",
            "UNSUPPORTED",
            answers[0],
        ],
        "{stderr}"
    );
    assert!(stderr.contains("not valid UTF-8"), "{stderr}");
    assert!(
        stderr.contains("a query may have at most 16384 bytes"),
        "{stderr}"
    );
    assert!(stderr.contains("the query has 2000 clauses"), "{stderr}");
    assert!(stderr.contains("the query has 1025 clauses"), "{stderr}");
    // The refused huge line is shown cut short.
    assert!(
        stderr.len() < 10_000,
        "{} bytes of standard error",
        stderr.len()
    );
}
