//! The BM25 scorer of each text field.
//!
//! Lucene scores a term with the statistics of the term's field: the documents that have the
//! field (the IDF's `N`) and their average length in it, and each document's length in that
//! field. An index of JSON documents keeps every text field under its own name
//! ([`crate::schema::field_terms::text_term`]), so a query over several fields mixes terms
//! scored with different statistics; [`FieldScorers`] holds one scorer per field, and the
//! cursor of a named field's term scores with its field's scorer and lengths.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::bm25::{Bm25, Norms, Scoring};
use super::collection_stats::CollectionStats;
use super::index_reader::IndexReader;
use crate::schema::field_terms;

/// What BM25 needs of one text field over a collection.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TextFieldStats {
    /// Documents with at least one token in the field (Lucene's `docCount`).
    pub documents: u64,
    /// Tokens of the field in all documents (Lucene's `sumTotalTermFreq`).
    pub tokens: u64,
}

impl TextFieldStats {
    /// Adds `other`'s figures (another segment's or shard's).
    pub fn add(&mut self, other: TextFieldStats) {
        self.documents += other.documents;
        self.tokens += other.tokens;
    }
}

/// The scorer of the default field and of every named text field.
#[derive(Debug, Clone)]
pub struct FieldScorers {
    default: Arc<Bm25>,
    fields: BTreeMap<String, Arc<Bm25>>,
}

impl FieldScorers {
    /// The scorers of `reader`'s fields with `scoring` and `norms`, from `collection`'s
    /// statistics where given (a shard scoring as the whole collection would).
    pub fn new(
        reader: &IndexReader,
        scoring: Scoring,
        norms: Norms,
        collection: Option<&CollectionStats>,
    ) -> FieldScorers {
        let (doc_count, total_tokens) = match collection {
            Some(stats) => (stats.doc_count, stats.total_tokens),
            None => (reader.doc_count(), reader.total_tokens()),
        };
        let default = Arc::new(Bm25::new(scoring, norms, doc_count, total_tokens));
        let mut fields = BTreeMap::new();
        for (name, local) in reader.text_field_stats() {
            let stats = collection
                .and_then(|c| c.fields.get(name).copied())
                .unwrap_or(*local);
            fields.insert(
                name.clone(),
                Arc::new(Bm25::new(scoring, norms, stats.documents, stats.tokens)),
            );
        }
        if let Some(collection) = collection {
            for (name, stats) in &collection.fields {
                fields.entry(name.clone()).or_insert_with(|| {
                    Arc::new(Bm25::new(scoring, norms, stats.documents, stats.tokens))
                });
            }
        }
        FieldScorers { default, fields }
    }

    /// The default field's scorer (and that of keyword values and existence marks).
    pub fn default_field(&self) -> &Bm25 {
        &self.default
    }

    /// The scorer of `field` (`""`: the default field); a named field no document has scores
    /// with the default field's (none of its terms matches anything).
    pub fn of_field(&self, field: &str) -> &Bm25 {
        self.named(field).map_or(&self.default, |bm25| bm25)
    }

    /// The scorer of a named text field, `None` for the default field or an unknown one.
    pub fn named(&self, field: &str) -> Option<&Arc<Bm25>> {
        if field.is_empty() {
            return None;
        }
        self.fields.get(field)
    }

    /// The scorer of `term`: its text field's.
    pub fn of_term(&self, term: &str) -> &Bm25 {
        self.of_field(field_of(term))
    }

    /// Each term's weight (Lucene's IDF, with its field's document count), its document
    /// frequency given by `doc_freq`.
    pub fn weights<'q>(
        &self,
        terms: impl IntoIterator<Item = &'q str>,
        doc_freq: impl Fn(&str) -> u64,
    ) -> HashMap<String, f32> {
        terms
            .into_iter()
            .map(|term| (term.to_owned(), self.of_term(term).idf(doc_freq(term))))
            .collect()
    }
}

/// The text field of `term` (`""` for the default field, and for keyword values and existence
/// marks, which score as the default field's terms).
pub fn field_of(term: &str) -> &str {
    field_terms::text_field_of(term).map_or("", |(field, _)| field)
}

/// The one text field every term of `terms` scores in, or `None` when they span several
/// (evaluators that share one scorer and one set of lengths between clauses need one).
pub fn single_field<'q>(terms: impl IntoIterator<Item = &'q str>) -> Option<&'q str> {
    let mut terms = terms.into_iter();
    let Some(first) = terms.next() else {
        return Some("");
    };
    let field = field_of(first);
    terms.all(|term| field_of(term) == field).then_some(field)
}
