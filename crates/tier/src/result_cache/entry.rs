//! What a result-cache entry holds, packed: its key, in full, and the result.
//!
//! ```text
//! key:    generation u64 | k u32 | flags u8 (count, pruning) | scoring u8 | norms u8 |
//!         query (Query::canonical_key's packing; the query as given under exact matching)
//! entry:  key length u32 | key | result | sections u16 | (key length u32 | key | result)*
//! result: total u64 | exact u8 | hits u32 | (doc u32 | score f32)*
//! ```
//!
//! The full key is stored so that a lookup, which finds an entry by the key's 64-bit hash,
//! can compare the key itself: a hash collision is a miss, never another query's answer.
//! Sections hold the results of single-term queries stored inside the entry of a disjunction
//! of those terms (partial matching); each is the answer of its own key, evaluated as such.

use apcache_index::query::Query;
use apcache_index::search::{Hit, Norms, Scoring, SearchOptions, SearchResult};

/// A packed key and its hash.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ResultKey {
    bytes: Vec<u8>,
    hash: u64,
}

impl ResultKey {
    /// The key of `query` with `options` against the index generation `generation`; `query`
    /// is packed as [`Query::canonical_key`] when `canonical`, else as given.
    pub fn new(generation: u64, query: &Query, options: &SearchOptions, canonical: bool) -> Self {
        let mut bytes = Vec::with_capacity(KEY_CAPACITY);
        bytes.extend_from_slice(&generation.to_le_bytes());
        bytes.extend_from_slice(&(options.k.min(u32::MAX as usize) as u32).to_le_bytes());
        bytes.push(u8::from(options.count) | u8::from(options.pruning) << 1);
        bytes.push(match options.scoring {
            Scoring::Bm25 => 0,
            Scoring::Bm25Fixed => 1,
        });
        bytes.push(match options.norms {
            Norms::Lucene => 0,
            Norms::Exact => 1,
        });
        if canonical {
            query.write_canonical_key(&mut bytes);
        } else {
            query.write_packed_key(&mut bytes);
        }
        let hash = hash(&bytes);
        ResultKey { bytes, hash }
    }

    /// The 64-bit hash the cache's policies and maps see.
    pub fn hash(&self) -> u64 {
        self.hash
    }

    /// The packed key.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The bytes of an entry of this key holding `hits` hits and no section.
    pub fn entry_len(&self, hits: usize) -> usize {
        4 + self.bytes.len() + result_len(hits) + 2
    }
}

/// Bytes a key is first given room for: the options and a query of a few short terms, so that
/// packing most keys allocates once.
const KEY_CAPACITY: usize = 96;

/// The packed bytes of a result of `hits` hits.
fn result_len(hits: usize) -> usize {
    8 + 1 + 4 + 8 * hits
}

/// FNV-1a, then a final mix: fast for short keys, and stable across runs (the key's hash
/// picks the shard, so a fixed hash keeps experiments repeatable).
pub(crate) fn hash(bytes: &[u8]) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^ (h >> 33)
}

/// A cached answer.
#[derive(Debug, Clone, PartialEq)]
pub struct CachedResult {
    /// Matching documents (exact when `total_hits_exact`).
    pub total_hits: u64,
    /// Whether `total_hits` is exact.
    pub total_hits_exact: bool,
    /// The best hits, best first.
    pub hits: Vec<Hit>,
}

impl CachedResult {
    /// The cacheable part of `result`.
    pub fn of(result: &SearchResult) -> CachedResult {
        CachedResult {
            total_hits: result.total_hits,
            total_hits_exact: result.total_hits_exact,
            hits: result.hits.clone(),
        }
    }

    fn packed_len(&self) -> usize {
        result_len(self.hits.len())
    }

    fn pack(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.total_hits.to_le_bytes());
        out.push(u8::from(self.total_hits_exact));
        out.extend_from_slice(&(self.hits.len() as u32).to_le_bytes());
        for hit in &self.hits {
            out.extend_from_slice(&hit.doc.to_le_bytes());
            out.extend_from_slice(&hit.score.to_le_bytes());
        }
    }

    /// Moves `pos` past a packed result without unpacking it.
    fn skip(bytes: &[u8], pos: &mut usize) -> Option<()> {
        take(bytes, pos, 9)?;
        let n = u32::from_le_bytes(take(bytes, pos, 4)?.try_into().ok()?) as usize;
        take(bytes, pos, n.checked_mul(8)?)?;
        Some(())
    }

    fn unpack(bytes: &[u8], pos: &mut usize) -> Option<CachedResult> {
        let total_hits = u64::from_le_bytes(take(bytes, pos, 8)?.try_into().ok()?);
        let total_hits_exact = take(bytes, pos, 1)?[0] != 0;
        let n = u32::from_le_bytes(take(bytes, pos, 4)?.try_into().ok()?) as usize;
        let packed = take(bytes, pos, n.checked_mul(8)?)?;
        let hits = packed
            .chunks_exact(8)
            .map(|h| Hit {
                doc: u32::from_le_bytes(h[..4].try_into().expect("4")),
                score: f32::from_le_bytes(h[4..].try_into().expect("4")),
            })
            .collect();
        Some(CachedResult {
            total_hits,
            total_hits_exact,
            hits,
        })
    }
}

fn take<'a>(bytes: &'a [u8], pos: &mut usize, len: usize) -> Option<&'a [u8]> {
    let slice = bytes.get(*pos..pos.checked_add(len)?)?;
    *pos += len;
    Some(slice)
}

fn put_key(key: &ResultKey, out: &mut Vec<u8>) {
    out.extend_from_slice(&(key.bytes.len() as u32).to_le_bytes());
    out.extend_from_slice(&key.bytes);
}

fn get_key<'a>(bytes: &'a [u8], pos: &mut usize) -> Option<&'a [u8]> {
    let len = u32::from_le_bytes(take(bytes, pos, 4)?.try_into().ok()?) as usize;
    take(bytes, pos, len)
}

/// An entry: its key's result and the sections it holds, packed into `out` (cleared first,
/// so that a buffer kept between insertions allocates only while it grows).
pub(crate) fn pack_entry_into(
    key: &ResultKey,
    result: &CachedResult,
    sections: &[(ResultKey, CachedResult)],
    out: &mut Vec<u8>,
) {
    let len = 4
        + key.bytes.len()
        + result.packed_len()
        + 2
        + sections
            .iter()
            .map(|(k, r)| 4 + k.bytes.len() + r.packed_len())
            .sum::<usize>();
    out.clear();
    out.reserve(len);
    put_key(key, out);
    result.pack(out);
    out.extend_from_slice(&(sections.len().min(u16::MAX as usize) as u16).to_le_bytes());
    for (k, r) in sections.iter().take(u16::MAX as usize) {
        put_key(k, out);
        r.pack(out);
    }
}

/// [`pack_entry_into`] a new buffer.
#[cfg(test)]
pub(crate) fn pack_entry(
    key: &ResultKey,
    result: &CachedResult,
    sections: &[(ResultKey, CachedResult)],
) -> Vec<u8> {
    let mut out = Vec::new();
    pack_entry_into(key, result, sections, &mut out);
    out
}

/// The result for `key` in a packed entry: its own when the entry's key is `key`, else that
/// of a section whose key is `key`.
pub(crate) fn find_in_entry(entry: &[u8], key: &[u8]) -> Option<(CachedResult, bool)> {
    let mut pos = 0;
    let own = get_key(entry, &mut pos)?;
    if own == key {
        return Some((CachedResult::unpack(entry, &mut pos)?, false));
    }
    CachedResult::skip(entry, &mut pos)?;
    let sections = u16::from_le_bytes(take(entry, &mut pos, 2)?.try_into().ok()?);
    for _ in 0..sections {
        let section_key = get_key(entry, &mut pos)?;
        if section_key == key {
            return Some((CachedResult::unpack(entry, &mut pos)?, true));
        }
        CachedResult::skip(entry, &mut pos)?;
    }
    None
}

/// The keys of the sections of a packed entry.
pub(crate) fn section_keys(entry: &[u8]) -> Vec<Vec<u8>> {
    let mut pos = 0;
    let mut keys = Vec::new();
    let parse = |pos: &mut usize, keys: &mut Vec<Vec<u8>>| -> Option<()> {
        get_key(entry, pos)?;
        CachedResult::skip(entry, pos)?;
        let sections = u16::from_le_bytes(take(entry, pos, 2)?.try_into().ok()?);
        for _ in 0..sections {
            keys.push(get_key(entry, pos)?.to_vec());
            CachedResult::skip(entry, pos)?;
        }
        Some(())
    };
    let _ = parse(&mut pos, &mut keys);
    keys
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(n: u32) -> CachedResult {
        CachedResult {
            total_hits: u64::from(n) * 7,
            total_hits_exact: n.is_multiple_of(2),
            hits: (0..n)
                .map(|i| Hit {
                    doc: i * 3,
                    score: 10.0 - i as f32,
                })
                .collect(),
        }
    }

    #[test]
    fn entries_round_trip_and_find_their_sections() {
        let options = SearchOptions::default();
        let q = |t: &str| Query::Term(t.into());
        let key = ResultKey::new(3, &q("or-query"), &options, true);
        let a = ResultKey::new(3, &q("a"), &options, true);
        let b = ResultKey::new(3, &q("b"), &options, true);
        let other = ResultKey::new(4, &q("a"), &options, true);
        let entry = pack_entry(
            &key,
            &result(5),
            &[(a.clone(), result(2)), (b.clone(), result(0))],
        );
        assert_eq!(find_in_entry(&entry, key.bytes()), Some((result(5), false)));
        assert_eq!(find_in_entry(&entry, a.bytes()), Some((result(2), true)));
        assert_eq!(find_in_entry(&entry, b.bytes()), Some((result(0), true)));
        assert_eq!(
            find_in_entry(&entry, other.bytes()),
            None,
            "another generation"
        );
        assert_eq!(
            section_keys(&entry),
            vec![a.bytes().to_vec(), b.bytes().to_vec()]
        );
        assert_eq!(find_in_entry(&entry[..entry.len() - 1], b.bytes()), None);
    }

    #[test]
    fn keys_differ_in_every_option() {
        let q = Query::Term("x".into());
        let base = SearchOptions::default();
        let key = |g, o: SearchOptions| ResultKey::new(g, &q, &o, true);
        let keys = [
            key(1, base),
            key(2, base),
            key(1, SearchOptions { k: 11, ..base }),
            key(
                1,
                SearchOptions {
                    count: true,
                    ..base
                },
            ),
            key(
                1,
                SearchOptions {
                    pruning: false,
                    ..base
                },
            ),
            key(
                1,
                SearchOptions {
                    scoring: Scoring::Bm25Fixed,
                    ..base
                },
            ),
            key(
                1,
                SearchOptions {
                    norms: Norms::Exact,
                    ..base
                },
            ),
        ];
        for (i, x) in keys.iter().enumerate() {
            for y in &keys[i + 1..] {
                assert_ne!(x.bytes(), y.bytes());
            }
        }
    }
}
