//! The query language: query text parsed into a typed tree.
//!
//! A query string is parsed once, up front, into a [`Query`]: terms combined by [`BoolQuery`]
//! clauses that must, should or must not match. Every question about the text (is it
//! well-formed, which operators apply to which words, what the analyzer makes of each word) is
//! settled here, so malformed input gets a clear [`QueryError`] pointing at the byte where it
//! goes wrong, and the evaluator only ever sees a tree it can run. [`Query::matches`] is the
//! tree's meaning, spelled out exhaustively; evaluators are tested against it.
//!
//! The syntax is a subset of Lucene's classic `QueryParser` and means what it means there, so
//! that the same query string finds the same documents in apcache and in Lucene:
//!
//! ```text
//! rust search        either word (both with DefaultOperator::And)
//! +rust search       rust required, search optional
//! rust -java         rust, but not java (also: rust NOT java, rust !java)
//! rust AND java      both (also &&); rust OR java: either (also ||)
//! +(rust go) -java   parentheses group clauses; a group can be required or prohibited
//! wi-fi              a word is analyzed like document text: here the terms wi and fi
//! ```
//!
//! # Quirks (Lucene's, kept on purpose)
//!
//! - `AND` and `OR` bind by changing the kind of the clause just before them, left to right,
//!   with no precedence: `a OR b AND c` is `a +b +c`, and `a AND b OR c` is `+a +b c`.
//! - A query of only prohibited clauses (`-a`, `NOT a`) matches nothing.
//! - A word the analyzer drops entirely (punctuation, a stop word) disappears, but an `AND` or
//!   `OR` before it still applies to the clause before it. [`parse_query_with_notes`] says
//!   which words were dropped, split or changed, as [`QueryNote`]s.
//! - `-`, `+` and `!` followed by a space are words, which the analyzer drops: `a - b` is `a b`.
//! - `&&` and `||` are operators only when they stand alone: `a &&b` is the words `a` and
//!   `&&b`, that is the terms a and b.

mod ast;
mod canonical;
mod clauses;
mod error;
mod field_query;
mod note;
mod parser;
#[cfg(test)]
mod tests;
mod text_fields;

pub use ast::{BoolQuery, DisMaxQuery, Factor, PhraseQuery, Query, RangeBounds, RangeQuery};
pub use clauses::{TooManyClauses, MAX_CLAUSES};
pub use error::QueryError;
pub use field_query::{exists_query, prefix_query, range_query, term_query, RangeEnd};
pub use note::QueryNote;
pub use parser::{
    escape, parse_query, parse_query_in, parse_query_in_fields, parse_query_with_notes,
    DefaultOperator, MAX_NESTING, MAX_SLOP,
};
pub use text_fields::{across_fields, check_text_field, in_field, Combine, DefaultFields};
