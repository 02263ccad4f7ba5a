//! [`ApiError`]: every failure of a request, with its HTTP status, a machine-readable kind
//! (Elasticsearch's exception names, so its clients map them as they always do) and a message
//! for the person who sent it.

use apcache_index::IndexError;
use axum::http::StatusCode;

/// What went wrong, as Elasticsearch names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The query does not parse (400).
    QueryParse,
    /// The query is over the term, nesting or size limits (400).
    QueryTooLarge,
    /// A parameter is missing, malformed or out of range (400).
    IllegalArgument,
    /// The request body is not the JSON expected (400).
    Parse,
    /// A search body's structure is not understood: an unknown query, key or option, or one
    /// apcache does not implement (400, named in the reason).
    Parsing,
    /// No index of that name (404).
    IndexNotFound,
    /// No such document, or no such path (404).
    NotFound,
    /// The path exists but not for this method (405).
    MethodNotAllowed,
    /// The body is over the limit (413).
    ContentTooLong,
    /// The queue is full (503, with `Retry-After`).
    Overloaded,
    /// The server is shutting down (503).
    ShuttingDown,
    /// The query ran past its deadline and was cancelled (504).
    Timeout,
    /// The index's bytes failed their checksums for this request (500); other requests may
    /// still be answered.
    CorruptIndex,
    /// Reading the index from storage failed (500).
    Io,
    /// A bug (500).
    Internal,
}

impl ErrorKind {
    /// The kind of an index's failure: damaged bytes, storage, or a bug.
    pub fn of_index(e: &IndexError) -> ErrorKind {
        match e {
            e if e.is_damage() => ErrorKind::CorruptIndex,
            IndexError::Io { .. } | IndexError::MappedReadFailed { .. } => ErrorKind::Io,
            _ => ErrorKind::Internal,
        }
    }

    /// The HTTP status.
    pub fn status(self) -> StatusCode {
        match self {
            ErrorKind::QueryParse
            | ErrorKind::QueryTooLarge
            | ErrorKind::IllegalArgument
            | ErrorKind::Parse
            | ErrorKind::Parsing => StatusCode::BAD_REQUEST,
            ErrorKind::IndexNotFound | ErrorKind::NotFound => StatusCode::NOT_FOUND,
            ErrorKind::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            ErrorKind::ContentTooLong => StatusCode::PAYLOAD_TOO_LARGE,
            ErrorKind::Overloaded | ErrorKind::ShuttingDown => StatusCode::SERVICE_UNAVAILABLE,
            ErrorKind::Timeout => StatusCode::GATEWAY_TIMEOUT,
            ErrorKind::CorruptIndex | ErrorKind::Io | ErrorKind::Internal => {
                StatusCode::INTERNAL_SERVER_ERROR
            }
        }
    }

    /// The name in error bodies (Elasticsearch's `type`).
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::QueryParse => "query_parse_error",
            ErrorKind::QueryTooLarge => "query_too_large",
            ErrorKind::IllegalArgument => "illegal_argument_exception",
            ErrorKind::Parse => "parse_exception",
            ErrorKind::Parsing => "parsing_exception",
            ErrorKind::IndexNotFound => "index_not_found_exception",
            ErrorKind::NotFound => "resource_not_found_exception",
            ErrorKind::MethodNotAllowed => "method_not_allowed_exception",
            ErrorKind::ContentTooLong => "content_too_long_exception",
            ErrorKind::Overloaded => "rejected_execution_exception",
            ErrorKind::ShuttingDown => "node_closed_exception",
            ErrorKind::Timeout => "timeout_exception",
            ErrorKind::CorruptIndex => "corrupt_index_exception",
            ErrorKind::Io => "io_exception",
            ErrorKind::Internal => "internal_server_error",
        }
    }
}

/// A request's failure.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{reason}")]
pub struct ApiError {
    /// What went wrong.
    pub kind: ErrorKind,
    /// For the person who sent the request.
    pub reason: String,
    /// The byte of the query text the error points at.
    pub position: Option<usize>,
}

impl ApiError {
    /// An error of `kind`.
    pub fn new(kind: ErrorKind, reason: impl Into<String>) -> ApiError {
        ApiError {
            kind,
            reason: reason.into(),
            position: None,
        }
    }

    /// A 400 for a parameter.
    pub fn illegal(reason: impl Into<String>) -> ApiError {
        ApiError::new(ErrorKind::IllegalArgument, reason)
    }

    /// A 400 for a search body's structure (`parsing_exception`).
    pub fn parsing(reason: impl Into<String>) -> ApiError {
        ApiError::new(ErrorKind::Parsing, reason)
    }

    /// A 404 for an index.
    pub fn no_index(name: &str) -> ApiError {
        ApiError::new(ErrorKind::IndexNotFound, format!("no such index [{name}]"))
    }

    /// The HTTP status.
    pub fn status(&self) -> StatusCode {
        self.kind.status()
    }
}

impl From<IndexError> for ApiError {
    fn from(e: IndexError) -> ApiError {
        ApiError::new(ErrorKind::of_index(&e), e.to_string())
    }
}
