//! tantivy 0.27 as a peer engine over JSON documents under an Elasticsearch-style mapping, for
//! the document-query latency benchmark against apcache and Lucene.
//!
//! [`TantivyDocuments::build`] passes each JSON line through apcache's own
//! [`Mapper`](apcache_index::schema::Mapper) and indexes what it makes of it, and [`TantivyDocuments::search`] runs the queries of
//! [`crate::document_queries`] in their JSON form. Scores are tantivy's own (BM25 per field, as
//! apcache's), but every query matches the documents apcache's [`to_query`] matches, so that
//! the benchmark compares engines answering the same question:
//!
//! - a text field is a tantivy text field analyzed by [`ApcacheTokenizer`] (apcache's own
//!   terms and positions), with frequencies and positions; the values of one field in one
//!   document (an array) are indexed as one pre-tokenized stream, placed as apcache places
//!   them ([`TEXT_GAP`] positions between the values of an array), since tantivy's own gap
//!   between values is 1;
//! - a keyword field (and a text field's keyword sub-field, `maintainer.keyword`) is a raw
//!   string, indexed and fast; a value over `ignore_above` is dropped, as apcache drops it;
//! - integers are `i64`, doubles `f64`, dates milliseconds (`DateTime` with millisecond
//!   precision), booleans `bool`, all indexed and fast;
//! - existence (`exists`) is tantivy's [`ExistsQuery`] on the fast column of keyword and
//!   numeric fields (an empty string is a value); for text fields, which have no column, a
//!   hidden raw field ([`PRESENT_FIELD`]) holds the names of the text fields a document has a
//!   value of (an empty string included), apcache's `exists` term;
//! - tantivy field names are the mapping's with `.` replaced by `__` (tantivy reads dots in
//!   names as JSON paths in places).
//!
//! A line that is not JSON, or that apcache's mapper refuses (a value that does not fit its
//! field's type, an unknown field under `"dynamic": "strict"`, a metadata field other than
//! `_id`, an invalid or repeated id), is skipped. Fields the mapping does not name are not
//! indexed: tantivy's schema is fixed when the index is created, so `"dynamic": true` adds
//! nothing here (apcache would add the field; no query of the benchmark names such fields).
//!
//! Where tantivy's semantics are not apcache's (Lucene's), the query is rewritten:
//!
//! - a `bool` with only `should` clauses needs one of them; with `must` or `filter` clauses the
//!   `should` clauses only score; a `bool` with neither `must`, `filter` nor `should` matches
//!   nothing ([`apcache_index::query::BoolQuery`]);
//! - a sloppy phrase of one term twice (`"a a"~s`) matches, as in Lucene, two distinct
//!   occurrences at most `s + 1` apart (tantivy would let both terms stand on one occurrence):
//!   it is the union of the exact phrases `a` … `a` at distances 1 to `s + 1`.
//!
//! What still differs: a sloppy phrase of three terms or more follows tantivy's slop (the sum
//! of the distances between consecutive terms) rather than Lucene's (the span of the terms'
//! positions less their offsets); the generator makes two-term phrases only. Sorting by a
//! multi-valued field uses tantivy's value (the first), not apcache's (the least ascending,
//! the greatest descending); the benchmark sorts by single-valued fields. A sort by a field no
//! document has a value of is an error (tantivy finds no column), where apcache returns the
//! hits unordered. Ranges are supported on integer, double and date (milliseconds) fields
//! only. Text is analyzed by apcache's default analyzer: a mapping that names another
//! (`english`), or whose text fields are joined, is refused.
//!
//! [`to_query`]: crate::document_queries::to_query

use std::collections::HashMap;
use std::io::BufRead;
use std::path::Path;

use apcache_index::analyzer::Analyzer;
use apcache_index::schema::{Mapper, Mapping};
use serde_json::Value;
use tantivy::collector::{Collector, Count, TopDocs};
use tantivy::indexer::{IndexWriterOptions, NoMergePolicy};
use tantivy::query::Query;
use tantivy::schema::Field;
use tantivy::{DateTime, DocAddress, Index, IndexWriter, Order, ReloadPolicy, Searcher};

use super::tantivy_indexer::{
    ApcacheTokenizer, APCACHE_TOKENIZER_NAME, MEMORY_BUDGET_PER_THREAD_MAX,
    MEMORY_BUDGET_PER_THREAD_MIN,
};
use crate::peer_engines::PeerError;

mod fields;
mod mapper;
mod queries;
#[cfg(test)]
mod tests;

use fields::{fields_of, mapped_fields, schema, Kind, MappedField};
use mapper::DocumentMapper;

/// The hidden field that holds, for each document, the names of the text fields it has a value
/// of: what `exists` on a text field searches (text fields have no fast column).
pub const PRESENT_FIELD: &str = "_present";

/// A tantivy index of JSON documents under a mapping.
pub struct TantivyDocuments {
    /// Reloaded once, at open: a search sets nothing up beyond its query.
    searcher: Searcher,
    /// Every field a query may name (sub-fields included), by the mapping's name.
    fields: HashMap<String, MappedField>,
    /// [`PRESENT_FIELD`].
    present: Field,
}

/// What one search found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TantivyAnswer {
    /// The documents matched: exact when counting (or with `k == 0`), else the hits returned.
    pub count: u64,
    /// The hits returned (at most `k`).
    pub hits: usize,
}

impl TantivyDocuments {
    /// Indexes the JSON lines of `documents` into `dir` (created; it must not hold an index),
    /// under `mapping`, with `id_field` (e.g. `"id"`) as the unique id: a line whose id (its
    /// `_id`, else the value of `id_field`) was seen before is skipped, as apcache skips it, and
    /// so is a line apcache refuses (see the module documentation). One indexing thread, a heap
    /// of `heap_bytes` (raised to tantivy's least budget, 15 MB), then merged into one segment
    /// and waited for merges. Returns the number of documents indexed.
    pub fn build(
        documents: &Path,
        mapping: &Mapping,
        id_field: &str,
        dir: &Path,
        heap_bytes: usize,
    ) -> Result<u64, PeerError> {
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |e| PeerError::Io(path, e)
        };
        let table = mapped_fields(mapping)?;
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        let index = Index::create_in_dir(dir, schema(&table))?;
        index
            .tokenizers()
            .register(APCACHE_TOKENIZER_NAME, ApcacheTokenizer::default());
        let (fields, present) = fields_of(&index, mapping)?;
        let converter = DocumentMapper {
            fields: &fields,
            present,
            analyzer: Analyzer::default(),
        };
        // apcache's own mapper decides what each line holds, and refuses what apcache refuses
        // (a repeated id included).
        let mut mapper = Mapper::new(mapping.clone(), Some(id_field.to_owned()));

        let options = IndexWriterOptions::builder()
            .num_worker_threads(1)
            .memory_budget_per_thread(
                heap_bytes.clamp(MEMORY_BUDGET_PER_THREAD_MIN, MEMORY_BUDGET_PER_THREAD_MAX),
            )
            .build();
        let mut writer: IndexWriter = index.writer_with_options(options)?;
        writer.set_merge_policy(Box::new(NoMergePolicy));
        let file = std::fs::File::open(documents).map_err(io(documents))?;
        let mut indexed = 0u64;
        for line in std::io::BufReader::new(file).lines() {
            let line = line.map_err(io(documents))?;
            if line.trim().is_empty() {
                continue;
            }
            let Ok(json) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            let Ok(mapped) = mapper.map(&json) else {
                continue;
            };
            writer.add_document(converter.document(&mapped))?;
            indexed += 1;
        }
        writer.commit()?;
        let segments = index.searchable_segment_ids()?;
        if segments.len() > 1 {
            writer.merge(&segments).wait()?;
        }
        writer.garbage_collect_files().wait()?;
        writer.wait_merging_threads()?;
        Ok(indexed)
    }

    /// Opens an index [`TantivyDocuments::build`] made under `mapping`.
    pub fn open(dir: &Path, mapping: &Mapping) -> Result<TantivyDocuments, PeerError> {
        let index = Index::open_in_dir(dir)?;
        index
            .tokenizers()
            .register(APCACHE_TOKENIZER_NAME, ApcacheTokenizer::default());
        let (fields, present) = fields_of(&index, mapping)?;
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()?;
        Ok(TantivyDocuments {
            searcher: reader.searcher(),
            fields,
            present,
        })
    }

    /// The documents in the index.
    pub fn num_docs(&self) -> u64 {
        self.searcher.num_docs()
    }

    /// Runs a query in the JSON form of [`crate::document_queries`]: the top `k` by score, or
    /// by `sort` when it is not empty (one `(field, descending)` key on a long, double, date or
    /// keyword field, missing values last; more keys are refused), and the exact count when
    /// `count` (else the count returned is the number of hits). `k == 0` counts only (exactly).
    pub fn search(
        &self,
        query: &Value,
        sort: &[(String, bool)],
        k: usize,
        count: bool,
    ) -> Result<TantivyAnswer, String> {
        let query = self.query(query)?;
        let query = query.as_ref();
        if k == 0 {
            let count = self
                .searcher
                .search(query, &Count)
                .map_err(|e| e.to_string())?;
            return Ok(TantivyAnswer {
                count: count as u64,
                hits: 0,
            });
        }
        let top = TopDocs::with_limit(k);
        match sort {
            [] => self.top(query, top.order_by_score(), count),
            [(name, descending)] => {
                let field = self
                    .fields
                    .get(name)
                    .ok_or_else(|| format!("cannot sort by [{name}]"))?;
                let order = if *descending { Order::Desc } else { Order::Asc };
                let column = field.name.as_str();
                match field.kind {
                    Kind::Integer => {
                        self.top(query, top.order_by_fast_field::<i64>(column, order), count)
                    }
                    Kind::Double => {
                        self.top(query, top.order_by_fast_field::<f64>(column, order), count)
                    }
                    Kind::Date => self.top(
                        query,
                        top.order_by_fast_field::<DateTime>(column, order),
                        count,
                    ),
                    Kind::Keyword => {
                        self.top(query, top.order_by_string_fast_field(column, order), count)
                    }
                    Kind::Text | Kind::Boolean => Err(format!("cannot sort by [{name}]")),
                }
            }
            _ => Err("the tantivy document peer sorts by one key at most".into()),
        }
    }

    /// The top documents of `collector`, and the count when `count`.
    fn top<K, C>(
        &self,
        query: &dyn Query,
        collector: C,
        count: bool,
    ) -> Result<TantivyAnswer, String>
    where
        C: Collector<Fruit = Vec<(K, DocAddress)>>,
    {
        if count {
            let (count, hits) = self
                .searcher
                .search(query, &(Count, collector))
                .map_err(|e| e.to_string())?;
            Ok(TantivyAnswer {
                count: count as u64,
                hits: hits.len(),
            })
        } else {
            let hits = self
                .searcher
                .search(query, &collector)
                .map_err(|e| e.to_string())?;
            Ok(TantivyAnswer {
                count: hits.len() as u64,
                hits: hits.len(),
            })
        }
    }
}
