//! TREC topic files in, TREC run files out: what an information-retrieval evaluation needs
//! around a search engine.
//!
//! - [`topics`]: [`read_topics`] reads the classic SGML-like topic files (`<top>`, `<num>
//!   Number: 301`, `<title> ...`), the XML form of the later tracks (`<topic number="1">`
//!   with a `<query>` or `<title>`, under any root element), `qid<TAB>query` lines and
//!   `qid:query` lines, detected from the text or named; a malformed file is an error that
//!   names its line.
//! - [`run`]: [`RunWriter`] writes the six-column run format that `trec_eval`, `ir_measures`
//!   and `pytrec_eval` read (`qid Q0 docno rank score tag`).
//!
//! The crate knows nothing of the index: the query text of a topic goes through
//! `apcache_index::plain_query` (or the query parser) in the caller, and a run's document
//! numbers are whatever ids the caller's documents carry. The `apcache` binary (`search
//! --topics`) and the Python bindings both use it, so a run file is written one way.
#![deny(missing_docs)]

pub mod run;
pub mod topics;

pub use run::{RunError, RunWriter};
pub use topics::{parse_topics, read_topics, Topic, TopicError, TopicFormat};
