//! [`Mapping`]: the fields of an index's documents and their types, in Elasticsearch's JSON form.
//!
//! Objects are flattened to dotted names (`{"a": {"b": 1}}` is the field `a.b`), as Lucene and
//! Elasticsearch index them; the JSON form nests them again under `properties`. A text field may
//! carry one keyword sub-field (`title.keyword`), the form dynamic mapping gives strings.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use super::error::MappingError;
use super::field_type::{FieldType, KeywordOptions, TextOptions, DYNAMIC_IGNORE_ABOVE};

/// What happens to a field the mapping does not name (`"dynamic"`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Dynamic {
    /// Add it, with the type its value suggests.
    #[default]
    True,
    /// Keep it in `_source` without indexing it.
    False,
    /// Refuse the document.
    Strict,
}

impl Dynamic {
    fn to_json(self) -> Value {
        match self {
            Dynamic::True => json!(true),
            Dynamic::False => json!(false),
            Dynamic::Strict => json!("strict"),
        }
    }

    fn from_json(value: &Value) -> Result<Dynamic, MappingError> {
        match value {
            Value::Bool(true) => Ok(Dynamic::True),
            Value::Bool(false) => Ok(Dynamic::False),
            Value::String(s) if s == "true" => Ok(Dynamic::True),
            Value::String(s) if s == "false" => Ok(Dynamic::False),
            Value::String(s) if s == "strict" => Ok(Dynamic::Strict),
            other => Err(MappingError::Invalid(format!(
                "\"dynamic\" must be true, false or \"strict\", not {other}"
            ))),
        }
    }
}

/// A field of the mapping as a query names it: its canonical name and type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResolvedField<'m> {
    /// The dotted name (`title.keyword` for a sub-field).
    pub name: String,
    /// Its type.
    pub field_type: std::borrow::Cow<'m, FieldType>,
}

/// The fields of an index.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Mapping {
    /// For fields the mapping does not name.
    pub dynamic: Dynamic,
    /// Every leaf field by dotted name.
    fields: BTreeMap<String, FieldType>,
    /// Every object by dotted name (`a` for a field `a.b`).
    objects: BTreeMap<String, ()>,
    /// Whether the text fields are indexed joined, as one default field (see
    /// [`Mapping::joined_text`]).
    joined_text: bool,
}

/// The key of `_meta` that marks a mapping whose text fields are joined.
const JOINED_TEXT_META: &str = "apcache_joined_text";

impl Mapping {
    /// The mapping of documents with a `title` and a `body` (tab-separated and luceneutil input).
    pub fn title_body() -> Mapping {
        let mut mapping = Mapping {
            joined_text: true,
            ..Mapping::default()
        };
        for name in ["title", "body"] {
            mapping
                .fields
                .insert(name.into(), FieldType::Text(TextOptions::default()));
        }
        mapping
    }

    /// Whether the text fields are indexed as one stream of words, the default field, rather
    /// than each under its own name: the layout of tab-separated documents (a title and a body
    /// searched and scored as one text, as the benchmarks' peers index them). A query then
    /// names no text field. In the JSON form, `"_meta": {"apcache_joined_text": true}`.
    pub fn joined_text(&self) -> bool {
        self.joined_text
    }

    /// The same mapping with `dynamic` for fields it does not name.
    pub fn with_dynamic(mut self, dynamic: Dynamic) -> Mapping {
        self.dynamic = dynamic;
        self
    }

    /// Reads Elasticsearch's JSON form: `{"properties": {...}}`, optionally with `"dynamic"`, or
    /// the same under `"mappings"` (the body of `PUT /index`).
    pub fn from_json(json: &Value) -> Result<Mapping, MappingError> {
        let Value::Object(object) = json else {
            return Err(MappingError::Invalid("a mapping is a JSON object".into()));
        };
        if let (Some(Value::Object(inner)), 1) = (object.get("mappings"), object.len()) {
            return Mapping::from_json(&Value::Object(inner.clone()));
        }
        let mut mapping = Mapping::default();
        for (key, value) in object {
            match key.as_str() {
                "dynamic" => mapping.dynamic = Dynamic::from_json(value)?,
                "properties" => {}
                "_meta" => {
                    mapping.joined_text = match value.get(JOINED_TEXT_META) {
                        None => false,
                        Some(Value::Bool(joined)) => *joined,
                        Some(other) => {
                            return Err(MappingError::Invalid(format!(
                                "\"_meta.{JOINED_TEXT_META}\" must be true or false, not {other}"
                            )))
                        }
                    };
                }
                // Elasticsearch writes these in the mappings it returns; their defaults are
                // what apcache does.
                "_source" if *value == json!({"enabled": true}) => {}
                other => {
                    return Err(MappingError::UnsupportedParameter {
                        field: "<root>".into(),
                        parameter: other.to_owned(),
                        hint: String::new(),
                    })
                }
            }
        }
        if let Some(properties) = object.get("properties") {
            mapping.add_properties("", properties)?;
        }
        Ok(mapping)
    }

    fn add_properties(&mut self, prefix: &str, properties: &Value) -> Result<(), MappingError> {
        let Value::Object(properties) = properties else {
            return Err(MappingError::Invalid(format!(
                "\"properties\" of [{}] must be an object",
                if prefix.is_empty() { "<root>" } else { prefix }
            )));
        };
        for (name, spec) in properties {
            check_name(name)?;
            let path = if prefix.is_empty() {
                name.clone()
            } else {
                format!("{prefix}.{name}")
            };
            let Value::Object(spec) = spec else {
                return Err(MappingError::Invalid(format!(
                    "field [{path}]: a field's mapping is a JSON object"
                )));
            };
            let is_object = spec.contains_key("properties")
                || spec.get("type").and_then(Value::as_str) == Some("object");
            if is_object {
                if let Some(other) = spec
                    .keys()
                    .find(|k| !matches!(k.as_str(), "type" | "properties"))
                {
                    return Err(MappingError::UnsupportedParameter {
                        field: path,
                        parameter: other.clone(),
                        hint: String::new(),
                    });
                }
                self.add_object(&path)?;
                if let Some(inner) = spec.get("properties") {
                    self.add_properties(&path, inner)?;
                }
            } else {
                let field_type = FieldType::from_json(&path, spec)?;
                self.add_field(&path, field_type)?;
            }
        }
        Ok(())
    }

    /// Adds the object `path` (and its parents); refused where a leaf field has that name.
    pub(crate) fn add_object(&mut self, path: &str) -> Result<(), MappingError> {
        let mut end = 0;
        loop {
            end = path[end..].find('.').map_or(path.len(), |i| end + i);
            let parent = &path[..end];
            if let Some(existing) = self.fields.get(parent) {
                return Err(MappingError::Conflict {
                    field: parent.to_owned(),
                    existing: existing.name().into(),
                    other: "object".into(),
                });
            }
            self.objects.insert(parent.to_owned(), ());
            if end == path.len() {
                return Ok(());
            }
            end += 1;
        }
    }

    /// Adds the leaf field `path` of `field_type`, its parents as objects.
    pub(crate) fn add_field(
        &mut self,
        path: &str,
        field_type: FieldType,
    ) -> Result<(), MappingError> {
        if self.objects.contains_key(path) {
            return Err(MappingError::Conflict {
                field: path.to_owned(),
                existing: "object".into(),
                other: field_type.name().into(),
            });
        }
        if let Some(existing) = self.fields.get(path) {
            if *existing != field_type {
                return Err(MappingError::Conflict {
                    field: path.to_owned(),
                    existing: existing.name().into(),
                    other: field_type.name().into(),
                });
            }
            return Ok(());
        }
        if let Some((parent, _)) = path.rsplit_once('.') {
            self.add_object(parent)?;
        }
        self.fields.insert(path.to_owned(), field_type);
        Ok(())
    }

    /// Adds every field of `other` (a mapping inferred elsewhere) to this one.
    pub fn merge(&mut self, other: &Mapping) -> Result<(), MappingError> {
        self.joined_text |= other.joined_text;
        for object in other.objects.keys() {
            self.add_object(object)?;
        }
        for (name, field_type) in &other.fields {
            self.add_field(name, field_type.clone())?;
        }
        Ok(())
    }

    /// The mapping in Elasticsearch's JSON form, objects nested under `properties`.
    pub fn to_json(&self) -> Value {
        let mut root = Map::new();
        for object in self.objects.keys() {
            let slot = nested_slot(&mut root, object);
            slot.entry("properties").or_insert_with(|| json!({}));
        }
        for (name, field_type) in &self.fields {
            let slot = nested_slot(&mut root, name);
            if let Value::Object(spec) = field_type.to_json() {
                slot.extend(spec);
            }
        }
        let mut json = Map::new();
        if self.dynamic != Dynamic::True {
            json.insert("dynamic".into(), self.dynamic.to_json());
        }
        if self.joined_text {
            json.insert("_meta".into(), json!({ JOINED_TEXT_META: true }));
        }
        json.insert("properties".into(), Value::Object(root));
        Value::Object(json)
    }

    /// The leaf fields, by dotted name, sub-fields left out.
    pub fn fields(&self) -> impl Iterator<Item = (&str, &FieldType)> {
        self.fields.iter().map(|(name, t)| (name.as_str(), t))
    }

    /// The type of the field `name`.
    pub fn get(&self, name: &str) -> Option<&FieldType> {
        self.fields.get(name)
    }

    /// Whether `name` is an object of the mapping.
    pub fn is_object(&self, name: &str) -> bool {
        self.objects.contains_key(name)
    }

    /// The field a query names: a leaf field, or a text field's keyword sub-field
    /// (`title.keyword`).
    pub fn resolve(&self, name: &str) -> Option<ResolvedField<'_>> {
        if let Some(field_type) = self.fields.get(name) {
            return Some(ResolvedField {
                name: name.to_owned(),
                field_type: std::borrow::Cow::Borrowed(field_type),
            });
        }
        let (parent, sub) = name.rsplit_once('.')?;
        match self.fields.get(parent)? {
            FieldType::Text(TextOptions {
                keyword: Some((sub_name, options)),
                ..
            }) if sub_name == sub => Some(ResolvedField {
                name: name.to_owned(),
                field_type: std::borrow::Cow::Owned(FieldType::Keyword(*options)),
            }),
            _ => None,
        }
    }

    /// The names of the text fields.
    pub fn text_fields(&self) -> impl Iterator<Item = &str> {
        self.fields
            .iter()
            .filter(|(_, t)| matches!(t, FieldType::Text(_)))
            .map(|(name, _)| name.as_str())
    }

    /// The one analyzer the text fields name (`standard` or `english`), or `None` when none
    /// names one; refused when they disagree (every text field is analyzed by the index's one
    /// analyzer).
    pub fn analyzer(&self) -> Result<Option<&str>, MappingError> {
        let mut named: Option<(&str, &str)> = None;
        for (field, field_type) in &self.fields {
            if let FieldType::Text(TextOptions {
                analyzer: Some(analyzer),
                ..
            }) = field_type
            {
                match named {
                    Some((_, first)) if first != analyzer => {
                        return Err(MappingError::UnsupportedParameter {
                            field: field.clone(),
                            parameter: "analyzer".into(),
                            hint: format!(
                                ": every text field of an index is analyzed alike, and [{}] names {first}",
                                named.map_or("", |(f, _)| f)
                            ),
                        })
                    }
                    Some(_) => {}
                    None => named = Some((field, analyzer)),
                }
            }
        }
        Ok(named.map(|(_, analyzer)| analyzer))
    }

    /// The type dynamic mapping gives a field whose first value is `value`; `None` for a value
    /// that gives no type (`null`, an empty array).
    pub(crate) fn infer(value: &Value) -> Option<FieldType> {
        Some(match value {
            Value::Bool(_) => FieldType::Boolean,
            Value::Number(n) if n.is_i64() || n.is_u64() => {
                FieldType::Integer(super::field_type::IntegerWidth::Long)
            }
            Value::Number(_) => FieldType::Double { float: false },
            Value::String(text) if super::date::detect(text).is_some() => {
                FieldType::Date(Default::default())
            }
            Value::String(_) => FieldType::Text(TextOptions {
                analyzer: None,
                keyword: Some((
                    "keyword".into(),
                    KeywordOptions {
                        ignore_above: Some(DYNAMIC_IGNORE_ABOVE),
                    },
                )),
            }),
            Value::Array(values) => return values.iter().find_map(Mapping::infer),
            Value::Null | Value::Object(_) => return None,
        })
    }
}

/// The object that holds the mapping of `path` in a nested `properties` tree.
fn nested_slot<'a>(root: &'a mut Map<String, Value>, path: &str) -> &'a mut Map<String, Value> {
    let mut properties = root;
    let mut parts = path.split('.').peekable();
    loop {
        let part = parts.next().expect("a path has a part");
        let entry = properties
            .entry(part)
            .or_insert_with(|| Value::Object(Map::new()));
        let Value::Object(spec) = entry else {
            unreachable!("every entry is an object")
        };
        if parts.peek().is_none() {
            return spec;
        }
        let inner = spec
            .entry("properties")
            .or_insert_with(|| Value::Object(Map::new()));
        let Value::Object(inner) = inner else {
            unreachable!("properties is an object")
        };
        properties = inner;
    }
}

/// Refuses a field name that terms and columns cannot carry.
pub(crate) fn check_name(name: &str) -> Result<(), MappingError> {
    if name.is_empty() || name.starts_with('_') || name.chars().any(char::is_control) {
        return Err(MappingError::InvalidName(name.to_owned()));
    }
    Ok(())
}

impl serde::Serialize for Mapping {
    /// Elasticsearch's JSON form.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_json().serialize(serializer)
    }
}

impl<'de> serde::Deserialize<'de> for Mapping {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Mapping, D::Error> {
        let json = Value::deserialize(deserializer)?;
        Mapping::from_json(&json).map_err(serde::de::Error::custom)
    }
}
