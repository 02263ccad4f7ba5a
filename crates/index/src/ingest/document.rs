//! [`Document`]: one input line, parsed, as the indexer receives it.

use crate::schema::MappedDocument;

/// A document read from the input.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Document {
    /// The id the input gave the document (a JSON document's `_id`, or its id field). Without
    /// one a document is known by its number, in reading order.
    pub id: Option<String>,
    /// The title of a tab-separated line; empty for a JSON document.
    pub title: String,
    /// The text of a tab-separated line; empty for a JSON document.
    pub body: String,
    /// A JSON document: the line as given and its values under the index's mapping.
    pub json: Option<Box<JsonDocument>>,
}

/// A JSON document as the index keeps it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct JsonDocument {
    /// The document exactly as given (`_source`).
    pub source: String,
    /// Its values under the mapping.
    pub fields: MappedDocument,
}

impl Document {
    /// A tab-separated document.
    pub fn title_body(title: impl Into<String>, body: impl Into<String>) -> Document {
        Document {
            id: None,
            title: title.into(),
            body: body.into(),
            json: None,
        }
    }

    /// The bytes the document came from (its line, without the terminator, near enough).
    pub fn input_bytes(&self) -> usize {
        match &self.json {
            Some(json) => json.source.len(),
            None => self.title.len() + self.body.len() + 1,
        }
    }
}
