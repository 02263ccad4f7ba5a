//! Evaluation in front of a result cache: a query's answer is stored as the cache keeps it,
//! with the single-term sections that partial matching serves from (a disjunction of terms
//! also stores each term's own answer, evaluated as the single-term query it answers). The
//! server's query threads and the benchmarks' go through here, so both fill the cache alike.

use apcache_index::query::Query;
use apcache_index::search::{PostingsSource, QueryTerms, SearchOptions, SearchResult, Searcher};
use apcache_index::IndexError;

use crate::result_cache::{CachedResult, ResultCache, ResultKey};

/// Evaluates `query` (in the form the cache evaluates, [`ResultCache::evaluated_form`]), whose
/// terms are resolved in `terms`, and offers its answer to `cache` under `key`, with the
/// sections of its terms. `generation` is the reader's.
#[allow(clippy::too_many_arguments)]
pub fn evaluate_and_cache(
    searcher: &Searcher<'_>,
    generation: u64,
    query: &Query,
    terms: &QueryTerms,
    options: &SearchOptions,
    source: Option<&dyn PostingsSource>,
    cache: &ResultCache,
    key: &ResultKey,
) -> Result<SearchResult, IndexError> {
    let result = searcher.search_resolved(query, terms, options, source)?;
    let mut sections = Vec::new();
    for term in cache.section_terms(query) {
        let single = Query::Term(term);
        let answer = searcher.search_resolved(&single, terms, options, source)?;
        let section_key = cache.key(generation, &single, options);
        sections.push((section_key, CachedResult::of(&answer)));
    }
    let shortest = terms
        .iter()
        .map(|(term, _)| terms.doc_freq(term))
        .min()
        .unwrap_or(0);
    cache.insert(key, &CachedResult::of(&result), &sections, shortest);
    Ok(result)
}
