//! [`Document`]: one input line, parsed, as the indexer receives it.

/// A document read from the input.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Document {
    /// The id the input gave the document; only JSON lines carry one (a string, or a number
    /// kept in its JSON spelling). The index numbers documents itself, in reading order.
    pub id: Option<String>,
    /// The title; empty when the input has none.
    pub title: String,
    /// The text to index.
    pub body: String,
}
