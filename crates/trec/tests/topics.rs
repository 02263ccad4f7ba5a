//! Topic files in the three forms, and the errors a malformed one gives (with its line).

use apcache_trec::{parse_topics, read_topics, Topic, TopicError, TopicFormat};

fn pairs(topics: &[Topic]) -> Vec<(&str, &str)> {
    topics
        .iter()
        .map(|t| (t.id.as_str(), t.query.as_str()))
        .collect()
}

/// The error's line and message, for a text that must fail.
fn error(text: &str, format: Option<TopicFormat>) -> (usize, String) {
    match parse_topics(text, format) {
        Err(TopicError::Malformed { line, message, .. }) => (line, message),
        other => panic!("expected a malformed-file error, got {other:?}"),
    }
}

const CLASSIC: &str = "\
<top>
<num> Number: 301
<title> International Organized Crime

<desc> Description:
Identify organizations that participate in international criminal activity.

<narr> Narrative:
A relevant document must as a minimum identify the organization.
</top>


<top>

<num> Number:  051
<dom> Domain: International Economics
<title> Topic:  Airbus Subsidies
  & the U.S. <desc> Description:
Document will discuss government assistance to Airbus.
</top>
";

#[test]
fn classic_sgml_topics_take_the_title() {
    let topics = parse_topics(CLASSIC, None).unwrap();
    assert_eq!(
        pairs(&topics),
        [
            ("301", "International Organized Crime"),
            ("051", "Airbus Subsidies & the U.S."),
        ]
    );
    assert_eq!((topics[0].line, topics[1].line), (1, 13));
}

#[test]
fn xml_topics_take_the_query_else_the_title() {
    let text = r#"<?xml version="1.0" encoding="UTF-8"?>
<!-- Web track 2009 -->
<topics>
  <topic number="1" type="faceted">
    <query>obama family tree</query>
    <description>Find information on President Barack Obama's family history.</description>
    <subtopic number="1" type="nav">Find the TIME magazine photo essay.</subtopic>
  </topic>
  <topic number='2'>
    <title>AT&amp;T  phone
      plans</title>
    <narrative>x &lt; y</narrative>
  </topic>
</topics>
"#;
    let topics = parse_topics(text, None).unwrap();
    assert_eq!(
        pairs(&topics),
        [("1", "obama family tree"), ("2", "AT&T phone plans")]
    );
    assert_eq!(topics[0].line, 4);
}

#[test]
fn tsv_topics_keep_their_punctuation() {
    let text = "1\tc++ compilers\n\n2019-2\t  u.s. state: don't   (panic\n";
    let topics = parse_topics(text, None).unwrap();
    assert_eq!(
        pairs(&topics),
        [
            ("1", "c++ compilers"),
            ("2019-2", "u.s. state: don't (panic")
        ]
    );
    assert_eq!(topics[1].line, 3);
    assert_eq!(TopicFormat::detect(text), TopicFormat::Tsv);
    assert_eq!(TopicFormat::detect(CLASSIC), TopicFormat::Trec);
}

#[test]
fn malformed_files_name_their_line() {
    let cases: &[(&str, Option<TopicFormat>, usize, &str)] = &[
        ("1\tok\n2 no tab here\n", None, 2, "no tab"),
        ("1\tok\n\t  query\n", Some(TopicFormat::Tsv), 2, "empty"),
        ("1\tok\n2\t   \n", None, 2, "empty query"),
        ("1\ta\n1\tb\n", None, 2, "appears twice (first at line 1)"),
        ("<top>\n<title> x\n</top>\n", None, 1, "no <num>"),
        (
            "<top>\n<num> Number: 7\n<desc> only a description\n</top>\n",
            None,
            1,
            "no <title>",
        ),
        (
            "<top>\n<num> Number:\n<title> x\n</top>\n",
            None,
            2,
            "without a number",
        ),
        (
            "<top>\n<num> Number: 7\n<title> x\n",
            None,
            1,
            "never closed",
        ),
        (
            "<top>\n<num> Number: 7\n<title> x\n<top>\n",
            None,
            4,
            "inside the topic opened at line 1",
        ),
        (
            "<top>\n<num> 7\n<title> x\n</top>\nstray words\n",
            None,
            5,
            "text outside any topic",
        ),
        ("\n\n</top>\n", None, 3, "without a <top>"),
        (
            "<topics>\n<topic type=\"x\">\n<query>q</query></topic>",
            None,
            2,
            "number",
        ),
        (
            "<topic number=\"1\"><query>q</query></top>",
            None,
            1,
            "closes the <topic>",
        ),
        ("<title> x\n", None, 1, "outside any topic"),
        ("<top><num> 1 2 <title> x </top>", None, 1, "has spaces"),
        (
            "<top>\n<num> 1\n<title> a\n</top>\n<top>\n<num> 1\n<title> b\n</top>\n",
            None,
            5,
            "appears twice",
        ),
    ];
    for &(text, format, line, needle) in cases {
        let (got_line, message) = error(text, format);
        assert_eq!(got_line, line, "line of {message:?} for {text:?}");
        assert!(
            message.contains(needle),
            "{message:?} should say {needle:?} ({text:?})"
        );
    }
}

#[test]
fn no_topics_is_an_error() {
    for text in ["", "\n\n", "<topics>\n</topics>\n"] {
        assert!(
            matches!(parse_topics(text, None), Err(TopicError::Empty { .. })),
            "{text:?}"
        );
    }
}

#[test]
fn files_are_named_in_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("topics.tsv");
    std::fs::write(&path, "1\tfine\nbroken\n").unwrap();
    let message = read_topics(&path, None).unwrap_err().to_string();
    assert_eq!(
        message,
        format!(
            "{}: line 2: expected qid<TAB>query, found no tab in \"broken\"",
            path.display()
        )
    );

    std::fs::write(&path, b"1\tfine\n2\tbad \xff byte\n").unwrap();
    let message = read_topics(&path, None).unwrap_err().to_string();
    assert!(
        message.contains("line 2: not UTF-8 text (a Latin-1 file"),
        "{message}"
    );

    let missing = dir.path().join("missing.txt");
    let message = read_topics(&missing, None).unwrap_err().to_string();
    assert!(
        message.starts_with("cannot read the topic file"),
        "{message}"
    );
}
