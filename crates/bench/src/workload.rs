//! Query workloads built the way the original study built its own (`apcache-bench workload`): terms
//! of one document-frequency class, with a chosen probability of repeating a recent term.
//!
//! # Classes
//!
//! A term's class follows from its document frequency (df) and two thresholds: H holds the terms
//! with `df >= h_min`, L those with `df < l_max`, M those in between. The original study used
//! `h_min` = 1,000,000 and `l_max` = 1,000 postings on a 160 GB crawl; a smaller corpus needs
//! smaller ones, so both are parameters, and [`Thresholds::percentiles`] derives defaults from the
//! vocabulary itself: H is the top 1% of the terms by df (`h_min` is the df at the 99th
//! percentile), L the bottom half (every df up to the median's), M the rest; where ties or a small
//! vocabulary would leave a class empty, the thresholds move to the nearest distinct df values that
//! give every class at least one df value.
//!
//! Terms that occur in fewer than `min_df` documents (default 2) are in no class, and the
//! percentiles are taken over the others. Terms that occur in a single document make up
//! roughly half of a vocabulary (typos, markup left-overs, numbers, foreign words); each is a
//! one-posting list, so a query on one measures a dictionary lookup and nothing of the codecs
//! or the evaluators, and they would swamp L and pull its percentiles down to 1. With
//! `min_df` = 2, L holds rare terms that still have lists; `min_df` = 1 keeps them all.
//!
//! # Repetition (the original study's RP)
//!
//! All terms of the class go into a term queue, which is shuffled. Until the workload has
//! `count` queries: pop the next term (when the queue runs dry, the class is shuffled into it
//! again); if the repeat queue is not empty, with probability `rp` emit a random term of the
//! repeat queue instead of the next term, else the next term; then push the next term onto
//! the repeat queue, which holds the last [`REPEAT_QUEUE_CAPACITY`] terms pushed. With
//! `rp` = 0 and more terms in the class than queries, no term repeats.
//!
//! Two-term workloads (AND, OR) shuffle the class into a term queue, split it into two halves,
//! build a one-term workload from each half as above (each shuffled again, with its own repeat
//! queue), and pair query `i` of one with query `i` of the other. The two terms of a query are
//! never the same term.
//!
//! # Query-level repetition
//!
//! Per-term repetition repeats terms, not queries: at RP 0.5 a single-term workload repeats
//! about a third of its queries exactly, and a two-term query repeats only when both halves
//! happen to repeat the same pair, which almost never happens. A cache of whole answers sees
//! none of that. [`Repetition::Query`] repeats whole queries instead: the fresh queries are
//! the workload above at RP 0 (no term repeats), and with probability `rp` the next query is a
//! repeat of an earlier query of the stream, drawn uniformly from every query emitted so far,
//! repeats included. A query asked `n` times so far is then drawn with a chance proportional
//! to `n`: popular queries grow more popular (a Yule-Simon process), which gives the skewed,
//! long-tailed popularity of real query logs, with reuse at every distance rather than only
//! within the last 100 queries.
//!
//! Everything is drawn from one ChaCha8 generator seeded with the workload's seed, so a seed
//! gives the same workload on every machine (with the same `rand` 0.9 sampling code).

use std::collections::VecDeque;

use apcache_index::query::{parse_query, BoolQuery, DefaultOperator, Query};
use apcache_index::search::IndexReader;
use apcache_index::IndexError;
use fst::Streamer;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Terms the repeat queue holds.
pub const REPEAT_QUEUE_CAPACITY: usize = 100;
/// Default least document frequency of a term in any class (see the module documentation).
pub const DEFAULT_MIN_DF: u64 = 2;
/// Share of the vocabulary (by df, from the top) the default H class holds.
pub const H_TOP_FRACTION: f64 = 0.01;
/// Share of the vocabulary (by df, from the bottom) the default L class holds, at least.
pub const L_BOTTOM_FRACTION: f64 = 0.5;

/// The shape of a workload's queries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueryType {
    /// One term: `term`.
    Single,
    /// Two required terms: `+a +b`.
    And,
    /// Two optional terms: `a b`.
    Or,
}

impl QueryType {
    /// The type's name, as the command line spells it.
    pub fn name(self) -> &'static str {
        match self {
            QueryType::Single => "single",
            QueryType::And => "and",
            QueryType::Or => "or",
        }
    }

    /// `terms` as a query of this type in Lucene syntax, each term escaped so that the query
    /// parser reads it back as one word.
    pub fn query_text(self, terms: &[String]) -> String {
        let clauses = terms.iter().map(|t| Query::Term(t.clone())).collect();
        let query = match self {
            QueryType::Single => return Query::Term(terms[0].clone()).to_string(),
            QueryType::And => BoolQuery {
                must: clauses,
                ..BoolQuery::default()
            },
            QueryType::Or => BoolQuery {
                should: clauses,
                ..BoolQuery::default()
            },
        };
        Query::Bool(query).to_string()
    }
}

/// A document-frequency class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrequencyClass {
    /// High: `df >= h_min`.
    H,
    /// Medium: `l_max <= df < h_min`.
    M,
    /// Low: `df < l_max`.
    L,
}

impl FrequencyClass {
    /// The class's letter.
    pub fn name(self) -> &'static str {
        match self {
            FrequencyClass::H => "H",
            FrequencyClass::M => "M",
            FrequencyClass::L => "L",
        }
    }
}

/// The document-frequency bounds of the classes: H is `df >= h_min`, L is `df < l_max`, M is
/// `l_max <= df < h_min`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Thresholds {
    /// Least df of an H term.
    pub h_min: u64,
    /// Least df above every L term.
    pub l_max: u64,
}

impl Thresholds {
    /// The class of a term that occurs in `df` documents.
    pub fn class_of(&self, df: u64) -> FrequencyClass {
        if df >= self.h_min {
            FrequencyClass::H
        } else if df < self.l_max {
            FrequencyClass::L
        } else {
            FrequencyClass::M
        }
    }

    /// The default thresholds for a vocabulary with these document frequencies (see the module
    /// documentation): H the top [`H_TOP_FRACTION`], L at least the bottom
    /// [`L_BOTTOM_FRACTION`], each class given at least one distinct df value. Fails when the
    /// frequencies have fewer than three distinct values.
    pub fn percentiles(dfs: &[u64]) -> Result<Thresholds, WorkloadError> {
        let mut sorted = dfs.to_vec();
        sorted.sort_unstable();
        let mut distinct = sorted.clone();
        distinct.dedup();
        let m = distinct.len();
        if m < 3 {
            return Err(WorkloadError::TooFewFrequencies(m));
        }
        let n = sorted.len();
        let at = |fraction: f64| sorted[((n as f64 * fraction) as usize).min(n - 1)];
        let position = |value: u64| distinct.partition_point(|&d| d < value);
        // H: every df at or above the 99th percentile's.
        let high = position(at(1.0 - H_TOP_FRACTION)).clamp(2, m - 1);
        // L: every df up to the median's, so l_max is the next distinct df above it.
        let low = (position(at(L_BOTTOM_FRACTION)) + 1).clamp(1, high - 1);
        Ok(Thresholds {
            h_min: distinct[high],
            l_max: distinct[low],
        })
    }

    /// Checks that M can hold a term (`l_max < h_min`).
    pub fn validate(&self) -> Result<(), WorkloadError> {
        if self.l_max >= self.h_min {
            return Err(WorkloadError::BadThresholds(*self));
        }
        Ok(())
    }
}

/// The candidate terms of workloads with their document frequencies, sorted by term.
#[derive(Debug, Clone, Default)]
pub struct Vocabulary {
    /// `(term, df)` of every term with `df >= min_df`, sorted by term.
    pub terms: Vec<(String, u64)>,
    /// Terms left out for occurring in fewer than `min_df` documents.
    pub rare: usize,
    /// Terms left out because the query parser would not read them back as themselves (a term
    /// the index's analyzer would change again, as a stemmer can).
    pub unreadable: usize,
}

impl Vocabulary {
    /// The vocabulary of `(term, df)` pairs (a term may come several times, once per segment:
    /// its dfs are summed), keeping the terms with `df >= min_df`.
    pub fn from_pairs(pairs: impl IntoIterator<Item = (String, u64)>, min_df: u64) -> Vocabulary {
        let mut all: Vec<(String, u64)> = pairs.into_iter().collect();
        all.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let mut merged: Vec<(String, u64)> = Vec::with_capacity(all.len());
        for (term, df) in all {
            match merged.last_mut() {
                Some((last, total)) if *last == term => *total += df,
                _ => merged.push((term, df)),
            }
        }
        let before = merged.len();
        merged.retain(|(_, df)| *df >= min_df);
        Vocabulary {
            rare: before - merged.len(),
            terms: merged,
            unreadable: 0,
        }
    }

    /// The vocabulary of the index `reader`: every term of every segment's dictionary with its
    /// df summed over segments, keeping those with `df >= min_df` that the query parser, with
    /// the index's analyzer, reads back as the same single term.
    pub fn from_index(reader: &IndexReader, min_df: u64) -> Result<Vocabulary, IndexError> {
        let mut pairs = Vec::new();
        for segment in reader.segments() {
            let mut stream = segment.dictionary().stream();
            while let Some((term, ordinal)) = stream.next() {
                let info = segment.term_info(ordinal)?;
                // The dictionary holds analyzed tokens, which are UTF-8.
                let term = String::from_utf8_lossy(term).into_owned();
                pairs.push((term, u64::from(info.doc_freq)));
            }
        }
        let mut vocabulary = Vocabulary::from_pairs(pairs, min_df);
        let analyzer = reader.analyzer();
        let before = vocabulary.terms.len();
        vocabulary.terms.retain(|(term, _)| {
            let printed = Query::Term(term.clone()).to_string();
            parse_query(&printed, &analyzer, DefaultOperator::Or)
                .is_ok_and(|q| q == Query::Term(term.clone()))
        });
        vocabulary.unreadable = before - vocabulary.terms.len();
        Ok(vocabulary)
    }

    /// The document frequencies, in term order.
    pub fn dfs(&self) -> Vec<u64> {
        self.terms.iter().map(|(_, df)| *df).collect()
    }

    /// The terms of `class` under `thresholds`, sorted.
    pub fn class_terms(&self, class: FrequencyClass, thresholds: &Thresholds) -> Vec<String> {
        self.terms
            .iter()
            .filter(|(_, df)| thresholds.class_of(*df) == class)
            .map(|(term, _)| term.clone())
            .collect()
    }
}

/// What the repetition probability repeats (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Repetition {
    /// The original study's: a term from the last [`REPEAT_QUEUE_CAPACITY`] terms, for each
    /// term of a query on its own.
    #[default]
    Term,
    /// A whole earlier query of the stream, drawn by its popularity so far.
    Query,
}

impl Repetition {
    /// The name, as the command line spells it: `term` or `query`.
    pub fn name(self) -> &'static str {
        match self {
            Repetition::Term => "term",
            Repetition::Query => "query",
        }
    }

    /// The repetition named `name`.
    pub fn from_name(name: &str) -> Option<Repetition> {
        [Repetition::Term, Repetition::Query]
            .into_iter()
            .find(|r| r.name() == name)
    }
}

/// What to generate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WorkloadConfig {
    /// Query shape.
    pub query_type: QueryType,
    /// Repetition probability, in `[0, 1]`.
    pub rp: f64,
    /// What a repetition repeats.
    pub repetition: Repetition,
    /// Queries.
    pub count: usize,
    /// Seed of the random generator.
    pub seed: u64,
}

/// A generated workload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workload {
    /// Query shape.
    pub query_type: QueryType,
    /// The terms of each query (one, or two for AND and OR).
    pub queries: Vec<Vec<String>>,
    /// Repeats: under [`Repetition::Term`], terms emitted from a repeat queue instead of the
    /// next term (over both halves of a two-term workload); under [`Repetition::Query`],
    /// queries that repeat an earlier one.
    pub from_repeat_queue: usize,
    /// The two halves the class was split into, for a two-term workload: the first terms of
    /// the queries come from the first half, the second terms from the second.
    pub halves: Option<[Vec<String>; 2]>,
}

impl Workload {
    /// Query `i` in Lucene syntax (`term`, `+a +b`, `a b`).
    pub fn query_text(&self, i: usize) -> String {
        self.query_type.query_text(&self.queries[i])
    }

    /// The workload as a query file: one query per line.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for i in 0..self.queries.len() {
            out += &self.query_text(i);
            out.push('\n');
        }
        out
    }
}

/// Errors of the generator.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum WorkloadError {
    /// The class holds too few terms for the query type.
    #[error("the class holds {have} terms; {query_type} queries need at least {need}")]
    ClassTooSmall {
        /// Terms in the class.
        have: usize,
        /// Terms needed.
        need: usize,
        /// The query type.
        query_type: &'static str,
    },
    /// The repetition probability is outside `[0, 1]`.
    #[error("the repetition probability must be between 0 and 1, not {0}")]
    BadProbability(f64),
    /// Thresholds that leave M empty.
    #[error("thresholds leave M empty: l_max ({}) must be below h_min ({})", .0.l_max, .0.h_min)]
    BadThresholds(Thresholds),
    /// A vocabulary too uniform to split into three classes.
    #[error(
        "the vocabulary has {0} distinct document frequencies; three classes need three \
         (give the thresholds, or lower the least df)"
    )]
    TooFewFrequencies(usize),
}

/// Generates the workload of `config` from the terms of one class.
pub fn generate(
    class_terms: &[String],
    config: &WorkloadConfig,
) -> Result<Workload, WorkloadError> {
    if !(0.0..=1.0).contains(&config.rp) {
        return Err(WorkloadError::BadProbability(config.rp));
    }
    let need = if config.query_type == QueryType::Single {
        1
    } else {
        2
    };
    if class_terms.len() < need {
        return Err(WorkloadError::ClassTooSmall {
            have: class_terms.len(),
            need,
            query_type: config.query_type.name(),
        });
    }
    // The class in a fixed order, whatever order the caller holds it in.
    let mut terms = class_terms.to_vec();
    terms.sort_unstable();
    let mut rng = ChaCha8Rng::seed_from_u64(config.seed);
    if config.repetition == Repetition::Query {
        let fresh = generate(
            &terms,
            &WorkloadConfig {
                rp: 0.0,
                repetition: Repetition::Term,
                ..*config
            },
        )?;
        let (queries, repeats) = repeat_queries(fresh.queries, config.rp, &mut rng);
        return Ok(Workload {
            queries,
            from_repeat_queue: repeats,
            ..fresh
        });
    }
    if config.query_type == QueryType::Single {
        let (emitted, repeats) = one_term_workload(&terms, config.rp, config.count, &mut rng);
        return Ok(Workload {
            query_type: config.query_type,
            queries: emitted.into_iter().map(|t| vec![t]).collect(),
            from_repeat_queue: repeats,
            halves: None,
        });
    }
    terms.shuffle(&mut rng);
    let second = terms.split_off(terms.len() / 2);
    let first = terms;
    let (a, repeats_a) = one_term_workload(&first, config.rp, config.count, &mut rng);
    let (b, repeats_b) = one_term_workload(&second, config.rp, config.count, &mut rng);
    Ok(Workload {
        query_type: config.query_type,
        queries: a.into_iter().zip(b).map(|(a, b)| vec![a, b]).collect(),
        from_repeat_queue: repeats_a + repeats_b,
        halves: Some([first, second]),
    })
}

/// The original study's one-term workload of `count` terms over `terms` (see the module
/// documentation), and how many of them came from the repeat queue.
pub fn one_term_workload(
    terms: &[String],
    rp: f64,
    count: usize,
    rng: &mut ChaCha8Rng,
) -> (Vec<String>, usize) {
    assert!(!terms.is_empty(), "a workload needs terms");
    let mut queue: Vec<&String> = Vec::new();
    let mut repeat: VecDeque<&String> = VecDeque::with_capacity(REPEAT_QUEUE_CAPACITY);
    let mut out = Vec::with_capacity(count);
    let mut repeats = 0;
    while out.len() < count {
        if queue.is_empty() {
            // The queue is popped from its end.
            queue.extend(terms);
            queue.shuffle(rng);
        }
        let next = queue.pop().expect("refilled");
        if !repeat.is_empty() && rng.random_bool(rp) {
            out.push(repeat[rng.random_range(0..repeat.len())].clone());
            repeats += 1;
        } else {
            out.push(next.clone());
        }
        if repeat.len() == REPEAT_QUEUE_CAPACITY {
            repeat.pop_front();
        }
        repeat.push_back(next);
    }
    (out, repeats)
}

/// Query-level repetition over the `fresh` queries (see the module documentation): as many
/// queries as `fresh` holds, each with probability `rp` (after the first) a repeat of an
/// earlier query of the output drawn uniformly over its positions, else the next fresh query.
/// Returns the queries and the number of repeats.
pub fn repeat_queries<T: Clone>(fresh: Vec<T>, rp: f64, rng: &mut ChaCha8Rng) -> (Vec<T>, usize) {
    let count = fresh.len();
    let mut fresh = fresh.into_iter();
    let mut out: Vec<T> = Vec::with_capacity(count);
    let mut repeats = 0;
    while out.len() < count {
        if !out.is_empty() && rng.random_bool(rp) {
            out.push(out[rng.random_range(0..out.len())].clone());
            repeats += 1;
        } else {
            out.push(
                fresh
                    .next()
                    .expect("one fresh query per output query at most"),
            );
        }
    }
    (out, repeats)
}

#[cfg(test)]
mod tests {
    use std::collections::{HashMap, HashSet};

    use super::*;

    /// A Zipf-like vocabulary: term `i` occurs in about `100_000 / (i + 1)` documents.
    fn zipf(terms: usize) -> Vocabulary {
        Vocabulary::from_pairs(
            (0..terms).map(|i| (format!("t{i}"), (100_000 / (i as u64 + 1)).max(1))),
            DEFAULT_MIN_DF,
        )
    }

    fn config(query_type: QueryType, rp: f64, count: usize, seed: u64) -> WorkloadConfig {
        WorkloadConfig {
            query_type,
            rp,
            repetition: Repetition::Term,
            count,
            seed,
        }
    }

    fn query_config(query_type: QueryType, rp: f64, count: usize, seed: u64) -> WorkloadConfig {
        WorkloadConfig {
            repetition: Repetition::Query,
            ..config(query_type, rp, count, seed)
        }
    }

    #[test]
    fn query_repetition_repeats_whole_queries_at_the_given_rate() {
        let terms = class_terms_of(50_000);
        let n = 10_000;
        for query_type in [QueryType::Single, QueryType::And, QueryType::Or] {
            for rp in [0.0, 0.25, 0.5] {
                for seed in 0..3 {
                    let workload =
                        generate(&terms, &query_config(query_type, rp, n, seed)).unwrap();
                    assert_eq!(workload.queries.len(), n);
                    let mut seen = HashSet::new();
                    let again = workload
                        .queries
                        .iter()
                        .filter(|q| !seen.insert((*q).clone()))
                        .count();
                    // Fresh queries never repeat, so every repeat is a query asked before.
                    assert_eq!(again, workload.from_repeat_queue);
                    let expected = rp * (n - 1) as f64 / n as f64;
                    let measured = again as f64 / n as f64;
                    assert!(
                        (measured - expected).abs() < 0.02,
                        "{} rp {rp} seed {seed}: {measured}",
                        query_type.name()
                    );
                    // Two-term queries keep their halves.
                    if let Some([a, b]) = &workload.halves {
                        for q in &workload.queries {
                            assert!(a.contains(&q[0]) && b.contains(&q[1]));
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn query_repetition_draws_by_popularity() {
        // Under rp = 0.5 a query's repeats grow with the repeats it already has: the most
        // asked queries take far more than their share, and reuse spans the whole stream.
        let terms = class_terms_of(50_000);
        let workload = generate(&terms, &query_config(QueryType::Single, 0.5, 20_000, 5)).unwrap();
        let mut counts: HashMap<&str, usize> = HashMap::new();
        for q in &workload.queries {
            *counts.entry(q[0].as_str()).or_default() += 1;
        }
        let mut sorted: Vec<usize> = counts.values().copied().collect();
        sorted.sort_unstable_by(|a, b| b.cmp(a));
        let top: usize = sorted.iter().take(sorted.len() / 100).sum();
        assert!(
            top as f64 > 0.05 * workload.queries.len() as f64,
            "the top 1% of queries take {top} of {}",
            workload.queries.len()
        );
        // Some repeat reaches back further than the term mode's 100 queries.
        let mut first: HashMap<&str, usize> = HashMap::new();
        let longest = workload
            .queries
            .iter()
            .enumerate()
            .filter_map(|(i, q)| {
                let at = *first.entry(q[0].as_str()).or_insert(i);
                (at < i).then_some(i - at)
            })
            .max()
            .unwrap();
        assert!(longest > 1_000, "{longest}");
        // Same seed, same workload.
        assert_eq!(
            workload,
            generate(&terms, &query_config(QueryType::Single, 0.5, 20_000, 5)).unwrap()
        );
    }

    fn class_terms_of(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("w{i}")).collect()
    }

    #[test]
    fn default_thresholds_split_a_zipf_vocabulary() {
        let vocabulary = zipf(200_000);
        assert_eq!(vocabulary.rare, 200_000 - 50_000, "df 1 is left out");
        let thresholds = Thresholds::percentiles(&vocabulary.dfs()).unwrap();
        let sizes: HashMap<&str, usize> = [FrequencyClass::H, FrequencyClass::M, FrequencyClass::L]
            .into_iter()
            .map(|c| (c.name(), vocabulary.class_terms(c, &thresholds).len()))
            .collect();
        let n = vocabulary.terms.len();
        assert!(sizes["H"] >= n / 100 && sizes["H"] < n / 50, "{sizes:?}");
        assert!(sizes["L"] >= n / 2, "{sizes:?}");
        assert!(sizes["M"] > 0, "{sizes:?}");
        // H holds the most frequent terms.
        let h = vocabulary.class_terms(FrequencyClass::H, &thresholds);
        assert!(h.contains(&"t0".to_string()));
    }

    #[test]
    fn thresholds_keep_every_class_non_empty_on_ties() {
        // Nearly every term occurs twice: the percentiles fall on the same value.
        let mut dfs = vec![2; 1000];
        dfs.extend([3, 50]);
        let thresholds = Thresholds::percentiles(&dfs).unwrap();
        assert_eq!(
            thresholds,
            Thresholds {
                h_min: 50,
                l_max: 3
            }
        );
        assert_eq!(
            Thresholds::percentiles(&[2, 2, 3]),
            Err(WorkloadError::TooFewFrequencies(2))
        );
        assert!(Thresholds { h_min: 5, l_max: 5 }.validate().is_err());
    }

    #[test]
    fn vocabulary_sums_segments_and_drops_rare_terms() {
        let pairs = [("b", 1), ("a", 3), ("b", 2), ("c", 1)].map(|(t, df)| (t.to_string(), df));
        let vocabulary = Vocabulary::from_pairs(pairs, 2);
        assert_eq!(vocabulary.terms, [("a".into(), 3), ("b".into(), 3)]);
        assert_eq!(vocabulary.rare, 1);
    }

    #[test]
    fn every_emitted_term_belongs_to_the_class() {
        let vocabulary = zipf(20_000);
        let thresholds = Thresholds::percentiles(&vocabulary.dfs()).unwrap();
        let df: HashMap<&str, u64> = vocabulary
            .terms
            .iter()
            .map(|(t, d)| (t.as_str(), *d))
            .collect();
        for class in [FrequencyClass::H, FrequencyClass::M, FrequencyClass::L] {
            let terms = vocabulary.class_terms(class, &thresholds);
            for query_type in [QueryType::Single, QueryType::And, QueryType::Or] {
                let workload = generate(&terms, &config(query_type, 0.25, 2_000, 7)).unwrap();
                assert_eq!(workload.queries.len(), 2_000);
                for query in &workload.queries {
                    for term in query {
                        assert_eq!(thresholds.class_of(df[term.as_str()]), class, "{term}");
                    }
                }
            }
        }
    }

    #[test]
    fn without_repetition_no_term_repeats() {
        let terms = class_terms_of(5_000);
        let workload = generate(&terms, &config(QueryType::Single, 0.0, 4_000, 1)).unwrap();
        assert_eq!(workload.from_repeat_queue, 0);
        let distinct: HashSet<&Vec<String>> = workload.queries.iter().collect();
        assert_eq!(distinct.len(), 4_000);
        // A class smaller than the workload is reshuffled and used again, whole.
        let workload = generate(&terms[..10], &config(QueryType::Single, 0.0, 25, 1)).unwrap();
        let mut counts: HashMap<&str, usize> = HashMap::new();
        for q in &workload.queries {
            *counts.entry(q[0].as_str()).or_default() += 1;
        }
        assert_eq!(counts.len(), 10);
        assert!(counts.values().all(|&c| c == 2 || c == 3));
    }

    #[test]
    fn repetition_probability_sets_the_share_of_repeat_queue_terms() {
        let terms = class_terms_of(50_000);
        let n = 10_000;
        for rp in [0.25, 0.5] {
            for seed in 0..3 {
                let workload = generate(&terms, &config(QueryType::Single, rp, n, seed)).unwrap();
                let measured = workload.from_repeat_queue as f64 / n as f64;
                // The first query cannot repeat (the repeat queue is empty).
                let expected = rp * (n - 1) as f64 / n as f64;
                assert!(
                    (measured - expected).abs() < 0.02,
                    "rp {rp} seed {seed}: measured {measured}"
                );
                // Repeated queries appear earlier in the workload; rp bounds their share.
                let mut seen = HashSet::new();
                let again = workload
                    .queries
                    .iter()
                    .filter(|q| !seen.insert(q[0].clone()))
                    .count() as f64
                    / n as f64;
                assert!(again > 0.5 * rp && again <= measured, "rp {rp}: {again}");
            }
        }
    }

    #[test]
    fn repeats_come_from_the_last_hundred_terms() {
        // With rp = 1 every query after the first is a term of the repeat queue, that is one
        // of the last 100 terms popped from the term queue: never a term popped later.
        let terms = class_terms_of(1_000);
        let workload = generate(&terms, &config(QueryType::Single, 1.0, 500, 3)).unwrap();
        assert_eq!(workload.from_repeat_queue, 499);
        let distinct: HashSet<&Vec<String>> = workload.queries.iter().collect();
        assert!(distinct.len() < 500);
    }

    #[test]
    fn same_seed_same_workload_other_seed_another() {
        let terms = class_terms_of(3_000);
        for query_type in [QueryType::Single, QueryType::And, QueryType::Or] {
            let a = generate(&terms, &config(query_type, 0.25, 1_000, 42)).unwrap();
            let mut shuffled = terms.clone();
            shuffled.reverse();
            let b = generate(&shuffled, &config(query_type, 0.25, 1_000, 42)).unwrap();
            assert_eq!(a.to_text(), b.to_text(), "input order does not matter");
            let c = generate(&terms, &config(query_type, 0.25, 1_000, 43)).unwrap();
            assert_ne!(a.to_text(), c.to_text());
        }
    }

    #[test]
    fn two_term_queries_pair_the_halves_workloads_by_position() {
        let terms = class_terms_of(1_001);
        let cfg = config(QueryType::And, 0.25, 3_000, 9);
        let workload = generate(&terms, &cfg).unwrap();
        let [first, second] = workload.halves.clone().unwrap();
        // The halves split the class.
        assert_eq!(first.len(), 500);
        assert_eq!(second.len(), 501);
        let a: HashSet<&String> = first.iter().collect();
        let b: HashSet<&String> = second.iter().collect();
        assert!(a.is_disjoint(&b));
        assert_eq!(a.len() + b.len(), terms.len());
        // Query i pairs term i of the first half's workload with term i of the second's,
        // built as one-term workloads in that order from the same generator.
        let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed);
        let mut sorted = terms.clone();
        sorted.sort_unstable();
        sorted.shuffle(&mut rng);
        let second_half = sorted.split_off(sorted.len() / 2);
        assert_eq!((&sorted, &second_half), (&first, &second));
        let (wa, ra) = one_term_workload(&first, cfg.rp, cfg.count, &mut rng);
        let (wb, rb) = one_term_workload(&second, cfg.rp, cfg.count, &mut rng);
        assert_eq!(workload.from_repeat_queue, ra + rb);
        for (i, query) in workload.queries.iter().enumerate() {
            assert_eq!(query, &vec![wa[i].clone(), wb[i].clone()]);
            assert!(a.contains(&query[0]) && b.contains(&query[1]));
        }
        // And the text of the query types.
        assert_eq!(workload.query_text(0), format!("+{} +{}", wa[0], wb[0]));
        let or = generate(&terms, &config(QueryType::Or, 0.25, 3_000, 9)).unwrap();
        assert_eq!(or.queries, workload.queries);
        assert_eq!(or.query_text(0), format!("{} {}", wa[0], wb[0]));
    }

    #[test]
    fn query_text_escapes_special_characters() {
        let terms = ["a:b".to_string(), "AND".to_string()];
        assert_eq!(QueryType::Single.query_text(&terms[..1]), "a\\:b");
        assert_eq!(QueryType::And.query_text(&terms), "+a\\:b +\\AND");
        assert_eq!(QueryType::Or.query_text(&terms), "a\\:b \\AND");
    }

    #[test]
    fn rejects_what_cannot_be_generated() {
        let one = class_terms_of(1);
        assert!(matches!(
            generate(&one, &config(QueryType::And, 0.0, 5, 0)),
            Err(WorkloadError::ClassTooSmall { need: 2, .. })
        ));
        assert!(generate(&[], &config(QueryType::Single, 0.0, 5, 0)).is_err());
        assert_eq!(
            generate(&one, &config(QueryType::Single, 1.5, 5, 0)),
            Err(WorkloadError::BadProbability(1.5))
        );
        let w = generate(&one, &config(QueryType::Single, 0.5, 0, 0)).unwrap();
        assert!(w.queries.is_empty() && w.to_text().is_empty());
    }
}
