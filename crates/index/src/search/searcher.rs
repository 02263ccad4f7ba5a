//! Running a query over an open index: compile the query tree into [`Node`]s per segment, then
//! count, rank exhaustively, or rank with dynamic pruning where the query's shape allows it.

use std::borrow::Cow;
use std::collections::HashMap;

use serde::Serialize;

use super::bm25::{Bm25, Norms, Scoring};
use super::cancel::{self, Countdown};
use super::collection_stats::CollectionStats;
use super::column_filter;
use super::count;
use super::doc_list::DocList;
use super::field_scorers::{single_field, FieldScorers};
use super::field_sort::{self, SortKey, SortValue, SortedResult};
use super::folded::{DocsQuery, Folded};
use super::index_reader::IndexReader;
use super::node::Node;
use super::phrase::{PhraseNode, PhraseTerm};
use super::postings_source::PostingsSource;
use super::pruned::{self, BoostedTerm};
use super::query_terms::QueryTerms;
use super::range_node::RangeNode;
use super::stats::SearchStats;
use super::term_cursor::{TermCursor, NO_MORE_DOCS};
use super::term_opener::TermOpener;
use super::top_k::{Hit, TopK};
use crate::query::{PhraseQuery, Query};
use crate::IndexError;

/// How to evaluate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SearchOptions {
    /// Hits to return (0: count only).
    pub k: usize,
    /// Count every match exactly (else `total_hits` is exact only when no pruning happened).
    pub count: bool,
    /// BM25 variant.
    pub scoring: Scoring,
    /// Document-length norms.
    pub norms: Norms,
    /// Allow dynamic pruning (block-max WAND/AND) when counting is not asked for.
    pub pruning: bool,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            k: 10,
            count: false,
            scoring: Scoring::Bm25,
            norms: Norms::Lucene,
            pruning: true,
        }
    }
}

/// A query's result.
#[derive(Debug, Clone, Serialize)]
pub struct SearchResult {
    /// Matching documents (exact when counted; else a lower bound when pruning skipped some).
    pub total_hits: u64,
    /// Whether `total_hits` is exact.
    pub total_hits_exact: bool,
    /// The best hits, best first.
    pub hits: Vec<Hit>,
    /// The work the query took.
    pub stats: SearchStats,
}

/// The exact count `total_hits`, with no hits and no work.
fn count_only(total_hits: u64) -> SearchResult {
    SearchResult {
        total_hits,
        total_hits_exact: true,
        hits: Vec::new(),
        stats: SearchStats::default(),
    }
}

/// Evaluates queries over one index. Cheap to create (one per thread is the intended use);
/// holds the default scorers, so that a query does not rebuild their norm tables.
pub struct Searcher<'a> {
    reader: &'a IndexReader,
    default_scorers: FieldScorers,
    /// Statistics to score with instead of the index's own (a shard's searcher).
    collection: Option<CollectionStats>,
}

impl<'a> Searcher<'a> {
    /// A searcher over `reader`.
    pub fn new(reader: &'a IndexReader) -> Searcher<'a> {
        let defaults = SearchOptions::default();
        Searcher {
            reader,
            default_scorers: FieldScorers::new(reader, defaults.scoring, defaults.norms, None),
            collection: None,
        }
    }

    /// A searcher over `reader` that scores with `stats` (a whole collection's, of which the
    /// index is a shard) instead of the index's own statistics; a term `stats` does not list
    /// keeps its local document frequency.
    pub fn with_collection_stats(reader: &'a IndexReader, stats: CollectionStats) -> Searcher<'a> {
        let defaults = SearchOptions::default();
        Searcher {
            reader,
            default_scorers: FieldScorers::new(
                reader,
                defaults.scoring,
                defaults.norms,
                Some(&stats),
            ),
            collection: Some(stats),
        }
    }

    /// The scorers for `options`, built only when they are not the default ones.
    fn scorers(&self, options: &SearchOptions) -> Cow<'_, FieldScorers> {
        let defaults = SearchOptions::default();
        if (options.scoring, options.norms) == (defaults.scoring, defaults.norms) {
            Cow::Borrowed(&self.default_scorers)
        } else {
            Cow::Owned(FieldScorers::new(
                self.reader,
                options.scoring,
                options.norms,
                self.collection.as_ref(),
            ))
        }
    }

    /// The scorer of the default field for `options`.
    pub fn bm25(&self, options: &SearchOptions) -> Bm25 {
        self.scorers(options).default_field().clone()
    }

    /// Each of `query_terms`' weight (its IDF in its field), with the document frequencies of
    /// `terms` or of the collection's statistics.
    fn weights(
        &self,
        scorers: &FieldScorers,
        query_terms: &[&str],
        terms: &QueryTerms,
    ) -> HashMap<String, f32> {
        scorers.weights(query_terms.iter().copied(), |term| {
            self.collection
                .as_ref()
                .and_then(|stats| stats.doc_freqs.get(term).copied())
                .unwrap_or_else(|| terms.doc_freq(term))
        })
    }

    /// Runs `query`. Fails with [`IndexError::MappedReadFailed`] if a read of the index
    /// through a mapping failed by the time it ends.
    pub fn search(
        &self,
        query: &Query,
        options: &SearchOptions,
    ) -> Result<SearchResult, IndexError> {
        self.reader
            .unless_mapped_read_failed(self.search_unchecked(query, options))
    }

    fn search_unchecked(
        &self,
        query: &Query,
        options: &SearchOptions,
    ) -> Result<SearchResult, IndexError> {
        cancel::check()?;
        // A single term's count is its document frequency (an index has no deletions): the
        // dictionaries answer it, with nothing to resolve.
        if options.k == 0 {
            if let Folded::Term { term, .. } = Folded::of(query) {
                let mut total_hits = 0;
                for segment in self.reader.segments() {
                    total_hits += segment
                        .term(term)?
                        .map_or(0, |info| u64::from(info.doc_freq));
                }
                return Ok(count_only(total_hits));
            }
        }
        let terms = QueryTerms::resolve(self.reader, query)?;
        self.search_resolved_unchecked(query, &terms, options, None)
    }

    /// Runs `query` and returns its first `k` matches in the order of `sort` (keys over
    /// columns, the score, the document order), after the hit whose sort values are `after`
    /// when given (Elasticsearch's `search_after`). Every match is visited and counted.
    pub fn search_sorted(
        &self,
        query: &Query,
        sort: &[SortKey],
        k: usize,
        after: Option<&[SortValue]>,
    ) -> Result<SortedResult, IndexError> {
        self.sorted(query, sort, k, after, true)
    }

    /// [`Searcher::search_sorted`] without counting every match: once `k` hits are held,
    /// blocks of documents whose values of the first key cannot sort before the last of them
    /// are stepped over, and `total_hits` is the matches visited (`total_hits_exact` false).
    pub fn search_sorted_top(
        &self,
        query: &Query,
        sort: &[SortKey],
        k: usize,
        after: Option<&[SortValue]>,
    ) -> Result<SortedResult, IndexError> {
        self.sorted(query, sort, k, after, false)
    }

    fn sorted(
        &self,
        query: &Query,
        sort: &[SortKey],
        k: usize,
        after: Option<&[SortValue]>,
        count: bool,
    ) -> Result<SortedResult, IndexError> {
        self.reader.unless_mapped_read_failed(field_sort::search(
            self.reader,
            &self.default_scorers,
            query,
            sort,
            k,
            after,
            count,
        ))
    }

    /// Runs `query`, whose terms are already looked up in `terms` (see [`QueryTerms`]),
    /// reading blocks from `source` where it holds them. Fails with
    /// [`IndexError::MappedReadFailed`] if a read of the index through a mapping failed by the
    /// time it ends (the terms, or blocks a source copied, may have been read from zeros).
    pub fn search_resolved(
        &self,
        query: &Query,
        terms: &QueryTerms,
        options: &SearchOptions,
        source: Option<&dyn PostingsSource>,
    ) -> Result<SearchResult, IndexError> {
        self.reader.unless_mapped_read_failed(
            self.search_resolved_unchecked(query, terms, options, source),
        )
    }

    fn search_resolved_unchecked(
        &self,
        query: &Query,
        terms: &QueryTerms,
        options: &SearchOptions,
        source: Option<&dyn PostingsSource>,
    ) -> Result<SearchResult, IndexError> {
        // A query cancelled before it starts (a deadline already past) does no work.
        cancel::check()?;
        // Repeats folded: each clause once, with the boost of its repeats.
        let folded = Folded::of(query);
        // A single term's count is its document frequency (an index has no deletions).
        if let (Folded::Term { term, .. }, 0) = (&folded, options.k) {
            return Ok(count_only(terms.doc_freq(term)));
        }
        let scorers = self.scorers(options);
        let scorers = scorers.as_ref();
        let query_terms = query.terms();
        let weights = self.weights(scorers, &query_terms, terms);
        // Evaluators that share one scorer and one set of lengths between their clauses run
        // only when every term scores in one field; others score each term in its own.
        let field = single_field(query_terms.iter().copied());
        let bm25 = scorers.of_field(field.unwrap_or(""));
        let mut top = TopK::new(options.k);
        let mut total = 0u64;
        let mut exact = true;
        let mut stats = SearchStats::default();
        let shape = pruned::Shape::of(&folded);
        let filtered = pruned::FilteredShape::of(&folded);
        for (i, segment) in self.reader.segments().iter().enumerate() {
            let opener = TermOpener {
                index: i,
                segment,
                terms,
                source,
                scorers: Some(scorers),
            };
            if options.pruning && !options.count && options.k > 0 {
                // A flat shape of one field's terms; or one field's terms beside filters (which
                // may name other fields), whose candidates every filter must hold.
                let pruned_query = match (&shape, field) {
                    (Some(shape), Some(field)) => Some((shape, field, &[][..])),
                    _ => filtered.as_ref().and_then(|f| {
                        f.scoring_field()
                            .map(|field| (&f.shape, field, &f.filters[..]))
                    }),
                };
                if let Some((shape, field, filter_clauses)) = pruned_query {
                    let bm25 = scorers.of_field(field);
                    let mut filters = filter_clauses
                        .iter()
                        .map(|f| compile(&opener, f, &weights))
                        .collect::<Result<Vec<_>, _>>()?;
                    if filters.iter().any(|f| matches!(f, Node::Empty)) {
                        continue;
                    }
                    for filter in &mut filters {
                        filter.start()?;
                    }
                    let best_postings = self.reader.best_postings_apply_in(i, field, bm25);
                    let outcome = pruned::search(
                        &opener,
                        shape,
                        &mut filters,
                        &weights,
                        bm25,
                        best_postings,
                        &mut top,
                    )?;
                    total += outcome.evaluated;
                    exact &= outcome.complete;
                    stats += outcome.stats;
                    for filter in &filters {
                        stats += filter.stats();
                    }
                    continue;
                }
            }
            // Every match scored and counted: a disjunction of terms of one field a window
            // at a time.
            if let (true, Some(shape @ pruned::Shape::Or(..)), Some(_)) =
                (options.k > 0, &shape, field)
            {
                let outcome = pruned::union_exhaustive(&opener, shape, &weights, bm25, &mut top)?;
                total += outcome.evaluated;
                stats += outcome.stats;
                continue;
            }
            if options.k == 0 {
                let open = |terms: &[&str]| -> Result<(Vec<TermCursor>, bool), IndexError> {
                    let mut cursors = Vec::new();
                    for term in terms {
                        cursors.extend(opener.open(term, 0.0)?);
                    }
                    let all = cursors.len() == terms.len();
                    Ok((cursors, all))
                };
                match &shape {
                    Some(pruned::Shape::Or(terms, not)) => {
                        let ((mut terms, _), (mut not, _)) = (open(&names(terms))?, open(not)?);
                        if let Some((count, work)) =
                            count::count_union(segment, &mut terms, &mut not)?
                        {
                            total += count;
                            stats += work;
                            continue;
                        }
                    }
                    Some(pruned::Shape::And(terms, not)) => {
                        let ((mut terms, all), (mut not, _)) = (open(&names(terms))?, open(not)?);
                        if all {
                            let (count, work) =
                                match count::count_dense_pair(segment, &mut terms, &mut not)? {
                                    Some(counted) => counted,
                                    None => count::count_intersection(&mut terms, &mut not)?,
                                };
                            total += count;
                            stats += work;
                        }
                        continue;
                    }
                    None => {}
                }
            }
            let mut node = compile(&opener, &folded, &weights)?;
            if let (Node::Phrase(phrase), 0) = (&mut node, options.k) {
                total += phrase.count()?;
                stats += phrase.stats();
                continue;
            }
            if let (Node::Phrase(phrase), true) = (&mut node, options.pruning && !options.count) {
                let (matches, complete) = phrase.collect_top(bm25, &mut top)?;
                total += matches;
                exact &= complete;
                stats += phrase.stats();
                continue;
            }
            // A match may cost far less than a block decode (a short conjunction), or far
            // more (a disjunction of a thousand clauses): the flag is checked every so many.
            let mut countdown = Countdown::new();
            let mut doc = node.start()?;
            if options.k == 0 {
                while doc != NO_MORE_DOCS {
                    countdown.step()?;
                    total += 1;
                    doc = node.next_doc()?;
                }
            } else {
                while doc != NO_MORE_DOCS {
                    countdown.step()?;
                    total += 1;
                    let score = node.score(bm25)?;
                    top.push(Hit { doc, score });
                    doc = node.next_doc()?;
                }
            }
            stats += node.stats();
        }
        Ok(SearchResult {
            total_hits: total,
            total_hits_exact: exact,
            hits: top.into_sorted(),
            stats,
        })
    }
}

/// The terms of `terms`, their boosts left out (a count does not score).
fn names<'q>(terms: &[BoostedTerm<'q>]) -> Vec<&'q str> {
    terms.iter().map(|t| t.term).collect()
}

/// Compiles `query` into a node over the segment of `opener`.
pub(crate) fn compile<'s>(
    opener: &TermOpener<'s>,
    query: &Folded<'_>,
    weights: &HashMap<String, f32>,
) -> Result<Node<'s>, IndexError> {
    Ok(match query {
        Folded::Term { term, boost } => {
            // Lucene's `weight = boost · idf`, in `f32`.
            let weight = boost * weights.get(*term).copied().unwrap_or(0.0);
            match opener.open(term, weight)? {
                Some(cursor) => Node::Term(cursor),
                None => Node::Empty,
            }
        }
        Folded::Phrase { phrase, boost } => compile_phrase(opener, phrase, *boost, weights)?,
        Folded::DisMax {
            clauses,
            tie_breaker,
        } => {
            let children = clauses
                .iter()
                .map(|c| compile(opener, c, weights))
                .collect::<Result<Vec<_>, _>>()?;
            Node::dis_max(children, *tie_breaker)
        }
        Folded::Docs {
            docs: DocsQuery::All,
            boost,
        } => Node::Docs(DocList::new(
            opener.segment.meta().docs.docs().collect(),
            *boost,
        )),
        Folded::Docs {
            docs: DocsQuery::Range(range),
            boost,
        } => match column_filter::range_test(opener.segment, range) {
            Some(test) => {
                let node = RangeNode::new(test, &opener.segment.meta().docs, *boost);
                if node.doc() == NO_MORE_DOCS {
                    Node::Empty
                } else {
                    Node::Range(Box::new(node))
                }
            }
            None => Node::Empty,
        },
        Folded::Bool(b) => {
            let compile_all = |clauses: &[Folded<'_>]| {
                clauses
                    .iter()
                    .map(|c| compile(opener, c, weights))
                    .collect::<Result<Vec<_>, _>>()
            };
            let must = compile_all(&b.must)?;
            let should = compile_all(&b.should)?;
            let must_not = compile_all(&b.must_not)?;
            let node = if b.must.is_empty() {
                Node::or(should)
            } else {
                Node::req_opt(Node::and(must), Node::or(should))
            };
            Node::exclude(node, Node::or(must_not))
        }
    })
}

/// Compiles a phrase whose weight is multiplied by `boost`: empty where the segment lacks one
/// of its terms.
fn compile_phrase<'s>(
    opener: &TermOpener<'s>,
    phrase: &PhraseQuery,
    boost: f32,
    weights: &HashMap<String, f32>,
) -> Result<Node<'s>, IndexError> {
    // Lucene weighs a phrase with the sum of its terms' IDFs, summed in double precision,
    // times its boost.
    let idf = phrase
        .terms
        .iter()
        .map(|(_, term)| f64::from(weights.get(term).copied().unwrap_or(0.0)))
        .sum::<f64>() as f32;
    let weight = boost * idf;
    let mut terms = Vec::with_capacity(phrase.terms.len());
    for (offset, term) in &phrase.terms {
        let Some(entry) = opener.terms.entry(term, opener.index) else {
            return Ok(Node::Empty);
        };
        let Some(cursor) = opener.open(term, 0.0)? else {
            return Ok(Node::Empty);
        };
        let region = opener.positions(&entry)?;
        let term_id = phrase
            .terms
            .iter()
            .position(|(_, t)| t == term)
            .expect("the term is in the phrase");
        terms.push(PhraseTerm::new(cursor, *offset, term_id, region));
    }
    Ok(Node::Phrase(Box::new(PhraseNode::new(
        opener.segment,
        terms,
        phrase.slop,
        weight,
    ))))
}
