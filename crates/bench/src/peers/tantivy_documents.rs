//! tantivy 0.27 as a peer engine over JSON documents under an Elasticsearch-style mapping, for
//! the document-query latency benchmark against apcache and Lucene.
//!
//! [`TantivyDocuments::build`] indexes JSON lines the way apcache's indexer maps them
//! (`apcache_index::schema::Mapper`), and [`TantivyDocuments::search`] runs the queries of
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
//! Lines are mapped as apcache maps them: a line that is not JSON, or that apcache refuses
//! (a value that does not fit its field's type, an unknown field under `"dynamic": "strict"`,
//! a metadata field other than `_id`, an invalid id), is skipped; so is a line whose id
//! (`_id`, else the id field) was seen before. Fields the mapping does not name are not
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

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::io::BufRead;
use std::ops::Bound;
use std::path::Path;

use apcache_index::analyzer::Analyzer;
use apcache_index::query::Factor;
use apcache_index::schema::json_values::{double, id_of, integer, scalar_text};
use apcache_index::schema::{
    check_id, Dynamic, FieldType, IntegerWidth, KeywordOptions, Mapping, TEXT_GAP,
};
use serde_json::Value;
use tantivy::collector::{Collector, Count, TopDocs};
use tantivy::indexer::{IndexWriterOptions, NoMergePolicy};
use tantivy::query::{
    AllQuery, BooleanQuery, BoostQuery, ConstScoreQuery, DisjunctionMaxQuery, EmptyQuery,
    ExistsQuery, Occur, PhraseQuery, Query, RangeQuery, TermQuery,
};
use tantivy::schema::{
    DateOptions, DateTimePrecision, Field, IndexRecordOption, NumericOptions, Schema,
    TextFieldIndexing, TextOptions,
};
use tantivy::tokenizer::{PreTokenizedString, Token};
use tantivy::{
    DateTime, DocAddress, Index, IndexWriter, Order, ReloadPolicy, Searcher, TantivyDocument, Term,
};

use super::tantivy_indexer::{
    ApcacheTokenizer, APCACHE_TOKENIZER_NAME, MEMORY_BUDGET_PER_THREAD_MAX,
    MEMORY_BUDGET_PER_THREAD_MIN,
};
use crate::peer_engines::PeerError;

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

/// How a field of the mapping is kept.
#[derive(Debug, Clone)]
enum Kind {
    Text,
    Keyword(KeywordOptions),
    Integer(IntegerWidth),
    Double,
    Date(apcache_index::schema::DateFormat),
    Boolean,
}

/// A field of the mapping in the tantivy schema.
#[derive(Debug, Clone)]
struct MappedField {
    /// The field.
    field: Field,
    /// Its tantivy name (the mapping's, dots replaced).
    name: String,
    kind: Kind,
    /// A text field's keyword sub-field, and how it keeps values.
    sub: Option<(Field, KeywordOptions)>,
}

/// The fields of `mapping` (text fields' keyword sub-fields included), by the mapping's name:
/// tantivy name and kind.
fn mapped_fields(mapping: &Mapping) -> Result<Vec<(String, String, Kind)>, PeerError> {
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
                if let Some((sub, keyword)) = &options.keyword {
                    out.push((format!("{name}.{sub}"), Kind::Keyword(*keyword)));
                }
                Kind::Text
            }
            FieldType::Keyword(options) => Kind::Keyword(*options),
            FieldType::Integer(width) => Kind::Integer(*width),
            FieldType::Double { .. } => Kind::Double,
            FieldType::Date(format) => Kind::Date(format.clone()),
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
fn schema(fields: &[(String, String, Kind)]) -> Schema {
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
            Kind::Keyword(_) => {
                builder.add_text_field(name, keyword());
            }
            Kind::Integer(_) => {
                builder.add_i64_field(name, numeric());
            }
            Kind::Double => {
                builder.add_f64_field(name, numeric());
            }
            Kind::Date(_) => {
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
fn fields_of(
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
                sub: None,
            },
        );
    }
    for (name, field_type) in mapping.fields() {
        if let FieldType::Text(options) = field_type {
            if let Some((sub, keyword)) = &options.keyword {
                let sub = fields[&format!("{name}.{sub}")].field;
                if let Some(text) = fields.get_mut(name) {
                    text.sub = Some((sub, *keyword));
                }
            }
        }
    }
    let present = schema.get_field(PRESENT_FIELD)?;
    Ok((fields, present))
}

/// Maps JSON documents to tantivy documents as apcache's `Mapper` maps them.
struct DocumentMapper<'a> {
    mapping: &'a Mapping,
    fields: &'a HashMap<String, MappedField>,
    /// [`PRESENT_FIELD`].
    present: Field,
    analyzer: Analyzer,
}

/// A document being mapped: its text values (kept apart, to place their positions), and
/// everything else already in the tantivy document.
#[derive(Default)]
struct Pending<'v> {
    /// Text values: field name, text, whether it follows another value of the same array.
    texts: Vec<(&'v str, Cow<'v, str>, bool)>,
    document: TantivyDocument,
}

impl<'a> DocumentMapper<'a> {
    /// The tantivy document of `document`, and its id; `Err` (why) where apcache refuses it.
    fn map(&self, document: &Value) -> Result<(TantivyDocument, Option<String>), String> {
        let Value::Object(object) = document else {
            return Err("not an object".into());
        };
        let mut pending = Pending::default();
        let mut id = None;
        for (key, value) in object {
            if key == "_id" {
                id = Some(id_of(value).map_err(|e| e.to_string())?);
                continue;
            }
            if key.starts_with('_') {
                return Err(format!("metadata field [{key}]"));
            }
            self.walk(key, value, &mut pending)?;
        }
        let Pending {
            texts,
            mut document,
        } = pending;
        self.add_texts(&texts, &mut document);
        Ok((document, id))
    }

    /// Maps the value at `path` (arrays element by element, objects field by field).
    fn walk<'v>(
        &self,
        path: &str,
        value: &'v Value,
        pending: &mut Pending<'v>,
    ) -> Result<(), String>
    where
        'a: 'v,
    {
        match value {
            Value::Null => Ok(()),
            Value::Array(values) => {
                let first_text = pending.texts.len();
                for value in values {
                    self.walk(path, value, pending)?;
                }
                for text in pending.texts.iter_mut().skip(first_text + 1) {
                    text.2 = true;
                }
                Ok(())
            }
            Value::Object(object) => {
                if let Some(field_type) = self.mapping.get(path) {
                    return Err(format!(
                        "[{path}]: an object where a {} is mapped",
                        field_type.name()
                    ));
                }
                if !self.mapping.is_object(path) {
                    return match self.mapping.dynamic {
                        Dynamic::Strict => Err(format!("[{path}] is not mapped")),
                        Dynamic::False | Dynamic::True => Ok(()),
                    };
                }
                for (key, value) in object {
                    self.walk(&format!("{path}.{key}"), value, pending)?;
                }
                Ok(())
            }
            leaf => self.leaf(path, leaf, pending),
        }
    }

    fn leaf<'v>(
        &self,
        path: &str,
        value: &'v Value,
        pending: &mut Pending<'v>,
    ) -> Result<(), String>
    where
        'a: 'v,
    {
        if self.mapping.is_object(path) {
            return Err(format!("[{path}]: {value} where an object is mapped"));
        }
        // A leaf field of the mapping (a sub-field such as `title.keyword` is not one: apcache
        // does not take `{"title.keyword": ..}` for it).
        let found = match self.mapping.get(path) {
            Some(_) => self.fields.get_key_value(path),
            None => None,
        };
        let Some((name, mapped)) = found else {
            return match self.mapping.dynamic {
                Dynamic::Strict => Err(format!("[{path}] is not mapped")),
                Dynamic::False | Dynamic::True => Ok(()),
            };
        };
        let bad = |what: &str| format!("[{path}]: {value} is not {what}");
        let document = &mut pending.document;
        match &mapped.kind {
            Kind::Text => {
                let text = scalar_text(value).ok_or_else(|| bad("text"))?;
                if let Some((sub, options)) = mapped.sub {
                    if options.keeps(&text) {
                        document.add_text(sub, &text);
                    }
                }
                pending.texts.push((name.as_str(), Cow::Owned(text), false));
            }
            Kind::Keyword(options) => {
                let text = scalar_text(value).ok_or_else(|| bad("a keyword"))?;
                if options.keeps(&text) {
                    document.add_text(mapped.field, &text);
                }
            }
            Kind::Integer(width) => {
                let number = integer(value, *width).map_err(|e| format!("[{path}]: {e}"))?;
                document.add_i64(mapped.field, number);
            }
            Kind::Double => {
                let number = double(value).ok_or_else(|| bad("a number"))?;
                document.add_f64(mapped.field, number);
            }
            Kind::Date(format) => {
                let millis = format.read(value).map_err(|e| format!("[{path}]: {e}"))?;
                document.add_date(mapped.field, DateTime::from_timestamp_millis(millis));
            }
            Kind::Boolean => {
                let truth = match value {
                    Value::Bool(b) => *b,
                    Value::String(s) if s == "true" => true,
                    Value::String(s) if s == "false" || s.is_empty() => false,
                    _ => return Err(bad("a boolean")),
                };
                document.add_bool(mapped.field, truth);
            }
        }
        Ok(())
    }

    /// Adds the text values: a field's only value as text for [`ApcacheTokenizer`]; several
    /// values of one field as one pre-tokenized stream with apcache's positions (each value
    /// after the words of the previous ones, [`TEXT_GAP`] further where it follows another
    /// value of its array). Marks each text field with a value in [`PRESENT_FIELD`].
    fn add_texts(&self, texts: &[(&str, Cow<'_, str>, bool)], document: &mut TantivyDocument) {
        let mut done: Vec<&str> = Vec::new();
        for (i, (name, text, _)) in texts.iter().enumerate() {
            if done.contains(name) {
                continue;
            }
            done.push(name);
            let field = self.fields[*name].field;
            document.add_text(self.present, name);
            let values: Vec<&(&str, Cow<'_, str>, bool)> =
                texts[i..].iter().filter(|t| t.0 == *name).collect();
            if values.len() == 1 {
                document.add_text(field, text);
                continue;
            }
            let mut tokens = Vec::new();
            let mut offset = 0u32;
            let mut joined = String::new();
            for (_, text, gap) in values {
                if *gap {
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
                field,
                PreTokenizedString {
                    text: joined,
                    tokens,
                },
            );
        }
    }
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
        let mapper = DocumentMapper {
            mapping,
            fields: &fields,
            present,
            analyzer: Analyzer::default(),
        };

        let options = IndexWriterOptions::builder()
            .num_worker_threads(1)
            .memory_budget_per_thread(
                heap_bytes.clamp(MEMORY_BUDGET_PER_THREAD_MIN, MEMORY_BUDGET_PER_THREAD_MAX),
            )
            .build();
        let mut writer: IndexWriter = index.writer_with_options(options)?;
        writer.set_merge_policy(Box::new(NoMergePolicy));
        let file = std::fs::File::open(documents).map_err(io(documents))?;
        let mut ids: HashSet<String> = HashSet::new();
        let mut indexed = 0u64;
        for line in std::io::BufReader::new(file).lines() {
            let line = line.map_err(io(documents))?;
            if line.trim().is_empty() {
                continue;
            }
            let Ok(json) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            let Ok((document, id)) = mapper.map(&json) else {
                continue;
            };
            let id = match id {
                Some(id) => Some(id),
                None => match json.get(id_field) {
                    Some(value) => match id_of(value) {
                        Ok(id) => Some(id),
                        Err(_) => continue,
                    },
                    None => None,
                },
            };
            if let Some(id) = id {
                if check_id(&id).is_err() || !ids.insert(id) {
                    continue;
                }
            }
            writer.add_document(document)?;
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
                    Kind::Integer(_) => {
                        self.top(query, top.order_by_fast_field::<i64>(column, order), count)
                    }
                    Kind::Double => {
                        self.top(query, top.order_by_fast_field::<f64>(column, order), count)
                    }
                    Kind::Date(_) => self.top(
                        query,
                        top.order_by_fast_field::<DateTime>(column, order),
                        count,
                    ),
                    Kind::Keyword(_) => {
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

    /// The tantivy query of a query in the JSON form, matching what
    /// [`crate::document_queries::to_query`] makes apcache match; refused where `to_query`
    /// refuses it, and for ranges on fields other than numbers and dates.
    fn query(&self, value: &Value) -> Result<Box<dyn Query>, String> {
        let object = value.as_object().ok_or("a query is an object")?;
        let (kind, body) = object.iter().next().ok_or("an empty query")?;
        let text = |key: &str| -> Result<&str, String> {
            body[key]
                .as_str()
                .ok_or_else(|| format!("[{kind}] needs [{key}]"))
        };
        let list = |key: &str| -> Result<Vec<Box<dyn Query>>, String> {
            match &body[key] {
                Value::Null => Ok(Vec::new()),
                Value::Array(items) => items.iter().map(|q| self.query(q)).collect(),
                other => Err(format!("[{key}] is a list, not {other}")),
            }
        };
        let factor = |value: &Value, what: &str| -> Result<f32, String> {
            value
                .as_f64()
                .and_then(|f| Factor::new(f as f32))
                .map(Factor::get)
                .ok_or_else(|| format!("[{kind}] needs [{what}]"))
        };
        Ok(match kind.as_str() {
            "term" => {
                let field = text("field")?;
                let value = text("value")?;
                match self.fields.get(field) {
                    Some(MappedField {
                        field,
                        kind: Kind::Text,
                        ..
                    }) => Box::new(TermQuery::new(
                        Term::from_field_text(*field, value),
                        IndexRecordOption::WithFreqs,
                    )),
                    Some(MappedField {
                        field,
                        kind: Kind::Keyword(_),
                        ..
                    }) => Box::new(TermQuery::new(
                        Term::from_field_text(*field, value),
                        IndexRecordOption::Basic,
                    )),
                    _ => return Err(format!("[term] on [{field}]")),
                }
            }
            "phrase" => {
                let field = text("field")?;
                let terms = body["terms"]
                    .as_array()
                    .ok_or("[phrase] needs [terms]")?
                    .iter()
                    .map(|t| t.as_str().ok_or("a phrase's terms are strings"))
                    .collect::<Result<Vec<_>, _>>()?;
                let slop = body["slop"].as_u64().unwrap_or(0) as u32;
                match self.fields.get(field) {
                    // apcache looks for the words of a text field: elsewhere there are none.
                    Some(MappedField {
                        field,
                        kind: Kind::Text,
                        ..
                    }) => phrase(*field, &terms, slop),
                    _ => Box::new(EmptyQuery),
                }
            }
            "range" => {
                let field = text("field")?;
                let mapped = self
                    .fields
                    .get(field)
                    .ok_or_else(|| format!("unknown field [{field}]"))?;
                range(mapped, field, &body["gte"], &body["lte"])?
            }
            "exists" => {
                let field = text("field")?;
                match self.fields.get(field) {
                    None => return Err(format!("unknown field [{field}]")),
                    Some(MappedField {
                        kind: Kind::Text, ..
                    }) => Box::new(TermQuery::new(
                        Term::from_field_text(self.present, field),
                        IndexRecordOption::Basic,
                    )),
                    Some(mapped) => Box::new(ExistsQuery::new(mapped.name.clone(), false)),
                }
            }
            "bool" => {
                let must = list("must")?;
                let filter = list("filter")?;
                let should = list("should")?;
                let must_not = list("must_not")?;
                // Without a required clause, one of `should` is required; with one, they only
                // score; with neither, nothing matches (apcache's, Lucene's BooleanQuery).
                let required = !must.is_empty() || !filter.is_empty();
                if !required && should.is_empty() {
                    return Ok(Box::new(EmptyQuery));
                }
                let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
                clauses.extend(must.into_iter().map(|q| (Occur::Must, q)));
                clauses.extend(filter.into_iter().map(|q| {
                    (
                        Occur::Must,
                        Box::new(ConstScoreQuery::new(q, 0.0)) as Box<dyn Query>,
                    )
                }));
                clauses.extend(should.into_iter().map(|q| (Occur::Should, q)));
                clauses.extend(must_not.into_iter().map(|q| (Occur::MustNot, q)));
                Box::new(BooleanQuery::with_minimum_required_clauses(
                    clauses,
                    usize::from(!required),
                ))
            }
            "dis_max" => {
                let queries = list("queries")?;
                let tie_breaker = factor(&body["tie_breaker"], "tie_breaker")?;
                Box::new(DisjunctionMaxQuery::with_tie_breaker(queries, tie_breaker))
            }
            "boost" => {
                let inner = self.query(&body["query"])?;
                Box::new(BoostQuery::new(inner, factor(&body["factor"], "factor")?))
            }
            "all" => Box::new(AllQuery),
            other => return Err(format!("unknown query [{other}]")),
        })
    }
}

/// The phrase `terms` (consecutive words of the text field `field`) within `slop`.
fn phrase(field: Field, terms: &[&str], slop: u32) -> Box<dyn Query> {
    let term = |t: &str| Term::from_field_text(field, t);
    match terms {
        [] => Box::new(EmptyQuery),
        [only] => Box::new(TermQuery::new(term(only), IndexRecordOption::WithFreqs)),
        // Lucene (and apcache) never let two terms of a phrase stand on one position; tantivy's
        // slop would let "a a"~1 match a single "a". Two distinct occurrences at most
        // `slop + 1` apart are the union of the exact phrases at each distance.
        [a, b] if a == b && slop > 0 => {
            let exact: Vec<Box<dyn Query>> = (1..=slop as usize + 1)
                .map(|distance| {
                    Box::new(PhraseQuery::new_with_offset(vec![
                        (0, term(a)),
                        (distance, term(b)),
                    ])) as Box<dyn Query>
                })
                .collect();
            Box::new(BooleanQuery::union(exact))
        }
        _ => Box::new(PhraseQuery::new_with_offset_and_slop(
            terms
                .iter()
                .enumerate()
                .map(|(i, t)| (i, term(t)))
                .collect(),
            slop,
        )),
    }
}

/// The range `gte..=lte` (absent bounds unbounded) over the numeric or date field `mapped`,
/// bounds rounded inwards on integer fields, as apcache's `range_query` takes them.
fn range(
    mapped: &MappedField,
    name: &str,
    gte: &Value,
    lte: &Value,
) -> Result<Box<dyn Query>, String> {
    let number = |v: &Value| {
        v.as_f64()
            .ok_or_else(|| format!("[range] on [{name}]: {v} is not a number"))
    };
    let field = mapped.field;
    // (lower, upper) in the field's terms, or None when nothing can match.
    let bounds: Option<(Bound<Term>, Bound<Term>)> = match &mapped.kind {
        Kind::Integer(_) | Kind::Date(_) => {
            let end = |v: &Value, up: bool| -> Result<Option<i64>, String> {
                if v.is_null() {
                    return Ok(None);
                }
                if let Some(i) = v.as_i64() {
                    return Ok(Some(i));
                }
                let f = number(v)?;
                let rounded = if up { f.ceil() } else { f.floor() };
                // `as` saturates beyond i64's range.
                Ok(Some(rounded as i64))
            };
            let (low, high) = (end(gte, true)?, end(lte, false)?);
            let term = |v: i64| match mapped.kind {
                Kind::Date(_) => Term::from_field_date(field, DateTime::from_timestamp_millis(v)),
                _ => Term::from_field_i64(field, v),
            };
            let lo = low.unwrap_or(i64::MIN);
            let hi = high.unwrap_or(i64::MAX);
            (lo <= hi).then(|| (Bound::Included(term(lo)), Bound::Included(term(hi))))
        }
        Kind::Double => {
            let low = if gte.is_null() {
                None
            } else {
                Some(number(gte)?)
            };
            let high = if lte.is_null() {
                None
            } else {
                Some(number(lte)?)
            };
            let lo = low.unwrap_or(f64::NEG_INFINITY);
            let hi = high.unwrap_or(f64::INFINITY);
            let bound = |v: Option<f64>| match v {
                Some(v) => Bound::Included(Term::from_field_f64(field, v)),
                None => Bound::Unbounded,
            };
            if low.is_none() && high.is_none() {
                return Ok(Box::new(ExistsQuery::new(mapped.name.clone(), false)));
            }
            (lo <= hi).then(|| (bound(low), bound(high)))
        }
        _ => {
            return Err(format!(
                "[range] on [{name}] is not supported by the tantivy peer"
            ))
        }
    };
    Ok(match bounds {
        Some((lower, upper)) => Box::new(RangeQuery::new(lower, upper)),
        None => Box::new(EmptyQuery),
    })
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::path::PathBuf;
    use std::time::Instant;

    use apcache_index::indexer::{build_index, IndexOptions};
    use apcache_index::ingest::Input;
    use apcache_index::search::{IndexReader, SearchOptions, Searcher as ApcacheSearcher};
    use serde_json::json;

    use super::*;
    use crate::document_queries::{self, DocumentQuery};

    /// Sort keys: (field, descending).
    type Sort = Vec<(String, bool)>;

    /// apcache's exact count of `query` (sorted by `sort` when not empty), and its hits.
    fn apcache_answer(
        reader: &IndexReader,
        mapping: &Mapping,
        query: &Value,
        sort: &[(String, bool)],
        k: usize,
    ) -> (u64, usize) {
        let parsed = document_queries::to_query(query, mapping).unwrap();
        let searcher = ApcacheSearcher::new(reader);
        if sort.is_empty() {
            let options = SearchOptions {
                k,
                count: true,
                ..SearchOptions::default()
            };
            let result = searcher.search(&parsed, &options).unwrap();
            (result.total_hits, result.hits.len())
        } else {
            let line = DocumentQuery {
                class: "sorted",
                query: query.clone(),
                sort: sort.to_vec(),
            };
            let keys = line.sort_keys(mapping).unwrap();
            let result = searcher.search_sorted(&parsed, &keys, k, None).unwrap();
            (result.total_hits, result.hits.len())
        }
    }

    /// Builds both engines' indices of the JSON lines `documents` under `mapping`.
    fn build_both(
        documents: &Path,
        mapping: &Mapping,
        work: &Path,
    ) -> (u64, TantivyDocuments, IndexReader) {
        let apcache_dir = work.join("apcache");
        let options = IndexOptions {
            mapping: Some(mapping.clone()),
            id_field: Some("id".into()),
            ..IndexOptions::default()
        };
        build_index(
            vec![Input::Path(documents.to_path_buf())],
            &apcache_dir,
            &options,
            |_, _| {},
        )
        .unwrap();
        let reader = IndexReader::open(&apcache_dir).unwrap();
        let tantivy_dir = work.join("tantivy");
        let indexed =
            TantivyDocuments::build(documents, mapping, "id", &tantivy_dir, 64 << 20).unwrap();
        let tantivy = TantivyDocuments::open(&tantivy_dir, mapping).unwrap();
        assert_eq!(tantivy.num_docs(), indexed);
        assert_eq!(tantivy.searcher.segment_readers().len(), 1);
        (indexed, tantivy, reader)
    }

    /// Checks that tantivy matches what apcache matches, on every path of `search`; returns
    /// apcache's count.
    fn agree(
        tantivy: &TantivyDocuments,
        reader: &IndexReader,
        mapping: &Mapping,
        query: &Value,
        sort: &[(String, bool)],
    ) -> u64 {
        let k = 10;
        let (expected, apcache_hits) = apcache_answer(reader, mapping, query, sort, k);
        assert_eq!(apcache_hits as u64, expected.min(k as u64), "{query}");
        let counted = tantivy.search(query, sort, k, true).unwrap();
        assert_eq!(
            counted.count, expected,
            "count of {query} sorted by {sort:?}"
        );
        assert_eq!(counted.hits as u64, expected.min(k as u64), "{query}");
        let top = tantivy.search(query, sort, k, false).unwrap();
        assert_eq!(top.hits as u64, expected.min(k as u64), "{query}");
        assert_eq!(top.count, top.hits as u64);
        let only = tantivy.search(query, sort, 0, false).unwrap();
        assert_eq!((only.count, only.hits), (expected, 0), "{query}");
        expected
    }

    fn term(field: &str, value: &str) -> Value {
        json!({"term": {"field": field, "value": value}})
    }

    fn phrase(terms: &[&str], slop: u32) -> Value {
        json!({"phrase": {"field": "body", "terms": terms, "slop": slop}})
    }

    #[test]
    fn hand_written_documents_match_as_in_apcache() {
        let mapping = Mapping::from_json(&json!({"dynamic": "strict", "properties": {
            "id": {"type": "keyword"},
            "body": {"type": "text"},
            "title": {"type": "text", "fields": {"keyword": {"type": "keyword", "ignore_above": 8}}},
            "tags": {"type": "keyword"},
            "home": {"type": "keyword"},
            "size": {"type": "long"},
            "score": {"type": "double"},
            "day": {"type": "date"},
            "ok": {"type": "boolean"},
            "meta": {"properties": {"lang": {"type": "keyword"}, "note": {"type": "text"}}}
        }}))
        .unwrap();
        let documents = [
            json!({"id": "a", "body": "the quick brown fox", "title": "Short", "tags": ["x", "y"],
                   "home": "", "size": 10, "score": 1.5, "day": "2024-01-02", "ok": true,
                   "meta": {"lang": "en", "note": "first note"}}),
            json!({"id": "b", "body": ["quick", "brown fox jumps"], "title": "A much longer title",
                   "tags": [], "size": 20, "score": 2.5, "ok": false}),
            json!({"id": "c", "body": "fox fox and a brown quick fox", "title": "",
                   "tags": ["y"], "home": "h", "size": "30", "meta": {"lang": "de"}}),
            json!({"id": "d", "body": "fox brown", "size": 40.7}),
            json!({"id": "e", "body": "", "tags": "z", "home": "h"}),
            json!({"id": "f", "body": "very very quick", "size": -5}),
            json!({"id": "g", "body": "very quick very", "title": ["one two", "three four"]}),
            // Refused by apcache, so skipped here too: a repeated id, an unknown field, a word
            // where a number is mapped, a metadata field, a sub-field named as a field.
            json!({"id": "a", "body": "duplicate quick"}),
            json!({"id": "h", "body": "quick", "unknown": 1}),
            json!({"id": "i", "body": "quick", "size": "many"}),
            json!({"id": "j", "body": "quick", "_source": {}}),
            json!({"id": "k", "body": "quick", "title.keyword": "x"}),
        ];
        let work = tempfile::tempdir().unwrap();
        let file = work.path().join("docs.jsonl");
        let mut out = std::fs::File::create(&file).unwrap();
        for document in &documents {
            writeln!(out, "{document}").unwrap();
        }
        writeln!(out, "not json").unwrap();
        drop(out);
        let (indexed, tantivy, reader) = build_both(&file, &mapping, work.path());
        assert_eq!(indexed, 7);
        assert_eq!(reader.max_doc(), 7);

        let sorted = |field: &str, descending: bool| vec![(field.to_owned(), descending)];
        // (query, sort, the count expected)
        let cases: Vec<(Value, Sort, u64)> = vec![
            (term("body", "quick"), vec![], 5),
            (term("body", "Quick"), vec![], 0),
            (term("tags", "y"), vec![], 2),
            (term("tags", "z"), vec![], 1),
            (term("home", ""), vec![], 1),
            (term("title.keyword", "Short"), vec![], 1),
            (term("title.keyword", "A much longer title"), vec![], 0),
            (term("meta.lang", "de"), vec![], 1),
            (term("meta.note", "note"), vec![], 1),
            (phrase(&["quick", "brown"], 0), vec![], 1),
            // "quick" and "brown" are two values of one array in "b": TEXT_GAP apart; "brown
            // quick" in "c" is within a slop of 2.
            (phrase(&["quick", "brown"], 2), vec![], 2),
            (phrase(&["brown", "quick"], 0), vec![], 1),
            (phrase(&["quick", "brown"], 1), vec![], 1),
            (phrase(&["brown", "fox"], 0), vec![], 2),
            // Reversed within the slop: "fox brown" in d, "brown ... fox" in others.
            (phrase(&["fox", "brown"], 2), vec![], 4),
            (phrase(&["fox", "fox"], 0), vec![], 1),
            (phrase(&["fox", "fox"], 1), vec![], 1),
            (phrase(&["very", "very"], 0), vec![], 1),
            (phrase(&["very", "very"], 1), vec![], 2),
            (phrase(&["quick", "quick"], 3), vec![], 0),
            (phrase(&["quick"], 0), vec![], 5),
            (
                json!({"phrase": {"field": "title", "terms": ["two", "three"], "slop": 3}}),
                vec![],
                0,
            ),
            (
                json!({"phrase": {"field": "title", "terms": ["three", "four"]}}),
                vec![],
                1,
            ),
            (
                json!({"range": {"field": "size", "gte": 10, "lte": 30}}),
                vec![],
                3,
            ),
            (json!({"range": {"field": "size", "gte": 20}}), vec![], 3),
            (json!({"range": {"field": "size", "lte": 9.5}}), vec![], 1),
            (json!({"range": {"field": "size", "gte": 10.5}}), vec![], 3),
            (json!({"range": {"field": "size"}}), vec![], 5),
            (
                json!({"range": {"field": "size", "gte": 50, "lte": 1}}),
                vec![],
                0,
            ),
            (json!({"range": {"field": "score", "gte": 2.0}}), vec![], 1),
            (json!({"exists": {"field": "home"}}), vec![], 3),
            (json!({"exists": {"field": "tags"}}), vec![], 3),
            (json!({"exists": {"field": "title"}}), vec![], 4),
            (json!({"exists": {"field": "title.keyword"}}), vec![], 3),
            (json!({"exists": {"field": "body"}}), vec![], 7),
            (json!({"exists": {"field": "size"}}), vec![], 5),
            (json!({"exists": {"field": "day"}}), vec![], 1),
            (json!({"exists": {"field": "ok"}}), vec![], 2),
            (json!({"exists": {"field": "meta.note"}}), vec![], 1),
            (json!({"all": {}}), vec![], 7),
            (
                json!({"bool": {"must_not": [term("body", "quick")]}}),
                vec![],
                0,
            ),
            (json!({"bool": {}}), vec![], 0),
            (
                json!({"bool": {"should": [term("body", "jumps"), term("tags", "z")]}}),
                vec![],
                2,
            ),
            (
                json!({"bool": {"must": [term("body", "fox")], "should": [term("body", "jumps")]}}),
                vec![],
                4,
            ),
            (
                json!({"bool": {"filter": [json!({"exists": {"field": "home"}})],
                                "should": [term("body", "jumps")],
                                "must_not": [term("home", "")]}}),
                vec![],
                2,
            ),
            (
                json!({"bool": {"should": [term("body", "fox"), term("body", "very")],
                                "must_not": [term("tags", "y")]}}),
                vec![],
                4,
            ),
            (
                json!({"dis_max": {"queries": [term("body", "jumps"), term("title", "one")],
                                   "tie_breaker": 0.3}}),
                vec![],
                2,
            ),
            (
                json!({"boost": {"query": term("body", "fox"), "factor": 2.0}}),
                vec![],
                4,
            ),
            (term("body", "quick"), sorted("size", true), 5),
            (term("body", "quick"), sorted("size", false), 5),
            (term("body", "quick"), sorted("tags", false), 5),
            (json!({"all": {}}), sorted("title.keyword", true), 7),
            (json!({"all": {}}), sorted("score", true), 7),
        ];
        for (query, sort, expected) in &cases {
            let count = agree(&tantivy, &reader, &mapping, query, sort);
            assert_eq!(count, *expected, "{query}");
        }

        // What apcache refuses is refused here too.
        for query in [
            term("size", "10"),
            json!({"exists": {"field": "nothing"}}),
            json!({"wildcard": {}}),
            json!({"dis_max": {"queries": []}}),
            json!({"boost": {"query": {"all": {}}, "factor": -1.0}}),
        ] {
            assert!(document_queries::to_query(&query, &mapping).is_err());
            assert!(tantivy.search(&query, &[], 10, true).is_err(), "{query}");
        }
        let two_keys = [("size".to_owned(), true), ("tags".to_owned(), false)];
        assert!(tantivy
            .search(&json!({"all": {}}), &two_keys, 10, true)
            .is_err());
        assert!(tantivy
            .search(&json!({"all": {}}), &sorted("body", true), 10, true)
            .is_err());
    }

    /// The Debian documents of `docs/results/debian-mapping.json` (made by
    /// `shared/scripts/debian-packages.sh`).
    fn debian_documents() -> Option<PathBuf> {
        let path = PathBuf::from("/root/.cache/apcache-data/debian-packages.jsonl");
        path.is_file().then_some(path)
    }

    #[test]
    fn debian_documents_match_as_in_apcache() {
        let Some(documents) = debian_documents() else {
            eprintln!("skipped: no /root/.cache/apcache-data/debian-packages.jsonl");
            return;
        };
        let mapping_file =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/results/debian-mapping.json");
        let mapping = Mapping::from_json(
            &serde_json::from_str(&std::fs::read_to_string(mapping_file).unwrap()).unwrap(),
        )
        .unwrap();
        let work = tempfile::tempdir().unwrap();
        let started = Instant::now();
        let (indexed, tantivy, reader) = build_both(&documents, &mapping, work.path());
        let built = started.elapsed();
        assert_eq!(indexed, reader.max_doc());
        let parsed: Vec<Value> = std::io::BufReader::new(std::fs::File::open(&documents).unwrap())
            .lines()
            .map(|l| serde_json::from_str(&l.unwrap()).unwrap())
            .collect();
        assert_eq!(parsed.len() as u64, indexed + 4, "four ids repeat");
        let queries = document_queries::generate(&parsed, &Analyzer::default(), 45, 10);
        assert_eq!(queries.len(), 10 * document_queries::CLASSES.len());
        let (mut matched, mut empty) = (0u64, 0usize);
        for query in &queries {
            let count = agree(&tantivy, &reader, &mapping, &query.query, &query.sort);
            matched += count;
            empty += usize::from(count == 0);
        }
        eprintln!(
            "{indexed} documents indexed by both in {built:?}; {} queries ({empty} match \
             nothing), {matched} matches, all equal; {:?} in all",
            queries.len(),
            started.elapsed()
        );
        assert!(matched > 0 && empty < queries.len() / 10);
    }
}
