//! [`FieldType`]: what one field of a mapping holds and how it is indexed, in Elasticsearch's
//! JSON form.
//!
//! Parameters apcache does not implement are refused by name rather than ignored: a mapping that
//! asks for a custom analyzer, `index: false` or `doc_values: false` and silently got the default
//! would answer queries other than the ones its author expects.

use serde_json::{json, Map, Value};

use super::date::DateFormat;
use super::error::MappingError;

/// Keyword values longer than this (in characters) are neither indexed nor kept as columns when
/// a mapping is inferred (Elasticsearch's dynamic `.keyword` sub-field).
pub const DYNAMIC_IGNORE_ABOVE: u32 = 256;

/// The longest keyword value indexed, in bytes: Lucene's limit for one term.
pub const MAX_KEYWORD_BYTES: usize = 32766;

/// A field's type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FieldType {
    /// Analyzed text, searched by its words.
    Text(TextOptions),
    /// Exact values, filtered, sorted and counted as they are.
    Keyword(KeywordOptions),
    /// A signed integer of the given width.
    Integer(IntegerWidth),
    /// A floating-point number (`double`, or `float`, which apcache keeps as a double).
    Double {
        /// Whether the mapping said `float`.
        float: bool,
    },
    /// A point in time, kept as milliseconds since the Unix epoch (UTC).
    Date(DateFormat),
    /// `true` or `false`.
    Boolean,
}

/// The integer types and their ranges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntegerWidth {
    /// `long`: 64 bits.
    Long,
    /// `integer`: 32 bits.
    Integer,
    /// `short`: 16 bits.
    Short,
    /// `byte`: 8 bits.
    Byte,
}

impl IntegerWidth {
    /// The type's name in a mapping.
    pub fn name(self) -> &'static str {
        match self {
            IntegerWidth::Long => "long",
            IntegerWidth::Integer => "integer",
            IntegerWidth::Short => "short",
            IntegerWidth::Byte => "byte",
        }
    }

    /// Whether `value` is in the type's range.
    pub fn holds(self, value: i64) -> bool {
        match self {
            IntegerWidth::Long => true,
            IntegerWidth::Integer => i32::try_from(value).is_ok(),
            IntegerWidth::Short => i16::try_from(value).is_ok(),
            IntegerWidth::Byte => i8::try_from(value).is_ok(),
        }
    }
}

/// How a text field is analyzed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TextOptions {
    /// The analyzer the mapping names (`standard` or `english`), if it names one; every text
    /// field of an index is analyzed alike, by the index's analyzer.
    pub analyzer: Option<String>,
    /// A `keyword` sub-field (`title.keyword`), with its `ignore_above`.
    pub keyword: Option<(String, KeywordOptions)>,
}

/// How a keyword field keeps its values.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KeywordOptions {
    /// Values longer than this many characters are kept in `_source` only.
    pub ignore_above: Option<u32>,
}

impl KeywordOptions {
    /// Whether `value` is indexed and kept as a column.
    pub fn keeps(&self, value: &str) -> bool {
        value.len() <= MAX_KEYWORD_BYTES
            && self
                .ignore_above
                .is_none_or(|limit| value.chars().count() <= limit as usize)
    }
}

impl FieldType {
    /// The type's name in a mapping.
    pub fn name(&self) -> &'static str {
        match self {
            FieldType::Text(_) => "text",
            FieldType::Keyword(_) => "keyword",
            FieldType::Integer(width) => width.name(),
            FieldType::Double { float: true } => "float",
            FieldType::Double { float: false } => "double",
            FieldType::Date(_) => "date",
            FieldType::Boolean => "boolean",
        }
    }

    /// Whether the field's values are numbers in columns (integers, doubles, dates, booleans).
    pub fn is_numeric(&self) -> bool {
        matches!(
            self,
            FieldType::Integer(_)
                | FieldType::Double { .. }
                | FieldType::Date(_)
                | FieldType::Boolean
        )
    }

    /// The type `field` is mapped with in Elasticsearch's JSON (`{"type": "long"}`); refuses any
    /// parameter apcache does not implement.
    pub fn from_json(field: &str, json: &Map<String, Value>) -> Result<FieldType, MappingError> {
        let kind = match json.get("type") {
            Some(Value::String(kind)) => kind.as_str(),
            Some(_) => {
                return Err(MappingError::Invalid(format!(
                    "field [{field}]: \"type\" must be a string"
                )))
            }
            None => {
                return Err(MappingError::Invalid(format!(
                    "field [{field}] has neither a \"type\" nor \"properties\""
                )))
            }
        };
        let unsupported = |parameter: &str, hint: &str| MappingError::UnsupportedParameter {
            field: field.to_owned(),
            parameter: parameter.to_owned(),
            hint: hint.to_owned(),
        };
        // Parameters every type takes; each value is checked where it matters.
        let allowed: &[&str] = match kind {
            "text" => &[
                "type",
                "analyzer",
                "search_analyzer",
                "fields",
                "index_options",
                "norms",
            ],
            "keyword" => &["type", "ignore_above"],
            "date" => &["type", "format"],
            _ => &["type"],
        };
        for (parameter, value) in json {
            if allowed.contains(&parameter.as_str()) {
                continue;
            }
            // Parameters whose default is what apcache does anyway.
            let default_kept = match parameter.as_str() {
                "index" | "doc_values" | "store" => {
                    *value == Value::Bool(true)
                        || (parameter == "store" && *value == Value::Bool(false))
                }
                _ => false,
            };
            if !default_kept {
                return Err(unsupported(parameter, ""));
            }
        }
        Ok(match kind {
            "text" => {
                let analyzer = match (json.get("analyzer"), json.get("search_analyzer")) {
                    (Some(a), Some(s)) if a != s => {
                        return Err(unsupported(
                            "search_analyzer",
                            ": a field is searched with the analyzer it is indexed with",
                        ))
                    }
                    (None, Some(_)) => {
                        return Err(unsupported(
                            "search_analyzer",
                            ": a field is searched with the analyzer it is indexed with",
                        ))
                    }
                    (Some(Value::String(a)), _) if matches!(a.as_str(), "standard" | "english") => {
                        Some(a.clone())
                    }
                    (Some(other), _) => {
                        return Err(unsupported(
                            "analyzer",
                            &format!(" {other}: apcache has the analyzers standard and english"),
                        ))
                    }
                    (None, None) => None,
                };
                match json.get("index_options") {
                    None => {}
                    Some(Value::String(o)) if o == "positions" => {}
                    Some(other) => {
                        return Err(unsupported(
                            "index_options",
                            &format!(
                                " {other}: text fields keep positions (or none with apcache index --no-positions)"
                            ),
                        ))
                    }
                }
                match json.get("norms") {
                    None | Some(Value::Bool(true)) => {}
                    Some(_) => {
                        return Err(unsupported(
                            "norms",
                            ": text fields keep norms (BM25 needs document lengths)",
                        ))
                    }
                }
                let keyword = match json.get("fields") {
                    None => None,
                    Some(Value::Object(fields)) => {
                        let mut sub = fields.iter();
                        match (sub.next(), sub.next()) {
                            (None, _) => None,
                            (Some((name, Value::Object(spec))), None) => {
                                let path = format!("{field}.{name}");
                                match FieldType::from_json(&path, spec)? {
                                    FieldType::Keyword(options) => Some((name.clone(), options)),
                                    other => {
                                        return Err(unsupported(
                                            "fields",
                                            &format!(
                                                ": a text field's sub-field must be a keyword, [{path}] is {}",
                                                other.name()
                                            ),
                                        ))
                                    }
                                }
                            }
                            _ => {
                                return Err(unsupported(
                                    "fields",
                                    ": a text field may have one keyword sub-field",
                                ))
                            }
                        }
                    }
                    Some(_) => {
                        return Err(MappingError::Invalid(format!(
                            "field [{field}]: \"fields\" must be an object"
                        )))
                    }
                };
                FieldType::Text(TextOptions { analyzer, keyword })
            }
            "keyword" => FieldType::Keyword(KeywordOptions {
                ignore_above: match json.get("ignore_above") {
                    None => None,
                    Some(value) => Some(
                        value
                            .as_u64()
                            .and_then(|v| u32::try_from(v).ok())
                            .ok_or_else(|| {
                                MappingError::Invalid(format!(
                                    "field [{field}]: ignore_above must be a non-negative integer"
                                ))
                            })?,
                    ),
                },
            }),
            "long" => FieldType::Integer(IntegerWidth::Long),
            "integer" => FieldType::Integer(IntegerWidth::Integer),
            "short" => FieldType::Integer(IntegerWidth::Short),
            "byte" => FieldType::Integer(IntegerWidth::Byte),
            "double" => FieldType::Double { float: false },
            "float" => FieldType::Double { float: true },
            "boolean" => FieldType::Boolean,
            "date" => FieldType::Date(match json.get("format") {
                None => DateFormat::default(),
                Some(Value::String(format)) => DateFormat::parse(format)
                    .map_err(|reason| unsupported("format", &format!(" {format:?}: {reason}")))?,
                Some(_) => {
                    return Err(MappingError::Invalid(format!(
                        "field [{field}]: \"format\" must be a string"
                    )))
                }
            }),
            other => {
                return Err(MappingError::UnsupportedType {
                    field: field.to_owned(),
                    kind: other.to_owned(),
                })
            }
        })
    }

    /// The type in Elasticsearch's JSON form.
    pub fn to_json(&self) -> Value {
        let mut json = Map::new();
        json.insert("type".into(), json!(self.name()));
        match self {
            FieldType::Text(options) => {
                if let Some(analyzer) = &options.analyzer {
                    json.insert("analyzer".into(), json!(analyzer));
                }
                if let Some((name, keyword)) = &options.keyword {
                    let sub = FieldType::Keyword(*keyword).to_json();
                    json.insert("fields".into(), json!({ name.as_str(): sub }));
                }
            }
            FieldType::Keyword(options) => {
                if let Some(limit) = options.ignore_above {
                    json.insert("ignore_above".into(), json!(limit));
                }
            }
            FieldType::Date(format) if *format != DateFormat::default() => {
                json.insert("format".into(), json!(format.to_string()));
            }
            _ => {}
        }
        Value::Object(json)
    }
}
