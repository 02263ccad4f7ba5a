//! A segment's columns file, verified and parsed once when the segment opens.
//!
//! Parsing a columns body checks every block of every column, which grows with the segment;
//! queries ask for the columns per segment and `_id`s per hit, so the parsed view is kept
//! beside the mapping it reads instead of being rebuilt on each call.

use super::reader::MappedBody;
use crate::columns::Columns;
use crate::format::{FileKind, FramedFile};
use crate::IndexError;

/// The columns of a segment over their mapped file.
pub(crate) struct ColumnsFile {
    /// The view of `body`'s bytes (see [`ColumnsFile::open`] on its lifetime).
    parsed: Columns<'static>,
    body: MappedBody,
}

impl ColumnsFile {
    /// Verifies the file `name` mapped as `body` against its checksum and parses its columns
    /// for a segment of `documents` documents.
    pub(crate) fn open(
        body: MappedBody,
        name: &str,
        documents: u32,
    ) -> Result<ColumnsFile, IndexError> {
        FramedFile::verify(body.file_bytes(), FileKind::Columns, name)?;
        // SAFETY: the bytes belong to a file mapping that `body` holds through an `Arc`; the
        // mapping neither moves nor goes away while this struct, which owns `body`, lives, and
        // `columns` lends the view only for a borrow of this struct. The view holds borrowed
        // slices only, so dropping it reads nothing.
        let bytes: &'static [u8] = unsafe { std::mem::transmute::<&[u8], _>(body.as_ref()) };
        let parsed = Columns::parse(bytes, documents)
            .map_err(|e| IndexError::corrupt(name, e.to_string()))?;
        Ok(ColumnsFile { parsed, body })
    }

    /// The columns, for as long as this file is borrowed.
    pub(crate) fn columns(&self) -> Columns<'_> {
        self.parsed.clone()
    }

    /// The mapped body.
    pub(crate) fn body(&self) -> &MappedBody {
        &self.body
    }
}
