//! [`QueryError`]: why a query string could not be parsed.

/// Why a query string could not be parsed. Positions are byte offsets into the query string.
///
/// The messages are written for the person who typed the query: they say what is wrong, where,
/// and how to write it instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QueryError {
    /// The query is empty or only whitespace.
    #[error("the query is empty: type at least one word to search for")]
    Empty,
    /// A `(` is never closed, or a `)` closes nothing.
    #[error(
        "unbalanced parentheses: the parenthesis at byte {position} has no partner; \
         every '(' needs a matching ')'"
    )]
    UnbalancedParenthesis {
        /// The parenthesis without a partner.
        position: usize,
    },
    /// `()`: a group with nothing in it.
    #[error("empty parentheses at byte {position}: put at least one word between them")]
    EmptyParentheses {
        /// The opening parenthesis.
        position: usize,
    },
    /// Parentheses nested deeper than [`MAX_NESTING`](super::MAX_NESTING).
    #[error("parentheses nested more than {limit} deep at byte {position}")]
    TooDeeplyNested {
        /// The first opening parenthesis past the limit.
        position: usize,
        /// The deepest nesting accepted.
        limit: usize,
    },
    /// An operator with nothing to apply to: `AND` or `OR` without a clause on one side, or
    /// `+`, `-`, `!` or `NOT` not followed by a word or a group.
    #[error("{}", lone_operator_message(operator, *position))]
    LoneOperator {
        /// The operator as written: `AND`, `&&`, `OR`, `||`, `NOT`, `!`, `+` or `-`.
        operator: String,
        /// Where it starts.
        position: usize,
    },
    /// `field:term`: the index has a single field.
    #[error(
        "field queries ('{field}:...') are not supported: the index has a single field; \
         remove '{field}:', or write '\\:' to search for a colon"
    )]
    FieldUnsupported {
        /// The field name written before the colon.
        field: String,
    },
    /// A field the index's mapping does not have.
    #[error(
        "unknown field [{field}]: the index's mapping has no such field (apcache stats shows it)"
    )]
    UnknownField {
        /// The field.
        field: String,
    },
    /// A clause on one text field of an index that joins its text fields into one.
    #[error(
        "searching the text field [{field}] alone is not supported: the index searches its text fields together; drop '{field}:' to search them all"
    )]
    TextFieldUnsupported {
        /// The field.
        field: String,
    },
    /// A range, an exact value or a sort on a text field, which holds words, not values.
    #[error(
        "field [{field}] is text, searched by its words: ranges and sorting need a keyword, numeric, date or boolean field (a text field's keyword sub-field, such as [{field}.keyword], where the mapping has one)"
    )]
    TextFieldNotExact {
        /// The field.
        field: String,
    },
    /// A value its field's type cannot read.
    #[error("field [{field}]: {value:?} is {reason}")]
    InvalidFieldValue {
        /// The field.
        field: String,
        /// The value as written.
        value: String,
        /// Why it cannot be read.
        reason: String,
    },
    /// A range that is not `field:[low TO high]` or `field:{low TO high}`.
    #[error("malformed range at byte {position}: write field:[low TO high] or field:{{low TO high}}, with * for no bound")]
    MalformedRange {
        /// The opening bracket.
        position: usize,
    },
    /// `term*`, `te?m`: wildcard queries.
    #[error(
        "wildcard queries ('*', '?' at byte {position}) are not supported; \
         write '\\*' or '\\?' to search for the character itself"
    )]
    WildcardUnsupported {
        /// The wildcard character.
        position: usize,
    },
    /// `term~`: fuzzy queries (a `~` after a quoted phrase is its slop).
    #[error(
        "fuzzy queries ('~' at byte {position}) are not supported; a slop ('~2') follows a \
         quoted phrase, and '\\~' searches for the character itself"
    )]
    FuzzyUnsupported {
        /// The `~`.
        position: usize,
    },
    /// A phrase's slop that is negative (`"a b"~-1`) or above
    /// [`MAX_SLOP`](super::MAX_SLOP).
    #[error(
        "invalid slop at byte {position}: a phrase's slop is a whole number from 0 to {}, \
         as in '\"a b\"~2'",
        super::MAX_SLOP
    )]
    InvalidSlop {
        /// The `~`.
        position: usize,
    },
    /// A `^` not followed by a boost (a number at least 0) or not after a clause.
    #[error(
        "'^' at byte {position} must follow a clause and be followed by a number at least 0, as in word^2, \"a phrase\"^0.5 or (a b)^3"
    )]
    InvalidBoost {
        /// The `^`.
        position: usize,
    },
    /// `[a TO b]`, `{a TO b}`: range queries.
    #[error("range queries ('[a TO b]', '{{a TO b}}' at byte {position}) are not supported")]
    RangeUnsupported {
        /// The opening bracket.
        position: usize,
    },
    /// `/regex/`: regular-expression queries.
    #[error(
        "regular-expression queries ('/' at byte {position}) are not supported; \
         write '\\/' to search for a slash"
    )]
    RegexUnsupported {
        /// The opening slash.
        position: usize,
    },
    /// A character that cannot appear where it is, such as a `]` or `}` outside a range, or a
    /// `:` without a field name before it.
    #[error(
        "unexpected '{character}' at byte {position}; \
         put a backslash before it to search for it literally"
    )]
    UnexpectedCharacter {
        /// The character.
        character: char,
        /// Where it is.
        position: usize,
    },
    /// A backslash at the very end of the query, with no character to escape.
    #[error(
        "the query ends with a backslash (byte {position}), which escapes nothing; \
         write '\\\\' to search for a backslash"
    )]
    UnterminatedEscape {
        /// The backslash.
        position: usize,
    },
    /// A `"` that is never closed.
    #[error("the quote at byte {position} is never closed")]
    UnterminatedQuote {
        /// The opening quote.
        position: usize,
    },
    /// `\u` not followed by four hexadecimal digits, or escapes that do not form a character
    /// (an unpaired UTF-16 surrogate).
    #[error(
        "invalid unicode escape at byte {position}: '\\u' must be followed by four \
         hexadecimal digits that form a character"
    )]
    InvalidUnicodeEscape {
        /// The backslash of the (first) `\u` escape.
        position: usize,
    },
}

impl QueryError {
    /// The byte offset in the query string the error points at, if it points at one.
    pub fn position(&self) -> Option<usize> {
        match self {
            QueryError::Empty
            | QueryError::FieldUnsupported { .. }
            | QueryError::UnknownField { .. }
            | QueryError::TextFieldUnsupported { .. }
            | QueryError::TextFieldNotExact { .. }
            | QueryError::InvalidFieldValue { .. } => None,
            QueryError::UnbalancedParenthesis { position }
            | QueryError::EmptyParentheses { position }
            | QueryError::TooDeeplyNested { position, .. }
            | QueryError::LoneOperator { position, .. }
            | QueryError::WildcardUnsupported { position }
            | QueryError::FuzzyUnsupported { position }
            | QueryError::InvalidSlop { position }
            | QueryError::InvalidBoost { position }
            | QueryError::RangeUnsupported { position }
            | QueryError::MalformedRange { position }
            | QueryError::RegexUnsupported { position }
            | QueryError::UnexpectedCharacter { position, .. }
            | QueryError::UnterminatedEscape { position }
            | QueryError::UnterminatedQuote { position }
            | QueryError::InvalidUnicodeEscape { position } => Some(*position),
        }
    }
}

fn lone_operator_message(operator: &str, position: usize) -> String {
    let needs = match operator {
        "AND" | "&&" | "OR" | "||" => "needs a word or a group on each side".to_owned(),
        _ => format!("must be followed directly by a word or a group, as in '{operator}word'"),
    };
    let hint = match operator {
        "AND" | "OR" | "NOT" => format!(
            "; write '{}' to search for the word itself",
            operator.to_lowercase()
        ),
        _ => String::new(),
    };
    format!("'{operator}' at byte {position} {needs}{hint}")
}
