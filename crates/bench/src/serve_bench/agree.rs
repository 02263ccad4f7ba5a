//! Agreement: every query's hits and exact total as the server answers them (`count=true`,
//! through the API the runs used)
//! against the library's evaluation of the same index (`Searcher` over `IndexReader::open`,
//! `parse_query` with the index's analyzer and `DefaultOperator::Or`), which is what
//! `apcache search` runs.
//!
//! The server's answers are collected while it runs; the library evaluates after it stopped,
//! so that this process neither competes for the cores nor holds the index's pages while the
//! server is measured (pages it faulted in would be charged to its memory cgroup, not the
//! server's).

use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use apcache_index::query::{parse_query, DefaultOperator};
use apcache_index::search::{IndexReader, SearchOptions, Searcher};
use serde::Serialize;

use super::http::HttpClient;
use super::{Api, ServeBenchError};

/// Mismatches the report quotes (all are counted).
const EXAMPLES: usize = 10;

/// One query's answer: document ids best first, scores, the total and whether it is exact.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Answer {
    /// External ids, best first.
    pub ids: Vec<String>,
    /// Scores, best first.
    pub scores: Vec<f32>,
    /// Matching documents.
    pub total: u64,
    /// Whether `total` is exact.
    pub exact: bool,
}

/// The server's answer to each query through `api`, or what went wrong.
pub fn collect_server_answers(
    addr: SocketAddr,
    api: Api,
    queries: &[String],
    k: usize,
) -> Vec<Result<Answer, String>> {
    let mut client = HttpClient::new(addr, Duration::from_secs(60));
    let mut body = Vec::new();
    queries
        .iter()
        .map(|q| {
            let target = api.target(q, k, true);
            let status = client
                .get(&target, &mut body)
                .map_err(|e| format!("request failed: {e}"))?;
            let text = String::from_utf8_lossy(&body);
            if status != 200 {
                return Err(format!("status {status}: {text}"));
            }
            match api {
                Api::Native => parse_answer(&text),
                Api::NoSource => parse_es_answer(&text),
            }
        })
        .collect()
}

/// The hits and total of a native search response.
fn parse_answer(text: &str) -> Result<Answer, String> {
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("invalid JSON ({e}): {text}"))?;
    let hits = value["hits"]
        .as_array()
        .ok_or_else(|| format!("no hits array: {text}"))?;
    let mut ids = Vec::with_capacity(hits.len());
    let mut scores = Vec::with_capacity(hits.len());
    for hit in hits {
        ids.push(
            hit["id"]
                .as_str()
                .ok_or_else(|| format!("a hit without an id: {text}"))?
                .to_string(),
        );
        scores.push(hit["score"].as_f64().unwrap_or(f64::NAN) as f32);
    }
    Ok(Answer {
        ids,
        scores,
        total: value["total"]["value"]
            .as_u64()
            .ok_or_else(|| format!("no total.value: {text}"))?,
        exact: value["total"]["exact"].as_bool().unwrap_or(false),
    })
}

/// The hits and total of an Elasticsearch-shaped `_search` response.
fn parse_es_answer(text: &str) -> Result<Answer, String> {
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("invalid JSON ({e}): {text}"))?;
    let hits = &value["hits"];
    let list = hits["hits"]
        .as_array()
        .ok_or_else(|| format!("no hits.hits array: {text}"))?;
    let mut ids = Vec::with_capacity(list.len());
    let mut scores = Vec::with_capacity(list.len());
    for hit in list {
        ids.push(
            hit["_id"]
                .as_str()
                .ok_or_else(|| format!("a hit without an _id: {text}"))?
                .to_string(),
        );
        scores.push(hit["_score"].as_f64().unwrap_or(f64::NAN) as f32);
    }
    Ok(Answer {
        ids,
        scores,
        total: hits["total"]["value"]
            .as_u64()
            .ok_or_else(|| format!("no hits.total.value: {text}"))?,
        exact: hits["total"]["relation"] == "eq",
    })
}

/// A query whose answers differ.
#[derive(Debug, Clone, Serialize)]
pub struct Mismatch {
    /// The query text.
    pub query: String,
    /// The server's answer, or its error.
    pub server: Result<Answer, String>,
    /// The library's answer, or its error.
    pub library: Result<Answer, String>,
}

/// How the server's answers compare with the library's.
#[derive(Debug, Clone, Serialize)]
pub struct Agreement {
    /// Queries compared.
    pub queries: usize,
    /// Queries whose ids (in order) or total differ, or that only one side answered.
    pub mismatches: usize,
    /// Of them, queries with different ids.
    pub id_mismatches: usize,
    /// Of them, queries with different totals.
    pub total_mismatches: usize,
    /// Queries the server failed (an error status or no answer).
    pub server_errors: usize,
    /// Queries the library failed too (both sides agree that the query fails).
    pub both_failed: usize,
    /// Queries with the same ids but a score that differs (informational; the server's scores
    /// pass through JSON as shortest decimal f32s, so they should be equal).
    pub score_differences: usize,
    /// The first mismatches.
    pub examples: Vec<Mismatch>,
}

/// Evaluates `queries` with the library over the index in `dir` and compares the answers with
/// `server`'s, query by query.
pub fn compare_with_library(
    dir: &Path,
    queries: &[String],
    server: Vec<Result<Answer, String>>,
    k: usize,
) -> Result<Agreement, ServeBenchError> {
    let reader = IndexReader::open(dir)?;
    let analyzer = reader.analyzer();
    let searcher = Searcher::new(&reader);
    let options = SearchOptions {
        k,
        count: true,
        ..SearchOptions::default()
    };
    let mut agreement = Agreement {
        queries: queries.len(),
        mismatches: 0,
        id_mismatches: 0,
        total_mismatches: 0,
        server_errors: 0,
        both_failed: 0,
        score_differences: 0,
        examples: Vec::new(),
    };
    for (query, server) in queries.iter().zip(server) {
        let library = parse_query(query, &analyzer, DefaultOperator::Or)
            .map_err(|e| e.to_string())
            .and_then(|q| searcher.search(&q, &options).map_err(|e| e.to_string()))
            .map(|result| Answer {
                ids: result.hits.iter().map(|h| h.doc.to_string()).collect(),
                scores: result.hits.iter().map(|h| h.score).collect(),
                total: result.total_hits,
                exact: result.total_hits_exact,
            });
        let differs = match (&server, &library) {
            (Ok(s), Ok(l)) => {
                let ids = s.ids != l.ids;
                let total = s.total != l.total || s.exact != l.exact;
                agreement.id_mismatches += usize::from(ids);
                agreement.total_mismatches += usize::from(total);
                if !ids && s.scores != l.scores {
                    agreement.score_differences += 1;
                }
                ids || total
            }
            (Err(_), Err(_)) => {
                agreement.server_errors += 1;
                agreement.both_failed += 1;
                false
            }
            (Err(_), Ok(_)) => {
                agreement.server_errors += 1;
                true
            }
            (Ok(_), Err(_)) => true,
        };
        if differs {
            agreement.mismatches += 1;
            if agreement.examples.len() < EXAMPLES {
                agreement.examples.push(Mismatch {
                    query: query.clone(),
                    server,
                    library,
                });
            }
        }
    }
    Ok(agreement)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_native_answer() {
        let text = r#"{"index":"b","query":"a","total":{"value":12,"exact":true},"took_us":5,
            "offset":0,"k":2,"hits":[{"id":"7","score":1.5,"title":"t","snippet":"s"},
            {"id":"3","score":0.25,"title":"","snippet":""}]}"#;
        let answer = parse_answer(text).unwrap();
        assert_eq!(answer.ids, ["7", "3"]);
        assert_eq!(answer.scores, [1.5, 0.25]);
        assert_eq!((answer.total, answer.exact), (12, true));
        assert!(parse_answer("{\"error\": 1}").is_err());
        let es = r#"{"took":1,"hits":{"total":{"value":12,"relation":"eq"},"max_score":1.5,
            "hits":[{"_index":"b","_id":"7","_score":1.5}]}}"#;
        let answer = parse_es_answer(es).unwrap();
        assert_eq!(
            (answer.ids, answer.total, answer.exact),
            (vec!["7".to_string()], 12, true)
        );
    }
}
