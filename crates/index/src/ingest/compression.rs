//! The compressed formats an input may be in, and their streaming decoders.
//!
//! Corpora ship compressed (apcache's own as `.xz`), and decompressing to disk first costs a
//! copy of the corpus. Files are recognised by their extension; standard input has none, so
//! it is recognised by its magic bytes, which never begin valid UTF-8 text. Every decoder
//! reads concatenated streams (`cat a.xz b.xz`, `pigz` output, multi-frame zstd) to the end.

use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

/// Size of the buffer between a decoder and the line reader.
const DECODED_BUFFER_BYTES: usize = 1 << 20;

/// The longest magic prefix that [`Compression::sniff`] looks at.
pub(crate) const MAGIC_BYTES: usize = 6;

/// A compressed format, or none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Compression {
    /// Plain text.
    None,
    /// xz (liblzma).
    Xz,
    /// gzip.
    Gzip,
    /// Zstandard.
    Zstd,
}

impl Compression {
    /// The format named by `path`'s extension. `Err` carries an extension that names a
    /// compressed format the reader cannot decode; any other extension means plain text.
    pub(crate) fn from_extension(path: &Path) -> Result<Compression, String> {
        let Some(extension) = path.extension().and_then(|extension| extension.to_str()) else {
            return Ok(Compression::None);
        };
        match extension.to_ascii_lowercase().as_str() {
            "xz" => Ok(Compression::Xz),
            "gz" => Ok(Compression::Gzip),
            "zst" | "zstd" => Ok(Compression::Zstd),
            "bz2" | "lz4" | "lzma" | "zip" | "7z" | "br" | "z" => Err(extension.to_owned()),
            _ => Ok(Compression::None),
        }
    }

    /// The format whose magic bytes begin `prefix`.
    pub(crate) fn sniff(prefix: &[u8]) -> Compression {
        if prefix.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0x00]) {
            Compression::Xz
        } else if prefix.starts_with(&[0x1f, 0x8b]) {
            Compression::Gzip
        } else if prefix.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Compression::Zstd
        } else {
            Compression::None
        }
    }

    /// `compressed`, decoded.
    pub(crate) fn decode<R>(self, compressed: R) -> io::Result<Box<dyn BufRead + Send>>
    where
        R: BufRead + Send + 'static,
    {
        Ok(match self {
            Compression::None => Box::new(compressed),
            Compression::Xz => {
                // A header may ask for any dictionary; one past what `xz -9e` uses is refused
                // rather than allocated.
                let stream = liblzma::stream::Stream::new_stream_decoder(
                    XZ_MEMORY_LIMIT,
                    liblzma::stream::CONCATENATED,
                )?;
                decoded(liblzma::bufread::XzDecoder::new_stream(compressed, stream))
            }
            Compression::Gzip => decoded(flate2::bufread::MultiGzDecoder::new(compressed)),
            Compression::Zstd => decoded(zstd::Decoder::with_buffer(compressed)?),
        })
    }
}

/// The most memory the xz decoder may use: `xz -9` streams need 65 MiB to decode.
const XZ_MEMORY_LIMIT: u64 = 256 << 20;

fn decoded(decoder: impl Read + Send + 'static) -> Box<dyn BufRead + Send> {
    Box::new(BufReader::with_capacity(DECODED_BUFFER_BYTES, decoder))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extensions_name_formats_case_insensitively() {
        let of = |path: &str| Compression::from_extension(Path::new(path));
        assert_eq!(of("a/enwiki.lines.txt.xz"), Ok(Compression::Xz));
        assert_eq!(of("docs.jsonl.GZ"), Ok(Compression::Gzip));
        assert_eq!(of("docs.zst"), Ok(Compression::Zstd));
        assert_eq!(of("docs.zstd"), Ok(Compression::Zstd));
        assert_eq!(of("docs.tsv"), Ok(Compression::None));
        assert_eq!(of("docs"), Ok(Compression::None));
        assert_eq!(of("docs.bz2"), Err("bz2".to_owned()));
    }

    #[test]
    fn magic_bytes_name_formats_and_text_has_none() {
        assert_eq!(Compression::sniff(b"\xfd7zXZ\x00\x00"), Compression::Xz);
        assert_eq!(Compression::sniff(b"\x1f\x8b\x08"), Compression::Gzip);
        assert_eq!(Compression::sniff(b"\x28\xb5\x2f\xfd"), Compression::Zstd);
        assert_eq!(Compression::sniff(b"title\tbody"), Compression::None);
        assert_eq!(Compression::sniff(b"\x1f"), Compression::None);
        assert_eq!(Compression::sniff(b""), Compression::None);
    }
}
