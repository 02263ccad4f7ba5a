//! The field norms file: the norms of each named text field of a segment.
//!
//! BM25 as Lucene computes it normalises a term's frequency by the length of the document *in
//! the term's field*, against the field's average length: a word in a short `summary` weighs
//! more than the same word in a long `description`. The norms file keeps the lengths of the
//! default field (a tab-separated document's title and body); this file keeps, for every text
//! field indexed under its own name, the same norms body ([`super::NormsFile`]) over all the
//! segment's documents (length 0 where a document lacks the field), and the two figures the
//! field's BM25 needs: how many documents have the field, and its tokens in all.
//!
//! ```text
//! body:  field count u32 | entry × count | norms bodies
//! entry: name length u16 | name (UTF-8) | documents u64 | tokens u64 | offset u64 | length u64
//! ```
//!
//! Entries are in increasing byte order of their names. A field's norms body starts `offset`
//! bytes after the last entry and takes `length` bytes; the bodies follow one another in entry
//! order and the last ends the file's body.

use super::norms::{encode_norms, NormsFile};

/// The lengths of one named text field over a segment's documents, in local order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldLengths {
    /// Each field's name and its documents' lengths (0 where a document lacks it), in
    /// increasing byte order of the names.
    fields: Vec<(String, Vec<u32>)>,
}

impl FieldLengths {
    /// No fields.
    pub fn new() -> FieldLengths {
        FieldLengths::default()
    }

    /// Whether no field is held.
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }

    /// Sets document `local`'s length in `field` (documents before it that lack the field read
    /// length 0).
    pub fn set(&mut self, field: &str, local: u32, length: u32) {
        let at = match self
            .fields
            .binary_search_by(|(name, _)| name.as_str().cmp(field))
        {
            Ok(at) => at,
            Err(at) => {
                self.fields.insert(at, (field.to_owned(), Vec::new()));
                at
            }
        };
        let lengths = &mut self.fields[at].1;
        if lengths.len() <= local as usize {
            lengths.resize(local as usize + 1, 0);
        }
        lengths[local as usize] = length;
    }

    /// The fields and their lengths, in name order.
    pub fn fields(&self) -> &[(String, Vec<u32>)] {
        &self.fields
    }

    /// Bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.fields
            .iter()
            .map(|(name, lengths)| name.len() + lengths.capacity() * 4)
            .sum()
    }
}

/// Bytes of an entry besides its name.
const ENTRY_FIXED_LEN: usize = 2 + 4 * 8;

/// The field norms body of `fields` (names in increasing byte order, each with its
/// documents' lengths), every field padded to `documents` documents.
pub fn encode_field_norms(fields: &[(&str, &[u32])], documents: u32) -> Vec<u8> {
    let bodies: Vec<Vec<u8>> = fields
        .iter()
        .map(|(_, lengths)| {
            let mut padded = lengths.to_vec();
            padded.resize(documents as usize, 0);
            encode_norms(&padded)
        })
        .collect();
    let mut body = Vec::new();
    body.extend_from_slice(&(fields.len() as u32).to_le_bytes());
    let mut offset = 0u64;
    for ((name, lengths), norms) in fields.iter().zip(&bodies) {
        body.extend_from_slice(&(name.len() as u16).to_le_bytes());
        body.extend_from_slice(name.as_bytes());
        let documents = lengths.iter().filter(|&&l| l > 0).count() as u64;
        let tokens: u64 = lengths.iter().map(|&l| u64::from(l)).sum();
        for value in [documents, tokens, offset, norms.len() as u64] {
            body.extend_from_slice(&value.to_le_bytes());
        }
        offset += norms.len() as u64;
    }
    for norms in &bodies {
        body.extend_from_slice(norms);
    }
    body
}

/// One field of a field norms file.
#[derive(Debug, Clone, Copy)]
pub struct FieldNorms<'a> {
    /// The field's name.
    pub name: &'a str,
    /// Documents with at least one token in the field.
    pub documents: u64,
    /// Tokens of the field in all documents.
    pub tokens: u64,
    /// Its documents' norms.
    pub norms: NormsFile<'a>,
}

/// A field norms body, its layout checked.
#[derive(Debug, Clone, Default)]
pub struct FieldNormsFile<'a> {
    fields: Vec<FieldNorms<'a>>,
}

impl<'a> FieldNormsFile<'a> {
    /// The field norms body of a segment of `documents` documents; an error says what in its
    /// layout is wrong.
    pub fn new(body: &'a [u8], documents: u32) -> Result<FieldNormsFile<'a>, String> {
        let mut at = 0usize;
        let mut take = |n: usize| -> Result<&'a [u8], String> {
            let bytes = body
                .get(at..at + n)
                .ok_or_else(|| format!("{} bytes end inside the table of fields", body.len()))?;
            at += n;
            Ok(bytes)
        };
        let u64_of = |bytes: &[u8]| u64::from_le_bytes(bytes.try_into().expect("8 bytes"));
        let count = u32::from_le_bytes(take(4)?.try_into().expect("4 bytes")) as usize;
        // Every entry takes at least its fixed part: a count the body cannot hold is refused
        // before anything is allocated for it.
        if count > body.len() / ENTRY_FIXED_LEN {
            return Err(format!("{count} fields do not fit in {} bytes", body.len()));
        }
        let mut entries = Vec::with_capacity(count);
        for _ in 0..count {
            let name_len = u16::from_le_bytes(take(2)?.try_into().expect("2 bytes")) as usize;
            let name = std::str::from_utf8(take(name_len)?)
                .map_err(|_| "a field name that is not UTF-8".to_string())?;
            let fixed = take(32)?;
            let figures: Vec<u64> = fixed.chunks_exact(8).map(u64_of).collect();
            entries.push((name, figures[0], figures[1], figures[2], figures[3]));
        }
        let bodies = &body[at..];
        let mut expected = 0u64;
        let mut fields = Vec::with_capacity(count);
        for (i, (name, with_field, tokens, offset, length)) in entries.into_iter().enumerate() {
            if i > 0 && fields.last().is_some_and(|f: &FieldNorms| f.name >= name) {
                return Err(format!("field [{name}] out of order"));
            }
            if offset != expected {
                return Err(format!(
                    "field [{name}]: norms at {offset}, expected at {expected}"
                ));
            }
            let end = offset
                .checked_add(length)
                .filter(|&end| end <= bodies.len() as u64)
                .ok_or_else(|| format!("field [{name}]: norms run past the end of the file"))?;
            let norms = NormsFile::new(&bodies[offset as usize..end as usize], documents)
                .map_err(|what| format!("field [{name}]: {what}"))?;
            if with_field > u64::from(documents) {
                return Err(format!(
                    "field [{name}]: {with_field} documents with it, the segment has {documents}"
                ));
            }
            fields.push(FieldNorms {
                name,
                documents: with_field,
                tokens,
                norms,
            });
            expected = end;
        }
        if expected != bodies.len() as u64 {
            return Err(format!(
                "{} bytes of norms, the fields take {expected}",
                bodies.len()
            ));
        }
        Ok(FieldNormsFile { fields })
    }

    /// The fields, in name order.
    pub fn fields(&self) -> &[FieldNorms<'a>] {
        &self.fields
    }

    /// The norms of `field`.
    pub fn field(&self, field: &str) -> Option<&FieldNorms<'a>> {
        self.fields
            .binary_search_by(|f| f.name.cmp(field))
            .ok()
            .map(|at| &self.fields[at])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Written and read back: every field's lengths, documents and tokens as a plain map
        /// of the same lengths says; and any truncation of the body is refused, never a panic.
        #[test]
        fn reads_back_what_was_written(
            fields in prop::collection::btree_map("[a-z.]{1,6}", prop::collection::vec(0u32..3000, 0..40), 0..4),
            documents in 0u32..50,
            cut in 0usize..2000,
        ) {
            let mut lengths = FieldLengths::new();
            for (name, values) in &fields {
                for (local, &length) in values.iter().enumerate().take(documents as usize) {
                    lengths.set(name, local as u32, length);
                }
            }
            let listed: Vec<(&str, &[u32])> = lengths
                .fields()
                .iter()
                .map(|(name, lengths)| (name.as_str(), lengths.as_slice()))
                .collect();
            let body = encode_field_norms(&listed, documents);
            let file = FieldNormsFile::new(&body, documents).unwrap();
            let kept: Vec<&(String, Vec<u32>)> = lengths.fields().iter().collect();
            prop_assert_eq!(file.fields().len(), kept.len());
            for (read, (name, written)) in file.fields().iter().zip(kept) {
                prop_assert_eq!(read.name, name.as_str());
                let mut padded = written.clone();
                padded.resize(documents as usize, 0);
                prop_assert_eq!(read.norms.lengths(), padded.clone());
                prop_assert_eq!(read.documents, padded.iter().filter(|&&l| l > 0).count() as u64);
                prop_assert_eq!(read.tokens, padded.iter().map(|&l| u64::from(l)).sum::<u64>());
                prop_assert!(file.field(name).is_some());
            }
            if cut < body.len() {
                prop_assert!(FieldNormsFile::new(&body[..cut], documents).is_err());
            }
        }
    }
}
