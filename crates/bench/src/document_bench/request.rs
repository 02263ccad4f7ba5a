//! The benchmark's request and answer lines, one JSON object per line, read by every engine
//! (apcache and tantivy in `apcache-bench document-engine`, Lucene in `lucene-peer serve-json`).
//!
//! ```text
//! request: {"class", "query", "sort"?: [{"field", "order"}], "k", "count"}
//! answer:  {"count": N, "hits": H}   or   {"error": "..."}
//! ```
//!
//! `query` is the JSON form of [`crate::document_queries`]. With `count` the answer's count is
//! exact; without it an engine may skip documents that cannot enter the top `k` and answers
//! the number of its hits. `k` 0 counts only.

use serde_json::{json, Value};

use crate::document_queries::DocumentQuery;

/// A parsed request.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// The query, in the JSON form of [`crate::document_queries`].
    pub query: Value,
    /// Sort keys: field and whether descending; empty: by score.
    pub sort: Vec<(String, bool)>,
    /// Hits wanted.
    pub k: usize,
    /// Count every match exactly.
    pub count: bool,
}

impl Request {
    /// The request line of `query` for `k` hits, counted or not.
    pub fn line(query: &DocumentQuery, k: usize, count: bool) -> String {
        let mut line = query.to_line();
        line["k"] = json!(k);
        line["count"] = json!(count);
        line.to_string()
    }

    /// Reads a request line.
    pub fn parse(line: &str) -> Result<Request, String> {
        let value: Value = serde_json::from_str(line).map_err(|e| format!("not JSON: {e}"))?;
        let query = value
            .get("query")
            .cloned()
            .ok_or("a request needs [query]")?;
        let k = match value.get("k") {
            None => 10,
            Some(k) => k
                .as_u64()
                .and_then(|k| usize::try_from(k).ok())
                .ok_or("[k] is a count")?,
        };
        let count = match value.get("count") {
            None => false,
            Some(c) => c.as_bool().ok_or("[count] is true or false")?,
        };
        let sort = match value.get("sort") {
            None => Vec::new(),
            Some(Value::Array(keys)) => keys
                .iter()
                .map(|key| {
                    let field = key["field"].as_str().ok_or("a sort key needs [field]")?;
                    let descending = match key["order"].as_str() {
                        None | Some("asc") => false,
                        Some("desc") => true,
                        Some(other) => return Err(format!("sort order [{other}]")),
                    };
                    Ok((field.to_owned(), descending))
                })
                .collect::<Result<_, String>>()?,
            Some(other) => return Err(format!("[sort] is a list, not {other}")),
        };
        Ok(Request {
            query,
            sort,
            k,
            count,
        })
    }
}

/// An answer line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Answer {
    /// The exact count when counted, else the number of hits.
    pub count: u64,
    /// Hits returned.
    pub hits: u64,
}

impl Answer {
    /// Its line.
    pub fn line(&self) -> String {
        json!({"count": self.count, "hits": self.hits}).to_string()
    }

    /// The line of a failed request.
    pub fn error_line(why: &str) -> String {
        json!({ "error": why }).to_string()
    }

    /// Reads an answer line; a failed request's reason is the error.
    pub fn parse(line: &str) -> Result<Answer, String> {
        let value: Value = serde_json::from_str(line).map_err(|e| format!("not JSON: {e}"))?;
        if let Some(why) = value.get("error") {
            return Err(why.as_str().unwrap_or("an error").to_owned());
        }
        match (value["count"].as_u64(), value["hits"].as_u64()) {
            (Some(count), Some(hits)) => Ok(Answer { count, hits }),
            _ => Err(format!("not an answer: {line}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_and_answers_read_back() {
        let query = DocumentQuery {
            class: "sort-number",
            query: json!({"term": {"field": "summary", "value": "game"}}),
            sort: vec![("size".into(), true)],
        };
        let request = Request::parse(&Request::line(&query, 10, true)).unwrap();
        assert_eq!(
            request,
            Request {
                query: query.query.clone(),
                sort: vec![("size".into(), true)],
                k: 10,
                count: true
            }
        );
        let answer = Answer { count: 7, hits: 7 };
        assert_eq!(Answer::parse(&answer.line()), Ok(answer));
        assert_eq!(
            Answer::parse(&Answer::error_line("no such field")),
            Err("no such field".into())
        );
        assert!(Request::parse("{\"k\": 3}").is_err());
        assert!(Request::parse(
            "{\"query\": {}, \"sort\": [{\"field\": \"a\", \"order\": \"up\"}]}"
        )
        .is_err());
    }
}
