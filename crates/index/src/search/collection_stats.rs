//! Collection statistics given from outside: what a shard of a larger index scores with, so
//! that its scores equal those of one index over every shard's documents.
//!
//! BM25 needs three collection-wide figures: the number of documents, their total length (for
//! the average), and each query term's document frequency; per text field, for an index whose
//! fields are indexed under their own names. A shard knows only its own. A
//! coordinator first asks every shard for its figures of a query
//! ([`CollectionStats::of_query`]), adds them up ([`CollectionStats::add`]), and then has each
//! shard score with the sums ([`super::Searcher::with_collection_stats`]), as Elasticsearch's
//! `dfs_query_then_fetch` does.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::field_scorers::{field_of, TextFieldStats};
use super::index_reader::IndexReader;
use crate::query::Query;
use crate::IndexError;

/// Documents, tokens and per-term document frequencies of a collection (or of a shard).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CollectionStats {
    /// Documents with at least one token.
    pub doc_count: u64,
    /// The documents' lengths summed, in tokens.
    pub total_tokens: u64,
    /// Documents holding each term (terms absent here count as in the local index).
    pub doc_freqs: BTreeMap<String, u64>,
    /// The documents and tokens of each named text field the query searches (fields absent
    /// here count as in the local index).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub fields: BTreeMap<String, TextFieldStats>,
}

impl CollectionStats {
    /// The statistics of `reader` for the terms of `query`.
    pub fn of_query(reader: &IndexReader, query: &Query) -> Result<CollectionStats, IndexError> {
        let mut doc_freqs = BTreeMap::new();
        let mut fields = BTreeMap::new();
        for term in query.terms() {
            doc_freqs.insert(term.to_string(), reader.doc_freq(term)?);
            let field = field_of(term);
            if !field.is_empty() {
                fields.insert(field.to_owned(), reader.text_field(field));
            }
        }
        Ok(CollectionStats {
            doc_count: reader.doc_count(),
            total_tokens: reader.total_tokens(),
            doc_freqs,
            fields,
        })
    }

    /// Adds `other`'s figures (another shard's) to these.
    pub fn add(&mut self, other: &CollectionStats) {
        self.doc_count += other.doc_count;
        self.total_tokens += other.total_tokens;
        for (term, df) in &other.doc_freqs {
            *self.doc_freqs.entry(term.clone()).or_default() += df;
        }
        for (field, stats) in &other.fields {
            self.fields.entry(field.clone()).or_default().add(*stats);
        }
    }
}
