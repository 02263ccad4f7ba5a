//! A segment's field norms file, verified and parsed once when the segment opens.
//!
//! Every posting of a named text field's term that is scored reads the document's norm byte in
//! that field: the table of fields is parsed once, beside the mapping it reads, so that a
//! query finds a field's norms with a lookup instead of a parse.

use super::reader::MappedBody;
use crate::format::{FieldNorms, FieldNormsFile, FileKind, FramedFile};
use crate::IndexError;

/// The field norms of a segment over their mapped file.
pub(crate) struct FieldNormsMapped {
    /// The view of `body`'s bytes (see [`FieldNormsMapped::open`] on its lifetime).
    parsed: FieldNormsFile<'static>,
    body: MappedBody,
}

impl FieldNormsMapped {
    /// Verifies the file `name` mapped as `body` against its checksum and parses its table for
    /// a segment of `documents` documents.
    pub(crate) fn open(
        body: MappedBody,
        name: &str,
        documents: u32,
    ) -> Result<FieldNormsMapped, IndexError> {
        FramedFile::verify(body.file_bytes(), FileKind::FieldNorms, name)?;
        // SAFETY: the bytes belong to a file mapping that `body` holds through an `Arc`; the
        // mapping neither moves nor goes away while this struct, which owns `body`, lives, and
        // `field` lends views only for a borrow of this struct. The parsed table holds
        // borrowed slices only, so dropping it reads nothing.
        let bytes: &'static [u8] = unsafe { std::mem::transmute::<&[u8], _>(body.as_ref()) };
        let parsed = FieldNormsFile::new(bytes, documents)
            .map_err(|what| IndexError::corrupt(name, what))?;
        Ok(FieldNormsMapped { parsed, body })
    }

    /// The norms of `field`, for as long as this file is borrowed.
    pub(crate) fn field(&self, field: &str) -> Option<FieldNorms<'_>> {
        self.parsed.field(field).copied()
    }

    /// Every field's norms, in name order.
    pub(crate) fn fields(&self) -> &[FieldNorms<'_>] {
        self.parsed.fields()
    }

    /// The mapped body.
    pub(crate) fn body(&self) -> &MappedBody {
        &self.body
    }
}
