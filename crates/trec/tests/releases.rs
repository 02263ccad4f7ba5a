//! Topic files in the shapes of the official releases, read as shipped: the Web tracks
//! (2009-2014: a root element named after the year, a `<!DOCTYPE>` with an internal subset,
//! subtopics), Robust04 and Terabyte (classic SGML), Million Query (`qid:query`, and
//! `qid:priority:query` in 2009), MS MARCO and TREC DL (`qid<TAB>query`). The fixtures in
//! `tests/fixtures` are written by hand in those shapes, a few topics each; every one is also
//! read with a UTF-8 byte-order mark in front and with CRLF line ends, as files passed
//! through Windows tools come.

use std::path::PathBuf;

use apcache_trec::{parse_topics, read_topics, Topic, TopicError, TopicFormat};

struct Release {
    file: &'static str,
    format: TopicFormat,
    topics: &'static [(&'static str, &'static str)],
}

const RELEASES: &[Release] = &[
    Release {
        file: "web2009.xml",
        format: TopicFormat::Trec,
        topics: &[
            ("1", "lighthouse keeper history"),
            ("2", "jaguar"),
            ("3", "b&b rentals"),
        ],
    },
    Release {
        file: "web2010.xml",
        format: TopicFormat::Trec,
        topics: &[("51", "river delta formation"), ("52", "mercury")],
    },
    Release {
        file: "web2011.xml",
        format: TopicFormat::Trec,
        topics: &[("101", "solar oven plans"), ("102", "harbor seal diet")],
    },
    Release {
        file: "web2012.xml",
        format: TopicFormat::Trec,
        topics: &[("151", "glacier retreat photos"), ("152", "python")],
    },
    Release {
        file: "web2013.xml",
        format: TopicFormat::Trec,
        topics: &[("201", "tide pool animals"), ("202", "wool felting")],
    },
    Release {
        file: "web2014.xml",
        format: TopicFormat::Trec,
        topics: &[
            ("251", "cast iron skillet care"),
            ("252", "bird migration routes"),
        ],
    },
    Release {
        file: "robust04.txt",
        format: TopicFormat::Trec,
        topics: &[
            ("301", "Coastal Erosion Control"),
            ("302", "Rural Broadband Access"),
            ("672", "NRA membership profile"),
        ],
    },
    Release {
        file: "terabyte.txt",
        format: TopicFormat::Trec,
        topics: &[
            ("701", "U.S. lighthouse history"),
            ("702", "pegasus satellite launches"),
            ("850", "Mississippi River flood"),
        ],
    },
    Release {
        file: "mq2007.txt",
        format: TopicFormat::Colon,
        topics: &[
            ("1", "after school tutoring programs"),
            ("2", "cheap flights to denver"),
            ("3", "star trek: the next generation"),
            ("4", "1:1 scale model"),
        ],
    },
    Release {
        file: "mq2008.txt",
        format: TopicFormat::Colon,
        topics: &[
            ("10001", "comparing state tax rates"),
            ("10002", "lawn mower repair"),
            ("10003", "what is a 401k"),
        ],
    },
    Release {
        file: "mq2009.txt",
        format: TopicFormat::Colon,
        topics: &[
            ("20001", "garden pond pumps"),
            ("20002", "used boat values"),
            ("20003", "nba: finals schedule"),
            ("20004", "weather radar"),
        ],
    },
    Release {
        file: "msmarco-dev.tsv",
        format: TopicFormat::Tsv,
        topics: &[
            ("1048585", "what is paula deen's brother"),
            ("2", "Androgen receptor define"),
            ("524332", "treasury: what does it do"),
            ("1048642", "what is a tidal bore"),
        ],
    },
    Release {
        file: "dl2019.tsv",
        format: TopicFormat::Tsv,
        topics: &[
            ("104861", "how long do goldfish live"),
            ("1037796", "who painted the night watch"),
            ("1063777", "why do cats purr"),
        ],
    },
];

fn fixture(file: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(file)
}

fn pairs(topics: &[Topic]) -> Vec<(&str, &str)> {
    topics
        .iter()
        .map(|t| (t.id.as_str(), t.query.as_str()))
        .collect()
}

#[test]
fn every_release_is_read_as_shipped() {
    for release in RELEASES {
        let path = fixture(release.file);
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            TopicFormat::detect(&text),
            release.format,
            "{}",
            release.file
        );
        let topics = read_topics(&path, None).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(pairs(&topics), release.topics, "{}", release.file);
        // Named, the form reads the same.
        let named = read_topics(&path, Some(release.format)).unwrap();
        assert_eq!(named, topics, "{}", release.file);
    }
}

#[test]
fn a_byte_order_mark_and_crlf_line_ends_change_nothing() {
    let dir = tempfile::tempdir().unwrap();
    for release in RELEASES {
        let text = std::fs::read_to_string(fixture(release.file)).unwrap();
        let expected = parse_topics(&text, None).unwrap();
        let crlf = text.replace('\n', "\r\n");
        for variant in [
            format!("\u{feff}{text}"),
            crlf.clone(),
            format!("\u{feff}{crlf}"),
        ] {
            assert_eq!(
                TopicFormat::detect(&variant),
                release.format,
                "{}",
                release.file
            );
            // Through a file, as the command line and Python read it.
            let path = dir.path().join(release.file);
            std::fs::write(&path, &variant).unwrap();
            let topics = read_topics(&path, None).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(topics, expected, "{} as {variant:?}", release.file);
        }
    }
}

#[test]
fn the_lines_of_topics_are_those_of_the_file() {
    let web = read_topics(&fixture("web2009.xml"), None).unwrap();
    let lines: Vec<usize> = web.iter().map(|t| t.line).collect();
    assert_eq!(lines, [15, 29, 42]);
    let robust = read_topics(&fixture("robust04.txt"), None).unwrap();
    let lines: Vec<usize> = robust.iter().map(|t| t.line).collect();
    assert_eq!(lines, [1, 15, 29]);
    let mq = read_topics(&fixture("mq2009.txt"), None).unwrap();
    assert_eq!(mq[2].line, 3);
}

/// The error's line and message, for a text that must fail.
fn error(text: &str, format: Option<TopicFormat>) -> (usize, String) {
    match parse_topics(text, format) {
        Err(TopicError::Malformed { line, message, .. }) => (line, message),
        other => panic!("expected a malformed-file error for {text:?}, got {other:?}"),
    }
}

#[test]
fn each_file_has_one_form_and_a_line_that_breaks_it_is_named() {
    let cases: &[(&str, Option<TopicFormat>, usize, &str)] = &[
        // A TSV file (its first line has a tab) with a colon line.
        ("1\tfirst\n\n2:second\n", None, 3, "no tab"),
        // A colon file with a TSV line and a line of neither.
        ("1:first\n2\tsecond\n", None, 2, "no colon"),
        ("1:first\nwhat is: this\n", None, 2, "has spaces"),
        ("10001:first\nsecond\n", None, 2, "no colon"),
        ("1:first\n:second\n", None, 2, "without a number"),
        ("1:first\n2:   \n", None, 2, "empty query"),
        ("\u{feff}1:a\n1:b\n", None, 2, "appears twice (first at line 1)"),
        ("\u{feff}1\tok\n2 no tab\n", None, 2, "no tab"),
        (
            "\u{feff}<webtrack2009>\n<topic number=\"1\">\n<query>q</query>\n</webtrack2009>\n",
            None,
            4,
            "</webtrack2009> inside the topic opened at line 2",
        ),
        (
            "<webtrack2010>\n<topic number=\"51\"><query>q</query></topic>\nstray\n</webtrack2010>\n",
            None,
            3,
            "text outside any topic",
        ),
        (
            "<webtrack2011>\n<topic number=\"1\"><query>q</query></topic>\n<info>x</info>\n</webtrack2011>\n",
            None,
            3,
            "<info> inside the <webtrack2011> opened at line 1 but outside any topic",
        ),
        (
            "<?xml version=\"1.0\"?>\n<!DOCTYPE webtrack2009 [\n<!ELEMENT topic (query)>\n",
            None,
            2,
            "a declaration that is never closed",
        ),
        (
            "<topics><topic number=\"1\"><query><![CDATA[a < b</query></topic></topics>",
            None,
            1,
            "<![CDATA[ section that is never closed",
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
fn forms_are_named_and_the_colon_form_can_be_forced() {
    assert_eq!("colon".parse::<TopicFormat>(), Ok(TopicFormat::Colon));
    assert_eq!(TopicFormat::Colon.to_string(), "colon");
    // A colon file whose first line a guess would not take for one: named, it is read.
    let text = "q-1:first query\nq-2:second: with a colon\n";
    assert_eq!(TopicFormat::detect(text), TopicFormat::Tsv);
    let topics = parse_topics(text, Some(TopicFormat::Colon)).unwrap();
    assert_eq!(
        pairs(&topics),
        [("q-1", "first query"), ("q-2", "second: with a colon")]
    );
    // A priority is dropped only when every line has one.
    let topics = parse_topics("1:2:x\n3:4:y\n", None).unwrap();
    assert_eq!(pairs(&topics), [("1", "x"), ("3", "y")]);
    let topics = parse_topics("1:2:x\n3:y\n", None).unwrap();
    assert_eq!(pairs(&topics), [("1", "2:x"), ("3", "y")]);
}

#[test]
fn cdata_text_is_taken_as_it_stands() {
    let text = "<topics>\n<topic number=\"7\">\n<query><![CDATA[AT&amp;T <b> plans]]></query>\n\
                </topic>\n</topics>\n";
    let topics = parse_topics(text, None).unwrap();
    assert_eq!(pairs(&topics), [("7", "AT&amp;T <b> plans")]);
}
