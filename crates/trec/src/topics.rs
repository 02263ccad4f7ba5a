//! Topic files: the queries of a test collection, each with its topic number.
//!
//! Four forms are read, told apart by the text itself (a file whose first non-blank character
//! is `<` is SGML or XML; else one whose first line has a tab is TSV; else one whose first
//! line starts with a number and a colon is the colon form; anything else is read as TSV and
//! refused with the line):
//!
//! ```text
//! <top>                                  <webtrack2009>
//! <num> Number: 301                        <topic number="1" type="faceted">
//! <title> International Organized Crime      <query>obama family tree</query>
//! <desc> Description:                        <description>...</description>
//! ...                                      </topic>
//! </top>                                 </webtrack2009>
//!
//! 301<TAB>international organized crime    10001:international organized crime
//! ```
//!
//! The classic form (TREC ad hoc, Robust, Terabyte) takes the `<title>` (a leading `Topic:`
//! dropped, text up to the next tag, over several lines if need be); the XML form (the Web
//! tracks, TREC-COVID) the `<query>`, else the `<title>`, whatever the root element is called
//! (`<topics>`, `<webtrack2009>`, ...). Entities (`&amp;`, `&lt;`, ...) are decoded. Other
//! fields (`<desc>`, `<narr>`, subtopics) are skipped, and so are comments, `<?xml ...?>` and
//! a `<!DOCTYPE ...>` with its internal subset (`[ <!ELEMENT ...> ... ]`), which the Web
//! track files carry. The colon form is that of the Million Query and Terabyte efficiency
//! topics (`qid:query`); in the 2009 Million Query form (`20001:1:query`) every line has a
//! one-digit priority after the number, and when every line of a file does, it is dropped. A
//! UTF-8 byte-order mark at the start of a file is ignored, whatever the form.
//!
//! A file that breaks its form is refused, never half read: an error names the line and what
//! is wrong (a topic without a number or a title, a topic never closed, text outside any
//! topic, a TSV line without a tab, a colon line without a colon, a topic number seen twice).

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// One topic: its number (as the file spells it) and its query text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Topic {
    /// The topic number, the run file's first column (`301`, `2019-1`).
    pub id: String,
    /// The query text, whitespace collapsed, entities decoded.
    pub query: String,
    /// The line where the topic starts (from 1).
    pub line: usize,
}

/// The form of a topic file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TopicFormat {
    /// SGML (`<top>`, `<num>`, `<title>`) or XML (`<topic number="...">`, `<query>`).
    Trec,
    /// `qid<TAB>query` lines.
    Tsv,
    /// `qid:query` lines (Million Query, Terabyte efficiency topics), or `qid:priority:query`
    /// (Million Query 2009).
    Colon,
}

impl TopicFormat {
    /// The form of `text` (a leading byte-order mark ignored): [`TopicFormat::Trec`] when its
    /// first non-blank character is `<`; else [`TopicFormat::Colon`] when its first non-blank
    /// line has no tab and starts with a number followed by a colon (`10001:`); else
    /// [`TopicFormat::Tsv`].
    pub fn detect(text: &str) -> TopicFormat {
        let text = without_bom(text).trim_start();
        if text.starts_with('<') {
            return TopicFormat::Trec;
        }
        let first = text.lines().next().unwrap_or_default();
        let numbered = first
            .split_once(':')
            .is_some_and(|(id, _)| !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()));
        if numbered && !first.contains('\t') {
            TopicFormat::Colon
        } else {
            TopicFormat::Tsv
        }
    }
}

/// `text` without a UTF-8 byte-order mark at its start, which some editors and Windows tools
/// write and which would otherwise be the first character of the first topic number or tag.
fn without_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

impl FromStr for TopicFormat {
    type Err = String;

    fn from_str(s: &str) -> Result<TopicFormat, String> {
        match s {
            "trec" => Ok(TopicFormat::Trec),
            "tsv" => Ok(TopicFormat::Tsv),
            "colon" => Ok(TopicFormat::Colon),
            other => Err(format!("unknown topic format {other:?} (trec, tsv, colon)")),
        }
    }
}

impl fmt::Display for TopicFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TopicFormat::Trec => "trec",
            TopicFormat::Tsv => "tsv",
            TopicFormat::Colon => "colon",
        })
    }
}

/// Why a topic file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum TopicError {
    /// The file could not be read.
    #[error("cannot read the topic file {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The failure.
        source: std::io::Error,
    },
    /// The file breaks its form at a line.
    #[error("{source}line {line}: {message}", source = .path.as_ref().map(|p| format!("{}: ", p.display())).unwrap_or_default())]
    Malformed {
        /// The file, when read from one.
        path: Option<PathBuf>,
        /// The line (from 1).
        line: usize,
        /// What is wrong there.
        message: String,
    },
    /// The file holds no topic.
    #[error("{source}no topics found ({format} format)", source = .path.as_ref().map(|p| format!("{}: ", p.display())).unwrap_or_default())]
    Empty {
        /// The file, when read from one.
        path: Option<PathBuf>,
        /// The form it was read in.
        format: TopicFormat,
    },
}

impl TopicError {
    fn at(line: usize, message: impl Into<String>) -> TopicError {
        TopicError::Malformed {
            path: None,
            line,
            message: message.into(),
        }
    }

    fn in_file(self, file: &Path) -> TopicError {
        match self {
            TopicError::Malformed { line, message, .. } => TopicError::Malformed {
                path: Some(file.to_path_buf()),
                line,
                message,
            },
            TopicError::Empty { format, .. } => TopicError::Empty {
                path: Some(file.to_path_buf()),
                format,
            },
            other => other,
        }
    }
}

/// Reads the topics of the file at `path`, in the form given or else detected.
///
/// # Errors
///
/// [`TopicError::Io`] if the file cannot be read, [`TopicError::Malformed`] (with the line)
/// if it is not UTF-8 or breaks its form, [`TopicError::Empty`] if it holds no topic.
pub fn read_topics(path: &Path, format: Option<TopicFormat>) -> Result<Vec<Topic>, TopicError> {
    let bytes = std::fs::read(path).map_err(|source| TopicError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => {
            let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
            let line = valid.iter().filter(|&&b| b == b'\n').count() + 1;
            return Err(TopicError::at(
                line,
                "not UTF-8 text (a Latin-1 file, as the Million Query topics are, converts \
                 with iconv -f latin1 -t utf-8)",
            )
            .in_file(path));
        }
    };
    parse_topics(&text, format).map_err(|e| e.in_file(path))
}

/// The topics of `text`, in the form given or else detected ([`TopicFormat::detect`]); a
/// byte-order mark at its start is ignored.
///
/// # Errors
///
/// [`TopicError::Malformed`] with the line where `text` breaks its form,
/// [`TopicError::Empty`] if it holds no topic.
pub fn parse_topics(text: &str, format: Option<TopicFormat>) -> Result<Vec<Topic>, TopicError> {
    let text = without_bom(text);
    let format = format.unwrap_or_else(|| TopicFormat::detect(text));
    let topics = match format {
        TopicFormat::Trec => parse_tagged(text)?,
        TopicFormat::Tsv => parse_tsv(text)?,
        TopicFormat::Colon => parse_colon(text)?,
    };
    if topics.is_empty() {
        return Err(TopicError::Empty { path: None, format });
    }
    let mut seen = std::collections::HashMap::new();
    for topic in &topics {
        if let Some(first) = seen.insert(topic.id.as_str(), topic.line) {
            return Err(TopicError::at(
                topic.line,
                format!("topic {} appears twice (first at line {first})", topic.id),
            ));
        }
    }
    Ok(topics)
}

/// `qid<TAB>query` lines; blank lines are skipped.
fn parse_tsv(text: &str) -> Result<Vec<Topic>, TopicError> {
    let mut topics = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        if line.trim().is_empty() {
            continue;
        }
        let Some((id, query)) = line.split_once('\t') else {
            return Err(TopicError::at(
                number,
                format!(
                    "expected qid<TAB>query, found no tab in {:?}",
                    shorten(line)
                ),
            ));
        };
        let id = id.trim();
        if id.is_empty() || id.contains(char::is_whitespace) {
            return Err(TopicError::at(
                number,
                format!("the topic number {id:?} is empty or has spaces in it"),
            ));
        }
        let query = collapse(query);
        if query.is_empty() {
            return Err(TopicError::at(
                number,
                format!("topic {id} has an empty query"),
            ));
        }
        topics.push(Topic {
            id: id.to_string(),
            query,
            line: number,
        });
    }
    Ok(topics)
}

/// `qid:query` lines, or `qid:priority:query` lines when every line has a one-digit priority
/// after its number; blank lines are skipped. The query runs from the (first or second)
/// colon to the end of the line and may hold colons of its own.
fn parse_colon(text: &str) -> Result<Vec<Topic>, TopicError> {
    let lines = || {
        text.lines()
            .enumerate()
            .map(|(index, line)| (index + 1, line))
            .filter(|(_, line)| !line.trim().is_empty())
    };
    let with_priority = lines().all(|(_, line)| {
        line.split_once(':')
            .and_then(|(_, rest)| rest.split_once(':'))
            .is_some_and(|(priority, _)| {
                priority.len() == 1 && priority.as_bytes()[0].is_ascii_digit()
            })
    });
    let mut topics = Vec::new();
    for (number, line) in lines() {
        let Some((id, query)) = line.split_once(':') else {
            return Err(TopicError::at(
                number,
                format!("expected qid:query, found no colon in {:?}", shorten(line)),
            ));
        };
        let id = topic_number(id, number)?;
        let query = match query.split_once(':') {
            Some((_, query)) if with_priority => query,
            _ => query,
        };
        let query = collapse(query);
        if query.is_empty() {
            return Err(TopicError::at(
                number,
                format!("topic {id} has an empty query"),
            ));
        }
        topics.push(Topic {
            id,
            query,
            line: number,
        });
    }
    Ok(topics)
}

/// A piece of a tagged file: a tag or the text between tags.
#[derive(Debug)]
enum Piece<'a> {
    /// `<name attributes>` or `</name>`; the name lowercased.
    Tag {
        name: String,
        closing: bool,
        attributes: &'a str,
        line: usize,
    },
    /// Text between tags; `cdata` if it is the inside of a `<![CDATA[...]]>` section, whose
    /// `&` is a plain character, not the start of an entity.
    Text {
        text: &'a str,
        line: usize,
        cdata: bool,
    },
}

/// Splits `text` into tags and the text between them. A `<` that does not start a tag
/// (`a < b`, `<5`) is text; comments, `<?xml ...?>` and markup declarations (`<!DOCTYPE
/// ...>`, with its internal subset) are dropped; a CDATA section is text.
fn pieces(text: &str) -> Result<Vec<Piece<'_>>, TopicError> {
    const CDATA: &str = "<![CDATA[";
    let mut pieces = Vec::new();
    let bytes = text.as_bytes();
    let mut line = 1;
    let mut text_start = 0;
    let mut text_line = 1;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => {
                line += 1;
                i += 1;
            }
            b'<' => {
                let rest = &text[i..];
                let (length, piece) = if let Some(inside) = rest.strip_prefix(CDATA) {
                    let end = inside.find("]]>").ok_or_else(|| {
                        TopicError::at(line, "a <![CDATA[ section that is never closed (]]>)")
                    })?;
                    let piece = Piece::Text {
                        text: &inside[..end],
                        line,
                        cdata: true,
                    };
                    (CDATA.len() + end + 3, Some(piece))
                } else if rest.starts_with("<!--") {
                    let end = rest
                        .find("-->")
                        .ok_or_else(|| TopicError::at(line, "a comment that is never closed"))?;
                    (end + 3, None)
                } else if is_declaration(rest) {
                    let length = declaration_length(rest).ok_or_else(|| {
                        TopicError::at(
                            line,
                            format!(
                                "a declaration that is never closed: {:?}",
                                shorten(rest.lines().next().unwrap_or_default())
                            ),
                        )
                    })?;
                    (length, None)
                } else if let Some(end) = rest.find('>').filter(|_| rest.starts_with("<?")) {
                    (end + 1, None)
                } else if let Some((name, closing, attributes, length)) = tag_at(rest) {
                    let piece = Piece::Tag {
                        name,
                        closing,
                        attributes,
                        line,
                    };
                    (length, Some(piece))
                } else {
                    i += 1;
                    continue;
                };
                if text_start < i {
                    pieces.push(Piece::Text {
                        text: &text[text_start..i],
                        line: text_line,
                        cdata: false,
                    });
                }
                pieces.extend(piece);
                line += text[i..i + length].matches('\n').count();
                i += length;
                text_start = i;
                text_line = line;
            }
            _ => i += 1,
        }
    }
    if text_start < text.len() {
        pieces.push(Piece::Text {
            text: &text[text_start..],
            line: text_line,
            cdata: false,
        });
    }
    Ok(pieces)
}

/// Whether `rest` starts a markup declaration: `<!` and a letter (`<!DOCTYPE`, `<!ELEMENT`)
/// or `<![` (`<![CDATA[`).
fn is_declaration(rest: &str) -> bool {
    rest.strip_prefix("<!")
        .is_some_and(|after| after.starts_with(|c: char| c.is_ascii_alphabetic() || c == '['))
}

/// The length of the declaration at the start of `rest` (which [`is_declaration`]), up to
/// its `>`: a `>` inside brackets (the internal subset of `<!DOCTYPE webtrack2009 [
/// <!ELEMENT topic (query, description)> ... ]>`), inside quotes (`"a>b"`) or inside a
/// comment does not end it. None if it never ends.
fn declaration_length(rest: &str) -> Option<usize> {
    let bytes = rest.as_bytes();
    let mut depth = 0usize;
    let mut quote = None;
    let mut i = 2;
    while i < bytes.len() {
        let byte = bytes[i];
        match quote {
            Some(open) if byte == open => quote = None,
            Some(_) => {}
            None => match byte {
                b'"' | b'\'' => quote = Some(byte),
                b'[' => depth += 1,
                b']' => depth = depth.saturating_sub(1),
                b'<' if rest[i..].starts_with("<!--") => {
                    i += rest[i..].find("-->")? + 3;
                    continue;
                }
                b'>' if depth == 0 => return Some(i + 1),
                _ => {}
            },
        }
        i += 1;
    }
    None
}

/// The tag at the start of `rest` (`<name ...>` or `</name>`, on one line): its lowercased
/// name, whether it closes, its attribute text and its length in bytes.
fn tag_at(rest: &str) -> Option<(String, bool, &str, usize)> {
    let end = rest.find(['>', '\n'])?;
    if rest.as_bytes()[end] != b'>' {
        return None;
    }
    let inner = &rest[1..end];
    let (closing, inner) = match inner.strip_prefix('/') {
        Some(inner) => (true, inner),
        None => (false, inner),
    };
    let inner = inner.strip_suffix('/').unwrap_or(inner);
    let name_len = inner
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        .unwrap_or(inner.len());
    let name = &inner[..name_len];
    let attributes = &inner[name_len..];
    let starts_with_letter = name.starts_with(|c: char| c.is_ascii_alphabetic());
    if !starts_with_letter
        || !(attributes.is_empty() || attributes.starts_with(char::is_whitespace))
    {
        return None;
    }
    Some((name.to_ascii_lowercase(), closing, attributes, end + 1))
}

/// The field whose text is being collected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Number,
    Title,
    Query,
    Other,
}

/// A topic being read.
struct Open {
    /// `top` (SGML) or `topic` (XML).
    tag: &'static str,
    line: usize,
    id: Option<String>,
    title: Option<String>,
    query: Option<String>,
}

/// The fields of a topic: such a tag outside any topic means a `<top>` or `<topic>` is
/// missing, where any other is taken for the root element of an XML file.
const FIELDS: &[&str] = &[
    "num",
    "title",
    "desc",
    "narr",
    "query",
    "description",
    "narrative",
    "subtopic",
];

/// The SGML and XML forms, from one stream of tags and text.
fn parse_tagged(text: &str) -> Result<Vec<Topic>, TopicError> {
    let mut topics = Vec::new();
    let mut open: Option<Open> = None;
    // The element around the topics of an XML file (`<topics>`, `<webtrack2009>`), with the
    // line it opens on; the classic form has none.
    let mut root: Option<(String, usize)> = None;
    let mut field = Field::Other;
    let mut field_line = 0;
    let mut collected = String::new();
    for piece in pieces(text)? {
        match piece {
            Piece::Text { text, line, cdata } => {
                if open.is_none() {
                    if let Some(offset) = text.find(|c: char| !c.is_whitespace()) {
                        let line = line + text[..offset].matches('\n').count();
                        return Err(TopicError::at(
                            line,
                            format!(
                                "text outside any topic: {:?}",
                                shorten(text[offset..].trim())
                            ),
                        ));
                    }
                } else if field != Field::Other {
                    if cdata {
                        // Kept as it stands by the entity decoding of `finish_field`.
                        collected.push_str(&text.replace('&', "&amp;"));
                    } else {
                        collected.push_str(text);
                    }
                    collected.push(' ');
                }
            }
            Piece::Tag {
                name,
                closing,
                attributes,
                line,
            } => {
                // Any tag ends the field being collected.
                if let Some(topic) = open.as_mut() {
                    finish_field(topic, field, field_line, &mut collected)?;
                }
                field = Field::Other;
                match (name.as_str(), closing) {
                    ("top" | "topic", false) => {
                        if let Some(topic) = &open {
                            return Err(TopicError::at(
                                line,
                                format!(
                                    "<{name}> inside the topic opened at line {} (is a </{}> missing?)",
                                    topic.line, topic.tag
                                ),
                            ));
                        }
                        let (tag, id) = if name == "top" {
                            ("top", None)
                        } else {
                            let number = attribute(attributes, "number")
                                .or_else(|| attribute(attributes, "id"))
                                .ok_or_else(|| {
                                    TopicError::at(
                                        line,
                                        "<topic> without a number=\"...\" attribute",
                                    )
                                })?;
                            (
                                "topic",
                                Some(topic_number(&decode_entities(&number), line)?),
                            )
                        };
                        open = Some(Open {
                            tag,
                            line,
                            id,
                            title: None,
                            query: None,
                        });
                    }
                    ("top" | "topic", true) => {
                        let topic = match open.take() {
                            Some(topic) if topic.tag == name => topic,
                            Some(topic) => {
                                return Err(TopicError::at(
                                    line,
                                    format!(
                                        "</{name}> closes the <{}> opened at line {}",
                                        topic.tag, topic.line
                                    ),
                                ))
                            }
                            None => {
                                return Err(TopicError::at(
                                    line,
                                    format!("</{name}> without a <{name}> before it"),
                                ))
                            }
                        };
                        topics.push(close(topic)?);
                    }
                    (name, closing)
                        if open.is_some()
                            && (name == "topics"
                                || root.as_ref().is_some_and(|(root, _)| root == name)) =>
                    {
                        let topic = open.as_ref().expect("checked in the guard");
                        return Err(TopicError::at(
                            line,
                            format!(
                                "<{}{name}> inside the topic opened at line {} (is a </{}> missing?)",
                                if closing { "/" } else { "" },
                                topic.line,
                                topic.tag
                            ),
                        ));
                    }
                    (name, true) => {
                        if open.is_none() && root.as_ref().is_some_and(|(root, _)| root == name) {
                            root = None;
                        }
                    }
                    (other, false) => {
                        let Some(topic) = &open else {
                            if let Some((root, root_line)) = &root {
                                return Err(TopicError::at(
                                    line,
                                    format!(
                                        "<{other}> inside the <{root}> opened at line {root_line} \
                                         but outside any topic (a <top> or <topic> is missing)"
                                    ),
                                ));
                            }
                            if FIELDS.contains(&other) {
                                return Err(TopicError::at(
                                    line,
                                    format!(
                                        "<{other}> outside any topic (a <top> or <topic> is missing)"
                                    ),
                                ));
                            }
                            root = Some((other.to_string(), line));
                            continue;
                        };
                        field = match (other, topic.tag) {
                            ("num", "top") => Field::Number,
                            ("title", _) => Field::Title,
                            ("query", "topic") => Field::Query,
                            _ => Field::Other,
                        };
                        field_line = line;
                    }
                }
            }
        }
    }
    if let Some(topic) = open {
        return Err(TopicError::at(
            topic.line,
            format!(
                "the <{}> opened here is never closed (</{}>)",
                topic.tag, topic.tag
            ),
        ));
    }
    Ok(topics)
}

/// Stores the text collected for `field` in `topic`.
fn finish_field(
    topic: &mut Open,
    field: Field,
    line: usize,
    collected: &mut String,
) -> Result<(), TopicError> {
    let text = collapse(&decode_entities(collected));
    collected.clear();
    match field {
        Field::Number => {
            let number = text
                .strip_prefix("Number:")
                .or_else(|| text.strip_prefix("number:"))
                .unwrap_or(&text)
                .trim();
            if topic.id.is_some() {
                return Err(TopicError::at(line, "a second <num> in one topic"));
            }
            topic.id = Some(topic_number(number, line)?);
        }
        Field::Title => {
            let title = text.strip_prefix("Topic:").unwrap_or(&text).trim();
            topic.title.get_or_insert_with(|| title.to_string());
        }
        Field::Query => {
            topic.query.get_or_insert(text);
        }
        Field::Other => {}
    }
    Ok(())
}

/// A topic number: one word.
fn topic_number(text: &str, line: usize) -> Result<String, TopicError> {
    let number = text.trim();
    if number.is_empty() {
        return Err(TopicError::at(line, "a topic without a number"));
    }
    if number.contains(char::is_whitespace) {
        return Err(TopicError::at(
            line,
            format!("the topic number {number:?} has spaces in it"),
        ));
    }
    Ok(number.to_string())
}

/// The finished topic; its query is the `<query>` (XML) or else the `<title>`.
fn close(topic: Open) -> Result<Topic, TopicError> {
    let id = topic
        .id
        .ok_or_else(|| TopicError::at(topic.line, "the topic opened here has no <num>"))?;
    let query = match (topic.query, topic.title) {
        (Some(query), _) if !query.is_empty() => query,
        (_, Some(title)) if !title.is_empty() => title,
        _ => {
            return Err(TopicError::at(
                topic.line,
                format!("topic {id}, opened here, has no <title> (or <query>) text"),
            ))
        }
    };
    Ok(Topic {
        id,
        query,
        line: topic.line,
    })
}

/// The value of `name="..."` (or single quotes, or bare) in a tag's attribute text.
fn attribute(attributes: &str, name: &str) -> Option<String> {
    let mut rest = attributes;
    while let Some(at) = rest.find(name) {
        let before_ok = at == 0 || rest[..at].ends_with(char::is_whitespace);
        let after = rest[at + name.len()..].trim_start();
        if let (true, Some(value)) = (before_ok, after.strip_prefix('=')) {
            let value = value.trim_start();
            return Some(match value.chars().next() {
                Some(quote @ ('"' | '\'')) => {
                    let inner = &value[1..];
                    inner[..inner.find(quote).unwrap_or(inner.len())].to_string()
                }
                _ => value
                    .split(char::is_whitespace)
                    .next()
                    .unwrap_or_default()
                    .to_string(),
            });
        }
        rest = &rest[at + name.len()..];
    }
    None
}

/// `&amp;`, `&lt;`, `&gt;`, `&quot;`, `&apos;` and numeric references decoded; anything else
/// (`AT&T`) left as it is.
fn decode_entities(text: &str) -> String {
    if !text.contains('&') {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let decoded = rest.find(';').filter(|&end| end <= 10).and_then(|end| {
            let entity = &rest[1..end];
            let c = match entity {
                "amp" => Some('&'),
                "lt" => Some('<'),
                "gt" => Some('>'),
                "quot" => Some('"'),
                "apos" => Some('\''),
                _ => entity
                    .strip_prefix("#x")
                    .and_then(|hex| u32::from_str_radix(hex, 16).ok())
                    .or_else(|| entity.strip_prefix('#').and_then(|d| d.parse().ok()))
                    .and_then(char::from_u32),
            }?;
            Some((c, end + 1))
        });
        match decoded {
            Some((c, length)) => {
                out.push(c);
                rest = &rest[length..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// `text` with runs of whitespace made one space, trimmed.
fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The first 60 characters of `text`, for a message.
fn shorten(text: &str) -> String {
    let mut short: String = text.chars().take(60).collect();
    if short.len() < text.len() {
        short.push('…');
    }
    short
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attributes_in_any_quoting() {
        assert_eq!(
            attribute(r#" number="12" type="x""#, "number"),
            Some("12".into())
        );
        assert_eq!(
            attribute(" type='a' number='7'", "number"),
            Some("7".into())
        );
        assert_eq!(attribute(" number=3 type=b", "number"), Some("3".into()));
        assert_eq!(attribute(" subnumber=\"3\"", "number"), None);
    }

    #[test]
    fn entities_decoded_and_stray_ampersands_kept() {
        assert_eq!(
            decode_entities("AT&amp;T &lt;x&gt; &#65;&#x42;"),
            "AT&T <x> AB"
        );
        assert_eq!(decode_entities("AT&T & co;"), "AT&T & co;");
    }

    #[test]
    fn tags_and_text() {
        assert!(tag_at("<title> x").is_some());
        assert!(tag_at("</top>").is_some());
        assert!(tag_at("<5 years").is_none());
        assert!(tag_at("< b>").is_none());
        assert!(tag_at("<a\nb>").is_none());
    }
}
