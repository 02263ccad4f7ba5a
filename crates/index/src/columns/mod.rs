//! Columns: a segment's keyword, numeric, date and boolean values stored field by field.
//!
//! Postings answer "which documents hold this term"; filtering on a range, sorting and
//! aggregating ask the reverse, "which values does this document hold", for many documents at
//! once. A column keeps one field's values in local document order, compressed, so that one
//! document's values are a couple of bit-packed reads and a range filter skips whole blocks of
//! 256 documents by their minimum and maximum without reading their values. It is Lucene's
//! `SortedNumeric` and `SortedSet` doc values, in a simpler layout.
//!
//! - [`ColumnsBuilder`] collects `(field, document, value)` while a segment is built and
//!   encodes the file's body; [`Columns`] reads a body in place (no copy) and checks, once, the
//!   layout every later read relies on.
//! - A [`NumericColumn`] holds `i64`s: longs, dates as epoch milliseconds, booleans as 0 and 1,
//!   doubles through [`double_to_sortable`]. A [`KeywordColumn`] holds strings as ordinals
//!   into the column's own sorted dictionary of distinct values.
//! - Every column is multi-valued: a document has zero or more values, sorted ascending
//!   (keywords by ordinal, duplicates removed; numerics keep duplicates).
//!
//! ```text
//! body:   column* | entry × columns | columns u32 | directory offset u64
//! entry:  name length u16 | name | kind u8 | column length u64
//! column: doc index (layout, value count, block table, per-document offsets or presence)
//!         | values (numerics: min, gcd, (v − min) / gcd bit-packed;
//!                   keywords: ordinals bit-packed, then the dictionary)
//! ```
//!
//! docs/format.md, section "Columns", is the byte-level specification; each file's
//! documentation gives its part.
//!
//! # Corrupt bodies
//!
//! [`Columns::parse`] checks every length, offset, width and block start, so that no read goes
//! past the body and none loops longer than the block table allows; it does not decode every
//! value. Bytes it does not check (a document's offsets inside a block, values, dictionary
//! entries) can only make a read answer wrongly or fail with [`ColumnsError::Corrupt`], never
//! panic. The file's framing (checksum) is what catches such damage.

mod bit_packing;
mod builder;
mod doc_index;
#[cfg(test)]
mod edge_tests;
mod error;
mod keyword;
mod numeric;
mod range_test;
mod reader;
mod sortable;
#[cfg(test)]
mod tests;

use std::fmt;

pub use builder::ColumnsBuilder;
pub use error::ColumnsError;
pub use keyword::KeywordColumn;
pub use numeric::NumericColumn;
pub use range_test::RangeTest;
pub use reader::Columns;
pub use sortable::{double_to_sortable, sortable_to_double};

/// Documents per block: the unit of the block table (a value start and the block's bounds)
/// that range matching skips by.
pub const BLOCK_DOCS: u32 = 256;

/// The longest keyword value, in bytes.
pub const MAX_KEYWORD_LEN: usize = 32 * 1024;

/// The longest field name, in bytes (the directory keeps its length as a u16).
pub const MAX_FIELD_NAME_LEN: usize = u16::MAX as usize;

/// What a column holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ColumnKind {
    /// `i64` values.
    Numeric,
    /// Strings, as ordinals into the column's dictionary.
    Keyword,
}

impl ColumnKind {
    /// The kind's byte in the directory.
    fn code(self) -> u8 {
        match self {
            ColumnKind::Numeric => 0,
            ColumnKind::Keyword => 1,
        }
    }

    /// The kind of a directory byte.
    fn from_code(code: u8) -> Option<ColumnKind> {
        match code {
            0 => Some(ColumnKind::Numeric),
            1 => Some(ColumnKind::Keyword),
            _ => None,
        }
    }
}

impl fmt::Display for ColumnKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ColumnKind::Numeric => "numeric",
            ColumnKind::Keyword => "keyword",
        })
    }
}
