//! JSON-lines documents: one object per line, `{"id": .., "title": .., "body": ..}`.
//!
//! `text` is accepted for `body` (the name many dataset dumps use); `body` wins when both are
//! there. `id` and `title` are optional, and other fields are ignored, so that records exported
//! with extra metadata read as they are.

use serde::Deserialize;
use serde_json::Value;

use super::bad_line::BadLineReason;
use super::document::Document;

/// The fields of a JSON document that the reader uses.
#[derive(Deserialize)]
struct JsonDocument {
    #[serde(default)]
    id: Option<Value>,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    body: Option<String>,
    #[serde(default)]
    text: Option<String>,
}

/// The document on `line`.
pub(crate) fn parse(line: &str) -> Result<Document, BadLineReason> {
    // serde would also read a struct from a JSON array, by position.
    if !line.trim_start().starts_with('{') {
        return Err(BadLineReason::InvalidJson {
            message: "expected a JSON object".to_owned(),
        });
    }
    let document: JsonDocument =
        serde_json::from_str(line).map_err(|error| BadLineReason::InvalidJson {
            message: error.to_string(),
        })?;
    let id = match document.id {
        None | Some(Value::Null) => None,
        Some(Value::String(id)) => Some(id),
        Some(Value::Number(id)) => Some(id.to_string()),
        Some(_) => return Err(BadLineReason::InvalidId),
    };
    let body = document
        .body
        .or(document.text)
        .ok_or(BadLineReason::MissingBody)?;
    Ok(Document {
        id,
        title: document.title.unwrap_or_default(),
        body,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn document(id: Option<&str>, title: &str, body: &str) -> Document {
        Document {
            id: id.map(str::to_owned),
            title: title.to_owned(),
            body: body.to_owned(),
        }
    }

    #[test]
    fn all_fields() {
        let line = r#"{"id": "d1", "title": "T", "body": "b\tody\n"}"#;
        assert_eq!(parse(line), Ok(document(Some("d1"), "T", "b\tody\n")));
    }

    #[test]
    fn numeric_ids_keep_their_json_spelling() {
        assert_eq!(
            parse(r#"{"id":42,"body":"b"}"#),
            Ok(document(Some("42"), "", "b"))
        );
        assert_eq!(
            parse(r#"{"id":-1.5,"body":"b"}"#),
            Ok(document(Some("-1.5"), "", "b"))
        );
        assert_eq!(
            parse(r#"{"id":null,"body":"b"}"#),
            Ok(document(None, "", "b"))
        );
        assert_eq!(
            parse(r#"{"id":[1],"body":"b"}"#),
            Err(BadLineReason::InvalidId)
        );
    }

    #[test]
    fn text_stands_in_for_body_and_extra_fields_are_ignored() {
        let line = r#"{"url":"u","text":"t","meta":{"a":[1,2]},"title":null}"#;
        assert_eq!(parse(line), Ok(document(None, "", "t")));
        let both = r#"{"text":"t","body":"b"}"#;
        assert_eq!(parse(both), Ok(document(None, "", "b")));
    }

    #[test]
    fn a_body_is_required() {
        assert_eq!(parse(r#"{"title":"T"}"#), Err(BadLineReason::MissingBody));
        assert_eq!(parse(r#"{"body":null}"#), Err(BadLineReason::MissingBody));
    }

    #[test]
    fn malformed_json_and_wrong_types_are_invalid() {
        for line in [
            r#"{"body":"b""#,
            r#"{"body":5}"#,
            r#"{"title":1,"body":"b"}"#,
            r#"["id","title","body","text"]"#,
            "{} trailing",
            "null",
        ] {
            assert!(
                matches!(parse(line), Err(BadLineReason::InvalidJson { .. })),
                "{line}"
            );
        }
    }
}
