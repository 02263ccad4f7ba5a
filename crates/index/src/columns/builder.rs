//! [`ColumnsBuilder`]: collects a segment's field values as documents are indexed, and encodes
//! the columns body at the end.
//!
//! Values arrive document by document, fields interleaved; a column needs them field by field.
//! The builder keeps, per field, the documents and values in arrival order (two parallel
//! vectors: 12 bytes a numeric value, 8 a keyword) and, for keywords, each distinct string once
//! with the id of its first appearance. [`ColumnsBuilder::finish`] sorts each dictionary,
//! turns ids into ordinals, sorts each document's values and writes the columns.

use std::mem::size_of;

use rustc_hash::{FxBuildHasher, FxHashMap};

use super::{keyword, numeric, ColumnKind, ColumnsError, MAX_FIELD_NAME_LEN, MAX_KEYWORD_LEN};

/// Collects `(field, document, value)` and encodes a columns body.
#[derive(Debug, Default)]
pub struct ColumnsBuilder {
    columns: hashbrown::HashMap<String, Pending, FxBuildHasher>,
    /// The last document given a value: documents arrive in increasing order.
    last_doc: u32,
}

/// A column's values so far.
#[derive(Debug)]
enum Pending {
    Numeric {
        docs: Vec<u32>,
        values: Vec<i64>,
    },
    Keyword {
        docs: Vec<u32>,
        /// The id of each value: its string's rank among the column's distinct strings by
        /// first appearance.
        ids: Vec<u32>,
        interned: FxHashMap<Box<str>, u32>,
        /// Bytes of the distinct strings.
        interned_bytes: usize,
    },
}

impl Pending {
    fn new(kind: ColumnKind) -> Pending {
        match kind {
            ColumnKind::Numeric => Pending::Numeric {
                docs: Vec::new(),
                values: Vec::new(),
            },
            ColumnKind::Keyword => Pending::Keyword {
                docs: Vec::new(),
                ids: Vec::new(),
                interned: FxHashMap::default(),
                interned_bytes: 0,
            },
        }
    }

    fn kind(&self) -> ColumnKind {
        match self {
            Pending::Numeric { .. } => ColumnKind::Numeric,
            Pending::Keyword { .. } => ColumnKind::Keyword,
        }
    }

    fn last_doc(&self) -> Option<u32> {
        match self {
            Pending::Numeric { docs, .. } | Pending::Keyword { docs, .. } => docs.last().copied(),
        }
    }

    fn heap_bytes(&self) -> usize {
        match self {
            Pending::Numeric { docs, values } => {
                docs.capacity() * size_of::<u32>() + values.capacity() * size_of::<i64>()
            }
            Pending::Keyword {
                docs,
                ids,
                interned,
                interned_bytes,
            } => {
                (docs.capacity() + ids.capacity()) * size_of::<u32>()
                    + interned.capacity() * (size_of::<(Box<str>, u32)>() + 1)
                    + interned_bytes
            }
        }
    }
}

impl ColumnsBuilder {
    /// An empty builder.
    pub fn new() -> ColumnsBuilder {
        ColumnsBuilder::default()
    }

    /// Makes `field` a column of `kind` even if no document gives it a value (its column then
    /// says so); an error if its values are of the other kind.
    pub fn declare(&mut self, field: &str, kind: ColumnKind) -> Result<(), ColumnsError> {
        let column = self.column(field, kind)?;
        match column.kind() {
            found if found == kind => Ok(()),
            found => Err(wrong_kind(field, found, kind)),
        }
    }

    /// Adds `value` to the values of `field` in local document `doc`. Documents arrive in
    /// increasing order; a document's values in any order, fields interleaved. A field's
    /// kind is fixed by its first value.
    pub fn add_numeric(&mut self, field: &str, doc: u32, value: i64) -> Result<(), ColumnsError> {
        self.check_order(field, doc)?;
        match self.column(field, ColumnKind::Numeric)? {
            Pending::Numeric { docs, values } => {
                docs.push(doc);
                values.push(value);
            }
            other => return Err(wrong_kind(field, other.kind(), ColumnKind::Numeric)),
        }
        self.last_doc = doc;
        Ok(())
    }

    /// Adds `value` (at most [`MAX_KEYWORD_LEN`] bytes) to the values of `field` in local
    /// document `doc`, as [`ColumnsBuilder::add_numeric`] does.
    pub fn add_keyword(&mut self, field: &str, doc: u32, value: &str) -> Result<(), ColumnsError> {
        self.check_order(field, doc)?;
        if value.len() > MAX_KEYWORD_LEN {
            return Err(ColumnsError::ValueTooLong {
                field: field.to_owned(),
                doc,
                len: value.len(),
            });
        }
        let Pending::Keyword {
            docs,
            ids,
            interned,
            interned_bytes,
        } = self.column(field, ColumnKind::Keyword)?
        else {
            let found = self.columns[field].kind();
            return Err(wrong_kind(field, found, ColumnKind::Keyword));
        };
        let id = match interned.get(value) {
            Some(&id) => id,
            None => {
                let id = interned.len() as u32;
                interned.insert(value.into(), id);
                *interned_bytes += value.len();
                id
            }
        };
        docs.push(doc);
        ids.push(id);
        self.last_doc = doc;
        Ok(())
    }

    fn check_order(&self, field: &str, doc: u32) -> Result<(), ColumnsError> {
        if doc < self.last_doc {
            return Err(ColumnsError::DocOutOfOrder {
                field: field.to_owned(),
                previous: self.last_doc,
                got: doc,
            });
        }
        Ok(())
    }

    /// The column of `field`, made of `kind` if new (an existing column may be of the other
    /// kind).
    fn column(&mut self, field: &str, kind: ColumnKind) -> Result<&mut Pending, ColumnsError> {
        if field.len() > MAX_FIELD_NAME_LEN {
            return Err(ColumnsError::FieldNameTooLong { len: field.len() });
        }
        Ok(self
            .columns
            .entry_ref(field)
            .or_insert_with(|| Pending::new(kind)))
    }

    /// Whether no column was declared or given a value (a segment without columns has no
    /// columns file).
    pub fn is_empty(&self) -> bool {
        self.columns.is_empty()
    }

    /// Bytes the builder holds on the heap (about: the tables' capacities, the strings).
    pub fn heap_bytes(&self) -> usize {
        self.columns.capacity() * (size_of::<(String, Pending)>() + 1)
            + self
                .columns
                .iter()
                .map(|(name, column)| name.len() + column.heap_bytes())
                .sum::<usize>()
    }

    /// Encodes every column for a segment of `doc_count` documents: the columns body. An
    /// error if a value was given to a document at or past `doc_count`.
    pub fn finish(self, doc_count: u32) -> Result<Vec<u8>, ColumnsError> {
        for (name, column) in &self.columns {
            if let Some(doc) = column.last_doc().filter(|&doc| doc >= doc_count) {
                return Err(ColumnsError::DocOutOfRange {
                    field: name.to_string(),
                    doc,
                    doc_count,
                });
            }
        }
        let mut columns: Vec<(String, Pending)> = self.columns.into_iter().collect();
        let count = columns.len() as u32;
        columns.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let mut body = Vec::new();
        let mut directory = Vec::new();
        for (name, column) in columns {
            let start = body.len();
            let kind = column.kind();
            match column {
                Pending::Numeric { docs, mut values } => {
                    for run in runs(&docs) {
                        values[run].sort_unstable();
                    }
                    numeric::encode(&docs, &values, doc_count, &mut body);
                }
                Pending::Keyword {
                    docs,
                    ids,
                    interned,
                    ..
                } => {
                    let (docs, ordinals, dictionary) = ordinals(docs, ids, &interned);
                    keyword::encode(&docs, &ordinals, &dictionary, doc_count, &mut body);
                }
            }
            directory.extend_from_slice(&(name.len() as u16).to_le_bytes());
            directory.extend_from_slice(name.as_bytes());
            directory.push(kind.code());
            directory.extend_from_slice(&((body.len() - start) as u64).to_le_bytes());
        }
        let directory_offset = body.len() as u64;
        body.extend_from_slice(&directory);
        body.extend_from_slice(&count.to_le_bytes());
        body.extend_from_slice(&directory_offset.to_le_bytes());
        Ok(body)
    }
}

fn wrong_kind(field: &str, kind: ColumnKind, got: ColumnKind) -> ColumnsError {
    ColumnsError::WrongKind {
        field: field.to_owned(),
        kind,
        got,
    }
}

/// The ranges of equal documents in `docs`.
fn runs(docs: &[u32]) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
    let mut start = 0;
    docs.chunk_by(|a, b| a == b).map(move |run| {
        start += run.len();
        start - run.len()..start
    })
}

/// A keyword column's values as ordinals into its sorted dictionary: the documents and
/// ordinals (each document's ascending, without duplicates) and the dictionary.
fn ordinals(
    mut docs: Vec<u32>,
    ids: Vec<u32>,
    interned: &FxHashMap<Box<str>, u32>,
) -> (Vec<u32>, Vec<u32>, Vec<&str>) {
    let mut dictionary: Vec<(&str, u32)> = interned.iter().map(|(s, &id)| (&**s, id)).collect();
    dictionary.sort_unstable();
    let mut ordinal_of_id = vec![0u32; dictionary.len()];
    for (ordinal, &(_, id)) in dictionary.iter().enumerate() {
        ordinal_of_id[id as usize] = ordinal as u32;
    }
    let mut ordinals: Vec<u32> = ids.iter().map(|&id| ordinal_of_id[id as usize]).collect();
    let mut kept = 0;
    let mut start = 0;
    while start < docs.len() {
        let doc = docs[start];
        let end = start + docs[start..].iter().take_while(|&&d| d == doc).count();
        ordinals[start..end].sort_unstable();
        let mut previous = None;
        for at in start..end {
            let ordinal = ordinals[at];
            if previous != Some(ordinal) {
                ordinals[kept] = ordinal;
                docs[kept] = doc;
                kept += 1;
                previous = Some(ordinal);
            }
        }
        start = end;
    }
    docs.truncate(kept);
    ordinals.truncate(kept);
    (
        docs,
        ordinals,
        dictionary.into_iter().map(|(s, _)| s).collect(),
    )
}
