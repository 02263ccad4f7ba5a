//! [`parse_query`]: query text to a [`Query`], following Lucene's classic `QueryParser`.
//!
//! Parsing is in two steps. A lexer cuts the text into tokens with the longest-match rules of
//! Lucene's JavaCC grammar (a word runs up to whitespace or a special character, `AND` is an
//! operator only when it is a whole token, `+`, `-` and `!` followed by whitespace are words)
//! and rejects the syntax this index cannot answer. A recursive-descent parser then builds
//! each parenthesised level as an ordered list of clauses, changing the kind of the previous
//! clause when a conjunction asks for it, exactly as `QueryParserBase.addClause` does, and
//! turns the list into a [`BoolQuery`] at the end.

use crate::analyzer::Analyzer;

use super::ast::{BoolQuery, Factor, PhraseQuery, Query};
use super::error::QueryError;
use super::field_query::{exists_query, range_query, term_query, RangeEnd};
use super::note::QueryNote;
use super::text_fields::{in_field, DefaultFields};
use crate::schema::{FieldType, Mapping};

/// The deepest nesting of parentheses [`parse_query`] accepts; deeper input is answered with
/// [`QueryError::TooDeeplyNested`] rather than risking the stack.
pub const MAX_NESTING: usize = 100;

/// The largest phrase slop [`parse_query`] accepts (`"a b"~2147483647`): Lucene's largest
/// `int`. A slop only bounds how far a match may stretch, so one past a document's length
/// already means "anywhere"; a larger number is refused as a mistake
/// ([`QueryError::InvalidSlop`]) rather than capped.
pub const MAX_SLOP: u32 = i32::MAX as u32;

/// How bare words (`a b`) combine: Lucene's `QueryParser.Operator`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum DefaultOperator {
    /// A bare word is optional (`SHOULD`): `a b` finds documents with either word.
    #[default]
    Or,
    /// A bare word is required (`MUST`): `a b` finds documents with both words.
    And,
}

/// Parses `text` into a [`Query`], analyzing every word with `analyzer`, which must be the
/// analyzer the index was built with.
///
/// The syntax and its meaning are those of Lucene 9's classic `QueryParser` with its default
/// settings, on a single field: bare words combined with `default_operator`, `+word`
/// (required), `-word`, `!word` and `NOT word` (prohibited), `AND`/`&&` and `OR`/`||`,
/// parentheses (which may carry `+` or `-`), backslash escapes (`\:`, `\u00e6`), and quoted
/// phrases with an optional slop (`"new york"`, `"big apple"~2`): quoted text that analyzes to a
/// single term is that term, and to several a [`Query::Phrase`] whose positions keep the gaps of
/// dropped stop words. A word that analyzes to several terms (`wi-fi`)
/// becomes a group of those terms combined with `default_operator`; a word that analyzes to
/// none (punctuation, a stop word) is dropped, and a query whose every word is dropped is an
/// empty [`BoolQuery`], which matches nothing. The result is [`Query::simplified`].
///
/// Fields, wildcards, fuzzy queries, boosts, ranges and regular expressions are answered with an error saying so; malformed input with an error pointing at
/// the byte where it goes wrong, a negative slop or one above [`MAX_SLOP`] among it. No input
/// makes it panic.
///
/// ```
/// use apcache_index::analyzer::Analyzer;
/// use apcache_index::query::{parse_query, DefaultOperator, Query, QueryError};
///
/// let analyzer = Analyzer::default();
/// let query = parse_query("Rust AND (search OR index) -Java", &analyzer, DefaultOperator::Or)?;
/// assert_eq!(query.to_string(), "+rust +(search index) -java");
///
/// let query = parse_query("Rust", &analyzer, DefaultOperator::Or)?;
/// assert_eq!(query, Query::Term("rust".into()));
///
/// let query = parse_query("\"Exact Phrase\"~1", &analyzer, DefaultOperator::Or)?;
/// assert_eq!(query.to_string(), "\"exact phrase\"~1");
///
/// let error = parse_query("body:rust", &analyzer, DefaultOperator::Or);
/// assert_eq!(error, Err(QueryError::FieldUnsupported { field: "body".into() }));
/// # Ok::<(), QueryError>(())
/// ```
pub fn parse_query(
    text: &str,
    analyzer: &Analyzer,
    default_operator: DefaultOperator,
) -> Result<Query, QueryError> {
    parse(text, analyzer, default_operator, false, None).map(|(query, _)| query)
}

/// Parses `text` like [`parse_query`], and also says which words the analyzer did more to
/// than lowercase: one [`QueryNote`] per word it dropped (`the` with English stop words, `-`
/// in `a - b`), split into several terms (`wi-fi`) or searched as another term (`c++` as
/// `c`), in the order the words appear, each note once.
///
/// The query is the one [`parse_query`] returns. Words are noted as the analyzer sees each of
/// them alone; quoted text that analyzes to one term or none is noted like a word.
///
/// ```
/// use apcache_index::analyzer::Analyzer;
/// use apcache_index::query::{parse_query_with_notes, DefaultOperator};
///
/// let (query, notes) =
///     parse_query_with_notes("c++ OR Rust", &Analyzer::english(), DefaultOperator::Or)?;
/// assert_eq!(query.to_string(), "c rust");
/// let notes: Vec<String> = notes.iter().map(ToString::to_string).collect();
/// assert_eq!(notes, [r#""c++" was searched as "c": the analyzer drops "+""#]);
/// # Ok::<(), apcache_index::query::QueryError>(())
/// ```
pub fn parse_query_with_notes(
    text: &str,
    analyzer: &Analyzer,
    default_operator: DefaultOperator,
) -> Result<(Query, Vec<QueryNote>), QueryError> {
    parse(text, analyzer, default_operator, true, None)
}

/// Parses `text` like [`parse_query_with_notes`], with clauses on the fields of `mapping`:
/// `field:value` and `field:"value"` (a keyword, a number, a date or a boolean, read as the
/// field's type reads it), `field:(a b)` (any of the values; all of them with `AND`),
/// `field:[low TO high]` and `field:{low TO high}` (`*` for no bound), `_exists_:field`, and
/// `*:*` (every document). Field clauses filter: they match as they say and add nothing to a
/// document's score, as clauses under Elasticsearch's `bool.filter` do. Words without a field
/// search the index's text fields together. A clause on one text field is refused
/// ([`QueryError::TextFieldUnsupported`]), and so is a field the mapping lacks.
///
/// ```
/// use apcache_index::analyzer::Analyzer;
/// use apcache_index::query::{parse_query_in, DefaultOperator};
/// use apcache_index::schema::Mapping;
///
/// let mapping = Mapping::from_json(&serde_json::json!({"properties": {
///     "section": {"type": "keyword"}, "size": {"type": "long"}}}))?;
/// let (query, _) = parse_query_in(
///     "strategy AND section:games AND size:[10 TO *]",
///     &Analyzer::default(),
///     DefaultOperator::Or,
///     &mapping,
/// )?;
/// assert_eq!(query.to_string(), "+strategy +#(section:games) +#(size:[10 TO 9223372036854775807])");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn parse_query_in(
    text: &str,
    analyzer: &Analyzer,
    default_operator: DefaultOperator,
    mapping: &Mapping,
) -> Result<(Query, Vec<QueryNote>), QueryError> {
    parse_query_in_fields(
        text,
        analyzer,
        default_operator,
        mapping,
        &DefaultFields::default(),
    )
}

/// [`parse_query_in`], words without a field searched in `default_fields` (text fields of
/// `mapping` with their boosts, combined as it says; no fields: every text field, scores
/// added). Under a mapping whose text fields are indexed under
/// their own names, `field:word`, `field:"a phrase"` and `field:(a b)` on a text field search
/// that field and score as Lucene scores it; a word without a field searches each default
/// field, any of them matching, the scores of the fields that match added up (Lucene's
/// `MultiFieldQueryParser`). Under a mapping that joins its text fields
/// ([`Mapping::joined_text`]) words search the one default field and a clause on a text field
/// is refused ([`QueryError::TextFieldUnsupported`]).
///
/// ```
/// use apcache_index::analyzer::Analyzer;
/// use apcache_index::query::{parse_query_in_fields, DefaultFields, DefaultOperator};
/// use apcache_index::schema::Mapping;
///
/// let mapping = Mapping::from_json(&serde_json::json!({"properties": {
///     "summary": {"type": "text"}, "description": {"type": "text"}}}))?;
/// let (query, _) = parse_query_in_fields(
///     "summary:chess engine",
///     &Analyzer::default(),
///     DefaultOperator::Or,
///     &mapping,
///     &DefaultFields::parse(&["summary".into(), "description".into()])?,
/// )?;
/// assert_eq!(query.to_string(), "summary:chess (summary:engine description:engine)");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn parse_query_in_fields(
    text: &str,
    analyzer: &Analyzer,
    default_operator: DefaultOperator,
    mapping: &Mapping,
    default_fields: &DefaultFields,
) -> Result<(Query, Vec<QueryNote>), QueryError> {
    let (query, notes) = parse(text, analyzer, default_operator, true, Some(mapping))?;
    Ok((default_fields.spread(query, mapping)?, notes))
}

/// [`parse_query`], with the notes when `take_notes` is set (and none otherwise), and field
/// clauses when a mapping is given.
fn parse(
    text: &str,
    analyzer: &Analyzer,
    default_operator: DefaultOperator,
    take_notes: bool,
    mapping: Option<&Mapping>,
) -> Result<(Query, Vec<QueryNote>), QueryError> {
    let tokens = lex(text, mapping.is_some())?;
    if tokens.is_empty() {
        return Err(QueryError::Empty);
    }
    let mut parser = Parser {
        tokens: &tokens,
        next: 0,
        analyzer,
        default_operator,
        take_notes,
        notes: Vec::new(),
        mapping,
    };
    let query = parser.parse_group(None)?;
    let query = query.map_or_else(|| Query::Bool(BoolQuery::default()), Query::simplified);
    Ok((query, parser.notes))
}

/// Whitespace as Lucene's query grammar knows it. Other Unicode spaces are word characters
/// there, which the analyzer then splits words at.
pub(super) fn is_whitespace(character: char) -> bool {
    matches!(character, ' ' | '\t' | '\n' | '\r' | '\u{3000}')
}

/// `text` with every character that has a meaning in the query syntax escaped with a
/// backslash (Lucene's `QueryParser.escape`), so that it parses as plain words. The operator
/// words `AND`, `OR` and `NOT` are left as they are: a caller that wants them as words lowercases
/// them (the analyzer lowercases anyway).
///
/// ```
/// assert_eq!(apcache_index::query::escape("c++ (x)"), "c\\+\\+ \\(x\\)");
/// ```
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if is_special(c) || matches!(c, '&' | '|') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Characters that end a word (unless escaped). `-` and `+` are among them only at the start
/// of a word: inside one (`wi-fi`) they are part of it.
pub(super) fn is_special(character: char) -> bool {
    matches!(
        character,
        '+' | '-'
            | '!'
            | '('
            | ')'
            | ':'
            | '^'
            | '['
            | ']'
            | '"'
            | '{'
            | '}'
            | '~'
            | '*'
            | '?'
            | '\\'
            | '/'
    )
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum TokenKind {
    /// A word, escapes resolved.
    Word(String),
    /// The text between double quotes, escapes resolved, and the slop of a `~N` after it.
    Quoted(String, u32),
    /// `AND` or `&&`.
    And,
    /// `OR` or `||`.
    Or,
    /// `NOT` or `!`.
    Not,
    /// `+` before a clause.
    Plus,
    /// `-` before a clause.
    Minus,
    /// `+`, `-` or `!` followed by whitespace: Lucene's `BAREOPER`, which it reads as a word
    /// made of that character (and the analyzer then drops).
    BareOperator(char),
    LeftParen,
    RightParen,
    /// `name:` before a clause (only with a mapping).
    Field(String),
    /// `[low TO high]`, `{low TO high}` after a field.
    Range(RangeEnd, RangeEnd),
    /// `*:*`.
    All,
    /// `^2` after a clause.
    Boost(Factor),
}

#[derive(Debug)]
struct Token<'t> {
    kind: TokenKind,
    /// The token as written.
    raw: &'t str,
    /// Byte offset of its first character.
    start: usize,
}

/// Cuts `text` into tokens, rejecting unsupported syntax as soon as it appears.
fn lex(text: &str, fields: bool) -> Result<Vec<Token<'_>>, QueryError> {
    let mut tokens: Vec<Token<'_>> = Vec::new();
    // Where the trailing whitespace starts: an operator there or after has nothing to apply to.
    let content_end = text.trim_end_matches(is_whitespace).len();
    let mut position = 0;
    while let Some(character) = text[position..].chars().next() {
        let start = position;
        let after = start + character.len_utf8();
        let kind = match character {
            c if is_whitespace(c) => {
                position = after;
                continue;
            }
            '(' => TokenKind::LeftParen,
            ')' => TokenKind::RightParen,
            '+' | '-' | '!' => {
                let followed_by_space = text[after..].chars().next().is_some_and(is_whitespace);
                // Lucene reads `a - b` as three words; a trailing operator is an error here,
                // whether or not whitespace follows it.
                if followed_by_space && after < content_end {
                    TokenKind::BareOperator(character)
                } else {
                    match character {
                        '+' => TokenKind::Plus,
                        '-' => TokenKind::Minus,
                        _ => TokenKind::Not,
                    }
                }
            }
            '"' => {
                let (content, end) = lex_quoted(text, start)?;
                let (slop, end) = lex_slop(text, end)?;
                position = end;
                tokens.push(Token {
                    kind: TokenKind::Quoted(content, slop),
                    raw: &text[start..end],
                    start,
                });
                continue;
            }
            '*' if fields && text[start..].starts_with("*:*") => {
                position = start + 3;
                tokens.push(Token {
                    kind: TokenKind::All,
                    raw: &text[start..position],
                    start,
                });
                continue;
            }
            ':' if fields => {
                match tokens.last_mut() {
                    Some(token) if start == token.start + token.raw.len() => {
                        let TokenKind::Word(name) = &token.kind else {
                            return Err(QueryError::UnexpectedCharacter {
                                character,
                                position: start,
                            });
                        };
                        token.kind = TokenKind::Field(name.clone());
                    }
                    _ => {
                        return Err(QueryError::UnexpectedCharacter {
                            character,
                            position: start,
                        })
                    }
                }
                position = after;
                continue;
            }
            '[' | '{'
                if fields
                    && tokens.last().is_some_and(|t| {
                        matches!(t.kind, TokenKind::Field(_)) && t.start + t.raw.len() + 1 == start
                    }) =>
            {
                let (lower, upper, end) = lex_range(text, start)?;
                position = end;
                tokens.push(Token {
                    kind: TokenKind::Range(lower, upper),
                    raw: &text[start..end],
                    start,
                });
                continue;
            }
            ':' => {
                return Err(match tokens.last() {
                    Some(Token {
                        kind: TokenKind::Word(_),
                        raw,
                        ..
                    }) => QueryError::FieldUnsupported {
                        field: (*raw).to_owned(),
                    },
                    _ => QueryError::UnexpectedCharacter {
                        character,
                        position: start,
                    },
                })
            }
            '*' | '?' => return Err(QueryError::WildcardUnsupported { position: start }),
            '~' => return Err(QueryError::FuzzyUnsupported { position: start }),
            '^' => {
                let (factor, end) = lex_boost(text, start)?;
                position = end;
                tokens.push(Token {
                    kind: TokenKind::Boost(factor),
                    raw: &text[start..end],
                    start,
                });
                continue;
            }
            '[' | '{' => return Err(QueryError::RangeUnsupported { position: start }),
            '/' => return Err(QueryError::RegexUnsupported { position: start }),
            ']' | '}' => {
                return Err(QueryError::UnexpectedCharacter {
                    character,
                    position: start,
                })
            }
            _ => {
                let (word, end) = lex_word(text, start)?;
                position = end;
                let raw = &text[start..end];
                let kind = match raw {
                    "AND" | "&&" => TokenKind::And,
                    "OR" | "||" => TokenKind::Or,
                    "NOT" => TokenKind::Not,
                    _ => TokenKind::Word(word),
                };
                tokens.push(Token { kind, raw, start });
                continue;
            }
        };
        position = after;
        tokens.push(Token {
            kind,
            raw: &text[start..after],
            start,
        });
    }
    Ok(tokens)
}

/// Reads the range whose bracket is at `start` (`[a TO b]`, `{a TO b}`, mixed, `*` for no
/// bound, values quoted or bare): returns its ends and the offset past its closing bracket.
fn lex_range(text: &str, start: usize) -> Result<(RangeEnd, RangeEnd, usize), QueryError> {
    let malformed = QueryError::MalformedRange { position: start };
    let lower_inclusive = text[start..].starts_with('[');
    let mut position = start + 1;
    let skip_space = |position: &mut usize| {
        while let Some(c) = text[*position..]
            .chars()
            .next()
            .filter(|&c| is_whitespace(c))
        {
            *position += c.len_utf8();
        }
    };
    let value = |position: &mut usize| -> Result<Option<String>, QueryError> {
        skip_space(position);
        if text[*position..].starts_with('"') {
            let (content, end) = lex_quoted(text, *position)?;
            *position = end;
            return Ok(Some(content));
        }
        let mut unescaper = Unescaper::default();
        let from = *position;
        while let Some(c) = text[*position..].chars().next() {
            match c {
                '\\' => *position = unescaper.escape(text, *position)?,
                c if is_whitespace(c) || c == ']' || c == '}' => break,
                c => {
                    unescaper.push(c);
                    *position += c.len_utf8();
                }
            }
        }
        if *position == from {
            return Err(QueryError::MalformedRange { position: start });
        }
        let word = unescaper.finish(from)?;
        Ok((word != "*").then_some(word))
    };
    let lower = value(&mut position)?;
    skip_space(&mut position);
    if !text[position..].starts_with("TO") {
        return Err(malformed);
    }
    position += 2;
    let upper = value(&mut position)?;
    skip_space(&mut position);
    let upper_inclusive = match text[position..].chars().next() {
        Some(']') => true,
        Some('}') => false,
        _ => return Err(malformed),
    };
    Ok((
        RangeEnd {
            value: lower,
            inclusive: lower_inclusive,
        },
        RangeEnd {
            value: upper,
            inclusive: upper_inclusive,
        },
        position + 1,
    ))
}

/// Reads the word starting at `start`: returns it with escapes resolved, and the offset just
/// past it. A `*` or `?` inside or right after a word makes it a wildcard query.
fn lex_word(text: &str, start: usize) -> Result<(String, usize), QueryError> {
    let mut unescaper = Unescaper::default();
    let mut position = start;
    while let Some(character) = text[position..].chars().next() {
        match character {
            '\\' => position = unescaper.escape(text, position)?,
            '*' | '?' => return Err(QueryError::WildcardUnsupported { position }),
            c if is_whitespace(c) => break,
            // `-` and `+` continue a word; every other special character ends it.
            '-' | '+' => {
                unescaper.push(character);
                position += 1;
            }
            c if is_special(c) => break,
            c => {
                unescaper.push(c);
                position += c.len_utf8();
            }
        }
    }
    Ok((unescaper.finish(start)?, position))
}

/// Reads the `~N` that may follow a closing quote at `at`: returns the slop (0 without one)
/// and the offset past it. As Lucene's parser does, a fraction is cut off (`~2.5` is 2) and a
/// `~` without a number means 0. A slop above [`MAX_SLOP`] (Lucene's largest `int`, which its
/// parser quietly caps a larger one to) is refused, and so is a negative one (`~-1`, which
/// Lucene reads as slop 0 and a prohibited word `1`): both are typing mistakes that would
/// otherwise run as another query than the one meant.
/// Reads the boost whose `^` is at `at` (`^2`, `^0.5`): returns it and the offset past it.
fn lex_boost(text: &str, at: usize) -> Result<(Factor, usize), QueryError> {
    let after = &text[at + 1..];
    let digits = after.bytes().take_while(u8::is_ascii_digit).count();
    let mut end = digits;
    if after[digits..].starts_with('.') {
        end += 1 + after[digits + 1..]
            .bytes()
            .take_while(u8::is_ascii_digit)
            .count();
    }
    let invalid = QueryError::InvalidBoost { position: at };
    if end == 0 || &after[..end] == "." {
        return Err(invalid);
    }
    let factor = after[..end]
        .parse::<f32>()
        .ok()
        .and_then(Factor::new)
        .ok_or(invalid)?;
    Ok((factor, at + 1 + end))
}

fn lex_slop(text: &str, at: usize) -> Result<(u32, usize), QueryError> {
    let rest = &text[at..];
    let Some(after) = rest.strip_prefix('~') else {
        return Ok((0, at));
    };
    if after.starts_with('-') {
        return Err(QueryError::InvalidSlop { position: at });
    }
    let digits = after.bytes().take_while(u8::is_ascii_digit).count();
    let mut end = 1 + digits;
    if digits > 0 && after[digits..].starts_with('.') {
        let fraction = after[digits + 1..]
            .bytes()
            .take_while(u8::is_ascii_digit)
            .count();
        if fraction > 0 {
            end += 1 + fraction;
        }
    }
    if digits == 0 {
        return Ok((0, at + end));
    }
    match after[..digits].parse::<u64>() {
        Ok(slop) if slop <= u64::from(MAX_SLOP) => Ok((slop as u32, at + end)),
        _ => Err(QueryError::InvalidSlop { position: at }),
    }
}

/// Reads the quoted text whose opening quote is at `start`: returns its content with escapes
/// resolved, and the offset just past the closing quote.
fn lex_quoted(text: &str, start: usize) -> Result<(String, usize), QueryError> {
    let mut unescaper = Unescaper::default();
    let mut position = start + 1;
    loop {
        match text[position..].chars().next() {
            None => return Err(QueryError::UnterminatedQuote { position: start }),
            Some('"') => return Ok((unescaper.finish(start)?, position + 1)),
            Some('\\') => {
                position = unescaper
                    .escape(text, position)
                    .map_err(|error| match error {
                        QueryError::UnterminatedEscape { .. } => {
                            QueryError::UnterminatedQuote { position: start }
                        }
                        other => other,
                    })?
            }
            Some(character) => {
                unescaper.push(character);
                position += character.len_utf8();
            }
        }
    }
}

/// Builds the text of a word or a quote the way Lucene's `discardEscapeChar` does: a
/// backslash takes the next character literally, and `\uXXXX` is a UTF-16 code unit, so that
/// a surrogate pair written as two escapes forms one character.
#[derive(Default)]
struct Unescaper {
    units: Vec<u16>,
    first_unicode_escape: Option<usize>,
}

impl Unescaper {
    fn push(&mut self, character: char) {
        let mut buffer = [0; 2];
        self.units
            .extend_from_slice(character.encode_utf16(&mut buffer));
    }

    /// Reads the escape whose backslash is at `position`; returns the offset just past it.
    fn escape(&mut self, text: &str, position: usize) -> Result<usize, QueryError> {
        let after_backslash = position + 1;
        let Some(escaped) = text[after_backslash..].chars().next() else {
            return Err(QueryError::UnterminatedEscape { position });
        };
        if escaped != 'u' {
            self.push(escaped);
            return Ok(after_backslash + escaped.len_utf8());
        }
        let digits_start = after_backslash + 1;
        let digits = text
            .get(digits_start..digits_start + 4)
            .filter(|digits| digits.bytes().all(|byte| byte.is_ascii_hexdigit()))
            .ok_or(QueryError::InvalidUnicodeEscape { position })?;
        let unit = u16::from_str_radix(digits, 16)
            .map_err(|_| QueryError::InvalidUnicodeEscape { position })?;
        self.units.push(unit);
        self.first_unicode_escape.get_or_insert(position);
        Ok(digits_start + 4)
    }

    fn finish(self, start: usize) -> Result<String, QueryError> {
        String::from_utf16(&self.units).map_err(|_| QueryError::InvalidUnicodeEscape {
            position: self.first_unicode_escape.unwrap_or(start),
        })
    }
}

/// How a clause takes part in its group: Lucene's `BooleanClause.Occur`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Occur {
    Must,
    Should,
    MustNot,
}

/// The operator between the previous clause and this one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Conjunction {
    None,
    And,
    Or,
}

/// The prefix of a clause.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Modifier {
    None,
    /// `+`
    Required,
    /// `-`, `!`, `NOT`
    Prohibited,
}

struct Clause {
    occur: Occur,
    query: Query,
}

struct Parser<'p, 't> {
    tokens: &'p [Token<'t>],
    next: usize,
    analyzer: &'p Analyzer,
    default_operator: DefaultOperator,
    /// Whether to note what the analyzer does to each word, into `notes`.
    take_notes: bool,
    notes: Vec<QueryNote>,
    /// The fields clauses may name.
    mapping: Option<&'p Mapping>,
}

impl Parser<'_, '_> {
    fn peek(&self) -> Option<&TokenKind> {
        self.peek_at(0)
    }

    /// Notes what the analyzer made of `word`, when notes are wanted and it did more than
    /// lowercase it.
    fn note(&mut self, word: &str, terms: &[String]) {
        if !self.take_notes {
            return;
        }
        if let Some(note) = QueryNote::for_word(word, terms, self.analyzer) {
            if !self.notes.contains(&note) {
                self.notes.push(note);
            }
        }
    }

    fn peek_at(&self, ahead: usize) -> Option<&TokenKind> {
        self.tokens.get(self.next + ahead).map(|token| &token.kind)
    }

    /// Parses the clauses of one level, up to the end of the text (`open` is `None`) or up to
    /// the `)` that closes the `(` described by `open` (left unconsumed). `None` when every
    /// clause was dropped by the analyzer, as Lucene's `getBooleanQuery` returns `null`.
    fn parse_group(&mut self, open: Option<Group>) -> Result<Option<Query>, QueryError> {
        let mut clauses: Vec<Clause> = Vec::new();
        let mut first = true;
        loop {
            match self.peek() {
                None | Some(TokenKind::RightParen) => break,
                Some(_) => {}
            }
            if self.multi_word_ahead() {
                self.parse_multi_word(&mut clauses);
                first = false;
                continue;
            }
            let tokens = self.tokens;
            let mut operator: Option<&Token<'_>> = None;
            let conjunction = match self.peek() {
                Some(TokenKind::And) if !first => Conjunction::And,
                Some(TokenKind::Or) if !first => Conjunction::Or,
                _ => Conjunction::None,
            };
            if conjunction != Conjunction::None {
                operator = tokens.get(self.next);
                self.next += 1;
            }
            let modifier = match self.peek() {
                Some(TokenKind::Plus) => Modifier::Required,
                Some(TokenKind::Minus | TokenKind::Not) => Modifier::Prohibited,
                _ => Modifier::None,
            };
            if modifier != Modifier::None {
                operator = tokens.get(self.next);
                self.next += 1;
            }
            let query = self.parse_clause(operator, open)?;
            let query = self.boosted(query);
            self.add_clause(&mut clauses, conjunction, modifier, query);
            first = false;
        }
        match (open, self.tokens.get(self.next)) {
            (None, Some(close)) => {
                return Err(QueryError::UnbalancedParenthesis {
                    position: close.start,
                })
            }
            (Some(open), None) => {
                return Err(QueryError::UnbalancedParenthesis {
                    position: open.position,
                })
            }
            (Some(open), Some(_)) if first => {
                return Err(QueryError::EmptyParentheses {
                    position: open.position,
                })
            }
            _ => {}
        }
        Ok(into_query(clauses))
    }

    /// One clause after its conjunction and modifier: a word, a quote, or a group. `None`
    /// when the analyzer leaves nothing of it. `operator` is the last operator read before it,
    /// to blame when no clause follows.
    fn parse_clause(
        &mut self,
        operator: Option<&Token<'_>>,
        open: Option<Group>,
    ) -> Result<Option<Query>, QueryError> {
        let Some(token) = self.tokens.get(self.next) else {
            // Only an operator can be followed by the end here.
            return Err(operator.map_or(QueryError::Empty, lone_operator));
        };
        match &token.kind {
            TokenKind::Word(word) => {
                self.next += 1;
                Ok(self.analyze_word(word))
            }
            TokenKind::BareOperator(character) => {
                self.next += 1;
                Ok(self.analyze_word(&character.to_string()))
            }
            TokenKind::Quoted(text, slop) => {
                self.next += 1;
                let mut terms = Vec::new();
                self.analyzer
                    .for_each_token_with_position(text, |position, term| {
                        terms.push((position, term.to_string()));
                    });
                if terms.len() <= 1 {
                    let words: Vec<String> = terms.iter().map(|(_, t)| t.clone()).collect();
                    self.note(text, &words);
                }
                match terms.len() {
                    0 => Ok(None),
                    1 => Ok(terms.pop().map(|(_, term)| Query::Term(term))),
                    _ => {
                        let first = terms[0].0;
                        for (position, _) in &mut terms {
                            *position -= first;
                        }
                        Ok(Some(Query::Phrase(PhraseQuery { terms, slop: *slop })))
                    }
                }
            }
            TokenKind::LeftParen => {
                let depth = open.map_or(1, |open| open.depth + 1);
                if depth > MAX_NESTING {
                    return Err(QueryError::TooDeeplyNested {
                        position: token.start,
                        limit: MAX_NESTING,
                    });
                }
                self.next += 1;
                let group = Group {
                    position: token.start,
                    depth,
                };
                let query = self.parse_group(Some(group))?;
                // `parse_group` returns only at the closing parenthesis.
                self.next += 1;
                Ok(query)
            }
            TokenKind::All => {
                self.next += 1;
                Ok(Some(Query::All))
            }
            TokenKind::Field(name) => {
                self.next += 1;
                let name = name.clone();
                self.parse_field_clause(&name, token.start)
            }
            TokenKind::Boost(_) => Err(QueryError::InvalidBoost {
                position: token.start,
            }),
            // An operator where a clause should be: blame the operator before it, or, at the
            // start of a group, this one (`AND a`).
            _ => Err(lone_operator(operator.unwrap_or(token))),
        }
    }

    /// The clause after `field:` (at byte `position`): on a text field, words searched in it;
    /// on any other, a filter.
    fn parse_field_clause(
        &mut self,
        field: &str,
        position: usize,
    ) -> Result<Option<Query>, QueryError> {
        let mapping = self.mapping.expect("fields are lexed only with a mapping");
        let is_text = mapping
            .resolve(field)
            .is_some_and(|f| matches!(f.field_type.as_ref(), FieldType::Text(_)));
        if is_text && !mapping.joined_text() {
            return match self.peek() {
                Some(TokenKind::Word(_) | TokenKind::Quoted(..) | TokenKind::LeftParen) => {
                    let words = self.parse_clause(None, None)?;
                    Ok(words.map(|words| in_field(words, field)))
                }
                Some(TokenKind::Range(..)) => Err(QueryError::TextFieldNotExact {
                    field: field.to_owned(),
                }),
                _ => Err(QueryError::InvalidFieldValue {
                    field: field.to_owned(),
                    value: String::new(),
                    reason: "missing: write words, a quoted phrase or (words) after the colon"
                        .into(),
                }),
            };
        }
        let missing = || QueryError::InvalidFieldValue {
            field: field.to_owned(),
            value: String::new(),
            reason: "missing: write a value after the colon".into(),
        };
        let token = self.tokens.get(self.next).ok_or_else(missing)?;
        self.next += 1;
        let query = match (&token.kind, field) {
            (TokenKind::Word(name) | TokenKind::Quoted(name, 0), "_exists_") => {
                exists_query(mapping, name)?
            }
            (TokenKind::Word(value) | TokenKind::Quoted(value, 0), _) => {
                term_query(mapping, field, value)?
            }
            (TokenKind::Range(lower, upper), _) => range_query(mapping, field, lower, upper)?,
            (TokenKind::LeftParen, _) => {
                let mut values = Vec::new();
                let mut all = self.default_operator == DefaultOperator::And;
                loop {
                    let token = self
                        .tokens
                        .get(self.next)
                        .ok_or(QueryError::UnbalancedParenthesis { position })?;
                    self.next += 1;
                    match &token.kind {
                        TokenKind::RightParen => break,
                        TokenKind::Word(value) | TokenKind::Quoted(value, 0) => {
                            values.push(term_query(mapping, field, value)?);
                        }
                        TokenKind::Or => all = false,
                        TokenKind::And => all = true,
                        _ => {
                            return Err(QueryError::UnexpectedCharacter {
                                character: token.raw.chars().next().unwrap_or(' '),
                                position: token.start,
                            })
                        }
                    }
                }
                if values.is_empty() {
                    return Err(QueryError::EmptyParentheses { position });
                }
                let group = if all {
                    BoolQuery {
                        must: values,
                        ..BoolQuery::default()
                    }
                } else {
                    BoolQuery {
                        should: values,
                        ..BoolQuery::default()
                    }
                };
                Query::Bool(group).simplified()
            }
            _ => return Err(missing()),
        };
        Ok(Some(Query::Filter(Box::new(query))))
    }

    /// Lucene's `MultiTerm` lookahead: a word followed by a word that is not itself followed
    /// by `AND` or `OR`.
    fn multi_word_ahead(&self) -> bool {
        matches!(self.peek(), Some(TokenKind::Word(_)))
            && !matches!(self.peek_at(1), Some(TokenKind::Boost(_)))
            && self.word_continues_run(1)
    }

    /// Whether the token `ahead` of the next one is a word that joins a run of bare words (a
    /// boosted word stands alone).
    fn word_continues_run(&self, ahead: usize) -> bool {
        matches!(self.peek_at(ahead), Some(TokenKind::Word(_)))
            && !matches!(
                self.peek_at(ahead + 1),
                Some(TokenKind::And | TokenKind::Or | TokenKind::Boost(_))
            )
    }

    /// `query` with the boost that follows its clause (`word^2`), if one does.
    fn boosted(&mut self, query: Option<Query>) -> Option<Query> {
        let Some(TokenKind::Boost(factor)) = self.peek() else {
            return query;
        };
        let factor = *factor;
        self.next += 1;
        query.map(|query| Query::Boost(Box::new(query), factor))
    }

    /// A run of two or more bare words, which Lucene (with `splitOnWhitespace` false, its
    /// default) analyzes as one text and adds term by term, flat, with the default operator.
    fn parse_multi_word(&mut self, clauses: &mut Vec<Clause>) {
        let mut text = String::new();
        loop {
            if let Some(TokenKind::Word(word)) = self.peek() {
                if !text.is_empty() {
                    text.push(' ');
                }
                text.push_str(word);
                if self.take_notes {
                    // Whitespace separates terms, so each word of the run gives the terms it
                    // would give alone.
                    let terms = self.analyzer.tokens(word);
                    let word = word.clone();
                    self.note(&word, &terms);
                }
            }
            self.next += 1;
            if !self.word_continues_run(0) {
                break;
            }
        }
        for term in self.analyzer.tokens(&text) {
            self.add_clause(
                clauses,
                Conjunction::None,
                Modifier::None,
                Some(Query::Term(term)),
            );
        }
    }

    /// A bare word: one term, a group of several combined with the default operator, or
    /// nothing when the analyzer drops it (Lucene's `QueryBuilder.createFieldQuery`).
    fn analyze_word(&mut self, word: &str) -> Option<Query> {
        let mut terms = self.analyzer.tokens(word);
        self.note(word, &terms);
        match terms.len() {
            0 => None,
            1 => terms.pop().map(Query::Term),
            _ => {
                let terms = terms.into_iter().map(Query::Term).collect();
                Some(Query::Bool(match self.default_operator {
                    DefaultOperator::Or => BoolQuery {
                        should: terms,
                        ..BoolQuery::default()
                    },
                    DefaultOperator::And => BoolQuery {
                        must: terms,
                        ..BoolQuery::default()
                    },
                }))
            }
        }
    }

    /// Lucene's `QueryParserBase.addClause`: `AND` makes the previous clause required unless
    /// it is prohibited; with the `AND` default operator, `OR` makes it optional unless it is
    /// prohibited; then the new clause, if the analyzer left one, gets its kind from its
    /// modifier, its conjunction and the default operator.
    fn add_clause(
        &self,
        clauses: &mut Vec<Clause>,
        conjunction: Conjunction,
        modifier: Modifier,
        query: Option<Query>,
    ) {
        if let Some(previous) = clauses.last_mut() {
            if previous.occur != Occur::MustNot {
                match (conjunction, self.default_operator) {
                    (Conjunction::And, _) => previous.occur = Occur::Must,
                    (Conjunction::Or, DefaultOperator::And) => previous.occur = Occur::Should,
                    _ => {}
                }
            }
        }
        let Some(query) = query else {
            return;
        };
        let prohibited = modifier == Modifier::Prohibited;
        let required = match self.default_operator {
            DefaultOperator::Or => {
                modifier == Modifier::Required || (conjunction == Conjunction::And && !prohibited)
            }
            DefaultOperator::And => !prohibited && conjunction != Conjunction::Or,
        };
        let occur = if prohibited {
            Occur::MustNot
        } else if required {
            Occur::Must
        } else {
            Occur::Should
        };
        clauses.push(Clause { occur, query });
    }
}

/// An open parenthesis being parsed.
#[derive(Debug, Clone, Copy)]
struct Group {
    position: usize,
    depth: usize,
}

fn lone_operator(token: &Token<'_>) -> QueryError {
    QueryError::LoneOperator {
        operator: token.raw.to_owned(),
        position: token.start,
    }
}

/// The clauses of a level as a [`BoolQuery`], keeping their order within each kind; `None`
/// when there are none.
fn into_query(clauses: Vec<Clause>) -> Option<Query> {
    if clauses.is_empty() {
        return None;
    }
    let mut bool_query = BoolQuery::default();
    for Clause { occur, query } in clauses {
        match occur {
            Occur::Must => bool_query.must.push(query),
            Occur::Should => bool_query.should.push(query),
            Occur::MustNot => bool_query.must_not.push(query),
        }
    }
    Some(Query::Bool(bool_query))
}
