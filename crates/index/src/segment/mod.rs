//! Segments: immutable sets of documents with their own dictionary, postings, norms and store.

mod columns_file;
mod direct;
mod doc_lengths;
mod doc_map;
mod field_norms_file;
mod meta;
mod norm_bytes;
mod positions_file;
mod reader;
mod store;
mod term_dictionary;
mod term_encoder;
mod uncached_file;
mod verified_terms;
mod writer;

pub use direct::DirectPostings;
pub use doc_lengths::DocLengths;
pub use doc_map::DocMap;
pub use meta::{FileMeta, SegmentMeta};
pub use norm_bytes::NormBytes;
pub use reader::{EntriesInOrder, SegmentReader, METADATA_FILES};
pub(crate) use store::StoreWriter;
pub use store::{snippet, StoredDocument};
pub use term_dictionary::{DictionaryKind, TermDictionary, TermStream};
pub use term_encoder::{EncodedTerms, FieldScoring, TermEncoder};
pub use uncached_file::{UncachedFile, UncachedReads};
pub(crate) use writer::sync_dir;
pub use writer::SegmentWriter;
