//! Documents apcache's [`Mapper`](apcache_index::schema::Mapper) mapped, as tantivy documents:
//! the same values under the same fields, so that both engines index exactly what the mapping
//! makes of each line.

use std::collections::HashMap;

use apcache_index::analyzer::Analyzer;
use apcache_index::columns::sortable_to_double;
use apcache_index::schema::{MappedDocument, TEXT_GAP};
use tantivy::schema::Field;
use tantivy::tokenizer::{PreTokenizedString, Token};
use tantivy::{DateTime, TantivyDocument};

use super::fields::{Kind, MappedField};

/// Turns apcache's mapped documents into tantivy documents.
pub(super) struct DocumentMapper<'a> {
    pub(super) fields: &'a HashMap<String, MappedField>,
    /// [`PRESENT_FIELD`](super::PRESENT_FIELD).
    pub(super) present: Field,
    pub(super) analyzer: Analyzer,
}

impl DocumentMapper<'_> {
    /// The tantivy document of `mapped` (fields the tantivy schema lacks, which a dynamic
    /// mapping may add, are left out).
    pub(super) fn document(&self, mapped: &MappedDocument) -> TantivyDocument {
        let mut document = TantivyDocument::default();
        for (name, value) in &mapped.keywords {
            if let Some(field) = self.fields.get(name) {
                document.add_text(field.field, value);
            }
        }
        for (name, value) in &mapped.numbers {
            let Some(field) = self.fields.get(name) else {
                continue;
            };
            match field.kind {
                Kind::Integer => document.add_i64(field.field, *value),
                Kind::Double => document.add_f64(field.field, sortable_to_double(*value)),
                Kind::Date => {
                    document.add_date(field.field, DateTime::from_timestamp_millis(*value))
                }
                Kind::Boolean => document.add_bool(field.field, *value != 0),
                Kind::Text | Kind::Keyword => {}
            }
        }
        self.add_texts(mapped, &mut document);
        document
    }

    /// Adds the text values: a field's only value as text for
    /// [`ApcacheTokenizer`](crate::peers::tantivy_indexer::ApcacheTokenizer); several values of
    /// one field as one pre-tokenized stream with apcache's positions (each value after the
    /// words of the previous ones, [`TEXT_GAP`] further where it follows another value of its
    /// array). Marks each text field with a value in [`PRESENT_FIELD`](super::PRESENT_FIELD).
    fn add_texts(&self, mapped: &MappedDocument, document: &mut TantivyDocument) {
        let texts: Vec<(&str, &str, bool)> = mapped
            .text_fields
            .iter()
            .zip(&mapped.texts)
            .zip(&mapped.text_gaps)
            .map(|((name, text), gap)| (name.as_str(), text.as_str(), *gap))
            .collect();
        let mut done: Vec<&str> = Vec::new();
        for (i, &(name, text, _)) in texts.iter().enumerate() {
            if done.contains(&name) {
                continue;
            }
            done.push(name);
            let Some(field) = self.fields.get(name) else {
                continue;
            };
            document.add_text(self.present, name);
            let values: Vec<&(&str, &str, bool)> =
                texts[i..].iter().filter(|t| t.0 == name).collect();
            if values.len() == 1 {
                document.add_text(field.field, text);
                continue;
            }
            let mut tokens = Vec::new();
            let mut offset = 0u32;
            let mut joined = String::new();
            for &&(_, text, gap) in &values {
                if gap {
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
                field.field,
                PreTokenizedString {
                    text: joined,
                    tokens,
                },
            );
        }
    }
}
