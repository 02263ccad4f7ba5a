//! Free text as a query: every term the index's analyzer finds in the text, as optional
//! clauses of one disjunction (a "bag of words").
//!
//! Real-world query text (TREC topic titles, a search box, questions) is full of characters
//! that [`parse_query`](crate::query::parse_query) reads as syntax: `c++`, `u.s.`, `don't`,
//! `AIDS: treatment`, `a/b`, an unbalanced parenthesis or quote. Parsed as Lucene syntax such
//! text is refused or means something else (`-` prohibits, `AND` requires); as a bag of words
//! it cannot fail, and it searches what the same text indexed as a document holds. This is
//! what TREC runs use (`apcache search --topics`, `--parse plain`), as Anserini's and
//! pyserini's bag-of-words queries do.
//!
//! A term the text holds twice is two clauses, so it weighs twice, as in Lucene's
//! `QueryParser` on the same words (query term frequency). Text with no terms (only
//! punctuation, only stop words) gives the empty disjunction, which matches nothing.

use crate::analyzer::Analyzer;
use crate::query::{BoolQuery, Query};

/// The disjunction of the terms `analyzer` finds in `text`, in order; a single term is a
/// [`Query::Term`], no term an empty [`Query::Bool`] (which matches nothing).
///
/// ```
/// use apcache_index::analyzer::Analyzer;
/// use apcache_index::plain_query::plain_query;
///
/// let query = plain_query("C++ in the U.S.: don't (panic", &Analyzer::default());
/// assert_eq!(query.to_string(), "c in the u.s don't panic");
/// ```
pub fn plain_query(text: &str, analyzer: &Analyzer) -> Query {
    let mut should: Vec<Query> = Vec::new();
    analyzer.for_each_token(text, |term| should.push(Query::Term(term.to_owned())));
    if should.len() == 1 {
        return should.pop().expect("one term");
    }
    Query::Bool(BoolQuery {
        should,
        ..BoolQuery::default()
    })
}

#[cfg(test)]
mod tests {
    use super::plain_query;
    use crate::analyzer::{Analyzer, AnalyzerConfig, StopWords};
    use crate::query::{parse_query, DefaultOperator, Query};

    /// The query's clauses as printed (every clause a term, none required or prohibited).
    fn terms(query: &Query) -> Vec<String> {
        let printed = query.to_string();
        assert!(
            !printed.contains(['+', '-', '(']),
            "only optional terms: {printed}"
        );
        printed
            .split(' ')
            .filter(|t| !t.is_empty())
            .map(|t| t.replace('\\', ""))
            .collect()
    }

    #[test]
    fn query_syntax_is_read_as_text() {
        let analyzer = Analyzer::default();
        for text in [
            "c++",
            "u.s. policy",
            "AIDS: treatment AND -cure",
            "a/b \"unbalanced (paren",
            "title:x wild* fuzzy~2 [a TO b]",
            "!!! ||| &&",
        ] {
            let query = plain_query(text, &analyzer);
            assert_eq!(terms(&query), analyzer.tokens(text), "{text:?}");
        }
    }

    #[test]
    fn no_terms_match_nothing() {
        let stop = Analyzer::new(AnalyzerConfig {
            stop_words: StopWords::English,
            ..AnalyzerConfig::default()
        });
        for query in [
            plain_query("", &stop),
            plain_query("?! --", &stop),
            plain_query("the of", &stop),
        ] {
            assert!(terms(&query).is_empty());
            assert!(!query.matches(&|_| true));
        }
    }

    #[test]
    fn plain_words_mean_what_the_parser_makes_of_them() {
        // Where the text has no syntax, the bag of words is the parser's disjunction.
        let analyzer = Analyzer::default();
        for text in ["griffith observatory", "river", "new york city new"] {
            let parsed = parse_query(text, &analyzer, DefaultOperator::Or).unwrap();
            assert_eq!(
                plain_query(text, &analyzer),
                parsed.simplified(),
                "{text:?}"
            );
        }
    }
}
