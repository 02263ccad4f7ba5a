//! [`Columns`]: a columns body read in place, its directory and every column's layout checked.
//!
//! ```text
//! body:   column* | entry × columns | columns u32 | directory offset u64
//! entry:  name length u16 | name (UTF-8) | kind u8 | column length u64
//! ```
//!
//! Columns are contiguous in directory order, the first at offset 0, the last ending at the
//! directory; entries are in strictly increasing byte order of their names, so a lookup is a
//! binary search.

use super::keyword::KeywordColumn;
use super::numeric::NumericColumn;
use super::{ColumnKind, ColumnsError};

/// Bytes of the trailer: columns u32, directory offset u64.
const TRAILER_LEN: usize = 12;

/// Bytes of the shortest directory entry (an empty name).
const MIN_ENTRY_LEN: u64 = 11;

/// A columns body, read in place; every column's layout checked when it was parsed.
#[derive(Debug, Clone)]
pub struct Columns<'a> {
    /// The columns, in increasing order of their names.
    columns: Vec<(&'a str, Column<'a>)>,
    doc_count: u32,
}

/// A column of either kind.
#[derive(Debug, Clone, Copy)]
enum Column<'a> {
    Numeric(NumericColumn<'a>),
    Keyword(KeywordColumn<'a>),
}

impl<'a> Columns<'a> {
    /// The columns of `body`, the columns body of a segment of `doc_count` documents; an
    /// error says what in its layout is wrong.
    pub fn parse(body: &'a [u8], doc_count: u32) -> Result<Columns<'a>, ColumnsError> {
        let Some(data_len) = body.len().checked_sub(TRAILER_LEN) else {
            return Err(ColumnsError::corrupt(
                None,
                format!("{} bytes, shorter than the trailer", body.len()),
            ));
        };
        let mut trailer = Cursor::new(&body[data_len..], None);
        let count = trailer.u32()?;
        let directory_offset = trailer.u64()?;
        if directory_offset > data_len as u64
            || u64::from(count) * MIN_ENTRY_LEN > data_len as u64 - directory_offset
        {
            return Err(ColumnsError::corrupt(
                None,
                format!(
                    "{count} columns with a directory at {directory_offset} \
                     of a body of {} bytes",
                    body.len()
                ),
            ));
        }
        let data = &body[..directory_offset as usize];
        let mut directory = Cursor::new(&body[directory_offset as usize..data_len], None);
        let mut columns: Vec<(&'a str, Column<'a>)> = Vec::with_capacity(count as usize);
        let mut offset = 0u64;
        for _ in 0..count {
            let name_len = directory.u16()?;
            let name = directory.take(u64::from(name_len), "field name")?;
            let name = std::str::from_utf8(name)
                .map_err(|_| directory.error("a field name is not UTF-8"))?;
            if columns.last().is_some_and(|(last, _)| *last >= name) {
                return Err(directory.error(format!("field {name:?} out of order")));
            }
            let code = directory.u8()?;
            let kind = ColumnKind::from_code(code)
                .ok_or_else(|| directory.error(format!("field {name:?} of unknown kind {code}")))?;
            let len = directory.u64()?;
            let bytes = offset
                .checked_add(len)
                .and_then(|end| data.get(offset as usize..usize::try_from(end).ok()?))
                .ok_or_else(|| {
                    directory.error(format!(
                        "column {name:?} of {len} bytes at {offset}, past the directory at \
                         {directory_offset}"
                    ))
                })?;
            offset += len;
            let mut cursor = Cursor::new(bytes, Some(name));
            let column = match kind {
                ColumnKind::Numeric => {
                    Column::Numeric(NumericColumn::parse(&mut cursor, doc_count)?)
                }
                ColumnKind::Keyword => {
                    Column::Keyword(KeywordColumn::parse(&mut cursor, name, doc_count)?)
                }
            };
            cursor.end()?;
            columns.push((name, column));
        }
        directory.end()?;
        if offset != directory_offset {
            return Err(ColumnsError::corrupt(
                None,
                format!("the columns end at {offset}, the directory starts at {directory_offset}"),
            ));
        }
        Ok(Columns { columns, doc_count })
    }

    /// The segment's documents.
    pub fn doc_count(&self) -> u32 {
        self.doc_count
    }

    /// The fields with a column and their kinds, in increasing byte order of their names.
    pub fn fields(&self) -> impl Iterator<Item = (&'a str, ColumnKind)> + '_ {
        self.columns.iter().map(|(name, column)| {
            let kind = match column {
                Column::Numeric(_) => ColumnKind::Numeric,
                Column::Keyword(_) => ColumnKind::Keyword,
            };
            (*name, kind)
        })
    }

    /// The numeric column of `field`, if it has one.
    pub fn numeric(&self, field: &str) -> Option<NumericColumn<'a>> {
        match self.column(field)? {
            Column::Numeric(column) => Some(column),
            Column::Keyword(_) => None,
        }
    }

    /// The keyword column of `field`, if it has one.
    pub fn keyword(&self, field: &str) -> Option<KeywordColumn<'a>> {
        match self.column(field)? {
            Column::Keyword(column) => Some(column),
            Column::Numeric(_) => None,
        }
    }

    fn column(&self, field: &str) -> Option<Column<'a>> {
        let at = self
            .columns
            .binary_search_by(|(name, _)| (*name).cmp(field))
            .ok()?;
        Some(self.columns[at].1)
    }
}

/// Reads the fields of one part of a body in order, each out-of-bounds read an error naming
/// the part.
pub(super) struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
    /// The column read (`None`: the directory).
    field: Option<&'a str>,
}

impl<'a> Cursor<'a> {
    pub(super) fn new(bytes: &'a [u8], field: Option<&'a str>) -> Cursor<'a> {
        Cursor {
            bytes,
            at: 0,
            field,
        }
    }

    /// A corrupt-body error about this part.
    pub(super) fn error(&self, comment: impl Into<String>) -> ColumnsError {
        ColumnsError::corrupt(self.field, comment)
    }

    /// The next `len` bytes, `what` naming them in the error if there are fewer.
    pub(super) fn take(&mut self, len: u64, what: &str) -> Result<&'a [u8], ColumnsError> {
        let left = self.bytes.len() - self.at;
        match usize::try_from(len) {
            Ok(len) if len <= left => {
                let bytes = &self.bytes[self.at..self.at + len];
                self.at += len;
                Ok(bytes)
            }
            _ => Err(self.error(format!(
                "{what} of {len} bytes at {}, and {left} bytes are left",
                self.at
            ))),
        }
    }

    /// Like [`Cursor::take`], for a length that may have overflowed (`None`).
    pub(super) fn take_opt(
        &mut self,
        len: Option<u64>,
        what: &str,
    ) -> Result<&'a [u8], ColumnsError> {
        self.take(len.unwrap_or(u64::MAX), what)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], ColumnsError> {
        let bytes = self.take(N as u64, "a field")?;
        let mut array = [0u8; N];
        array.copy_from_slice(bytes);
        Ok(array)
    }

    pub(super) fn u8(&mut self) -> Result<u8, ColumnsError> {
        Ok(self.array::<1>()?[0])
    }

    pub(super) fn u16(&mut self) -> Result<u16, ColumnsError> {
        Ok(u16::from_le_bytes(self.array()?))
    }

    pub(super) fn u32(&mut self) -> Result<u32, ColumnsError> {
        Ok(u32::from_le_bytes(self.array()?))
    }

    pub(super) fn u64(&mut self) -> Result<u64, ColumnsError> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    pub(super) fn i64(&mut self) -> Result<i64, ColumnsError> {
        Ok(i64::from_le_bytes(self.array()?))
    }

    /// An error unless every byte was read.
    pub(super) fn end(&self) -> Result<(), ColumnsError> {
        match self.bytes.len() - self.at {
            0 => Ok(()),
            left => Err(self.error(format!("{left} bytes after the end"))),
        }
    }
}
