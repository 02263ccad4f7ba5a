//! [`Query`] and [`BoolQuery`]: the typed tree a query string is parsed into, with the
//! reference semantics every evaluator must agree with.

use std::collections::BTreeSet;
use std::fmt;

/// A parsed query.
///
/// ```
/// use apcache_index::query::{BoolQuery, Query};
///
/// let query = Query::Bool(BoolQuery {
///     must: vec![Query::Term("rust".into())],
///     should: vec![],
///     must_not: vec![Query::Term("java".into())],
/// });
/// assert_eq!(query.to_string(), "+rust -java");
/// assert!(query.matches(&|term: &str| term == "rust"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Query {
    /// Documents containing this term. The term is analyzed: it is compared with the index's
    /// terms as it is.
    Term(String),
    /// A combination of sub-queries.
    Bool(BoolQuery),
    /// Documents where terms occur in a given order and distance (`"new york"`, `"a b"~2`).
    Phrase(PhraseQuery),
    /// The documents the inner query matches, scored 0: Elasticsearch's filter context (a
    /// `bool` query's `filter`, `constant_score`'s filter).
    Filter(Box<Query>),
    /// Documents with a value of a field in a range, scored 1 (Elasticsearch's `range`).
    Range(RangeQuery),
    /// Every document, scored 1 (`match_all`, `*:*`).
    All,
    /// The inner query with its score multiplied by a factor (`word^2`, Lucene's
    /// `BoostQuery`, Elasticsearch's `boost`).
    Boost(Box<Query>, Factor),
    /// Documents any of the queries matches, scored by the best of them plus `tie_breaker`
    /// times the others' (Lucene's `DisjunctionMaxQuery`, Elasticsearch's `dis_max` and
    /// `multi_match` over `best_fields`).
    DisMax(DisMaxQuery),
}

/// A score factor: a finite number at least 0, compared by its bits (so that queries can be
/// compared and hashed).
#[derive(Debug, Clone, Copy)]
pub struct Factor(f32);

impl Factor {
    /// The factor `value`; `None` for a negative, infinite or NaN one.
    pub fn new(value: f32) -> Option<Factor> {
        (value.is_finite() && value >= 0.0).then_some(Factor(value))
    }

    /// The factor 1.
    pub const ONE: Factor = Factor(1.0);

    /// Its value.
    pub fn get(self) -> f32 {
        self.0
    }
}

impl PartialEq for Factor {
    fn eq(&self, other: &Factor) -> bool {
        self.0.to_bits() == other.0.to_bits()
    }
}

impl Eq for Factor {}

impl std::hash::Hash for Factor {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.to_bits().hash(state);
    }
}

/// The clauses of a [`Query::DisMax`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DisMaxQuery {
    /// The alternatives.
    pub queries: Vec<Query>,
    /// The weight of the scores of the alternatives that are not the best (0: the best alone).
    pub tie_breaker: Factor,
}

/// Documents with a value of `field` between two bounds, read from the field's column.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RangeQuery {
    /// The field (dotted name).
    pub field: String,
    /// The bounds, in the form the field's column keeps values.
    pub bounds: RangeBounds,
}

/// The bounds of a [`RangeQuery`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RangeBounds {
    /// A numeric column's values (integers, dates in milliseconds, booleans as 0 and 1,
    /// doubles in sortable form) from `lower` to `upper`, both included; empty when `lower >
    /// upper`.
    Numbers {
        /// The least value matched.
        lower: i64,
        /// The greatest value matched.
        upper: i64,
    },
    /// A keyword column's values between two strings (byte order).
    Keywords {
        /// The lower bound.
        lower: std::ops::Bound<String>,
        /// The upper bound.
        upper: std::ops::Bound<String>,
    },
}

/// Terms at given distances from each other, as Lucene's `PhraseQuery` matches them.
///
/// With `slop` 0 a document matches where every term occurs at its position relative to the
/// others; its phrase frequency is the number of such places. With a larger `slop` the terms
/// may be moved: a place matches when the terms' positions, each less its position in the
/// phrase, span at most `slop`, and it counts `1 / (1 + span)` towards the frequency (Lucene's
/// sloppy phrase).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PhraseQuery {
    /// The terms (analyzed) with their positions in the phrase: the first at 0, increasing,
    /// with a gap where the analyzer dropped a word (a stop word). At least two terms.
    pub terms: Vec<(u32, String)>,
    /// The most moves a match may be away from the exact phrase.
    pub slop: u32,
}

/// Sub-queries combined the way Lucene's `BooleanQuery` combines its clauses.
///
/// A document matches when it matches none of `must_not` and then, if `must` is not empty,
/// every query of `must`; if `must` is empty, at least one query of `should`. With `must`
/// present, `should` only adds to the score. Like Lucene, a query with neither `must` nor
/// `should` (only `must_not`, or nothing at all) matches no document.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BoolQuery {
    /// Clauses a document must match (`+term`).
    pub must: Vec<Query>,
    /// Optional clauses (a bare `term`): at least one must match when `must` is empty.
    pub should: Vec<Query>,
    /// Clauses a document must not match (`-term`, `NOT term`).
    pub must_not: Vec<Query>,
}

impl Query {
    /// The distinct terms of the query, prohibited ones included, sorted.
    pub fn terms(&self) -> Vec<&str> {
        if let Query::Term(term) = self {
            return vec![term.as_str()];
        }
        let mut terms = BTreeSet::new();
        self.collect_terms(&mut terms);
        terms.into_iter().collect()
    }

    /// The distinct terms that stand in a phrase of the query, sorted: those whose positions
    /// its evaluation reads.
    pub fn phrase_terms(&self) -> Vec<&str> {
        let mut terms = BTreeSet::new();
        self.collect_phrase_terms(&mut terms);
        terms.into_iter().collect()
    }

    fn collect_phrase_terms<'a>(&'a self, terms: &mut BTreeSet<&'a str>) {
        match self {
            Query::Term(_) | Query::Range(_) | Query::All => {}
            Query::Filter(inner) | Query::Boost(inner, _) => inner.collect_phrase_terms(terms),
            Query::DisMax(d) => d.queries.iter().for_each(|q| q.collect_phrase_terms(terms)),
            Query::Bool(bool_query) => bool_query
                .clauses()
                .for_each(|(_, clause)| clause.collect_phrase_terms(terms)),
            Query::Phrase(phrase) => terms.extend(phrase.terms.iter().map(|(_, t)| t.as_str())),
        }
    }

    fn collect_terms<'a>(&'a self, terms: &mut BTreeSet<&'a str>) {
        match self {
            Query::Term(term) => {
                terms.insert(term.as_str());
            }
            Query::Range(_) | Query::All => {}
            Query::Filter(inner) | Query::Boost(inner, _) => inner.collect_terms(terms),
            Query::DisMax(d) => d.queries.iter().for_each(|q| q.collect_terms(terms)),
            Query::Bool(bool_query) => bool_query
                .clauses()
                .for_each(|(_, clause)| clause.collect_terms(terms)),
            Query::Phrase(phrase) => terms.extend(phrase.terms.iter().map(|(_, t)| t.as_str())),
        }
    }

    /// Whether a document holding exactly the terms for which `has_term` is true matches: the
    /// exhaustive reference semantics that evaluators are tested against (see [`BoolQuery`]).
    /// A phrase needs positions to decide; here it matches where all its terms occur, which
    /// is what a document needs to match it. A range matches nothing here (see
    /// [`Query::matches_with`]).
    pub fn matches(&self, has_term: &dyn Fn(&str) -> bool) -> bool {
        self.matches_with(has_term, &|_| false)
    }

    /// Like [`Query::matches`], ranges decided by `in_range`.
    pub fn matches_with(
        &self,
        has_term: &dyn Fn(&str) -> bool,
        in_range: &dyn Fn(&RangeQuery) -> bool,
    ) -> bool {
        match self {
            Query::Term(term) => has_term(term),
            Query::Bool(bool_query) => bool_query.matches_with(has_term, in_range),
            Query::Phrase(phrase) => phrase.terms.iter().all(|(_, term)| has_term(term)),
            Query::Filter(inner) | Query::Boost(inner, _) => inner.matches_with(has_term, in_range),
            Query::DisMax(d) => d.queries.iter().any(|q| q.matches_with(has_term, in_range)),
            Query::Range(range) => in_range(range),
            Query::All => true,
        }
    }

    /// The same query with every `Bool` that holds a single `must` or a single `should` clause
    /// and nothing else replaced by that clause, at every depth. Matches the same documents.
    pub fn simplified(self) -> Query {
        let Query::Bool(BoolQuery {
            must,
            should,
            must_not,
        }) = self
        else {
            return self;
        };
        let simplify = |clauses: Vec<Query>| -> Vec<Query> {
            clauses.into_iter().map(Query::simplified).collect()
        };
        let (mut must, mut should, must_not) =
            (simplify(must), simplify(should), simplify(must_not));
        if must_not.is_empty() {
            match (must.len(), should.len()) {
                (1, 0) => return must.pop().expect("one must clause"),
                (0, 1) => return should.pop().expect("one should clause"),
                _ => {}
            }
        }
        Query::Bool(BoolQuery {
            must,
            should,
            must_not,
        })
    }
}

impl BoolQuery {
    /// Whether a document holding exactly the terms for which `has_term` is true matches.
    pub fn matches(&self, has_term: &dyn Fn(&str) -> bool) -> bool {
        self.matches_with(has_term, &|_| false)
    }

    /// Like [`BoolQuery::matches`], ranges decided by `in_range`.
    pub fn matches_with(
        &self,
        has_term: &dyn Fn(&str) -> bool,
        in_range: &dyn Fn(&RangeQuery) -> bool,
    ) -> bool {
        let matches = |query: &Query| query.matches_with(has_term, in_range);
        if self.must_not.iter().any(matches) {
            return false;
        }
        if self.must.is_empty() {
            self.should.iter().any(matches)
        } else {
            self.must.iter().all(matches)
        }
    }

    /// Every clause with the prefix that marks its kind in query syntax (`+`, `-` or none), in
    /// the order [`Display`](fmt::Display) prints them: `must`, `must_not`, `should`.
    fn clauses(&self) -> impl Iterator<Item = (&'static str, &Query)> {
        let must = self.must.iter().map(|query| ("+", query));
        let must_not = self.must_not.iter().map(|query| ("-", query));
        let should = self.should.iter().map(|query| ("", query));
        must.chain(must_not).chain(should)
    }
}

/// Prints the query in Lucene syntax, which `parse_query` reads back: `+a +b -c (d e)`.
///
/// Characters that the parser treats specially are escaped with a backslash, so every term
/// reads back as one word. A top-level `Bool` has no parentheses; an empty one prints nothing.
impl fmt::Display for Query {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Query::Term(term) => write_term(f, term),
            Query::Bool(bool_query) => bool_query.fmt(f),
            Query::Phrase(phrase) => phrase.fmt(f),
            Query::Filter(inner) => write!(f, "#({inner})"),
            Query::Boost(inner, factor) => match inner.as_ref() {
                Query::Term(_) | Query::Phrase(_) => write!(f, "{inner}^{}", factor.get()),
                _ => write!(f, "({inner})^{}", factor.get()),
            },
            Query::DisMax(d) => {
                f.write_str("(")?;
                for (index, query) in d.queries.iter().enumerate() {
                    if index > 0 {
                        f.write_str(" | ")?;
                    }
                    query.fmt(f)?;
                }
                write!(f, ")~{}", d.tie_breaker.get())
            }
            Query::Range(range) => range.fmt(f),
            Query::All => f.write_str("*:*"),
        }
    }
}

/// Prints the clauses in Lucene syntax, without surrounding parentheses: `+a -b c`.
impl fmt::Display for BoolQuery {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, (prefix, clause)) in self.clauses().enumerate() {
            if index > 0 {
                f.write_str(" ")?;
            }
            f.write_str(prefix)?;
            match clause {
                Query::Bool(nested) => write!(f, "({nested})")?,
                other => other.fmt(f)?,
            }
        }
        Ok(())
    }
}

/// Prints the range as Lucene's syntax writes it: `field:[1 TO 5]` (numbers as the column
/// keeps them), `field:{a TO *]`.
impl fmt::Display for RangeQuery {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use std::ops::Bound;
        match &self.bounds {
            RangeBounds::Numbers { lower, upper } => {
                write!(f, "{}:[{lower} TO {upper}]", self.field)
            }
            RangeBounds::Keywords { lower, upper } => {
                let (open, low) = match lower {
                    Bound::Included(v) => ('[', v.as_str()),
                    Bound::Excluded(v) => ('{', v.as_str()),
                    Bound::Unbounded => ('[', "*"),
                };
                let (high, close) = match upper {
                    Bound::Included(v) => (v.as_str(), ']'),
                    Bound::Excluded(v) => (v.as_str(), '}'),
                    Bound::Unbounded => ("*", ']'),
                };
                write!(f, "{}:{open}{low:?} TO {high:?}{close}", self.field)
            }
        }
    }
}

/// Prints the phrase as Lucene's syntax writes it: `"a b"`, `"a b"~2`. Gaps between the
/// terms' positions (dropped stop words) are not printed.
impl fmt::Display for PhraseQuery {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // A phrase of a named text field prints as `field:"a b"`.
        let field = self
            .terms
            .first()
            .and_then(|(_, term)| crate::schema::field_terms::text_field_of(term))
            .map_or("", |(field, _)| field);
        if !field.is_empty() {
            write!(f, "{field}:")?;
        }
        f.write_str("\"")?;
        for (index, (_, term)) in self.terms.iter().enumerate() {
            if index > 0 {
                f.write_str(" ")?;
            }
            let term = crate::schema::field_terms::text_field_of(term)
                .map_or(term.as_str(), |(_, word)| word);
            for character in term.chars() {
                if matches!(character, '"' | '\\') {
                    f.write_str("\\")?;
                }
                write!(f, "{character}")?;
            }
        }
        f.write_str("\"")?;
        if self.slop > 0 {
            write!(f, "~{}", self.slop)?;
        }
        Ok(())
    }
}

/// Writes `term` so that the query parser reads it back as one word with this text: the
/// characters Lucene's `QueryParser.escape` escapes, whitespace, and the first character of a
/// term that would otherwise read as an operator (`AND`, `OR`, `NOT`) get a backslash.
fn write_term(f: &mut fmt::Formatter<'_>, term: &str) -> fmt::Result {
    // A keyword value or an existence mark prints as the clause that names it, a word of a
    // named text field as `field:word`.
    let term = match crate::schema::field_terms::text_field_of(term) {
        None => return f.write_str(&crate::schema::field_terms::display(term)),
        Some(("", word)) => word,
        Some((field, word)) => {
            write!(f, "{field}:")?;
            word
        }
    };
    let is_keyword = matches!(term, "AND" | "OR" | "NOT");
    for (index, character) in term.chars().enumerate() {
        if needs_escape(character) || (index == 0 && is_keyword) {
            f.write_str("\\")?;
        }
        write!(f, "{character}")?;
    }
    Ok(())
}

fn needs_escape(character: char) -> bool {
    // What the parser treats as special, plus the characters of `&&` and `||`.
    super::parser::is_whitespace(character)
        || super::parser::is_special(character)
        || matches!(character, '|' | '&')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn term(text: &str) -> Query {
        Query::Term(text.to_owned())
    }

    fn bool_query(must: Vec<Query>, should: Vec<Query>, must_not: Vec<Query>) -> Query {
        Query::Bool(BoolQuery {
            must,
            should,
            must_not,
        })
    }

    fn has(terms: &'static [&'static str]) -> impl Fn(&str) -> bool {
        move |term| terms.contains(&term)
    }

    #[test]
    fn display_prints_must_then_must_not_then_should() {
        let query = bool_query(
            vec![term("a"), term("b")],
            vec![bool_query(vec![], vec![term("d"), term("e")], vec![])],
            vec![term("c")],
        );
        assert_eq!(query.to_string(), "+a +b -c (d e)");
    }

    #[test]
    fn display_escapes_special_characters_and_keywords() {
        assert_eq!(term("a:b").to_string(), "a\\:b");
        assert_eq!(term("wi-fi").to_string(), "wi\\-fi");
        assert_eq!(term("a b").to_string(), "a\\ b");
        assert_eq!(term("AND").to_string(), "\\AND");
        assert_eq!(term("&&").to_string(), "\\&\\&");
        assert_eq!(term("and").to_string(), "and");
        assert_eq!(term("ærø").to_string(), "ærø");
        assert_eq!(BoolQuery::default().to_string(), "");
    }

    #[test]
    fn terms_are_distinct_and_sorted() {
        let query = bool_query(
            vec![term("b"), term("a")],
            vec![bool_query(vec![], vec![term("c"), term("a")], vec![])],
            vec![term("b")],
        );
        assert_eq!(query.terms(), ["a", "b", "c"]);
        assert_eq!(term("x").terms(), ["x"]);
    }

    #[test]
    fn matches_follows_lucene_boolean_semantics() {
        let a_or_b = bool_query(vec![], vec![term("a"), term("b")], vec![]);
        assert!(a_or_b.matches(&has(&["b"])));
        assert!(!a_or_b.matches(&has(&["c"])));

        // With a must clause, should clauses are optional.
        let a_and_maybe_b = bool_query(vec![term("a")], vec![term("b")], vec![]);
        assert!(a_and_maybe_b.matches(&has(&["a"])));
        assert!(!a_and_maybe_b.matches(&has(&["b"])));

        let a_not_c = bool_query(vec![], vec![term("a")], vec![term("c")]);
        assert!(a_not_c.matches(&has(&["a"])));
        assert!(!a_not_c.matches(&has(&["a", "c"])));

        // Purely negative and empty queries match nothing.
        let not_c = bool_query(vec![], vec![], vec![term("c")]);
        assert!(!not_c.matches(&has(&[])));
        assert!(!not_c.matches(&has(&["a"])));
        assert!(!Query::Bool(BoolQuery::default()).matches(&|_| true));
    }

    #[test]
    fn simplified_flattens_single_clause_bools_at_every_depth() {
        let nested = bool_query(
            vec![],
            vec![bool_query(
                vec![bool_query(vec![], vec![term("a")], vec![])],
                vec![],
                vec![],
            )],
            vec![],
        );
        assert_eq!(nested.simplified(), term("a"));

        let keeps_negation = bool_query(vec![term("a")], vec![], vec![term("b")]);
        assert_eq!(keeps_negation.clone().simplified(), keeps_negation);

        let inner = bool_query(
            vec![bool_query(vec![term("x")], vec![], vec![])],
            vec![term("y")],
            vec![],
        );
        assert_eq!(
            inner.simplified(),
            bool_query(vec![term("x")], vec![term("y")], vec![])
        );
    }
}
