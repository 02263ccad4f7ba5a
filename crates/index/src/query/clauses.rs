//! How many clauses a query has: what the limit on a query's size counts.
//!
//! A clause is a term, counted each time the query names it, prohibited or not: `+the +the`
//! has two, `a (b -a)` three, and a phrase one per word (`"new york"` two). That is the size
//! of the query as written, which is what can be judged before it runs, as Lucene refuses a
//! query of more than `maxClauseCount` (1,024) clauses. A limit on distinct terms let one word
//! written three thousand times through. Lucene counts a phrase once; here each of its words
//! counts, since each is a posting list and a positions list to read.
//!
//! Evaluation folds repeated clauses into one (Lucene's rewrite does too), so a repeat costs
//! little once admitted; the limit still counts it, so that the parser, the analyzer and
//! folding itself only ever see bounded work.

use super::ast::Query;

/// The default limit on a query's clauses: Lucene's default `maxClauseCount`.
pub const MAX_CLAUSES: usize = 1024;

/// A query with more clauses than a limit accepts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the query has {clauses} clauses; at most {limit} are accepted (a clause is a term, \
     counted each time it is written, and each word of a phrase)"
)]
pub struct TooManyClauses {
    /// The query's clauses.
    pub clauses: usize,
    /// The most accepted.
    pub limit: usize,
}

impl Query {
    /// The query's clauses: every term it names, each time it names it, and every word of
    /// every phrase (see the [module documentation](self)).
    ///
    /// ```
    /// use apcache_index::analyzer::Analyzer;
    /// use apcache_index::query::{parse_query, DefaultOperator};
    ///
    /// let query = parse_query("+the +the \"new york\" -x", &Analyzer::default(), DefaultOperator::Or)?;
    /// assert_eq!(query.clauses(), 5);
    /// assert_eq!(query.terms().len(), 4);
    /// # Ok::<(), apcache_index::query::QueryError>(())
    /// ```
    pub fn clauses(&self) -> usize {
        match self {
            Query::Term(_) | Query::Range(_) | Query::All => 1,
            Query::Filter(inner) | Query::Boost(inner, _) => inner.clauses(),
            Query::DisMax(d) => d.queries.iter().map(Query::clauses).sum(),
            Query::Phrase(phrase) => phrase.terms.len(),
            Query::Bool(b) => b
                .must
                .iter()
                .chain(&b.should)
                .chain(&b.must_not)
                .map(Query::clauses)
                .sum(),
        }
    }

    /// `Err` when the query has more than `limit` clauses ([`Query::clauses`]).
    pub fn check_clauses(&self, limit: usize) -> Result<(), TooManyClauses> {
        let clauses = self.clauses();
        if clauses > limit {
            return Err(TooManyClauses { clauses, limit });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyzer::Analyzer;
    use crate::query::{parse_query, DefaultOperator};

    fn clauses(text: &str) -> usize {
        parse_query(text, &Analyzer::default(), DefaultOperator::Or)
            .unwrap()
            .clauses()
    }

    #[test]
    fn every_term_counts_each_time_it_is_written() {
        assert_eq!(clauses("the"), 1);
        assert_eq!(clauses("+the +the +the"), 3);
        assert_eq!(clauses("a (b -a) -a"), 4);
        assert_eq!(clauses("wi-fi"), 2);
        assert_eq!(clauses("\"new york city\" \"new york city\"~2"), 6);
        // Words the analyzer drops are no clauses.
        assert_eq!(clauses("a , ."), 1);
    }

    #[test]
    fn the_limit_refuses_repeats_past_it() {
        let text = "+the ".repeat(MAX_CLAUSES);
        let query = parse_query(&text, &Analyzer::default(), DefaultOperator::Or).unwrap();
        assert_eq!(query.terms().len(), 1);
        assert_eq!(query.check_clauses(MAX_CLAUSES), Ok(()));
        let text = "+the ".repeat(MAX_CLAUSES + 1);
        let query = parse_query(&text, &Analyzer::default(), DefaultOperator::Or).unwrap();
        let error = query.check_clauses(MAX_CLAUSES).unwrap_err();
        assert_eq!(
            error,
            TooManyClauses {
                clauses: MAX_CLAUSES + 1,
                limit: MAX_CLAUSES
            }
        );
        assert!(error.to_string().contains("1025 clauses"), "{error}");
    }
}
