//! The document model: a [`Mapping`] of fields and types in Elasticsearch's JSON form, and a
//! [`Mapper`] that turns a JSON document into what the index keeps of it.
//!
//! Text fields are analyzed into the index's words; every text field of a document joins one
//! stream of words in document order, as if joined by spaces (the default field that plain
//! queries search, as a tab-separated document's title and body are), the values of one array
//! [`TEXT_GAP`] positions apart so that a phrase never runs from one into the next. Keyword values and field existence are indexed as terms of their own
//! ([`field_terms`]); keyword, numeric, date and boolean values are also kept in per-segment
//! columns ([`crate::columns`]) for ranges and sorting. The document itself is stored as given
//! (`_source`).

mod date;
mod document;
mod error;
pub mod field_terms;
mod field_type;
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
