//! The on-disk format: file framing, records and the segment's files.
//!
//! docs/format.md is the byte-level specification; this module is its implementation. Every
//! file starts with a 16-byte [`header`] and ends with a 16-byte footer holding the body length
//! and a CRC32C of everything before it, so a reader can tell a file of another kind, another
//! version, a truncated file and a flipped byte apart.

pub mod field_norms;
pub mod file;
pub mod norms;
pub mod positions;
pub mod skip_entry;
pub mod term_groups;
pub mod term_info;
pub mod term_list;
pub(crate) mod vbyte;

pub use field_norms::{encode_field_norms, FieldLengths, FieldNorms, FieldNormsFile};
pub use file::{FileKind, FileWriter, FramedFile, FOOTER_LEN, FORMAT_VERSION, HEADER_LEN};
pub use norms::{encode_norms, NormsFile};
pub use positions::{
    encode_term_positions, BlockPositionsReader, PositionsCodec, PositionsError, TermPositions,
};
pub use skip_entry::{SkipEntries, SkipEntry};
pub use term_groups::{TermGroups, TermGroupsWriter};
pub use term_info::{TermInfo, SHORT_POSTINGS};
pub use term_list::{TermList, TermListError, TermListStream, TermListWriter};
