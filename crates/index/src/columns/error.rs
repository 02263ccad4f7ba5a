//! [`ColumnsError`]: why values could not be added to columns, or a body could not be read.

use super::{ColumnKind, MAX_FIELD_NAME_LEN, MAX_KEYWORD_LEN};

/// Why values could not be added to a [`ColumnsBuilder`](super::ColumnsBuilder), or a columns
/// body could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ColumnsError {
    /// The body's bytes are not what the format says they must be.
    #[error("the columns body is corrupt ({column}): {comment}; re-build the segment")]
    Corrupt {
        /// Where: `column "NAME"`, or `directory`.
        column: String,
        /// What is wrong.
        comment: String,
    },
    /// A value of one kind for a field that holds the other.
    #[error("field {field:?} holds {kind} values, and was given a {got} value")]
    WrongKind {
        /// The field.
        field: String,
        /// The kind its first value fixed.
        kind: ColumnKind,
        /// The kind of the value refused.
        got: ColumnKind,
    },
    /// A value of a document before the last one given: documents must arrive in increasing
    /// order.
    #[error(
        "document {got} (field {field:?}) arrived after document {previous}: \
         add documents in increasing order"
    )]
    DocOutOfOrder {
        /// The field of the value refused.
        field: String,
        /// The last document given.
        previous: u32,
        /// The document refused.
        got: u32,
    },
    /// A document at or past the segment's document count.
    #[error(
        "field {field:?} has a value in document {doc}, and the segment has {doc_count} documents"
    )]
    DocOutOfRange {
        /// The field.
        field: String,
        /// The document.
        doc: u32,
        /// The segment's documents.
        doc_count: u32,
    },
    /// A keyword longer than [`MAX_KEYWORD_LEN`].
    #[error(
        "a value of field {field:?} in document {doc} is {len} bytes long; \
         keywords are at most {MAX_KEYWORD_LEN} bytes"
    )]
    ValueTooLong {
        /// The field.
        field: String,
        /// The document.
        doc: u32,
        /// The value's length in bytes.
        len: usize,
    },
    /// A field name longer than [`MAX_FIELD_NAME_LEN`].
    #[error(
        "a field name is {len} bytes long; field names are at most {MAX_FIELD_NAME_LEN} bytes"
    )]
    FieldNameTooLong {
        /// The name's length in bytes.
        len: usize,
    },
}

impl ColumnsError {
    /// A corrupt-body error about column `field` (`None`: the directory).
    pub(super) fn corrupt(field: Option<&str>, comment: impl Into<String>) -> ColumnsError {
        ColumnsError::Corrupt {
            column: match field {
                Some(field) => format!("column {field:?}"),
                None => "directory".to_owned(),
            },
            comment: comment.into(),
        }
    }
}
