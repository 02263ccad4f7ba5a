//! [`Input`]: a file or standard input, and how to open it for reading lines.

use std::fmt;
use std::fs::{self, File};
use std::io::{self, BufRead, BufReader, Read};
use std::path::PathBuf;

use super::compression::{Compression, MAGIC_BYTES};
use super::error::IngestError;

/// Size of the buffer in front of a file or standard input. Large, because the indexer reads
/// corpora of hundreds of megabytes.
const RAW_BUFFER_BYTES: usize = 1 << 20;

/// Where documents come from.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Input {
    /// Standard input, compressed or not (recognised by its magic bytes).
    Stdin,
    /// A file, decompressed according to its extension: `.xz`, `.gz`, `.zst`; anything else is
    /// read as plain text.
    Path(PathBuf),
}

impl Input {
    /// The input a command-line argument names: `-` is standard input, anything else a path.
    pub fn from_arg(arg: impl Into<PathBuf>) -> Input {
        let path = arg.into();
        if path.as_os_str() == "-" {
            Input::Stdin
        } else {
            Input::Path(path)
        }
    }

    /// Checks, without reading it, that the input can be opened: an existing file that is not a
    /// directory, in a compression the reader decodes.
    pub(crate) fn check(&self) -> Result<(), IngestError> {
        let Input::Path(path) = self else {
            return Ok(());
        };
        self.compression()?;
        let metadata = fs::metadata(path).map_err(|source| self.io_error(source))?;
        if metadata.is_dir() {
            return Err(self.io_error(io::Error::other("is a directory")));
        }
        Ok(())
    }

    /// Opens the input and returns its decompressed text.
    pub(crate) fn open(&self) -> Result<Box<dyn BufRead + Send>, IngestError> {
        let opened = match self {
            Input::Stdin => open_sniffed(io::stdin()),
            Input::Path(path) => {
                let compression = self.compression()?;
                File::open(path).and_then(|file| {
                    compression.decode(BufReader::with_capacity(RAW_BUFFER_BYTES, file))
                })
            }
        };
        opened.map_err(|source| self.io_error(source))
    }

    /// An [`IngestError::Io`] for this input.
    pub(crate) fn io_error(&self, source: io::Error) -> IngestError {
        IngestError::Io {
            input: self.clone(),
            source,
        }
    }

    fn compression(&self) -> Result<Compression, IngestError> {
        match self {
            Input::Stdin => Ok(Compression::None),
            Input::Path(path) => Compression::from_extension(path).map_err(|extension| {
                IngestError::UnsupportedCompression {
                    input: self.clone(),
                    extension,
                }
            }),
        }
    }
}

impl fmt::Display for Input {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Input::Stdin => f.write_str("<stdin>"),
            Input::Path(path) => write!(f, "{}", path.display()),
        }
    }
}

/// `raw`, decompressed if its first bytes are the magic of a format the reader decodes.
fn open_sniffed(mut raw: impl Read + Send + 'static) -> io::Result<Box<dyn BufRead + Send>> {
    let mut magic = [0; MAGIC_BYTES];
    let mut len = 0;
    while len < magic.len() {
        match raw.read(&mut magic[len..]) {
            Ok(0) => break,
            Ok(read) => len += read,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
    }
    let prefix = &magic[..len];
    let compression = Compression::sniff(prefix);
    let whole = io::Cursor::new(prefix.to_vec()).chain(raw);
    compression.decode(BufReader::with_capacity(RAW_BUFFER_BYTES, whole))
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn read_all(mut reader: Box<dyn BufRead + Send>) -> Vec<u8> {
        let mut text = Vec::new();
        reader.read_to_end(&mut text).unwrap();
        text
    }

    #[test]
    fn dash_is_standard_input() {
        assert_eq!(Input::from_arg("-"), Input::Stdin);
        assert_eq!(Input::from_arg("-x"), Input::Path("-x".into()));
        assert_eq!(Input::Stdin.to_string(), "<stdin>");
        assert_eq!(Input::from_arg("a/b.xz").to_string(), "a/b.xz");
    }

    #[test]
    fn sniffing_decompresses_gzip_and_passes_text_through() {
        let text = b"title\tbody\n".repeat(3);
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        encoder.write_all(&text).unwrap();
        let gzip = encoder.finish().unwrap();
        assert_eq!(read_all(open_sniffed(io::Cursor::new(gzip)).unwrap()), text);
        assert_eq!(
            read_all(open_sniffed(io::Cursor::new(text.clone())).unwrap()),
            text
        );
        assert_eq!(
            read_all(open_sniffed(io::Cursor::new(b"ab".to_vec())).unwrap()),
            b"ab"
        );
        assert!(read_all(open_sniffed(io::empty()).unwrap()).is_empty());
    }

    #[test]
    fn sniffing_survives_reads_that_return_one_byte_at_a_time() {
        struct Trickle(io::Cursor<Vec<u8>>);
        impl Read for Trickle {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                let end = buf.len().min(1);
                self.0.read(&mut buf[..end])
            }
        }
        let mut encoder = zstd::Encoder::new(Vec::new(), 1).unwrap();
        encoder.write_all(b"a\tb\n").unwrap();
        let zstd = encoder.finish().unwrap();
        let reader = open_sniffed(Trickle(io::Cursor::new(zstd))).unwrap();
        assert_eq!(read_all(reader), b"a\tb\n");
    }
}
