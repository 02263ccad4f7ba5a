//! Query evaluation: an open index, BM25 as Lucene computes it, cursors over compressed
//! postings, exhaustive document-at-a-time evaluation of any query tree, and dynamic pruning
//! (block-max MaxScore, block-max AND) for flat disjunctions and conjunctions, which must
//! return exactly the top k the exhaustive evaluator returns. Phrases are checked against
//! their terms' positions in the documents that hold every term.

mod bitset_filter;
mod block_max_and;
mod bm25;
mod cancel;
mod clause_filter;
mod collection_stats;
mod column_filter;
mod common_values;
mod count;
mod doc_list;
mod field_scorers;
mod field_sort;
mod folded;
mod index_reader;
mod intersect;
mod lead_filter;
mod max_score_window;
mod node;
mod phrase;
mod phrase_matcher;
mod postings_source;
mod pruned;
mod query_terms;
mod range_node;
mod searcher;
mod sloppy_pair;
mod sorted_intersect;
mod sorted_search;
mod stats;
mod term_cursor;
mod term_opener;
mod threshold_seed;
mod top_k;
mod window_accumulator;

pub use bm25::{length_to_norm, norm_to_length, Bm25, Norms, Scoring};
pub use cancel::CancelScope;
pub use collection_stats::CollectionStats;
pub use field_scorers::{field_of, single_field, FieldScorers, TextFieldStats};
pub use field_sort::{SortBy, SortKey, SortValue, SortedHit, SortedResult};
pub use index_reader::{IndexReader, LoadMode};
pub use phrase_matcher::SloppyPhrase;
pub use postings_source::{PostingsSource, TermBlocks, TermPositionBlocks};
pub use query_terms::{QueryTerms, TermEntry};
pub use searcher::{SearchOptions, SearchResult, Searcher};
pub use stats::SearchStats;
pub use term_cursor::{TermCursor, NO_MORE_DOCS};
pub use term_opener::TermOpener;
pub use top_k::{Hit, TopK};
