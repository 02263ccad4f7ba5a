//! The tantivy schema of a mapping: a field per mapped field (text fields' keyword sub-fields
//! included), and the kind each keeps its values as.

use std::collections::{HashMap, HashSet};

use apcache_index::schema::{FieldType, Mapping};
use tantivy::schema::{
    DateOptions, DateTimePrecision, Field, IndexRecordOption, NumericOptions, Schema,
    TextFieldIndexing, TextOptions,
};
use tantivy::Index;

use super::PRESENT_FIELD;
use crate::peer_engines::PeerError;
use crate::peers::tantivy_indexer::APCACHE_TOKENIZER_NAME;

/// How a field of the mapping is kept.
#[derive(Debug, Clone)]
pub(super) enum Kind {
    Text,
    Keyword,
    Integer,
    Double,
    Date,
    Boolean,
}

/// A field of the mapping in the tantivy schema.
#[derive(Debug, Clone)]
pub(super) struct MappedField {
    /// The field.
    pub(super) field: Field,
    /// Its tantivy name (the mapping's, dots replaced).
    pub(super) name: String,
    pub(super) kind: Kind,
}

/// The fields of `mapping` (text fields' keyword sub-fields included), by the mapping's name:
/// tantivy name and kind.
pub(super) fn mapped_fields(mapping: &Mapping) -> Result<Vec<(String, String, Kind)>, PeerError> {
    match mapping.analyzer() {
        Ok(None) | Ok(Some("standard")) => {}
        _ => {
            return Err(PeerError::Unsupported(
                "the tantivy document peer analyzes text with apcache's default analyzer only"
                    .into(),
            ))
        }
    }
    if mapping.joined_text() {
        return Err(PeerError::Unsupported(
            "the tantivy document peer indexes each text field under its own name".into(),
        ));
    }
    let mut out = Vec::new();
    for (name, field_type) in mapping.fields() {
        let kind = match field_type {
            FieldType::Text(options) => {
                if let Some((sub, _)) = &options.keyword {
                    out.push((format!("{name}.{sub}"), Kind::Keyword));
                }
                Kind::Text
            }
            FieldType::Keyword(_) => Kind::Keyword,
            FieldType::Integer(_) => Kind::Integer,
            FieldType::Double { .. } => Kind::Double,
            FieldType::Date(_) => Kind::Date,
            FieldType::Boolean => Kind::Boolean,
        };
        out.push((name.to_owned(), kind));
    }
    let mut seen = HashSet::new();
    let mut fields = Vec::with_capacity(out.len());
    for (name, kind) in out {
        let tantivy_name = name.replace('.', "__");
        if !seen.insert(tantivy_name.clone()) {
            return Err(PeerError::Unsupported(format!(
                "two fields are named {tantivy_name} in tantivy"
            )));
        }
        fields.push((name, tantivy_name, kind));
    }
    Ok(fields)
}

/// The tantivy schema of `fields`, [`PRESENT_FIELD`] last.
pub(super) fn schema(fields: &[(String, String, Kind)]) -> Schema {
    let mut builder = Schema::builder();
    let keyword = || {
        TextOptions::default()
            .set_indexing_options(
                TextFieldIndexing::default()
                    .set_tokenizer("raw")
                    .set_index_option(IndexRecordOption::Basic)
                    .set_fieldnorms(false),
            )
            .set_fast("raw")
    };
    let numeric = || NumericOptions::default().set_indexed().set_fast();
    for (_, name, kind) in fields {
        match kind {
            Kind::Text => {
                builder.add_text_field(
                    name,
                    TextOptions::default().set_indexing_options(
                        TextFieldIndexing::default()
                            .set_tokenizer(APCACHE_TOKENIZER_NAME)
                            .set_index_option(IndexRecordOption::WithFreqsAndPositions)
                            .set_fieldnorms(true),
                    ),
                );
            }
            Kind::Keyword => {
                builder.add_text_field(name, keyword());
            }
            Kind::Integer => {
                builder.add_i64_field(name, numeric());
            }
            Kind::Double => {
                builder.add_f64_field(name, numeric());
            }
            Kind::Date => {
                builder.add_date_field(
                    name,
                    DateOptions::default()
                        .set_indexed()
                        .set_fast()
                        .set_precision(DateTimePrecision::Milliseconds),
                );
            }
            Kind::Boolean => {
                builder.add_bool_field(name, numeric());
            }
        }
    }
    builder.add_text_field(
        PRESENT_FIELD,
        TextOptions::default().set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer("raw")
                .set_index_option(IndexRecordOption::Basic)
                .set_fieldnorms(false),
        ),
    );
    builder.build()
}

/// The fields of `mapping` in the schema of `index`, and [`PRESENT_FIELD`].
pub(super) fn fields_of(
    index: &Index,
    mapping: &Mapping,
) -> Result<(HashMap<String, MappedField>, Field), PeerError> {
    let schema = index.schema();
    let mut fields = HashMap::new();
    for (name, tantivy_name, kind) in mapped_fields(mapping)? {
        let field = schema.get_field(&tantivy_name)?;
        fields.insert(
            name,
            MappedField {
                field,
                name: tantivy_name,
                kind,
            },
        );
    }
    let present = schema.get_field(PRESENT_FIELD)?;
    Ok((fields, present))
}
