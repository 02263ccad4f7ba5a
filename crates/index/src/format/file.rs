//! File framing: a header naming the file's kind and format version, a footer with the body
//! length and a CRC32C.
//!
//! ```text
//! header (16 bytes): magic "APCX" | kind: 4 ASCII bytes | format version: u32 LE | 0u32
//! body
//! footer (16 bytes): body length: u64 LE | CRC32C of header, body and length: u32 LE | "XCPA"
//! ```

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::IndexError;

/// The version of the on-disk format this build writes.
pub const FORMAT_VERSION: u32 = 11;
/// The oldest version this build reads: version 8 changed the term records and skip entries
/// and dropped the term checksums file, so older indexes must be rebuilt. Version 9 added
/// two kinds of segment (a term-list dictionary, bit-packed positions) and left version 8's as
/// they were.
pub const OLDEST_READABLE_VERSION: u32 = 11;
/// Bytes of the header.
pub const HEADER_LEN: usize = 16;
/// Bytes of the footer.
pub const FOOTER_LEN: usize = 16;

const HEADER_MAGIC: &[u8; 4] = b"APCX";
const FOOTER_MAGIC: &[u8; 4] = b"XCPA";

/// The kinds of file in an index, named by the 4 bytes after the header magic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// Term dictionary (an FST from term to term ordinal).
    Dictionary,
    /// Term metadata, one [`crate::format::TermInfo`] per ordinal.
    TermInfos,
    /// Skip entries, one [`crate::format::SkipEntry`] per block.
    Skip,
    /// Compressed postings: per term, its DID blocks then its frequency blocks.
    Postings,
    /// Document lengths in tokens.
    Norms,
    /// Compressed stored documents.
    Store,
    /// The manifest of committed segments.
    Manifest,
    /// Per term, the positions of its occurrences (optional: an index built without
    /// positions has none).
    Positions,
    /// Keyword, numeric, date and boolean values by document (optional: only a segment of
    /// JSON documents with such fields has one).
    Columns,
    /// The lengths of each text field indexed under its own name (optional: only a segment of
    /// JSON documents with such fields has one).
    FieldNorms,
}

impl FileKind {
    /// The 4 tag bytes of this kind.
    pub fn tag(self) -> &'static [u8; 4] {
        match self {
            FileKind::Dictionary => b"DICT",
            FileKind::TermInfos => b"TERM",
            FileKind::Skip => b"SKIP",
            FileKind::Postings => b"POST",
            FileKind::Norms => b"NORM",
            FileKind::Store => b"STOR",
            FileKind::Manifest => b"MANI",
            FileKind::Positions => b"POSI",
            FileKind::Columns => b"COLS",
            FileKind::FieldNorms => b"FNRM",
        }
    }

    /// The file-name extension of this kind.
    pub fn extension(self) -> &'static str {
        match self {
            FileKind::Dictionary => "dict",
            FileKind::TermInfos => "terms",
            FileKind::Skip => "skip",
            FileKind::Postings => "post",
            FileKind::Norms => "norms",
            FileKind::Store => "store",
            FileKind::Manifest => "manifest",
            FileKind::Positions => "pos",
            FileKind::Columns => "cols",
            FileKind::FieldNorms => "fnorms",
        }
    }

    /// The kinds a segment may have besides [`FileKind::SEGMENT_FILES`], in the order its
    /// manifest entry lists them.
    pub const OPTIONAL_SEGMENT_FILES: [FileKind; 3] =
        [FileKind::Positions, FileKind::Columns, FileKind::FieldNorms];

    /// Every kind a segment has (and [`FileKind::OPTIONAL_SEGMENT_FILES`] where it has them).
    pub const SEGMENT_FILES: [FileKind; 6] = [
        FileKind::Dictionary,
        FileKind::TermInfos,
        FileKind::Skip,
        FileKind::Postings,
        FileKind::Norms,
        FileKind::Store,
    ];
}

fn header(kind: FileKind) -> [u8; HEADER_LEN] {
    let mut h = [0u8; HEADER_LEN];
    h[..4].copy_from_slice(HEADER_MAGIC);
    h[4..8].copy_from_slice(kind.tag());
    h[8..12].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
    h
}

/// Writes one framed file: the header now, the body through [`Write`], the footer and an
/// fsync in [`FileWriter::finish`].
pub struct FileWriter {
    out: BufWriter<File>,
    path: PathBuf,
    crc: u32,
    body_len: u64,
}

impl FileWriter {
    /// Creates `path` (truncating it) and writes the header of a `kind` file.
    pub fn create(path: &Path, kind: FileKind) -> Result<FileWriter, IndexError> {
        let file = File::create(path).map_err(|e| IndexError::io(path, e))?;
        let mut writer = FileWriter {
            out: BufWriter::with_capacity(1 << 20, file),
            path: path.to_path_buf(),
            crc: 0,
            body_len: 0,
        };
        let h = header(kind);
        writer
            .out
            .write_all(&h)
            .map_err(|e| IndexError::io(path, e))?;
        writer.crc = crc32c::crc32c(&h);
        Ok(writer)
    }

    /// Bytes of body written so far (the offset the next byte will have in the body).
    pub fn position(&self) -> u64 {
        self.body_len
    }

    /// Appends body bytes.
    pub fn write_body(&mut self, bytes: &[u8]) -> Result<(), IndexError> {
        if let Some(e) = crate::fault::injected(crate::fault::WRITE) {
            return Err(IndexError::io(&self.path, e));
        }
        self.crc = crc32c::crc32c_append(self.crc, bytes);
        self.body_len += bytes.len() as u64;
        self.out
            .write_all(bytes)
            .map_err(|e| IndexError::io(&self.path, e))
    }

    /// Writes the footer, flushes and fsyncs. Returns the file's total length and CRC32C.
    pub fn finish(mut self) -> Result<(u64, u32), IndexError> {
        let len_bytes = self.body_len.to_le_bytes();
        let crc = crc32c::crc32c_append(self.crc, &len_bytes);
        let mut footer = [0u8; FOOTER_LEN];
        footer[..8].copy_from_slice(&len_bytes);
        footer[8..12].copy_from_slice(&crc.to_le_bytes());
        footer[12..].copy_from_slice(FOOTER_MAGIC);
        let path = self.path.clone();
        self.out
            .write_all(&footer)
            .map_err(|e| IndexError::io(&path, e))?;
        let file = self
            .out
            .into_inner()
            .map_err(|e| IndexError::io(&path, e.into_error()))?;
        if let Some(e) = crate::fault::injected(crate::fault::FSYNC) {
            return Err(IndexError::io(&path, e));
        }
        file.sync_all().map_err(|e| IndexError::io(&path, e))?;
        Ok((HEADER_LEN as u64 + self.body_len + FOOTER_LEN as u64, crc))
    }
}

impl Write for FileWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if let Some(e) = crate::fault::injected(crate::fault::WRITE) {
            return Err(e);
        }
        self.crc = crc32c::crc32c_append(self.crc, buf);
        self.body_len += buf.len() as u64;
        self.out.write_all(buf)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// The checked framing of a file's bytes: where its body is, and its stored checksum.
#[derive(Debug, Clone, Copy)]
pub struct FramedFile {
    /// Length of the body.
    pub body_len: usize,
    /// The CRC32C the footer records.
    pub crc: u32,
}

impl FramedFile {
    /// Checks the header and footer of `bytes` (a whole `kind` file named `name`), without
    /// computing the checksum.
    pub fn parse(bytes: &[u8], kind: FileKind, name: &str) -> Result<FramedFile, IndexError> {
        let corrupt = |comment: String| IndexError::corrupt(name, comment);
        if bytes.len() < HEADER_LEN + FOOTER_LEN {
            return Err(corrupt(format!(
                "{} bytes is too short for a framed file",
                bytes.len()
            )));
        }
        if &bytes[..4] != HEADER_MAGIC {
            return Err(corrupt("not an apcache file (bad header magic)".into()));
        }
        if &bytes[4..8] != kind.tag() {
            return Err(corrupt(format!(
                "expected a {:?} file, found kind {:?}",
                kind,
                String::from_utf8_lossy(&bytes[4..8])
            )));
        }
        let version = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes"));
        if !(OLDEST_READABLE_VERSION..=FORMAT_VERSION).contains(&version) {
            return Err(IndexError::IncompatibleVersion {
                file: name.to_string(),
                found: version,
                oldest: OLDEST_READABLE_VERSION,
                newest: FORMAT_VERSION,
            });
        }
        if bytes[12..HEADER_LEN] != [0; 4] {
            return Err(corrupt("the header's reserved bytes are not zero".into()));
        }
        let footer = &bytes[bytes.len() - FOOTER_LEN..];
        if &footer[12..] != FOOTER_MAGIC {
            return Err(corrupt(
                "bad footer magic (truncated or overwritten file?)".into(),
            ));
        }
        let body_len = u64::from_le_bytes(footer[..8].try_into().expect("8 bytes"));
        if body_len != (bytes.len() - HEADER_LEN - FOOTER_LEN) as u64 {
            return Err(corrupt(format!(
                "footer records a body of {body_len} bytes, the file holds {}",
                bytes.len() - HEADER_LEN - FOOTER_LEN
            )));
        }
        Ok(FramedFile {
            body_len: body_len as usize,
            crc: u32::from_le_bytes(footer[8..12].try_into().expect("4 bytes")),
        })
    }

    /// Checks framing and checksum; returns the body.
    pub fn verify<'a>(bytes: &'a [u8], kind: FileKind, name: &str) -> Result<&'a [u8], IndexError> {
        let framed = FramedFile::parse(bytes, kind, name)?;
        let actual = crc32c::crc32c(&bytes[..bytes.len() - 8]);
        if actual != framed.crc {
            return Err(IndexError::ChecksumMismatch {
                file: name.to_string(),
                expected: framed.crc,
                actual,
            });
        }
        Ok(framed.body(bytes))
    }

    /// The body of `bytes`, as framed.
    pub fn body<'a>(&self, bytes: &'a [u8]) -> &'a [u8] {
        &bytes[HEADER_LEN..HEADER_LEN + self.body_len]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A whole file of `kind` with `body`, its header naming `version`.
    fn file_of_version(kind: FileKind, body: &[u8], version: u32) -> Vec<u8> {
        let mut bytes = header(kind).to_vec();
        bytes[8..12].copy_from_slice(&version.to_le_bytes());
        bytes.extend_from_slice(body);
        let len = (body.len() as u64).to_le_bytes();
        let crc = crc32c::crc32c_append(crc32c::crc32c(&bytes), &len);
        bytes.extend_from_slice(&len);
        bytes.extend_from_slice(&crc.to_le_bytes());
        bytes.extend_from_slice(FOOTER_MAGIC);
        bytes
    }

    #[test]
    fn older_readable_versions_open_and_others_name_the_versions_read() {
        for version in OLDEST_READABLE_VERSION..=FORMAT_VERSION {
            let bytes = file_of_version(FileKind::Postings, b"body", version);
            let body = FramedFile::verify(&bytes, FileKind::Postings, "seg.post").unwrap();
            assert_eq!(body, b"body");
        }
        for version in [OLDEST_READABLE_VERSION - 1, FORMAT_VERSION + 1] {
            let bytes = file_of_version(FileKind::Postings, b"body", version);
            let error = FramedFile::verify(&bytes, FileKind::Postings, "seg.post").unwrap_err();
            let message = error.to_string();
            assert!(
                matches!(error, IndexError::IncompatibleVersion { found, .. } if found == version),
                "{message}"
            );
            assert!(message.contains("reads versions 11 to 11"), "{message}");
            assert!(message.contains("--force"), "{message}");
        }
    }
}
