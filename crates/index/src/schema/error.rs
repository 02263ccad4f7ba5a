//! Why a mapping or a document under it was refused.

/// A mapping that cannot be used: its JSON names a type, a parameter or a field apcache does not
/// know or does not implement.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MappingError {
    /// The JSON is not a mapping.
    #[error("invalid mapping: {0}")]
    Invalid(String),
    /// A field's `type` is not one apcache implements.
    #[error("field [{field}]: unsupported type [{kind}] (supported: text, keyword, long, integer, short, byte, double, float, date, boolean, object)")]
    UnsupportedType {
        /// The field.
        field: String,
        /// The type the mapping names.
        kind: String,
    },
    /// A field's mapping has a parameter apcache does not implement.
    #[error("field [{field}]: unsupported mapping parameter [{parameter}]{hint}")]
    UnsupportedParameter {
        /// The field.
        field: String,
        /// The parameter.
        parameter: String,
        /// What to do instead, when there is something to say (starts with `: `).
        hint: String,
    },
    /// A field name that cannot be stored.
    #[error("invalid field name {0:?}: names are non-empty, hold no control characters, and do not start with '_' (reserved for metadata such as _id)")]
    InvalidName(String),
    /// Two mappings give one field different types (a mapping merged with another).
    #[error("field [{field}] is mapped as [{existing}] and cannot also be [{other}]")]
    Conflict {
        /// The field.
        field: String,
        /// Its type so far.
        existing: String,
        /// The type that disagrees.
        other: String,
    },
}

/// Why a document does not fit the mapping.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DocumentError {
    /// The document is not a JSON object.
    #[error("a document must be a JSON object")]
    NotAnObject,
    /// A value does not fit its field's type.
    #[error("field [{field}]: {reason}")]
    Field {
        /// The field (dotted for objects).
        field: String,
        /// What is wrong with its value.
        reason: String,
    },
    /// A field the mapping does not name, under `"dynamic": "strict"`.
    #[error(
        "field [{0}] is not in the mapping and the mapping is strict (\"dynamic\": \"strict\")"
    )]
    StrictUnknown(String),
    /// The `_id` is not a usable id.
    #[error("_id: {0}")]
    Id(String),
    /// Another document of the index has the same `_id`.
    #[error("_id {0:?} is already the id of another document of this index")]
    DuplicateId(String),
    /// The document (or its metadata) names an Elasticsearch metadata field apcache refuses.
    #[error("field [{0}] is a metadata field and cannot be added inside a document")]
    MetadataField(String),
}
