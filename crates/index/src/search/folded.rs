//! Repeated clauses folded into one: the form of a query the evaluators run.
//!
//! A query may name one clause many times: `+the +the +the`, a topic that repeats a word, a
//! phrase quoted twice. Run as written, every repeat is a cursor of its own over the same
//! postings, and an evaluator's work grows with its clauses (a conjunction's windows with
//! their square), so sixteen kilobytes of one repeated word kept a query thread for a minute.
//! Lucene's `BooleanQuery.rewrite` folds such repeats, and so does [`Folded::of`]: identical
//! required clauses become one whose boost is the sum of theirs, identical optional clauses
//! likewise, and identical prohibited clauses one (a prohibited clause does not score).
//!
//! The folded query matches the same documents, so counts do not change, and scores what the
//! repeats scored together: BM25 is linear in the boost (Lucene's `weight = boost · idf`), and
//! the repeats summed their equal scores. Only the rounding differs, by an ulp or so of the
//! score. With no repeat every boost is 1, and `1 · idf` is `idf`: such a query scores to the
//! bit as it did unfolded.
//!
//! A boost on a group applies to every clause in it, as Lucene's `BoostQuery` over a
//! `BooleanQuery` multiplies the weights of its terms; the boosts are carried down to the terms
//! and phrases, where they scale the weight. Clauses are compared by their canonical keys
//! (see [`Query::canonical`]), so groups that differ only in the order of their clauses fold,
//! as Lucene's equality of boolean queries (sets of clauses) makes them. Boosts are counts of
//! repeats and products of them, exact as `f32` far beyond any query's size.

use std::collections::HashMap;

use crate::query::{PhraseQuery, Query, RangeQuery};

/// A query with its repeated clauses folded (see the module documentation): each term and
/// phrase carries the boost its weight is multiplied by.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Folded<'q> {
    /// Documents containing the term, scored with `boost` times its weight.
    Term {
        /// The term.
        term: &'q str,
        /// The factor of its weight.
        boost: f32,
    },
    /// The phrase's matches, scored with `boost` times its weight.
    Phrase {
        /// The phrase.
        phrase: &'q PhraseQuery,
        /// The factor of its weight.
        boost: f32,
    },
    /// Clauses combined as [`crate::query::BoolQuery`] combines them, none repeated.
    Bool(FoldedBool<'q>),
    /// Documents any clause matches, scored by the best clause plus `tie_breaker` times the
    /// others ([`crate::query::DisMaxQuery`]).
    DisMax {
        /// The alternatives.
        clauses: Vec<Folded<'q>>,
        /// The weight of the alternatives that are not the best.
        tie_breaker: f32,
    },
    /// Documents read from columns (a range) or every document, each scored `boost`.
    Docs {
        /// Which documents.
        docs: DocsQuery<'q>,
        /// Their score.
        boost: f32,
    },
}

/// The documents of a [`Folded::Docs`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum DocsQuery<'q> {
    /// Those with a value in the range.
    Range(&'q RangeQuery),
    /// Every document.
    All,
}

/// The clauses of a folded group.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct FoldedBool<'q> {
    /// Required clauses.
    pub(crate) must: Vec<Folded<'q>>,
    /// Optional clauses.
    pub(crate) should: Vec<Folded<'q>>,
    /// Prohibited clauses.
    pub(crate) must_not: Vec<Folded<'q>>,
}

impl<'q> Folded<'q> {
    /// `query` with its repeated clauses folded, at every depth.
    pub(crate) fn of(query: &'q Query) -> Folded<'q> {
        fold(query, 1.0, true)
    }

    /// `query` as written, every clause kept with a boost of 1: what the evaluators ran before
    /// clauses were folded, for tests to compare the folded form with.
    #[cfg(test)]
    pub(crate) fn unfolded(query: &'q Query) -> Folded<'q> {
        fold(query, 1.0, false)
    }
}

/// `query` with `boost` carried down to its terms and phrases; repeats folded if `folding`.
fn fold(query: &Query, boost: f64, folding: bool) -> Folded<'_> {
    match query {
        Query::Term(term) => Folded::Term {
            term,
            boost: boost as f32,
        },
        Query::Phrase(phrase) => Folded::Phrase {
            phrase,
            boost: boost as f32,
        },
        // A filter matches as its query does and scores nothing: its clauses weigh 0.
        Query::Filter(inner) => fold(inner, 0.0, folding),
        // Lucene's `BoostQuery`: the factor multiplies every weight under it.
        Query::Boost(inner, factor) => fold(inner, boost * f64::from(factor.get()), folding),
        Query::DisMax(d) => match d.queries.as_slice() {
            // One alternative is itself (Lucene's rewrite).
            [only] => fold(only, boost, folding),
            queries => Folded::DisMax {
                clauses: queries.iter().map(|q| fold(q, boost, folding)).collect(),
                tie_breaker: d.tie_breaker.get(),
            },
        },
        Query::Range(range) => Folded::Docs {
            docs: DocsQuery::Range(range),
            boost: boost as f32,
        },
        Query::All => Folded::Docs {
            docs: DocsQuery::All,
            boost: boost as f32,
        },
        Query::Bool(b) => {
            let group = FoldedBool {
                must: fold_clauses(&b.must, Some(boost), folding),
                should: fold_clauses(&b.should, Some(boost), folding),
                // A prohibited clause only excludes: it has no boost, and its repeats are one.
                must_not: fold_clauses(&b.must_not, None, folding),
            };
            simplified(group)
        }
    }
}

/// One list of a group's clauses, each repeat folded into its first occurrence if `folding`
/// (the order of first occurrences is kept): scoring clauses of the group's `boost` sum their
/// boosts, prohibited ones (`boost` is `None`) keep a boost of 1.
fn fold_clauses(clauses: &[Query], boost: Option<f64>, folding: bool) -> Vec<Folded<'_>> {
    if !folding || clauses.len() < 2 {
        return clauses
            .iter()
            .map(|clause| fold(clause, boost.unwrap_or(1.0), folding))
            .collect();
    }
    let mut first: HashMap<Vec<u8>, usize> = HashMap::with_capacity(clauses.len());
    let mut distinct: Vec<(&Query, u64)> = Vec::new();
    for clause in clauses {
        let at = *first.entry(clause.canonical_key()).or_insert_with(|| {
            distinct.push((clause, 0));
            distinct.len() - 1
        });
        distinct[at].1 += 1;
    }
    distinct
        .into_iter()
        .map(|(clause, repeats)| fold(clause, boost.map_or(1.0, |b| b * repeats as f64), true))
        .collect()
}

/// A group of a single required or a single optional clause and nothing else is that clause
/// (as [`Query::simplified`] makes it, and Lucene's rewrite); any other group is itself.
fn simplified(mut group: FoldedBool<'_>) -> Folded<'_> {
    if group.must_not.is_empty() {
        match (group.must.len(), group.should.len()) {
            (1, 0) => return group.must.pop().expect("one required clause"),
            (0, 1) => return group.should.pop().expect("one optional clause"),
            _ => {}
        }
    }
    Folded::Bool(group)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyzer::Analyzer;
    use crate::query::{parse_query, DefaultOperator};

    fn parse(text: &str) -> Query {
        parse_query(text, &Analyzer::default(), DefaultOperator::Or).unwrap()
    }

    fn term(term: &str, boost: f32) -> Folded<'_> {
        Folded::Term { term, boost }
    }

    #[test]
    fn repeated_required_and_optional_terms_sum_their_boosts() {
        assert_eq!(Folded::of(&parse("+the +the +the")), term("the", 3.0));
        assert_eq!(Folded::of(&parse("the the")), term("the", 2.0));
        let query = parse("+a b +a b b -c");
        assert_eq!(
            Folded::of(&query),
            Folded::Bool(FoldedBool {
                must: vec![term("a", 2.0)],
                should: vec![term("b", 3.0)],
                must_not: vec![term("c", 1.0)],
            })
        );
    }

    #[test]
    fn a_term_required_and_optional_stays_two_clauses() {
        // Lucene folds within one kind of clause only: the optional one adds its score.
        assert_eq!(
            Folded::of(&parse("+a a")),
            Folded::Bool(FoldedBool {
                must: vec![term("a", 1.0)],
                should: vec![term("a", 1.0)],
                must_not: vec![],
            })
        );
    }

    #[test]
    fn repeated_prohibited_clauses_are_one() {
        assert_eq!(
            Folded::of(&parse("a b -c -c -(d e) -(e d)")),
            Folded::Bool(FoldedBool {
                must: vec![],
                should: vec![term("a", 1.0), term("b", 1.0)],
                must_not: vec![
                    term("c", 1.0),
                    Folded::Bool(FoldedBool {
                        should: vec![term("d", 1.0), term("e", 1.0)],
                        ..FoldedBool::default()
                    }),
                ],
            })
        );
    }

    #[test]
    fn a_repeated_group_carries_its_boost_to_its_terms() {
        // `(b a)` is `(a b)` in another order: the same group, folded.
        assert_eq!(
            Folded::of(&parse("+(a b b) +(b b a) +c")),
            Folded::Bool(FoldedBool {
                must: vec![
                    Folded::Bool(FoldedBool {
                        should: vec![term("a", 2.0), term("b", 4.0)],
                        ..FoldedBool::default()
                    }),
                    term("c", 1.0),
                ],
                ..FoldedBool::default()
            })
        );
    }

    #[test]
    fn repeated_phrases_fold_and_different_slops_do_not() {
        let query = parse("\"a b\" \"a b\" \"a b\"~1");
        let Folded::Bool(group) = Folded::of(&query) else {
            panic!("a group");
        };
        let boosts: Vec<(u32, f32)> = group
            .should
            .iter()
            .map(|clause| match clause {
                Folded::Phrase { phrase, boost } => (phrase.slop, *boost),
                other => panic!("a phrase, not {other:?}"),
            })
            .collect();
        assert_eq!(boosts, [(0, 2.0), (1, 1.0)]);
    }

    #[test]
    fn unfolded_keeps_every_clause() {
        let query = parse("+the +the");
        assert_eq!(
            Folded::unfolded(&query),
            Folded::Bool(FoldedBool {
                must: vec![term("the", 1.0), term("the", 1.0)],
                ..FoldedBool::default()
            })
        );
    }
}
