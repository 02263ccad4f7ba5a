//! [`Mapper`]: a JSON document mapped to the values an index keeps of it, the mapping growing
//! with fields it has not seen under `"dynamic": true`.
//!
//! Mapping is all or nothing per document: a document that does not fit (a word where a number
//! is mapped, an object where a keyword is) is refused whole, with the field and the reason,
//! and the fields it would have added are not added.

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::error::DocumentError;
use super::field_type::FieldType;
use super::json_values::{double, id_of, integer, scalar_text};
use super::mapping::{check_name, Dynamic, Mapping};

/// The longest `_id`, in bytes (Elasticsearch's limit).
pub const MAX_ID_BYTES: usize = 512;

/// What an index keeps of one document.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MappedDocument {
    /// Its `_id`, when it gives one.
    pub id: Option<String>,
    /// The values of its text fields, in document order.
    pub texts: Vec<String>,
    /// For each of `texts`, the field it is indexed under: its own name, or `""` (the default
    /// field) under a mapping whose text fields are joined ([`Mapping::joined_text`]).
    pub text_fields: Vec<String>,
    /// For each of `texts`, whether it follows another value of the same array (a gap of
    /// [`super::TEXT_GAP`] positions separates them, Elasticsearch's `position_increment_gap`).
    pub text_gaps: Vec<bool>,
    /// Keyword values, by field (text fields' keyword sub-fields as `name.keyword`).
    pub keywords: Vec<(String, String)>,
    /// Numeric values as the columns keep them (integers, dates in milliseconds, booleans as 0
    /// or 1, doubles in sortable form), by field.
    pub numbers: Vec<(String, i64)>,
    /// The fields that have a value, each once.
    pub present: Vec<String>,
}

/// Maps documents under a mapping, checking `_id`s for uniqueness.
#[derive(Clone, Debug)]
pub struct Mapper {
    mapping: Mapping,
    /// The field whose value is also the `_id` when the document has no `_id`.
    id_field: Option<String>,
    /// Every `_id` seen so far.
    ids: HashSet<Box<str>>,
    /// Incremented whenever the mapping grows.
    version: u64,
}

impl Mapper {
    /// A mapper starting from `mapping`, taking ids from `_id` or else `id_field`.
    pub fn new(mapping: Mapping, id_field: Option<String>) -> Mapper {
        Mapper {
            mapping,
            id_field,
            ids: HashSet::new(),
            version: 0,
        }
    }

    /// The field whose value is the `_id` of a document without `_id`.
    pub fn id_field(&self) -> Option<&str> {
        self.id_field.as_deref()
    }

    /// The mapping, with every field added so far.
    pub fn mapping(&self) -> &Mapping {
        &self.mapping
    }

    /// Incremented each time the mapping grows: whether it changed since a given call.
    pub fn version(&self) -> u64 {
        self.version
    }

    /// Adds the fields of `other` (tab-separated input's `title` and `body`).
    pub fn extend(&mut self, other: &Mapping) -> Result<(), super::MappingError> {
        let before = self.mapping.clone();
        self.mapping.merge(other)?;
        if self.mapping != before {
            self.version += 1;
        }
        Ok(())
    }

    /// Records `id` as taken; refused when another document has it.
    pub fn claim_id(&mut self, id: &str) -> Result<(), DocumentError> {
        check_id(id)?;
        if !self.ids.insert(id.into()) {
            return Err(DocumentError::DuplicateId(id.to_owned()));
        }
        Ok(())
    }

    /// Maps `document`.
    pub fn map(&mut self, document: &Value) -> Result<MappedDocument, DocumentError> {
        let Value::Object(object) = document else {
            return Err(DocumentError::NotAnObject);
        };
        let mut out = MappedDocument::default();
        let mut added = Mapping::default();
        for (key, value) in object {
            if key == "_id" {
                out.id = Some(id_of(value)?);
                continue;
            }
            if key.starts_with('_') {
                return Err(DocumentError::MetadataField(key.clone()));
            }
            self.walk(key.clone(), value, &mut added, &mut out)?;
        }
        if out.id.is_none() {
            if let Some(field) = &self.id_field {
                if let Some(value) = object.get(field) {
                    out.id = Some(id_of(value)?);
                }
            }
        }
        if let Some(id) = &out.id {
            self.claim_id(id)?;
        }
        if added != Mapping::default() {
            self.mapping
                .merge(&added)
                .map_err(|e| DocumentError::Field {
                    field: "<mapping>".into(),
                    reason: e.to_string(),
                })?;
            self.version += 1;
        }
        Ok(out)
    }

    /// Maps the value at `path` (arrays element by element, objects field by field).
    fn walk(
        &self,
        path: String,
        value: &Value,
        added: &mut Mapping,
        out: &mut MappedDocument,
    ) -> Result<(), DocumentError> {
        match value {
            Value::Null => Ok(()),
            Value::Array(values) => {
                let first_text = out.texts.len();
                for value in values {
                    self.walk(path.clone(), value, added, out)?;
                }
                // The array's text values after its first are set apart.
                for gap in out.text_gaps.iter_mut().skip(first_text + 1) {
                    *gap = true;
                }
                Ok(())
            }
            Value::Object(object) => self.walk_object(&path, object, added, out),
            leaf => self.leaf(&path, leaf, added, out),
        }
    }

    fn walk_object(
        &self,
        path: &str,
        object: &Map<String, Value>,
        added: &mut Mapping,
        out: &mut MappedDocument,
    ) -> Result<(), DocumentError> {
        if let Some(field_type) = self.mapping.get(path).or_else(|| added.get(path)) {
            return Err(DocumentError::Field {
                field: path.to_owned(),
                reason: format!("an object where a {} is mapped", field_type.name()),
            });
        }
        let known = self.mapping.is_object(path) || added.is_object(path);
        if !known {
            match self.mapping.dynamic {
                Dynamic::Strict => return Err(DocumentError::StrictUnknown(path.to_owned())),
                Dynamic::False => return Ok(()),
                Dynamic::True => {
                    check_field_name(path)?;
                    added.add_object(path).map_err(|e| DocumentError::Field {
                        field: path.to_owned(),
                        reason: e.to_string(),
                    })?;
                }
            }
        }
        for (key, value) in object {
            self.walk(format!("{path}.{key}"), value, added, out)?;
        }
        Ok(())
    }

    fn leaf(
        &self,
        path: &str,
        value: &Value,
        added: &mut Mapping,
        out: &mut MappedDocument,
    ) -> Result<(), DocumentError> {
        if self.mapping.is_object(path) || added.is_object(path) {
            return Err(DocumentError::Field {
                field: path.to_owned(),
                reason: format!("{value} where an object is mapped"),
            });
        }
        let field_type = match self.mapping.get(path).or_else(|| added.get(path)) {
            Some(field_type) => field_type.clone(),
            None => match self.mapping.dynamic {
                Dynamic::Strict => return Err(DocumentError::StrictUnknown(path.to_owned())),
                Dynamic::False => return Ok(()),
                Dynamic::True => {
                    check_field_name(path)?;
                    let Some(field_type) = Mapping::infer(value) else {
                        return Ok(());
                    };
                    added.add_field(path, field_type.clone()).map_err(|e| {
                        DocumentError::Field {
                            field: path.to_owned(),
                            reason: e.to_string(),
                        }
                    })?;
                    field_type
                }
            },
        };
        let bad = |reason: String| DocumentError::Field {
            field: path.to_owned(),
            reason,
        };
        match &field_type {
            FieldType::Text(options) => {
                let text = scalar_text(value).ok_or_else(|| bad(format!("{value} is not text")))?;
                if let Some((sub, keyword)) = &options.keyword {
                    if keyword.keeps(&text) {
                        out.keywords.push((format!("{path}.{sub}"), text.clone()));
                        mark_present(out, &format!("{path}.{sub}"));
                    }
                }
                out.texts.push(text);
                out.text_fields.push(if self.mapping.joined_text() {
                    String::new()
                } else {
                    path.to_owned()
                });
                out.text_gaps.push(false);
            }
            FieldType::Keyword(options) => {
                let text =
                    scalar_text(value).ok_or_else(|| bad(format!("{value} is not a keyword")))?;
                if !options.keeps(&text) {
                    return Ok(());
                }
                out.keywords.push((path.to_owned(), text));
            }
            FieldType::Integer(width) => {
                let number = integer(value, *width).map_err(bad)?;
                out.numbers.push((path.to_owned(), number));
            }
            FieldType::Double { .. } => {
                let number =
                    double(value).ok_or_else(|| bad(format!("{value} is not a number")))?;
                out.numbers
                    .push((path.to_owned(), crate::columns::double_to_sortable(number)));
            }
            FieldType::Date(format) => {
                let millis = format.read(value).map_err(bad)?;
                out.numbers.push((path.to_owned(), millis));
            }
            FieldType::Boolean => {
                let truth = match value {
                    Value::Bool(b) => *b,
                    Value::String(s) if s == "true" => true,
                    Value::String(s) if s == "false" || s.is_empty() => false,
                    other => return Err(bad(format!("{other} is not a boolean"))),
                };
                out.numbers.push((path.to_owned(), i64::from(truth)));
            }
        }
        mark_present(out, path);
        Ok(())
    }
}

fn mark_present(out: &mut MappedDocument, path: &str) {
    if !out.present.iter().any(|p| p == path) {
        out.present.push(path.to_owned());
    }
}

fn check_field_name(path: &str) -> Result<(), DocumentError> {
    for part in path.split('.') {
        check_name(part).map_err(|e| DocumentError::Field {
            field: path.to_owned(),
            reason: e.to_string(),
        })?;
    }
    Ok(())
}

/// Refuses an id no index can hold: empty, longer than [`MAX_ID_BYTES`], or with whitespace
/// or control characters (ids are single words in run files and tab-separated output).
pub fn check_id(id: &str) -> Result<(), DocumentError> {
    if id.is_empty() {
        return Err(DocumentError::Id("an id cannot be empty".into()));
    }
    if id.len() > MAX_ID_BYTES {
        return Err(DocumentError::Id(format!(
            "an id is at most {MAX_ID_BYTES} bytes, this one {}",
            id.len()
        )));
    }
    if id.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(DocumentError::Id(format!(
            "{id:?} has whitespace in it; ids are single words"
        )));
    }
    Ok(())
}
