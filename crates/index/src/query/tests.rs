//! The parser against a table of Lucene's behaviour, and property tests: no input panics, and
//! printing a tree and parsing it back keeps its meaning.

use proptest::prelude::*;

use super::*;
use crate::analyzer::{Analyzer, AnalyzerConfig, Stemming, StopWords};

use DefaultOperator::{And, Or};

fn lone(operator: &str, position: usize) -> QueryError {
    QueryError::LoneOperator {
        operator: operator.to_owned(),
        position,
    }
}

fn unbalanced(position: usize) -> QueryError {
    QueryError::UnbalancedParenthesis { position }
}

/// Input, default operator, and the expected query printed, or the expected error. Each
/// expectation is what Lucene 9's classic `QueryParser` gives on a `StandardAnalyzer` field,
/// printed in the order `must`, `must_not`, `should`.
fn cases() -> Vec<(
    &'static str,
    DefaultOperator,
    Result<&'static str, QueryError>,
)> {
    vec![
        // Bare words and the default operator.
        ("a", Or, Ok("a")),
        // Boosts on words, phrases and groups; a boosted word stands out of a run of words.
        ("a^2 b", Or, Ok("a^2 b")),
        ("a b^0.5 c", And, Ok("+a +b^0.5 +c")),
        ("\"a b\"~1^3", Or, Ok("\"a b\"~1^3")),
        ("+(a b)^2 -c", Or, Ok("+(a b)^2 -c")),
        ("a b", Or, Ok("a b")),
        ("a b", And, Ok("+a +b")),
        ("a b c", And, Ok("+a +b +c")),
        // Modifiers.
        ("+a b", Or, Ok("+a b")),
        ("-a b", Or, Ok("-a b")),
        ("+a b", And, Ok("+a +b")),
        ("-a b", And, Ok("+b -a")),
        ("NOT a", Or, Ok("-a")),
        ("a NOT b", Or, Ok("-b a")),
        ("!a b", Or, Ok("-a b")),
        ("-a -b", Or, Ok("-a -b")),
        // Conjunctions: each changes the clause just before it.
        ("a AND b", Or, Ok("+a +b")),
        ("a OR b", Or, Ok("a b")),
        ("a OR b", And, Ok("a b")),
        ("a OR b AND c", Or, Ok("+b +c a")),
        ("a AND b OR c", Or, Ok("+a +b c")),
        ("a AND b OR c", And, Ok("+a b c")),
        ("a OR b c", And, Ok("+c a b")),
        ("a b c AND d", Or, Ok("+c +d a b")),
        ("a AND NOT b", Or, Ok("+a -b")),
        ("NOT a AND b", Or, Ok("+b -a")),
        ("a AND -b OR c", Or, Ok("+a -b c")),
        // With the AND default, a clause introduced by OR is optional even with a `+`.
        ("a OR +b", And, Ok("a b")),
        ("-a OR b", And, Ok("-a b")),
        ("a && b", Or, Ok("+a +b")),
        ("a || b", And, Ok("a b")),
        // `&&` and `||` glued to a word are part of it; the analyzer drops the punctuation.
        ("a &&b", Or, Ok("a b")),
        ("a&&b", Or, Ok("a b")),
        ("a ||b", And, Ok("+a +b")),
        // Keywords are upper case and whole tokens.
        ("a and b", Or, Ok("a and b")),
        ("ANDROID ORACLE", Or, Ok("android oracle")),
        // Parentheses.
        ("(a b) AND c", Or, Ok("+(a b) +c")),
        ("a (b (c d))", Or, Ok("a (b (c d))")),
        ("((a))", Or, Ok("a")),
        ("(-a)", Or, Ok("-a")),
        ("+(a b) -c", Or, Ok("+(a b) -c")),
        ("-(a b)", Or, Ok("-(a b)")),
        ("(a b) (c d)", And, Ok("+(+a +b) +(+c +d)")),
        ("a AND (b OR c) AND NOT (d e)", Or, Ok("+a +(b c) -(d e)")),
        // Analysis: case, Unicode, words the analyzer splits or drops.
        ("HeLLo WoRLD", Or, Ok("hello world")),
        ("Ærø", Or, Ok("ærø")),
        ("東京", Or, Ok("東 京")),
        ("wi-fi", Or, Ok("wi fi")),
        ("wi-fi", And, Ok("+wi +fi")),
        ("+wi-fi x", Or, Ok("+(wi fi) x")),
        ("U.S.A", Or, Ok("u.s.a")),
        ("U.S.A.", Or, Ok("u.s.a")),
        ("isn't", Or, Ok("isn't")),
        ("a + b", Or, Ok("a b")),
        ("a - b", Or, Ok("a b")),
        ("a ! b", Or, Ok("a b")),
        ("a . b", Or, Ok("a b")),
        ("a . AND b", Or, Ok("+a +b")),
        ("a AND (.)", Or, Ok("a")),
        ("+(.) a", Or, Ok("a")),
        // A run of bare words is analyzed as one text, its terms added flat (Lucene's
        // MultiTerm); a word just before AND or OR is a clause of its own.
        ("a wi-fi x", Or, Ok("a wi fi x")),
        ("a wi-fi AND c", Or, Ok("+(wi fi) +c a")),
        ("a wi-fi . AND c", Or, Ok("+fi +c a wi")),
        // Escapes.
        ("title\\:x", Or, Ok("title\\:x")),
        ("\\(a\\)", Or, Ok("a")),
        ("\\AND", Or, Ok("and")),
        ("a\\ b", Or, Ok("a b")),
        ("\\u0041\\u00C6", Or, Ok("aæ")),
        ("\\uD83D\\uDE00x", Or, Ok("😀 x")), // Lucene keeps emoji as tokens
        // Quotes: a single term is a term query, several a phrase.
        ("\"Foo\"", Or, Ok("foo")),
        ("\"a\\\"\" b", Or, Ok("a b")),
        ("\"a b\"", Or, Ok("\"a b\"")),
        ("x \"wi-fi\"", Or, Ok("x \"wi fi\"")),
        ("+\"a b\"~2 -c", Or, Ok("+\"a b\"~2 -c")),
        ("\"a b\"~2.7", Or, Ok("\"a b\"~2")),
        ("\"a b\"~", Or, Ok("\"a b\"")),
        ("\"a b\"~2147483647", Or, Ok("\"a b\"~2147483647")),
        ("\"a b\"~2147483647.9", Or, Ok("\"a b\"~2147483647")),
        // A slop past Lucene's largest int, or a negative one, is a mistake: refused.
        (
            "\"a b\"~2147483648",
            Or,
            Err(QueryError::InvalidSlop { position: 5 }),
        ),
        (
            "x \"a b\"~99999999999999999999999",
            Or,
            Err(QueryError::InvalidSlop { position: 7 }),
        ),
        (
            "\"a b\"~-1",
            Or,
            Err(QueryError::InvalidSlop { position: 5 }),
        ),
        (
            "\"a b\"~-",
            Or,
            Err(QueryError::InvalidSlop { position: 5 }),
        ),
        // Numbers after a fuzzy `~` or a boost `^` are never read: both are refused.
        (
            "a~99999999999999999999999",
            Or,
            Err(QueryError::FuzzyUnsupported { position: 1 }),
        ),
        (
            "a^99999999999999999999999999999999999999999",
            Or,
            Err(QueryError::InvalidBoost { position: 1 }),
        ),
        (
            "\"a b\"^-1",
            Or,
            Err(QueryError::InvalidBoost { position: 5 }),
        ),
        (
            "\"a\" b~",
            Or,
            Err(QueryError::FuzzyUnsupported { position: 5 }),
        ),
        (
            "\"a b",
            Or,
            Err(QueryError::UnterminatedQuote { position: 0 }),
        ),
        (
            "\"a\\",
            Or,
            Err(QueryError::UnterminatedQuote { position: 0 }),
        ),
        // Unsupported syntax.
        (
            "title:x",
            Or,
            Err(QueryError::FieldUnsupported {
                field: "title".into(),
            }),
        ),
        (
            "a b :x",
            Or,
            Err(QueryError::FieldUnsupported { field: "b".into() }),
        ),
        (
            "a*",
            Or,
            Err(QueryError::WildcardUnsupported { position: 1 }),
        ),
        (
            "a?c",
            Or,
            Err(QueryError::WildcardUnsupported { position: 1 }),
        ),
        (
            "*",
            Or,
            Err(QueryError::WildcardUnsupported { position: 0 }),
        ),
        ("a~", Or, Err(QueryError::FuzzyUnsupported { position: 1 })),
        ("a^", Or, Err(QueryError::InvalidBoost { position: 1 })),
        ("^2", Or, Err(QueryError::InvalidBoost { position: 0 })),
        (
            "[a TO b]",
            Or,
            Err(QueryError::RangeUnsupported { position: 0 }),
        ),
        (
            "x {a TO b}",
            Or,
            Err(QueryError::RangeUnsupported { position: 2 }),
        ),
        (
            "/ab/",
            Or,
            Err(QueryError::RegexUnsupported { position: 0 }),
        ),
        // Malformed input.
        ("", Or, Err(QueryError::Empty)),
        (" \t\u{3000}\n", Or, Err(QueryError::Empty)),
        ("a AND", Or, Err(lone("AND", 2))),
        ("a OR ", Or, Err(lone("OR", 2))),
        ("AND", Or, Err(lone("AND", 0))),
        ("AND a", Or, Err(lone("AND", 0))),
        ("a AND AND b", Or, Err(lone("AND", 2))),
        ("(OR a)", Or, Err(lone("OR", 1))),
        ("a &&", Or, Err(lone("&&", 2))),
        ("+", Or, Err(lone("+", 0))),
        ("-", Or, Err(lone("-", 0))),
        ("!", Or, Err(lone("!", 0))),
        ("a -", Or, Err(lone("-", 2))),
        ("a + ", Or, Err(lone("+", 2))),
        ("+-a", Or, Err(lone("+", 0))),
        ("NOT", Or, Err(lone("NOT", 0))),
        ("a NOT NOT b", Or, Err(lone("NOT", 2))),
        ("(a +)", Or, Err(lone("+", 3))),
        ("(a", Or, Err(unbalanced(0))),
        ("a (b", Or, Err(unbalanced(2))),
        ("a)", Or, Err(unbalanced(1))),
        ("a ) b", Or, Err(unbalanced(2))),
        (")", Or, Err(unbalanced(0))),
        ("((a) b", Or, Err(unbalanced(0))),
        ("()", Or, Err(QueryError::EmptyParentheses { position: 0 })),
        (
            "a ( )",
            Or,
            Err(QueryError::EmptyParentheses { position: 2 }),
        ),
        (
            "a\\",
            Or,
            Err(QueryError::UnterminatedEscape { position: 1 }),
        ),
        (
            "\\uZZZZ",
            Or,
            Err(QueryError::InvalidUnicodeEscape { position: 0 }),
        ),
        (
            "\\u00",
            Or,
            Err(QueryError::InvalidUnicodeEscape { position: 0 }),
        ),
        (
            "\\uD83D",
            Or,
            Err(QueryError::InvalidUnicodeEscape { position: 0 }),
        ),
        (
            "a ]",
            Or,
            Err(QueryError::UnexpectedCharacter {
                character: ']',
                position: 2,
            }),
        ),
        (
            ":x",
            Or,
            Err(QueryError::UnexpectedCharacter {
                character: ':',
                position: 0,
            }),
        ),
    ]
}

#[test]
fn parses_like_lucene() {
    let analyzer = Analyzer::default();
    let mut failures = Vec::new();
    for (input, operator, expected) in cases() {
        let got = parse_query(input, &analyzer, operator).map(|query| query.to_string());
        if got.as_deref().map_err(Clone::clone) != expected {
            failures.push(format!(
                "{input:?} ({operator:?}): got {got:?}, want {expected:?}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn table_has_enough_cases() {
    assert!(cases().len() >= 40);
}

#[test]
fn a_single_word_is_a_term() {
    let query = parse_query("Foo", &Analyzer::default(), Or).unwrap();
    assert_eq!(query, Query::Term("foo".into()));
}

#[test]
fn a_query_of_dropped_words_is_empty_and_matches_nothing() {
    for input in ["... ;", "&&&", "\"\"", "( . )", "- ."] {
        let query = parse_query(input, &Analyzer::default(), Or).unwrap();
        assert_eq!(query, Query::Bool(BoolQuery::default()), "{input:?}");
        assert!(!query.matches(&|_| true));
    }
}

#[test]
fn stop_words_disappear_from_queries() {
    let analyzer = Analyzer::new(AnalyzerConfig {
        stop_words: StopWords::English,
        stemming: Stemming::None,
    });
    let parse = |input| parse_query(input, &analyzer, Or).map(|query| query.to_string());
    assert_eq!(parse("the cat"), Ok("cat".into()));
    assert_eq!(parse("+the cat"), Ok("cat".into()));
    assert_eq!(parse("cat AND the"), Ok("cat".into()));
    assert_eq!(parse("dog the AND cat"), Ok("+dog +cat".into()));
    assert_eq!(parse("\"the cat\""), Ok("cat".into()));
    assert_eq!(parse("the"), Ok(String::new()));
}

#[test]
fn query_words_are_stemmed_like_documents() {
    let query = parse_query("Running +runners", &Analyzer::english(), Or).unwrap();
    assert_eq!(query.to_string(), "+runner run");
}

#[test]
fn nesting_is_limited() {
    let analyzer = Analyzer::default();
    let deep = |depth: usize| format!("{}a{}", "(".repeat(depth), ")".repeat(depth));
    assert_eq!(
        parse_query(&deep(MAX_NESTING), &analyzer, Or),
        Ok(Query::Term("a".into()))
    );
    assert_eq!(
        parse_query(&deep(MAX_NESTING + 1), &analyzer, Or),
        Err(QueryError::TooDeeplyNested {
            position: MAX_NESTING,
            limit: MAX_NESTING,
        })
    );
    let unclosed = "(".repeat(100_000);
    assert!(parse_query(&unclosed, &analyzer, Or).is_err());
}

#[test]
fn error_messages_say_what_to_do() {
    let analyzer = Analyzer::default();
    let message = |input| parse_query(input, &analyzer, Or).unwrap_err().to_string();
    assert_eq!(
        message("a~2"),
        "fuzzy queries ('~' at byte 1) are not supported; a slop ('~2') follows a quoted \
         phrase, and '\\~' searches for the character itself"
    );
    assert_eq!(
        message("\"a b\"~-1"),
        "invalid slop at byte 5: a phrase's slop is a whole number from 0 to 2147483647, \
         as in '\"a b\"~2'"
    );
    assert_eq!(
        message("a AND"),
        "'AND' at byte 2 needs a word or a group on each side; \
         write 'and' to search for the word itself"
    );
    assert_eq!(
        message("a -"),
        "'-' at byte 2 must be followed directly by a word or a group, as in '-word'"
    );
    assert!(message("title:x").contains("'title:"));
    assert!(message("(a").contains("byte 0"));
}

/// The notes of `input` parsed with `analyzer`, printed.
fn notes(input: &str, analyzer: &Analyzer) -> Vec<String> {
    let (_, notes) = parse_query_with_notes(input, analyzer, Or).unwrap();
    notes.iter().map(ToString::to_string).collect()
}

#[test]
fn notes_say_what_the_analyzer_dropped_split_or_changed() {
    let standard = Analyzer::default();
    let stop_words = Analyzer::new(AnalyzerConfig {
        stop_words: StopWords::English,
        stemming: Stemming::None,
    });
    let english = Analyzer::english();
    let cases: Vec<(&str, &Analyzer, Vec<&str>)> = vec![
        // A word merely lowercased is no note.
        ("Rust", &standard, vec![]),
        ("Rust AND (Search OR \"Index\")", &standard, vec![]),
        ("isn't U.S.A", &standard, vec![]),
        ("\"Rust\"", &standard, vec![]),
        // Characters dropped.
        (
            "c++",
            &standard,
            vec![r#""c++" was searched as "c": the analyzer drops "+""#],
        ),
        (
            "C# rust",
            &standard,
            vec![r##""C#" was searched as "c": the analyzer drops "#""##],
        ),
        (
            "c#+",
            &standard,
            vec![r##""c#+" was searched as "c": the analyzer drops "#" and "+""##],
        ),
        (
            "\"c++\"",
            &standard,
            vec![r#""c++" was searched as "c": the analyzer drops "+""#],
        ),
        // Words split.
        (
            "wi-fi",
            &standard,
            vec![r#""wi-fi" was split into "wi" and "fi""#],
        ),
        (
            "+a.b,c;d",
            &standard,
            vec![r#""a.b,c;d" was split into "a.b", "c" and "d""#],
        ),
        (
            "中文",
            &standard,
            vec![r#""中文" was split into "中" and "文""#],
        ),
        (
            "a-b-c-d-e-f-g",
            &standard,
            vec![r#""a-b-c-d-e-f-g" was split into "a", "b", "c", "d", "e" and 2 more"#],
        ),
        // Words dropped.
        (
            "rust ...",
            &standard,
            vec![r#""..." was dropped: the analyzer keeps no term of it"#],
        ),
        (
            "a - b",
            &standard,
            vec![r#""-" was dropped: the analyzer keeps no term of it"#],
        ),
        (
            "The cat",
            &stop_words,
            vec![r#""The" was dropped: it is a stop word"#],
        ),
        (
            "to-be cat",
            &stop_words,
            vec![r#""to-be" was dropped: the analyzer drops "-" and the stop words "to" and "be""#],
        ),
        (
            "\"the cat\"",
            &stop_words,
            vec![r#""the cat" was searched as "cat": the analyzer drops the stop word "the""#],
        ),
        // Stemming.
        (
            "Running",
            &english,
            vec![r#""Running" was searched as "run": the analyzer stems it"#],
        ),
        (
            "running.",
            &english,
            vec![r#""running." was searched as "run": the analyzer drops "." and stems it"#],
        ),
        // Each note once, in the order of the words.
        (
            "c++ x c++ -wi-fi",
            &standard,
            vec![
                r#""c++" was searched as "c": the analyzer drops "+""#,
                r#""wi-fi" was split into "wi" and "fi""#,
            ],
        ),
    ];
    let mut failures = Vec::new();
    for (input, analyzer, expected) in cases {
        let got = notes(input, analyzer);
        if got != expected {
            failures.push(format!("{input:?}: got {got:#?}, want {expected:#?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn notes_hold_the_word_and_its_terms() {
    let (query, notes) = parse_query_with_notes("c++", &Analyzer::default(), Or).unwrap();
    assert_eq!(query, Query::Term("c".into()));
    assert_eq!(
        notes,
        [QueryNote {
            word: "c++".into(),
            terms: vec!["c".into()],
            dropped_characters: vec!['+'],
            dropped_stop_words: vec![],
            stemmed: false,
        }]
    );
}

#[test]
fn notes_cut_long_words_short() {
    let word = "x".repeat(1000);
    let printed = notes(&format!("{word}."), &Analyzer::default());
    assert_eq!(printed.len(), 1);
    assert!(printed[0].len() < 400, "{}", printed[0]);
    assert!(printed[0].starts_with(&format!("\"{}…\" was split into", "x".repeat(40))));
}

/// A query string built mostly from the pieces of the syntax, so that random input reaches
/// deep into the parser.
fn syntax_soup() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("a"),
        Just("B"),
        Just("wi-fi"),
        Just("the"),
        Just("東京"),
        Just(" "),
        Just("  "),
        Just("("),
        Just(")"),
        Just("+"),
        Just("-"),
        Just("!"),
        Just("AND"),
        Just("OR"),
        Just("NOT"),
        Just("&&"),
        Just("||"),
        Just("\""),
        Just("\\"),
        Just("\\u"),
        Just("00e6"),
        Just("D83D"),
        Just(":"),
        Just("*"),
        Just("?"),
        Just("~"),
        Just("^"),
        Just("["),
        Just("]"),
        Just("{"),
        Just("}"),
        Just("/"),
        Just("."),
        Just("\u{3000}"),
    ];
    prop::collection::vec(piece, 0..24).prop_map(|pieces| pieces.concat())
}

fn check_never_panics(text: &str) -> Result<(), TestCaseError> {
    for analyzer in [Analyzer::default(), Analyzer::english()] {
        for operator in [Or, And] {
            let parsed = parse_query(text, &analyzer, operator);
            let with_notes = parse_query_with_notes(text, &analyzer, operator);
            prop_assert_eq!(
                &parsed,
                &with_notes
                    .as_ref()
                    .map(|(query, _)| query.clone())
                    .map_err(Clone::clone)
            );
            if let Ok((_, notes)) = &with_notes {
                for note in notes {
                    let _ = note.to_string();
                }
            }
            match parsed {
                Ok(query) => {
                    let _ = query.to_string();
                    let _ = query.terms();
                }
                Err(error) => {
                    let _ = error.to_string();
                    if let Some(position) = error.position() {
                        prop_assert!(position < text.len(), "{error:?} for {text:?}");
                        prop_assert!(text.is_char_boundary(position), "{error:?}");
                    }
                }
            }
        }
    }
    Ok(())
}

/// A random query over a vocabulary of six words; every `Bool` has at least one clause, since
/// an empty group has no syntax.
fn query_tree() -> impl Strategy<Value = Query> {
    const VOCABULARY: [&str; 6] = ["a", "b", "c", "d", "e", "f"];
    let leaf = prop::sample::select(&VOCABULARY[..]).prop_map(|term| Query::Term(term.into()));
    leaf.prop_recursive(4, 32, 4, |inner| {
        let clauses = || prop::collection::vec(inner.clone(), 0..3);
        (clauses(), clauses(), clauses())
            .prop_filter("a group needs a clause", |(must, should, must_not)| {
                !(must.is_empty() && should.is_empty() && must_not.is_empty())
            })
            .prop_map(|(must, should, must_not)| {
                Query::Bool(BoolQuery {
                    must,
                    should,
                    must_not,
                })
            })
    })
}

fn has_terms(mask: u8) -> impl Fn(&str) -> bool {
    move |term: &str| {
        let index = u32::from(term.as_bytes()[0] - b'a');
        mask & (1 << index) != 0
    }
}

proptest! {
    #[test]
    fn arbitrary_text_never_panics(text in ".*") {
        check_never_panics(&text)?;
    }

    #[test]
    fn syntax_soup_never_panics(text in syntax_soup()) {
        check_never_panics(&text)?;
    }

    #[test]
    fn printing_and_parsing_keeps_the_meaning(tree in query_tree()) {
        let printed = tree.to_string();
        let parsed = parse_query(&printed, &Analyzer::default(), Or);
        prop_assert!(parsed.is_ok(), "{printed:?}: {parsed:?}");
        let parsed = parsed.unwrap();
        let simplified = tree.clone().simplified();
        for mask in 0..64u8 {
            let has_term = has_terms(mask);
            let expected = tree.matches(&has_term);
            prop_assert_eq!(parsed.matches(&has_term), expected, "{} as {}", printed, parsed);
            prop_assert_eq!(simplified.matches(&has_term), expected, "simplified {}", simplified);
        }
    }

    #[test]
    fn parsed_queries_print_and_parse_back_to_the_same_meaning(text in syntax_soup()) {
        let analyzer = Analyzer::default();
        if let Ok(query) = parse_query(&text, &analyzer, Or) {
            let printed = query.to_string();
            let reparsed = parse_query(&printed, &analyzer, Or);
            let terms = query.terms();
            prop_assume!(terms.len() <= 8);
            match reparsed {
                Ok(reparsed) => {
                    for mask in 0..(1u32 << terms.len()) {
                        let has_term = |term: &str| {
                            terms.iter().position(|t| *t == term).is_some_and(|i| mask & (1 << i) != 0)
                        };
                        prop_assert_eq!(
                            reparsed.matches(&has_term),
                            query.matches(&has_term),
                            "{:?} -> {} -> {}", text, printed, reparsed
                        );
                    }
                }
                // Only the empty query prints as nothing.
                Err(error) => {
                    prop_assert_eq!(&error, &QueryError::Empty, "{:?} -> {:?}", text, printed);
                    prop_assert_eq!(query, Query::Bool(BoolQuery::default()));
                }
            }
        }
    }
}
