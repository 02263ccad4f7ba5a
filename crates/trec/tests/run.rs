//! The run format: six columns, ranks from 1, scores in full, refused columns.

use apcache_trec::{RunError, RunWriter};

#[test]
fn six_columns_ranked_from_one() {
    let mut run = RunWriter::new(Vec::new(), "apcache-bm25").unwrap();
    run.write_topic("301", [("12", 14.672_f32), ("7", 3.0), ("900", 0.000_125)])
        .unwrap();
    run.write_topic("302", Vec::<(String, f32)>::new()).unwrap();
    run.write_topic("303", [("a-b".to_string(), 1.0e-7_f32)])
        .unwrap();
    assert_eq!(run.lines(), 4);
    let text = String::from_utf8(run.finish().unwrap()).unwrap();
    assert_eq!(
        text,
        "301 Q0 12 1 14.672 apcache-bm25\n\
         301 Q0 7 2 3 apcache-bm25\n\
         301 Q0 900 3 0.000125 apcache-bm25\n\
         303 Q0 a-b 1 0.0000001 apcache-bm25\n"
    );
    for line in text.lines() {
        let columns: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(columns.len(), 6);
        assert_eq!(columns[1], "Q0");
        columns[4].parse::<f32>().unwrap();
    }
}

#[test]
fn scores_that_differ_print_differently() {
    let (a, b) = (1.000_000_1_f32, 1.000_000_2_f32);
    assert_ne!(a, b);
    let mut run = RunWriter::new(Vec::new(), "t").unwrap();
    run.write_topic("1", [("x", a), ("y", b)]).unwrap();
    let text = String::from_utf8(run.finish().unwrap()).unwrap();
    let scores: Vec<f32> = text
        .lines()
        .map(|l| l.split(' ').nth(4).unwrap().parse().unwrap())
        .collect();
    assert_eq!(scores, [a, b]);
}

#[test]
fn columns_that_would_shift_are_refused() {
    assert!(matches!(
        RunWriter::new(Vec::new(), "my run"),
        Err(RunError::NotAWord { .. })
    ));
    assert!(matches!(
        RunWriter::new(Vec::new(), ""),
        Err(RunError::NotAWord { .. })
    ));
    let mut run = RunWriter::new(Vec::new(), "t").unwrap();
    let error = run.write_topic("1", [("doc 7", 1.0)]).unwrap_err();
    assert_eq!(
        error.to_string(),
        "the document id \"doc 7\" cannot go in a run file: it must be one word, without spaces"
    );
    assert!(matches!(
        run.write_topic("3 4", [("d", 1.0)]),
        Err(RunError::NotAWord { .. })
    ));
    assert!(matches!(
        run.write_topic("1", [("d", f32::NAN)]),
        Err(RunError::BadScore { .. })
    ));
}
