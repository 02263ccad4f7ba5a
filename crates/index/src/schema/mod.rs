//! The document model: a [`Mapping`] of fields and types in Elasticsearch's JSON form, and a
//! [`Mapper`] that turns a JSON document into what the index keeps of it.
//!
//! Text fields are analyzed into words, each field's words indexed under its own name
//! ([`field_terms::text_term`]) with its own lengths, so that BM25 scores each field as Lucene
//! does; the values of one array are [`TEXT_GAP`] positions apart, so that a phrase never runs
//! from one into the next. A mapping that joins its text (tab-separated documents' title and
//! body, [`Mapping::joined_text`]) puts them all in the default field instead, one stream of
//! words in document order. Keyword values and field existence are indexed as terms of their
//! own ([`field_terms`]); keyword, numeric, date and boolean values are also kept in
//! per-segment columns ([`crate::columns`]) for ranges and sorting. The document itself is
//! stored as given (`_source`).

mod date;
mod document;
mod error;
pub mod field_terms;
mod field_type;
mod json_values;
mod mapping;
#[cfg(test)]
mod tests;

pub use date::{DateForm, DateFormat};
pub use document::{check_id, MappedDocument, Mapper, MAX_ID_BYTES};
pub use error::{DocumentError, MappingError};
pub use field_type::{
    FieldType, IntegerWidth, KeywordOptions, TextOptions, DYNAMIC_IGNORE_ABOVE, MAX_KEYWORD_BYTES,
};
pub use mapping::{Dynamic, Mapping, ResolvedField};

/// The column and keyword terms that hold documents' `_id`s (a name no mapped field can
/// take: field names do not start with `_`).
pub const ID_FIELD: &str = "_id";

/// Positions between two text values of one array (Elasticsearch's
/// `position_increment_gap`).
pub const TEXT_GAP: u32 = 100;
