//! Ranking by fields: the top k matches of a query ordered by keyword, numeric, date or boolean
//! values (and the score or the document order), as Elasticsearch's `sort`.
//!
//! Every match is visited (no pruning applies to an order that is not the score's). Within a
//! segment a keyword is compared by its ordinal, which follows the values' byte order, so no
//! string is read per match; the segment's best k are then given their strings and merged with
//! the other segments'. A multi-valued field sorts by its least value ascending and its greatest
//! descending (Elasticsearch's default `mode`); a document without a value sorts last unless
//! the key asks for missing values first. Ties go to the lower document number.

use std::cmp::Ordering;

use serde::Serialize;

use super::cancel::{self, Countdown};
use super::field_scorers::FieldScorers;
use super::folded::Folded;
use super::index_reader::IndexReader;
use super::query_terms::QueryTerms;
use super::searcher::compile;
use super::stats::SearchStats;
use super::term_cursor::NO_MORE_DOCS;
use super::term_opener::TermOpener;
use crate::columns::{Columns, KeywordColumn, NumericColumn, BLOCK_DOCS};
use crate::query::Query;
use crate::IndexError;

/// What a sort key orders by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SortBy {
    /// The BM25 score.
    Score,
    /// The document number (index order).
    Doc,
    /// A numeric column's values (integers, dates, booleans, doubles in sortable form).
    Numbers(String),
    /// A keyword column's values.
    Keywords(String),
}

/// One key of a sort.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SortKey {
    /// What it orders by.
    pub by: SortBy,
    /// Greatest first.
    pub descending: bool,
    /// Documents without a value before those with one (else after).
    pub missing_first: bool,
}

/// A document's value for one sort key.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum SortValue {
    /// The document has no value.
    Missing,
    /// A number as the column keeps it.
    Number(i64),
    /// A keyword.
    Keyword(String),
    /// A score.
    Score(f32),
    /// A document number.
    Doc(u32),
}

/// A hit of a sorted search.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SortedHit {
    /// Its global DID.
    pub doc: u32,
    /// Its score, when the sort reads it (else `None`).
    pub score: Option<f32>,
    /// Its value for each sort key.
    pub values: Vec<SortValue>,
}

/// The result of a sorted search.
#[derive(Debug, Clone, Serialize)]
pub struct SortedResult {
    /// Every match (after `search_after` ones are left out), when counted; else the matches
    /// visited, a lower bound.
    pub total_hits: u64,
    /// Whether `total_hits` counts every match.
    pub total_hits_exact: bool,
    /// The first `k` in sort order.
    pub hits: Vec<SortedHit>,
    /// Decoding work.
    pub stats: SearchStats,
}

/// A value as compared within one segment.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Part {
    Missing,
    Number(i64),
    /// A keyword's ordinal doubled; an odd number stands between two ordinals (a `search_after`
    /// value the segment does not hold).
    Ordinal(i64),
    Score(f32),
    Doc(u32),
}

/// Orders two values of one key: a missing value first or last whatever the direction (as
/// Elasticsearch's `missing`), present values by `compare`, reversed when descending.
fn order(missing: (bool, bool), key: (bool, bool), compare: impl FnOnce() -> Ordering) -> Ordering {
    let (missing_first, descending) = key;
    match missing {
        (true, true) => Ordering::Equal,
        (true, false) if missing_first => Ordering::Less,
        (true, false) => Ordering::Greater,
        (false, true) if missing_first => Ordering::Greater,
        (false, true) => Ordering::Less,
        (false, false) if descending => compare().reverse(),
        (false, false) => compare(),
    }
}

/// Compares two parts of the same key (of one segment) in the key's order.
fn compare_part(a: &Part, b: &Part, missing_first: bool, descending: bool) -> Ordering {
    let missing = (*a == Part::Missing, *b == Part::Missing);
    order(missing, (missing_first, descending), || match (a, b) {
        (Part::Number(x), Part::Number(y)) | (Part::Ordinal(x), Part::Ordinal(y)) => x.cmp(y),
        (Part::Score(x), Part::Score(y)) => x.total_cmp(y),
        (Part::Doc(x), Part::Doc(y)) => x.cmp(y),
        _ => Ordering::Equal,
    })
}

/// Compares two values of `key` (of any segments) in the key's order.
fn compare_value(a: &SortValue, b: &SortValue, key: &SortKey) -> Ordering {
    let missing = (*a == SortValue::Missing, *b == SortValue::Missing);
    order(missing, (key.missing_first, key.descending), || {
        match (a, b) {
            (SortValue::Number(x), SortValue::Number(y)) => x.cmp(y),
            (SortValue::Keyword(x), SortValue::Keyword(y)) => x.as_bytes().cmp(y.as_bytes()),
            (SortValue::Score(x), SortValue::Score(y)) => x.total_cmp(y),
            (SortValue::Doc(x), SortValue::Doc(y)) => x.cmp(y),
            _ => Ordering::Equal,
        }
    })
}

/// The columns a segment sorts by, one per key.
enum Source<'c> {
    Score,
    Doc,
    Numbers(Option<NumericColumn<'c>>),
    Keywords(Option<KeywordColumn<'c>>),
}

/// Runs `query` over `reader` and returns its first `k` matches in the order of `sort`, after
/// `after` (a previous page's last hit's values) when given.
pub(crate) fn search(
    reader: &IndexReader,
    scorers: &FieldScorers,
    query: &Query,
    sort: &[SortKey],
    k: usize,
    after: Option<&[SortValue]>,
    count: bool,
) -> Result<SortedResult, IndexError> {
    cancel::check()?;
    if let Some(after) = after {
        if after.len() != sort.len() {
            return Err(IndexError::InvalidArgument(format!(
                "search_after has {} values and the sort {} keys",
                after.len(),
                sort.len()
            )));
        }
    }
    let terms = QueryTerms::resolve(reader, query)?;
    let weights = scorers.weights(query.terms(), |term| terms.doc_freq(term));
    let bm25 = scorers.default_field();
    let folded = Folded::of(query);
    let wants_score = sort.iter().any(|key| key.by == SortBy::Score);
    let mut total = 0u64;
    let mut stats = SearchStats::default();
    let mut merged: Vec<SortedHit> = Vec::new();
    let local_docs_of = |segment: &crate::segment::SegmentReader, doc: u32| {
        segment
            .meta()
            .docs
            .local(doc)
            .expect("a segment's match is one of its documents")
    };
    for (i, segment) in reader.segments().iter().enumerate() {
        let opener = TermOpener {
            index: i,
            segment,
            terms: &terms,
            source: None,
            scorers: Some(scorers),
        };
        let columns: Option<Columns<'_>> = segment.columns();
        let sources: Vec<Source<'_>> = sort
            .iter()
            .map(|key| match &key.by {
                SortBy::Score => Source::Score,
                SortBy::Doc => Source::Doc,
                SortBy::Numbers(field) => {
                    Source::Numbers(columns.as_ref().and_then(|c| c.numeric(field)))
                }
                SortBy::Keywords(field) => {
                    Source::Keywords(columns.as_ref().and_then(|c| c.keyword(field)))
                }
            })
            .collect();
        // `after` in this segment's terms: keywords as (doubled) ordinals.
        let after_parts: Option<Vec<Part>> = after.map(|after| {
            after
                .iter()
                .zip(&sources)
                .map(|(value, source)| match (value, source) {
                    (SortValue::Missing, _) => Part::Missing,
                    (SortValue::Number(n), _) => Part::Number(*n),
                    (SortValue::Score(s), _) => Part::Score(*s),
                    (SortValue::Doc(d), _) => Part::Doc(*d),
                    (SortValue::Keyword(text), Source::Keywords(Some(column))) => {
                        let ceiling = i64::from(column.ceiling_ordinal(text));
                        let exact = column.ordinal_of(text).is_some();
                        Part::Ordinal(if exact { 2 * ceiling } else { 2 * ceiling - 1 })
                    }
                    // A segment without the column holds only missing values.
                    (SortValue::Keyword(_), _) => Part::Ordinal(i64::MIN),
                })
                .collect()
        });
        let mut node = compile(&opener, &folded, &weights)?;
        let mut best: Vec<(Vec<Part>, u32, Option<f32>)> = Vec::new();
        let mut parts = Vec::with_capacity(sort.len());
        let mut countdown = Countdown::new();
        let compare = |a: &[Part], b: &[Part]| {
            for ((x, y), key) in a.iter().zip(b).zip(sort) {
                let ordering = compare_part(x, y, key.missing_first, key.descending);
                if ordering != Ordering::Equal {
                    return ordering;
                }
            }
            Ordering::Equal
        };
        // Without a count, once `k` hits are held, a block of documents whose first-key
        // bounds cannot beat the last of them is stepped over (Lucene's competitive
        // iterator). Local numbers are DIDs offset by one run's start.
        let skips = !count && k > 0 && !sort[0].missing_first;
        let single_run = match segment.meta().docs.runs() {
            [[first, _]] => Some(*first),
            _ => None,
        };
        let mut checked_block = u32::MAX;
        let mut doc = node.start()?;
        while doc != NO_MORE_DOCS {
            countdown.step()?;
            if let (true, Some(first), Some((worst, _, _))) =
                (skips && best.len() == k, single_run, best.last())
            {
                let block = (doc - first) / BLOCK_DOCS;
                if block != checked_block {
                    checked_block = block;
                    if !can_compete(&sources[0], &sort[0], block, &worst[0], sort.len() == 1) {
                        doc = node.advance(first + (block + 1) * BLOCK_DOCS)?;
                        continue;
                    }
                }
            }
            let score = if wants_score {
                Some(node.score(bm25)?)
            } else {
                None
            };
            parts.clear();
            let local = local_docs_of(segment, doc);
            for (key, source) in sort.iter().zip(&sources) {
                parts.push(match source {
                    Source::Score => Part::Score(score.unwrap_or(0.0)),
                    Source::Doc => Part::Doc(doc),
                    Source::Numbers(None) | Source::Keywords(None) => Part::Missing,
                    Source::Numbers(Some(column)) => {
                        let value = if key.descending {
                            column.max(local)
                        } else {
                            column.min(local)
                        };
                        value.map_or(Part::Missing, Part::Number)
                    }
                    Source::Keywords(Some(column)) => {
                        let value = if key.descending {
                            column.max_ordinal(local)
                        } else {
                            column.min_ordinal(local)
                        };
                        value.map_or(Part::Missing, |o| Part::Ordinal(2 * i64::from(o)))
                    }
                });
            }
            let passes = after_parts
                .as_deref()
                .is_none_or(|after| compare(&parts, after) == Ordering::Greater);
            if passes {
                total += 1;
                // Matches come in DID order, so a later one ties after an earlier one.
                let worse_than_all = best.len() == k
                    && best
                        .last()
                        .is_some_and(|(last, _, _)| compare(&parts, last) != Ordering::Less);
                if k > 0 && !worse_than_all {
                    let at = best.partition_point(|(other, _, _)| {
                        compare(other, &parts) != Ordering::Greater
                    });
                    best.insert(at, (parts.clone(), doc, score));
                    best.truncate(k);
                }
            }
            doc = node.next_doc()?;
        }
        stats += node.stats();
        for (parts, doc, score) in best {
            let values = parts
                .iter()
                .zip(&sources)
                .map(|(part, source)| -> Result<SortValue, IndexError> {
                    Ok(match (part, source) {
                        (Part::Missing, _) => SortValue::Missing,
                        (Part::Number(n), _) => SortValue::Number(*n),
                        (Part::Score(s), _) => SortValue::Score(*s),
                        (Part::Doc(d), _) => SortValue::Doc(*d),
                        (Part::Ordinal(o), Source::Keywords(Some(column))) => {
                            let ordinal = u32::try_from(o / 2).unwrap_or(0);
                            SortValue::Keyword(
                                column
                                    .value(ordinal)
                                    .map_err(|e| {
                                        IndexError::corrupt(&segment.meta().name, e.to_string())
                                    })?
                                    .to_owned(),
                            )
                        }
                        (Part::Ordinal(_), _) => SortValue::Missing,
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            merged.push(SortedHit { doc, score, values });
        }
    }
    merged.sort_by(|a, b| {
        for ((x, y), key) in a.values.iter().zip(&b.values).zip(sort) {
            let ordering = compare_value(x, y, key);
            if ordering != Ordering::Equal {
                return ordering;
            }
        }
        a.doc.cmp(&b.doc)
    });
    merged.truncate(k);
    Ok(SortedResult {
        total_hits: total,
        total_hits_exact: count,
        hits: merged,
        stats,
    })
}

/// Whether a document of block `block` of the column of `source` can sort before `worst` (the
/// last of the hits held) by `key`, the first key. On an equal value it can unless `ties_lose`
/// (the only key: a match coming later in DID order loses a full tie; with more keys, later
/// ones may still decide).
fn can_compete(
    source: &Source<'_>,
    key: &SortKey,
    block: u32,
    worst: &Part,
    ties_lose: bool,
) -> bool {
    let best = match source {
        Source::Numbers(Some(column)) => column
            .block_bounds(block)
            .map(|(min, max)| Part::Number(if key.descending { max } else { min })),
        Source::Keywords(Some(column)) => column
            .block_bounds(block)
            .map(|(min, max)| Part::Ordinal(2 * i64::from(if key.descending { max } else { min }))),
        // Scores and DIDs have no block bounds; a missing column holds only missing values.
        Source::Score | Source::Doc => return true,
        Source::Numbers(None) | Source::Keywords(None) => None,
    };
    // Missing values sort last (the caller checks): a block without values offers only them.
    let best = best.unwrap_or(Part::Missing);
    match compare_part(&best, worst, key.missing_first, key.descending) {
        Ordering::Less => true,
        Ordering::Equal => !ties_lose,
        Ordering::Greater => false,
    }
}
