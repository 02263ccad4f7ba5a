//! JSON lines as tantivy documents, mapped as apcache's `Mapper` maps them.

use std::borrow::Cow;
use std::collections::HashMap;

use apcache_index::analyzer::Analyzer;
use apcache_index::schema::json_values::{double, id_of, integer, scalar_text};
use apcache_index::schema::{Dynamic, Mapping, TEXT_GAP};
use serde_json::Value;
use tantivy::schema::Field;
use tantivy::tokenizer::{PreTokenizedString, Token};
use tantivy::{DateTime, TantivyDocument};

use super::fields::{Kind, MappedField};

/// Maps JSON documents to tantivy documents as apcache's `Mapper` maps them.
pub(super) struct DocumentMapper<'a> {
    pub(super) mapping: &'a Mapping,
    pub(super) fields: &'a HashMap<String, MappedField>,
    /// [`PRESENT_FIELD`].
    pub(super) present: Field,
    pub(super) analyzer: Analyzer,
}

/// A document being mapped: its text values (kept apart, to place their positions), and
/// everything else already in the tantivy document.
#[derive(Default)]
struct Pending<'v> {
    /// Text values: field name, text, whether it follows another value of the same array.
    texts: Vec<(&'v str, Cow<'v, str>, bool)>,
    document: TantivyDocument,
}

impl<'a> DocumentMapper<'a> {
    /// The tantivy document of `document`, and its id; `Err` (why) where apcache refuses it.
    pub(super) fn map(
        &self,
        document: &Value,
    ) -> Result<(TantivyDocument, Option<String>), String> {
        let Value::Object(object) = document else {
            return Err("not an object".into());
        };
        let mut pending = Pending::default();
        let mut id = None;
        for (key, value) in object {
            if key == "_id" {
                id = Some(id_of(value).map_err(|e| e.to_string())?);
                continue;
            }
            if key.starts_with('_') {
                return Err(format!("metadata field [{key}]"));
            }
            self.walk(key, value, &mut pending)?;
        }
        let Pending {
            texts,
            mut document,
        } = pending;
        self.add_texts(&texts, &mut document);
        Ok((document, id))
    }

    /// Maps the value at `path` (arrays element by element, objects field by field).
    fn walk<'v>(
        &self,
        path: &str,
        value: &'v Value,
        pending: &mut Pending<'v>,
    ) -> Result<(), String>
    where
        'a: 'v,
    {
        match value {
            Value::Null => Ok(()),
            Value::Array(values) => {
                let first_text = pending.texts.len();
                for value in values {
                    self.walk(path, value, pending)?;
                }
                for text in pending.texts.iter_mut().skip(first_text + 1) {
                    text.2 = true;
                }
                Ok(())
            }
            Value::Object(object) => {
                if let Some(field_type) = self.mapping.get(path) {
                    return Err(format!(
                        "[{path}]: an object where a {} is mapped",
                        field_type.name()
                    ));
                }
                if !self.mapping.is_object(path) {
                    return match self.mapping.dynamic {
                        Dynamic::Strict => Err(format!("[{path}] is not mapped")),
                        Dynamic::False | Dynamic::True => Ok(()),
                    };
                }
                for (key, value) in object {
                    self.walk(&format!("{path}.{key}"), value, pending)?;
                }
                Ok(())
            }
            leaf => self.leaf(path, leaf, pending),
        }
    }

    fn leaf<'v>(
        &self,
        path: &str,
        value: &'v Value,
        pending: &mut Pending<'v>,
    ) -> Result<(), String>
    where
        'a: 'v,
    {
        if self.mapping.is_object(path) {
            return Err(format!("[{path}]: {value} where an object is mapped"));
        }
        // A leaf field of the mapping (a sub-field such as `title.keyword` is not one: apcache
        // does not take `{"title.keyword": ..}` for it).
        let found = match self.mapping.get(path) {
            Some(_) => self.fields.get_key_value(path),
            None => None,
        };
        let Some((name, mapped)) = found else {
            return match self.mapping.dynamic {
                Dynamic::Strict => Err(format!("[{path}] is not mapped")),
                Dynamic::False | Dynamic::True => Ok(()),
            };
        };
        let bad = |what: &str| format!("[{path}]: {value} is not {what}");
        let document = &mut pending.document;
        match &mapped.kind {
            Kind::Text => {
                let text = scalar_text(value).ok_or_else(|| bad("text"))?;
                if let Some((sub, options)) = mapped.sub {
                    if options.keeps(&text) {
                        document.add_text(sub, &text);
                    }
                }
                pending.texts.push((name.as_str(), Cow::Owned(text), false));
            }
            Kind::Keyword(options) => {
                let text = scalar_text(value).ok_or_else(|| bad("a keyword"))?;
                if options.keeps(&text) {
                    document.add_text(mapped.field, &text);
                }
            }
            Kind::Integer(width) => {
                let number = integer(value, *width).map_err(|e| format!("[{path}]: {e}"))?;
                document.add_i64(mapped.field, number);
            }
            Kind::Double => {
                let number = double(value).ok_or_else(|| bad("a number"))?;
                document.add_f64(mapped.field, number);
            }
            Kind::Date(format) => {
                let millis = format.read(value).map_err(|e| format!("[{path}]: {e}"))?;
                document.add_date(mapped.field, DateTime::from_timestamp_millis(millis));
            }
            Kind::Boolean => {
                let truth = match value {
                    Value::Bool(b) => *b,
                    Value::String(s) if s == "true" => true,
                    Value::String(s) if s == "false" || s.is_empty() => false,
                    _ => return Err(bad("a boolean")),
                };
                document.add_bool(mapped.field, truth);
            }
        }
        Ok(())
    }

    /// Adds the text values: a field's only value as text for [`ApcacheTokenizer`]; several
    /// values of one field as one pre-tokenized stream with apcache's positions (each value
    /// after the words of the previous ones, [`TEXT_GAP`] further where it follows another
    /// value of its array). Marks each text field with a value in [`PRESENT_FIELD`].
    fn add_texts(&self, texts: &[(&str, Cow<'_, str>, bool)], document: &mut TantivyDocument) {
        let mut done: Vec<&str> = Vec::new();
        for (i, (name, text, _)) in texts.iter().enumerate() {
            if done.contains(name) {
                continue;
            }
            done.push(name);
            let field = self.fields[*name].field;
            document.add_text(self.present, name);
            let values: Vec<&(&str, Cow<'_, str>, bool)> =
                texts[i..].iter().filter(|t| t.0 == *name).collect();
            if values.len() == 1 {
                document.add_text(field, text);
                continue;
            }
            let mut tokens = Vec::new();
            let mut offset = 0u32;
            let mut joined = String::new();
            for (_, text, gap) in values {
                if *gap {
                    offset = offset.saturating_add(TEXT_GAP);
                }
                let start = offset;
                let words = self
                    .analyzer
                    .for_each_token_with_position(text, |at, term| {
                        tokens.push(Token {
                            offset_from: 0,
                            offset_to: 0,
                            position: start.saturating_add(at) as usize,
                            text: term.to_owned(),
                            position_length: 1,
                        });
                    });
                offset = offset.saturating_add(words);
                joined.push_str(text);
                joined.push(' ');
            }
            document.add_pre_tokenized_text(
                field,
                PreTokenizedString {
                    text: joined,
                    tokens,
                },
            );
        }
    }
}
