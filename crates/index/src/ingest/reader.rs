//! [`DocumentReader`]: the documents of a list of inputs, in order, one at a time or in
//! batches.

use std::io::BufRead;
use std::iter::FusedIterator;

use super::bad_line::{BadLine, BadLinePolicy, BadLineReason};
use super::document::Document;
use super::error::IngestError;
use super::format::InputFormat;
use super::input::Input;
use super::line_reader::{LineInfo, LineReader};
use super::report::IngestReport;
use crate::schema::{Mapper, Mapping};

/// How a [`DocumentReader`] reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReaderOptions {
    /// The layout of the lines. Default: [`InputFormat::Auto`].
    pub format: InputFormat,
    /// What to do with a line that is not a document. Default: [`BadLinePolicy::Skip`].
    pub bad_lines: BadLinePolicy,
    /// How many bad lines the report keeps as examples; all are counted. Default: 1000.
    pub max_bad_line_examples: usize,
    /// The longest line accepted, in bytes, terminator excluded; longer lines are bad lines and
    /// are never held in memory whole. Default: 64 MiB.
    pub max_line_bytes: usize,
    /// Refuse an input most of whose lines are bad ([`IngestError::NotDocuments`]): more bad
    /// lines than documents at its end, or among its first 1,000 lines. Default: true.
    pub refuse_non_documents: bool,
}

impl Default for ReaderOptions {
    fn default() -> ReaderOptions {
        ReaderOptions {
            format: InputFormat::Auto,
            bad_lines: BadLinePolicy::Skip,
            max_bad_line_examples: 1000,
            max_line_bytes: 64 << 20,
            refuse_non_documents: true,
        }
    }
}

/// Reads the documents of several inputs, one input after the other, one document per line.
///
/// Inputs are opened one at a time, when the previous one is exhausted. The reader is `Send`,
/// so the indexer can run it on a thread of its own and hand [`next_batch`] batches to
/// workers.
///
/// After an error (I/O, decompression, or a bad line under [`BadLinePolicy::Reject`]) the
/// reader is finished: later calls return no documents.
///
/// ```no_run
/// use apcache_index::ingest::{DocumentReader, Input, ReaderOptions};
///
/// let inputs = ["enwiki-part0.lines.txt.xz", "-"].map(Input::from_arg);
/// let mut reader = DocumentReader::new(inputs, ReaderOptions::default())?;
/// let mut batch = Vec::new();
/// while reader.next_batch(1024, &mut batch)? > 0 {
///     // index `batch`, then empty it
///     batch.clear();
/// }
/// let report = reader.report();
/// eprintln!("{} documents, {} bad lines", report.documents, report.bad_line_count);
/// # Ok::<(), apcache_index::ingest::IngestError>(())
/// ```
///
/// [`next_batch`]: DocumentReader::next_batch
pub struct DocumentReader {
    pending: std::vec::IntoIter<Input>,
    current: Option<OpenInput>,
    options: ReaderOptions,
    report: IngestReport,
    line: Vec<u8>,
    finished: bool,
    /// Maps JSON documents, and holds the fields of every document read so far.
    mapper: Mapper,
    /// Whether the mapping has taken in the title and body of tab-separated documents (once
    /// is enough: a mapping only grows).
    title_body_mapped: bool,
}

/// The input being read.
struct OpenInput {
    input: Input,
    lines: LineReader<Box<dyn BufRead + Send>>,
    /// The format of its lines: [`ReaderOptions::format`], or under
    /// [`InputFormat::Auto`] the one its first deciding line showed (`Auto` until then).
    format: InputFormat,
    /// Its documents and bad lines so far, to tell a file that is not documents.
    documents: u64,
    bad_lines: u64,
}

/// An input is refused as not documents when more than half of its lines are bad: at its end,
/// or as soon as this many of its lines have been read.
const NOT_DOCUMENTS_SAMPLE: u64 = 1000;

impl OpenInput {
    /// Whether what has been read shows the input is not documents: more bad lines than
    /// documents, once `ended` or past [`NOT_DOCUMENTS_SAMPLE`] lines. An input without any
    /// document is left to the caller (an empty input is not an error of the reader).
    fn not_documents(&self, ended: bool) -> bool {
        let lines = self.documents + self.bad_lines;
        self.documents > 0
            && self.bad_lines > self.documents
            && (ended || lines >= NOT_DOCUMENTS_SAMPLE)
            || self.documents == 0 && self.bad_lines >= NOT_DOCUMENTS_SAMPLE
    }
}

impl DocumentReader {
    /// A reader of `inputs`, in order.
    ///
    /// # Errors
    ///
    /// [`IngestError::Io`] if an input is a missing file or a directory, and
    /// [`IngestError::UnsupportedCompression`] if its extension names a compression the reader
    /// cannot decode: a mistyped last argument is caught before the first input is indexed.
    pub fn new(
        inputs: impl IntoIterator<Item = Input>,
        options: ReaderOptions,
    ) -> Result<DocumentReader, IngestError> {
        let inputs: Vec<Input> = inputs.into_iter().collect();
        for input in &inputs {
            input.check()?;
        }
        Ok(DocumentReader {
            pending: inputs.into_iter(),
            current: None,
            options,
            report: IngestReport::default(),
            line: Vec::new(),
            finished: false,
            mapper: Mapper::new(Mapping::default(), Some("id".to_owned())),
            title_body_mapped: false,
        })
    }

    /// Maps JSON documents under `mapper` (by default, dynamic mapping from an empty mapping,
    /// ids from `_id` or `id`).
    pub fn with_mapper(mut self, mapper: Mapper) -> DocumentReader {
        self.mapper = mapper;
        self
    }

    /// The mapper, whose mapping holds every field of the documents read so far.
    pub fn mapper(&self) -> &Mapper {
        &self.mapper
    }

    /// The next document, or `None` when every input has been read.
    ///
    /// # Errors
    ///
    /// [`IngestError::Io`] if an input cannot be opened, read or decompressed, and
    /// [`IngestError::BadLine`] for a bad line under [`BadLinePolicy::Reject`].
    pub fn next_document(&mut self) -> Result<Option<Document>, IngestError> {
        if self.finished {
            return Ok(None);
        }
        let next = self.read_document();
        self.finished = !matches!(next, Ok(Some(_)));
        next
    }

    /// Appends up to `max_docs` documents to `out` and returns how many; 0 when every input has
    /// been read (or `max_docs` is 0).
    ///
    /// # Errors
    ///
    /// As [`DocumentReader::next_document`]; the documents read before the error stay in
    /// `out`.
    pub fn next_batch(
        &mut self,
        max_docs: usize,
        out: &mut Vec<Document>,
    ) -> Result<usize, IngestError> {
        let mut added = 0;
        while added < max_docs {
            let Some(document) = self.next_document()? else {
                break;
            };
            out.push(document);
            added += 1;
        }
        Ok(added)
    }

    /// What has been read so far.
    pub fn report(&self) -> &IngestReport {
        &self.report
    }

    /// What has been read, once reading is over.
    pub fn into_report(self) -> IngestReport {
        self.report
    }

    fn read_document(&mut self) -> Result<Option<Document>, IngestError> {
        loop {
            let current = match &mut self.current {
                Some(current) => current,
                None => {
                    let Some(input) = self.pending.next() else {
                        return Ok(None);
                    };
                    let lines = LineReader::new(input.open()?, self.options.max_line_bytes);
                    self.current.insert(OpenInput {
                        input,
                        lines,
                        format: self.options.format,
                        documents: 0,
                        bad_lines: 0,
                    })
                }
            };
            let Some(info) = current
                .lines
                .next_line(&mut self.line)
                .map_err(|source| current.input.io_error(source))?
            else {
                if self.options.refuse_non_documents && current.not_documents(true) {
                    return Err(not_documents(current));
                }
                self.current = None;
                continue;
            };
            self.report.bytes_read += info.bytes;
            let parsed = parse(
                &self.line,
                info,
                &self.options,
                &mut current.format,
                &mut self.mapper,
            );
            match parsed {
                Ok(Some(document)) => {
                    if document.json.is_none() && !self.title_body_mapped {
                        // Tab-separated documents are a title and a body.
                        if let Err(error) = self.mapper.extend(&Mapping::title_body()) {
                            return Err(IngestError::MappingConflict {
                                input: current.input.clone(),
                                message: error.to_string(),
                            });
                        }
                        self.title_body_mapped = true;
                    }
                    self.report.documents += 1;
                    current.documents += 1;
                    return Ok(Some(document));
                }
                Ok(None) => {}
                Err(reason) => {
                    let bad_line = BadLine {
                        file: current.input.clone(),
                        line: info.number,
                        reason,
                    };
                    let max_examples = self.options.max_bad_line_examples;
                    self.report.record_bad_line(&bad_line, max_examples);
                    current.bad_lines += 1;
                    if self.options.bad_lines == BadLinePolicy::Reject {
                        return Err(IngestError::BadLine(bad_line));
                    }
                    if self.options.refuse_non_documents && current.not_documents(false) {
                        return Err(not_documents(current));
                    }
                }
            }
        }
    }
}

/// The error for an input most of whose lines are bad.
fn not_documents(input: &OpenInput) -> IngestError {
    IngestError::NotDocuments {
        input: input.input.clone(),
        bad_lines: input.bad_lines,
        lines: input.bad_lines + input.documents,
    }
}

/// The document on `line`, which [`LineReader::next_line`] described with `info`; `None` for a
/// header. `format` is the input's: under [`InputFormat::Auto`] it is set by the first line
/// that shows the input's format.
fn parse(
    line: &[u8],
    info: LineInfo,
    options: &ReaderOptions,
    format: &mut InputFormat,
    mapper: &mut Mapper,
) -> Result<Option<Document>, BadLineReason> {
    if info.too_long {
        return Err(BadLineReason::TooLong {
            limit: options.max_line_bytes,
        });
    }
    let line = std::str::from_utf8(line).map_err(|error| BadLineReason::InvalidUtf8 {
        valid_up_to: error.valid_up_to(),
    })?;
    if *format == InputFormat::Auto {
        if let Some(detected) = InputFormat::detect(line) {
            *format = detected;
        }
    }
    format.parse_line(line, mapper)
}

impl Iterator for DocumentReader {
    type Item = Result<Document, IngestError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_document().transpose()
    }
}

impl FusedIterator for DocumentReader {}
