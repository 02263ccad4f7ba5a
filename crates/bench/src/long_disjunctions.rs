//! Generated long disjunctions: queries of 3 to 12 terms OR'ed together, drawn from an index's
//! own vocabulary, for measuring the query class real logs hold and the shared query files hold
//! few of.
//!
//! Each query's length is uniform in `[min_terms, max_terms]`. Each of its terms first draws a
//! document-frequency class (H, M or L, as the workload generator defines them from the
//! vocabulary's percentiles: [`Thresholds::percentiles`]) uniformly, then a term of that class
//! uniformly, so that a query mixes long lists, medium ones and rare ones in the proportions a
//! fair sample of the classes gives, whatever the vocabulary's size. Drawing terms uniformly
//! from the vocabulary instead would give almost only rare terms (half of a vocabulary occurs
//! in a handful of documents), and drawing them in proportion to their frequency almost only
//! stop words; neither is what a user types. A term never repeats within a query.
//!
//! The generator is seeded (ChaCha8), so a seed and a vocabulary give the same queries on
//! every machine. The queries are in Lucene syntax with the default operator OR (`a b c`),
//! which every peer of the benchmarks reads as a disjunction.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::workload::{FrequencyClass, Thresholds, Vocabulary, WorkloadError};
use apcache_index::query::{BoolQuery, Query};

/// The shape of the generated queries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LongDisjunctions {
    /// Queries to generate.
    pub count: usize,
    /// Fewest terms of a query.
    pub min_terms: usize,
    /// Most terms of a query.
    pub max_terms: usize,
    /// Seed of the generator.
    pub seed: u64,
}

impl Default for LongDisjunctions {
    fn default() -> LongDisjunctions {
        LongDisjunctions {
            count: 100,
            min_terms: 3,
            max_terms: 12,
            seed: 0x10_6D15,
        }
    }
}

impl LongDisjunctions {
    /// The queries, in Lucene syntax, drawn from `vocabulary` (see the module documentation).
    /// Fails when a class is empty or holds fewer terms than the longest query needs.
    pub fn generate(&self, vocabulary: &Vocabulary) -> Result<Vec<String>, WorkloadError> {
        assert!(
            0 < self.min_terms && self.min_terms <= self.max_terms,
            "query lengths must be a nonempty range of positive counts"
        );
        let thresholds = Thresholds::percentiles(&vocabulary.dfs())?;
        let classes: Vec<Vec<&str>> = [FrequencyClass::H, FrequencyClass::M, FrequencyClass::L]
            .into_iter()
            .map(|class| {
                vocabulary
                    .terms
                    .iter()
                    .filter(|(_, df)| thresholds.class_of(*df) == class)
                    .map(|(term, _)| term.as_str())
                    .collect()
            })
            .collect();
        if let Some(small) = classes.iter().find(|terms| terms.len() < self.max_terms) {
            return Err(WorkloadError::ClassTooSmall {
                have: small.len(),
                need: self.max_terms,
                query_type: "long OR",
            });
        }
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        let mut queries = Vec::with_capacity(self.count);
        for _ in 0..self.count {
            let len = rng.random_range(self.min_terms..=self.max_terms);
            let mut terms: Vec<&str> = Vec::with_capacity(len);
            while terms.len() < len {
                let class = &classes[rng.random_range(0..classes.len())];
                let term = class[rng.random_range(0..class.len())];
                if !terms.contains(&term) {
                    terms.push(term);
                }
            }
            let should = terms.iter().map(|t| Query::Term(t.to_string())).collect();
            queries.push(
                Query::Bool(BoolQuery {
                    should,
                    ..BoolQuery::default()
                })
                .to_string(),
            );
        }
        Ok(queries)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use apcache_index::analyzer::Analyzer;
    use apcache_index::query::{parse_query, DefaultOperator};

    /// A word the analyzer keeps as it is: `n` in base 10 with the digits as letters.
    fn word(prefix: &str, n: u64) -> String {
        let digits: String = n
            .to_string()
            .bytes()
            .map(|d| char::from(b'a' + d - b'0'))
            .collect();
        format!("{prefix}{digits}")
    }

    fn vocabulary() -> Vocabulary {
        // 90 terms per df value 1..=20, and 200 long lists (H: the top 1%, 20 terms).
        let mut pairs = Vec::new();
        for df in 1..=20u64 {
            for i in 0..90 {
                pairs.push((word("tx", df * 100 + i), df));
            }
        }
        for i in 0..200 {
            pairs.push((word("hx", i), 10_000 + i));
        }
        Vocabulary::from_pairs(pairs, 1)
    }

    #[test]
    fn queries_have_the_asked_lengths_distinct_terms_and_every_class() {
        let vocabulary = vocabulary();
        let thresholds = Thresholds::percentiles(&vocabulary.dfs()).unwrap();
        let df = |term: &str| vocabulary.terms.iter().find(|(t, _)| t == term).unwrap().1;
        let shape = LongDisjunctions {
            count: 300,
            ..LongDisjunctions::default()
        };
        let queries = shape.generate(&vocabulary).unwrap();
        assert_eq!(queries.len(), 300);
        let analyzer = Analyzer::default();
        let mut lengths = std::collections::BTreeSet::new();
        let mut seen = [0usize; 3];
        for text in &queries {
            let Query::Bool(query) = parse_query(text, &analyzer, DefaultOperator::Or).unwrap()
            else {
                panic!("{text} is not a disjunction");
            };
            assert!(query.must.is_empty() && query.must_not.is_empty());
            let terms: Vec<String> = query
                .should
                .iter()
                .map(|q| match q {
                    Query::Term(t) => t.clone(),
                    other => panic!("{other:?} is not a term"),
                })
                .collect();
            let mut distinct = terms.clone();
            distinct.sort();
            distinct.dedup();
            assert_eq!(distinct.len(), terms.len(), "{text}");
            lengths.insert(terms.len());
            for term in &terms {
                seen[thresholds.class_of(df(term)) as usize] += 1;
            }
        }
        assert_eq!(lengths, (3..=12).collect());
        assert!(seen.iter().all(|&n| n > 300), "{seen:?}");
        // Seeded: the same vocabulary gives the same queries.
        assert_eq!(shape.generate(&vocabulary).unwrap(), queries);
    }

    #[test]
    fn a_class_too_small_for_the_longest_query_is_an_error() {
        let pairs = (1..=5u64).flat_map(|df| (0..3).map(move |i| (word("tx", df * 10 + i), df)));
        let vocabulary = Vocabulary::from_pairs(pairs, 1);
        assert!(matches!(
            LongDisjunctions::default().generate(&vocabulary),
            Err(WorkloadError::ClassTooSmall { .. })
        ));
    }
}
