//! How a JSON value reads as a field's value, as Elasticsearch coerces it: text, integers,
//! doubles and ids, for the mapper.

use serde_json::Value;

use super::{DocumentError, IntegerWidth};

/// A string, number or boolean as text (Elasticsearch's coercion for text and keyword fields).
pub fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// An integer field's value: a JSON integer, a whole or fractional number (truncated, as
/// Elasticsearch coerces it), or a string holding one.
pub fn integer(value: &Value, width: IntegerWidth) -> Result<i64, String> {
    let number = match value {
        Value::Number(n) => match n.as_i64() {
            Some(i) => Some(i),
            None => n.as_f64().and_then(truncate),
        },
        Value::String(s) => s
            .trim()
            .parse::<i64>()
            .ok()
            .or_else(|| s.trim().parse::<f64>().ok().and_then(truncate)),
        _ => None,
    };
    let number = number.ok_or_else(|| format!("{value} is not an integer"))?;
    if !width.holds(number) {
        return Err(format!("{number} is out of range for {}", width.name()));
    }
    Ok(number)
}

fn truncate(value: f64) -> Option<i64> {
    let truncated = value.trunc();
    // i64::MAX as f64 rounds up to 2^63, which does not fit.
    (truncated.is_finite() && truncated >= -(2f64.powi(63)) && truncated < 2f64.powi(63))
        .then_some(truncated as i64)
}

/// A double field's value: a JSON number, or a string holding a finite one.
pub fn double(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse::<f64>().ok().filter(|v| v.is_finite()),
        _ => None,
    }
}

/// An `_id` from a JSON string or number.
pub fn id_of(value: &Value) -> Result<String, DocumentError> {
    match value {
        Value::String(id) => Ok(id.clone()),
        Value::Number(id) => Ok(id.to_string()),
        other => Err(DocumentError::Id(format!(
            "{other} is not a string or a number"
        ))),
    }
}
