//! Topic files: the queries of a test collection, each with its topic number.
//!
//! Three forms are read, the first two told apart from the third by the text itself (a file
//! whose first non-blank character is `<` is SGML or XML, anything else is TSV):
//!
//! ```text
//! <top>                                  <topics>
//! <num> Number: 301                        <topic number="1" type="faceted">
//! <title> International Organized Crime      <query>obama family tree</query>
//! <desc> Description:                        <description>...</description>
//! ...                                      </topic>
//! </top>                                 </topics>
//!
//! 301<TAB>international organized crime
//! ```
//!
//! The classic form (TREC ad hoc, Robust) takes the `<title>` (a leading `Topic:` dropped,
//! text up to the next tag, over several lines if need be); the XML form (the Web tracks,
//! TREC-COVID) the `<query>`, else the `<title>`. Entities (`&amp;`, `&lt;`, ...) are decoded.
//! Other fields (`<desc>`, `<narr>`, subtopics) are skipped.
//!
//! A file that breaks the form is refused, never half read: an error names the line and what
//! is wrong (a topic without a number or a title, a topic never closed, text outside any
//! topic, a TSV line without a tab, a topic number seen twice).

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
}

impl TopicFormat {
    /// The form of `text`: [`TopicFormat::Trec`] when its first non-blank character is `<`.
    pub fn detect(text: &str) -> TopicFormat {
        if text.trim_start().starts_with('<') {
            TopicFormat::Trec
        } else {
            TopicFormat::Tsv
        }
    }
}

impl FromStr for TopicFormat {
    type Err = String;

    fn from_str(s: &str) -> Result<TopicFormat, String> {
        match s {
            "trec" => Ok(TopicFormat::Trec),
            "tsv" => Ok(TopicFormat::Tsv),
            other => Err(format!("unknown topic format {other:?} (trec, tsv)")),
        }
    }
}

impl fmt::Display for TopicFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TopicFormat::Trec => "trec",
            TopicFormat::Tsv => "tsv",
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
            return Err(TopicError::at(line, "not UTF-8 text").in_file(path));
        }
    };
    parse_topics(&text, format).map_err(|e| e.in_file(path))
}

/// The topics of `text`, in the form given or else detected ([`TopicFormat::detect`]).
///
/// # Errors
///
/// [`TopicError::Malformed`] with the line where `text` breaks its form,
/// [`TopicError::Empty`] if it holds no topic.
pub fn parse_topics(text: &str, format: Option<TopicFormat>) -> Result<Vec<Topic>, TopicError> {
    let format = format.unwrap_or_else(|| TopicFormat::detect(text));
    let topics = match format {
        TopicFormat::Trec => parse_tagged(text)?,
        TopicFormat::Tsv => parse_tsv(text)?,
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
    /// Text between tags.
    Text { text: &'a str, line: usize },
}

/// Splits `text` into tags and the text between them. A `<` that does not start a tag
/// (`a < b`, `<5`) is text; comments and `<?xml ...?>` declarations are dropped.
fn pieces(text: &str) -> Result<Vec<Piece<'_>>, TopicError> {
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
                let skip = if rest.starts_with("<!--") {
                    rest.find("-->").map(|end| end + 3)
                } else if rest.starts_with("<?") || rest.starts_with("<!") {
                    rest.find('>').map(|end| end + 1)
                } else {
                    None
                };
                let tag = if skip.is_none() { tag_at(rest) } else { None };
                if skip.is_none() && tag.is_none() {
                    if rest.starts_with("<!--") {
                        return Err(TopicError::at(line, "a comment that is never closed"));
                    }
                    i += 1;
                    continue;
                }
                if text_start < i {
                    pieces.push(Piece::Text {
                        text: &text[text_start..i],
                        line: text_line,
                    });
                }
                let length = match (skip, tag) {
                    (Some(length), _) => length,
                    (None, Some((name, closing, attributes, length))) => {
                        pieces.push(Piece::Tag {
                            name,
                            closing,
                            attributes,
                            line,
                        });
                        length
                    }
                    (None, None) => unreachable!("handled above"),
                };
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
        });
    }
    Ok(pieces)
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

/// The SGML and XML forms, from one stream of tags and text.
fn parse_tagged(text: &str) -> Result<Vec<Topic>, TopicError> {
    let mut topics = Vec::new();
    let mut open: Option<Open> = None;
    let mut field = Field::Other;
    let mut field_line = 0;
    let mut collected = String::new();
    for piece in pieces(text)? {
        match piece {
            Piece::Text { text, line } => {
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
                    collected.push_str(text);
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
                    ("topics", _) => {
                        if let Some(topic) = &open {
                            return Err(TopicError::at(
                                line,
                                format!(
                                    "<{}topics> inside the topic opened at line {}",
                                    if closing { "/" } else { "" },
                                    topic.line
                                ),
                            ));
                        }
                    }
                    (_, true) => {}
                    (other, false) => {
                        let Some(topic) = &open else {
                            return Err(TopicError::at(
                                line,
                                format!(
                                    "<{other}> outside any topic (a <top> or <topic> is missing)"
                                ),
                            ));
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
