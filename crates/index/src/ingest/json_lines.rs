//! JSON-lines documents: one object per line, mapped by the index's [`Mapper`].
//!
//! Any object is a document; its fields are indexed as the mapping says (or as dynamic mapping
//! infers them). A document's id is its `_id`, else its id field (`id` unless the build names
//! another), a string or a number kept in its JSON spelling.

use serde_json::Value;

use super::bad_line::BadLineReason;
use super::document::{Document, JsonDocument};
use crate::schema::Mapper;

/// The document on `line`, mapped by `mapper`.
pub(crate) fn parse(line: &str, mapper: &mut Mapper) -> Result<Document, BadLineReason> {
    // serde would also read a struct from a JSON array; any non-object is refused here.
    if !line.trim_start().starts_with('{') {
        return Err(BadLineReason::InvalidJson {
            message: "expected a JSON object".to_owned(),
        });
    }
    let value: Value = serde_json::from_str(line).map_err(|error| BadLineReason::InvalidJson {
        message: error.to_string(),
    })?;
    match mapper.map(&value) {
        Ok(fields) => Ok(Document {
            id: fields.id.clone(),
            title: String::new(),
            body: String::new(),
            json: Some(Box::new(JsonDocument {
                source: line.trim_end_matches([' ', '\t']).to_owned(),
                fields,
            })),
        }),
        Err(error) => Err(BadLineReason::DoesNotFit {
            id: stated_id(&value, mapper),
            reason: error.to_string(),
        }),
    }
}

/// The id a refused document states, for the message.
fn stated_id(value: &Value, mapper: &Mapper) -> Option<String> {
    let object = value.as_object()?;
    let id = object
        .get("_id")
        .or_else(|| mapper.id_field().and_then(|field| object.get(field)))?;
    match id {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::schema::Mapping;

    fn mapper() -> Mapper {
        Mapper::new(Mapping::default(), Some("id".into()))
    }

    #[test]
    fn numeric_ids_keep_their_json_spelling() {
        let mut mapper = mapper();
        for (line, id) in [
            (r#"{"id": 17, "body": "x"}"#, "17"),
            (r#"{"id": 1.5e3, "body": "x"}"#, "1500.0"),
        ] {
            assert_eq!(parse(line, &mut mapper).unwrap().id.as_deref(), Some(id));
        }
    }

    #[test]
    fn the_source_is_kept_as_given() {
        let line = r#"{"title": "T", "body": "b", "tags": ["x", "y"]}"#;
        let document = parse(line, &mut mapper()).unwrap();
        let json = document.json.unwrap();
        assert_eq!(json.source, line);
        // Fields in document order.
        assert_eq!(json.fields.texts, ["T", "b", "x", "y"]);
        assert_eq!(json.fields.text_gaps, [false, false, false, true]);
    }

    #[test]
    fn malformed_json_and_documents_that_do_not_fit_are_bad_lines() {
        let mut mapper = mapper();
        for line in ["{not json}", "[1, 2]", "{\"a\": 1"] {
            assert!(
                matches!(
                    parse(line, &mut mapper),
                    Err(BadLineReason::InvalidJson { .. })
                ),
                "{line}"
            );
        }
        parse(r#"{"n": 1}"#, &mut mapper).unwrap();
        let error = parse(r#"{"id": "x9", "n": "one"}"#, &mut mapper).unwrap_err();
        assert_eq!(
            error.to_string(),
            "document \"x9\" does not fit the mapping: field [n]: \"one\" is not an integer"
        );
        let _ = json!(null);
    }
}
