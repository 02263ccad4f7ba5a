//! [`ResultCache`]: answers of queries seen before, kept in a fixed heap.
//!
//! A request's [`ResultKey`] (the query, its options and the index generation) is looked up
//! before the request is queued; a hit answers it at once, without evaluation. On a miss the
//! query is evaluated and its answer offered to the cache, which admits it or not (the
//! policy, and `min_postings`: only queries whose shortest posting list is at least that
//! long, since a short list is cheap to evaluate again).
//!
//! The cache is split into `shards` by key hash, each with its own lock, heap and policy: one
//! shard is one lock every query thread contends for, one shard per thread divides the bytes
//! (and so the hit rate) among them. Matching is exact, isomorphic (the canonical form of
//! the query is both the key and what is evaluated, so `b OR a` hits the entry of `a OR b`
//! and gets exactly what its own evaluation would give), or partial (isomorphic, and a
//! single-term query is also answered from the section a disjunction's entry holds for
//! that term; the section is that term's own evaluation, so the answer is exact too).
//!
//! `partial2` goes past exact answers: a disjunction or conjunction of terms that finds no
//! entry of its own may be answered from the entry of a subset of its terms (the same
//! operator over fewer terms, or a single term, found as an entry or a section), largest
//! subsets first ([`ResultCache::get_approximate`]). Such an answer is not what evaluation
//! would return (a disjunction's answer misses the documents only the other terms match, a
//! conjunction's includes documents the other terms do not), so it is marked approximate
//! wherever it goes, and its count is never exact. What it costs in quality is measured by
//! the result-cache experiment (recall and NDCG at 10 against evaluation).

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use apcache_index::query::Query;
use apcache_index::search::SearchOptions;
use rustc_hash::FxHashMap;

use super::entry::{find_in_entry, pack_entry_into, section_keys, CachedResult, ResultKey};
use super::{Allocator, AllocatorKind, ByteHeap, HeapMemory, Key, Policy, PolicyKind};
use crate::region::TierRegion;

/// How a request is matched against the stored entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Matching {
    /// The same query, clause for clause.
    Exact,
    /// The same query up to the order of commuting clauses.
    Isomorphic,
    /// Isomorphic, and a single term from the section of a disjunction of terms that holds it.
    Partial1,
    /// Partial1, and approximate answers from the entry of a subset of the query's terms.
    Partial2,
}

impl Matching {
    /// Every kind, for the experiments.
    pub const ALL: [Matching; 4] = [
        Matching::Exact,
        Matching::Isomorphic,
        Matching::Partial1,
        Matching::Partial2,
    ];

    /// Whether single-term sections are stored and served (partial matching).
    pub fn uses_sections(self) -> bool {
        matches!(self, Matching::Partial1 | Matching::Partial2)
    }

    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Matching::Exact => "exact",
            Matching::Isomorphic => "isomorphic",
            Matching::Partial1 => "partial1",
            Matching::Partial2 => "partial2",
        }
    }

    /// The kind named `name`.
    pub fn from_name(name: &str) -> Option<Matching> {
        Matching::ALL.into_iter().find(|m| m.name() == name)
    }
}

/// How a result cache is set up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResultCacheConfig {
    /// Bytes of the heap, all shards together.
    pub bytes: u64,
    /// Replacement policy.
    pub policy: PolicyKind,
    /// Allocator inside the heap.
    pub allocator: AllocatorKind,
    /// How requests match entries.
    pub matching: Matching,
    /// Admit only queries whose shortest posting list has at least this many postings.
    pub min_postings: u64,
    /// Independent shards (by key hash), each with its own lock.
    pub shards: usize,
    /// Seed of the random policy.
    pub seed: u64,
}

impl Default for ResultCacheConfig {
    fn default() -> Self {
        ResultCacheConfig {
            bytes: 64 << 20,
            policy: PolicyKind::Lru,
            allocator: AllocatorKind::Tlsf,
            matching: Matching::Isomorphic,
            min_postings: 1,
            shards: 1,
            seed: 1,
        }
    }
}

/// A stored entry.
#[derive(Debug, Clone, Copy)]
struct Stored {
    offset: u32,
    len: u32,
}

struct Shard {
    heap: ByteHeap<HeapMemory, Box<dyn Allocator + Send>>,
    policy: Box<dyn Policy + Send>,
    entries: FxHashMap<Key, Stored>,
    /// Sections by the hash of their key: the hash of the entry that holds them.
    sections: FxHashMap<Key, Key>,
}

/// The cache's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ResultCacheCounters {
    /// Lookups answered from an entry's own result.
    pub hits: u64,
    /// Lookups answered from a section of another entry (partial matching).
    pub section_hits: u64,
    /// Lookups that found nothing.
    pub misses: u64,
    /// Of the misses, requests then answered approximately from the entry of a subset of
    /// their terms (`partial2`).
    pub approximate_hits: u64,
    /// Results stored.
    pub admissions: u64,
    /// Results refused (by the policy, the admission threshold, or too large for a shard).
    pub refusals: u64,
    /// Entries evicted.
    pub evictions: u64,
    /// Of the evictions, those made because the heap had no free block large enough for a
    /// new entry while the policy was within its capacity: what fragmentation cost.
    pub fragmentation_evictions: u64,
    /// Bytes held by entries now.
    pub bytes: u64,
    /// Entries now.
    pub entries: u64,
    /// Heap bytes now free but in blocks smaller than the largest, over all shards.
    pub unusable_bytes: u64,
}

/// Allocation times, in 20 ns buckets up to 20 µs.
struct AllocTimes {
    buckets: Vec<AtomicU64>,
}

const ALLOC_BUCKET_NS: u64 = 20;

impl AllocTimes {
    fn new() -> AllocTimes {
        AllocTimes {
            buckets: (0..1001).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    fn record(&self, ns: u64) {
        let i = ((ns / ALLOC_BUCKET_NS) as usize).min(self.buckets.len() - 1);
        self.buckets[i].fetch_add(1, Ordering::Relaxed);
    }

    fn percentile(&self, p: f64) -> Option<u64> {
        let counts: Vec<u64> = self
            .buckets
            .iter()
            .map(|b| b.load(Ordering::Relaxed))
            .collect();
        let total: u64 = counts.iter().sum();
        if total == 0 {
            return None;
        }
        let rank = ((total as f64 * p).ceil() as u64).max(1);
        let mut seen = 0;
        for (i, c) in counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Some((i as u64 + 1) * ALLOC_BUCKET_NS);
            }
        }
        None
    }
}

/// A cache of query results in a fixed heap. `Send + Sync`: query threads share one.
pub struct ResultCache {
    config: ResultCacheConfig,
    shards: Vec<Mutex<Shard>>,
    hits: AtomicU64,
    section_hits: AtomicU64,
    misses: AtomicU64,
    approximate_hits: AtomicU64,
    admissions: AtomicU64,
    refusals: AtomicU64,
    evictions: AtomicU64,
    fragmentation_evictions: AtomicU64,
    alloc_times: AllocTimes,
}

thread_local! {
    /// The buffer an entry is packed into before it is copied into the heap, kept per thread
    /// so that an insertion does not allocate.
    static PACKED: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// The most bytes [`PACKED`] keeps between insertions (an entry of a few thousand hits); a
/// larger entry's buffer is given back.
const PACKED_KEPT: usize = 64 << 10;

impl ResultCache {
    /// An empty cache of `config.bytes` bytes in `config.shards` shards.
    pub fn new(config: ResultCacheConfig) -> ResultCache {
        ResultCache::with_memory(config, |_, len| HeapMemory::dram(len))
    }

    /// A cache as [`ResultCache::new`] makes it, its heap in `region` (each shard a disjoint
    /// piece of it) instead of DRAM.
    ///
    /// # Panics
    ///
    /// If the region is smaller than `config.bytes`.
    pub fn in_region(config: ResultCacheConfig, region: Arc<TierRegion>) -> ResultCache {
        assert!(
            region.len() as u64 >= config.bytes,
            "a region of {} bytes for a heap of {}",
            region.len(),
            config.bytes
        );
        ResultCache::with_memory(config, |i, len| {
            HeapMemory::in_region(region.clone(), i * len, len)
        })
    }

    /// The heap of shard `i` of `len` bytes comes from `memory(i, len)`.
    fn with_memory(
        config: ResultCacheConfig,
        memory: impl Fn(usize, usize) -> HeapMemory,
    ) -> ResultCache {
        let shards = config.shards.max(1);
        let per_shard = (config.bytes / shards as u64).min(u64::from(u32::MAX) & !7) as u32;
        let shards = (0..shards)
            .map(|i| {
                Mutex::new(Shard {
                    heap: ByteHeap::new(
                        memory(i, per_shard as usize),
                        config.allocator.build(per_shard),
                    ),
                    policy: config
                        .policy
                        .build(u64::from(per_shard), config.seed.wrapping_add(i as u64)),
                    entries: FxHashMap::default(),
                    sections: FxHashMap::default(),
                })
            })
            .collect();
        ResultCache {
            config,
            shards,
            hits: AtomicU64::new(0),
            section_hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            approximate_hits: AtomicU64::new(0),
            admissions: AtomicU64::new(0),
            refusals: AtomicU64::new(0),
            evictions: AtomicU64::new(0),
            fragmentation_evictions: AtomicU64::new(0),
            alloc_times: AllocTimes::new(),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &ResultCacheConfig {
        &self.config
    }

    /// The form in which `query` must be evaluated for its answer to be cached: its canonical
    /// form unless matching is exact.
    pub fn evaluated_form(&self, query: &Query) -> Query {
        match self.config.matching {
            Matching::Exact => query.clone(),
            _ => query.canonical(),
        }
    }

    /// The key of `query` with `options`, against `generation`. A query as given and its
    /// [evaluated form](Self::evaluated_form) have the same key (the canonical key of a
    /// canonical form is its own), so a lookup needs only the query as asked, and the
    /// evaluated form is built on a miss.
    pub fn key(&self, generation: u64, query: &Query, options: &SearchOptions) -> ResultKey {
        ResultKey::new(
            generation,
            query,
            options,
            self.config.matching != Matching::Exact,
        )
    }

    /// The single terms a disjunction's entry holds sections for (partial matching): the
    /// terms of a query made only of optional single-term clauses, two or more of them.
    pub fn section_terms(&self, query: &Query) -> Vec<String> {
        if !self.config.matching.uses_sections() {
            return Vec::new();
        }
        match query {
            Query::Bool(b)
                if b.must.is_empty()
                    && b.must_not.is_empty()
                    && b.should.len() >= 2
                    && b.should.iter().all(|c| matches!(c, Query::Term(_))) =>
            {
                let mut terms: Vec<String> = b
                    .should
                    .iter()
                    .filter_map(|c| match c {
                        Query::Term(t) => Some(t.clone()),
                        _ => None,
                    })
                    .collect();
                terms.dedup();
                terms
            }
            _ => Vec::new(),
        }
    }

    fn shard(&self, hash: u64) -> &Mutex<Shard> {
        &self.shards[(hash % self.shards.len() as u64) as usize]
    }

    /// The stored answer for `key`, if any: a hit or a miss for the counters and the policy.
    pub fn get(&self, key: &ResultKey) -> Option<CachedResult> {
        self.lookup(key, true)
    }

    /// Under `partial2`, an approximate answer for `query` (in its evaluated form) that found
    /// no entry of its own ([`get`](Self::get) missed): the stored answer of the largest
    /// subset of its terms that has one, tried from the largest subsets down, at most
    /// [`APPROXIMATE_PROBES`](Self::APPROXIMATE_PROBES) subsets. Only a disjunction or a
    /// conjunction of two to [`APPROXIMATE_MAX_TERMS`](Self::APPROXIMATE_MAX_TERMS) plain terms
    /// is answered so; its count is marked inexact.
    pub fn get_approximate(
        &self,
        generation: u64,
        query: &Query,
        options: &SearchOptions,
    ) -> Option<CachedResult> {
        if self.config.matching != Matching::Partial2 {
            return None;
        }
        let (terms, conjunction) = term_bag(query)?;
        let n = terms.len();
        if !(2..=Self::APPROXIMATE_MAX_TERMS).contains(&n) {
            return None;
        }
        let mut probes = 0;
        for size in (1..n).rev() {
            for subset in subsets_of_size(n, size) {
                if probes == Self::APPROXIMATE_PROBES {
                    return None;
                }
                probes += 1;
                let chosen: Vec<&String> = subset.iter().map(|&i| &terms[i]).collect();
                let sub = bag_query(&chosen, conjunction);
                let key = self.key(generation, &sub, options);
                if let Some(mut found) = self.lookup(&key, false) {
                    self.touch(&key);
                    self.approximate_hits.fetch_add(1, Ordering::Relaxed);
                    found.total_hits_exact = false;
                    return Some(found);
                }
            }
        }
        None
    }

    /// The most terms a query answered approximately may have.
    pub const APPROXIMATE_MAX_TERMS: usize = 16;
    /// The most subsets an approximate lookup tries.
    pub const APPROXIMATE_PROBES: usize = 64;

    /// Tells the policy that the entry answering `key` (its own, or the owner of its section)
    /// served a request.
    fn touch(&self, key: &ResultKey) {
        let mut shard = self.shard(key.hash()).lock().expect("result cache lock");
        if shard.entries.contains_key(&key.hash()) {
            shard.policy.on_hit(key.hash());
            return;
        }
        let owner = shard.sections.get(&key.hash()).copied();
        drop(shard);
        if let Some(owner) = owner {
            let mut shard = self.shard(owner).lock().expect("result cache lock");
            if shard.entries.contains_key(&owner) {
                shard.policy.on_hit(owner);
            }
        }
    }

    /// Whether the cache holds an answer for `key` now, without counting a lookup or telling
    /// the policy (a prefetcher deciding whether a queued query needs its postings).
    pub fn holds(&self, key: &ResultKey) -> bool {
        self.lookup(key, false).is_some()
    }

    fn lookup(&self, key: &ResultKey, record: bool) -> Option<CachedResult> {
        let hash = key.hash();
        // The key's own entry, else (partial matching) the owner of its section, under one
        // acquisition of the key's shard.
        let owner = {
            let mut guard = self.shard(hash).lock().expect("result cache lock");
            let shard = &mut *guard;
            if let Some(stored) = shard.entries.get(&hash) {
                let bytes = shard.heap.bytes(stored.offset, stored.len);
                if let Some((result, false)) = find_in_entry(bytes, key.bytes()) {
                    if record {
                        shard.policy.on_hit(hash);
                        drop(guard);
                        self.hits.fetch_add(1, Ordering::Relaxed);
                    }
                    return Some(result);
                }
            }
            if self.config.matching.uses_sections() {
                shard.sections.get(&hash).copied()
            } else {
                None
            }
        };
        if let Some(owner) = owner {
            let mut shard = self.shard(owner).lock().expect("result cache lock");
            let shard = &mut *shard;
            if let Some(stored) = shard.entries.get(&owner) {
                let bytes = shard.heap.bytes(stored.offset, stored.len);
                if let Some((result, true)) = find_in_entry(bytes, key.bytes()) {
                    if record {
                        shard.policy.on_hit(owner);
                        self.section_hits.fetch_add(1, Ordering::Relaxed);
                    }
                    return Some(result);
                }
            }
        }
        if record {
            self.misses.fetch_add(1, Ordering::Relaxed);
        }
        None
    }

    /// Offers the answer `result` of `key`, with the sections it holds, to the cache;
    /// `shortest_list` is the document frequency of the query's rarest term. Whether it was
    /// stored.
    pub fn insert(
        &self,
        key: &ResultKey,
        result: &CachedResult,
        sections: &[(ResultKey, CachedResult)],
        shortest_list: u64,
    ) -> bool {
        if shortest_list < self.config.min_postings {
            self.refusals.fetch_add(1, Ordering::Relaxed);
            return false;
        }
        PACKED.with_borrow_mut(|packed| {
            pack_entry_into(key, result, sections, packed);
            let stored = self.store(key, packed, sections);
            if packed.capacity() > PACKED_KEPT {
                *packed = Vec::new();
            }
            stored
        })
    }

    /// [`insert`](Self::insert)'s work once the entry is packed.
    fn store(
        &self,
        key: &ResultKey,
        packed: &[u8],
        sections: &[(ResultKey, CachedResult)],
    ) -> bool {
        let Ok(len) = u32::try_from(packed.len()) else {
            self.refusals.fetch_add(1, Ordering::Relaxed);
            return false;
        };
        let hash = key.hash();
        let mut evicted_sections = Vec::new();
        let stored = {
            let mut guard = self.shard(hash).lock().expect("result cache lock");
            let shard = &mut *guard;
            // A collision or a repeat: the old entry goes.
            if shard.entries.contains_key(&hash) {
                shard.policy.remove(hash);
                self.drop_entry(shard, hash, &mut evicted_sections);
            }
            let size = super::reserved_len(len);
            if !shard.policy.on_insert(hash, size) {
                drop(guard);
                self.refusals.fetch_add(1, Ordering::Relaxed);
                return false;
            }
            let mut stored = None;
            loop {
                while shard.policy.over_capacity() {
                    if !self.evict_one(shard, hash, &mut evicted_sections) {
                        break;
                    }
                }
                if !shard.policy.contains(hash) {
                    break;
                }
                let started = Instant::now();
                let offset = shard.heap.store(packed);
                self.alloc_times.record(started.elapsed().as_nanos() as u64);
                if let Some(offset) = offset {
                    shard.entries.insert(hash, Stored { offset, len });
                    stored = Some(());
                    break;
                }
                // Fragmentation: free bytes, but no block large enough. Evict more.
                if !self.evict_one(shard, hash, &mut evicted_sections) {
                    break;
                }
                self.fragmentation_evictions.fetch_add(1, Ordering::Relaxed);
            }
            // Not stored while the policy still counts it resident (no room even after every
            // eviction): the policy lets it go. A policy that evicted it itself keeps what it
            // remembers of it (DLIRS's non-resident history, S3-FIFO's ghost), so that its
            // next miss is known as a return.
            if stored.is_none() && shard.policy.contains(hash) {
                shard.policy.remove(hash);
            }
            stored.is_some()
        };
        // Section pointers of evicted entries, and the new entry's own.
        for section in evicted_sections {
            let mut shard = self.shard(section.0).lock().expect("result cache lock");
            if shard.sections.get(&section.0) == Some(&section.1) {
                shard.sections.remove(&section.0);
            }
        }
        if stored {
            for (section_key, _) in sections {
                self.shard(section_key.hash())
                    .lock()
                    .expect("result cache lock")
                    .sections
                    .insert(section_key.hash(), hash);
            }
            self.admissions.fetch_add(1, Ordering::Relaxed);
        } else {
            self.refusals.fetch_add(1, Ordering::Relaxed);
        }
        stored
    }

    /// Evicts the policy's next victim for the entry `inserting`, collecting the section
    /// pointers to drop; false when there is none, or the victim is `inserting` itself.
    fn evict_one(&self, shard: &mut Shard, inserting: Key, sections: &mut Vec<(Key, Key)>) -> bool {
        match shard.policy.evict() {
            Some(victim) if victim != inserting => {
                self.drop_entry(shard, victim, sections);
                self.evictions.fetch_add(1, Ordering::Relaxed);
                true
            }
            _ => false,
        }
    }

    /// Frees the entry `hash` (the policy has already let it go), adding to `sections` the
    /// (section hash, owner) pairs whose pointers must be dropped. Without partial matching
    /// no entry holds sections, and the entry's bytes (cold, most of the time) are not read.
    fn drop_entry(&self, shard: &mut Shard, hash: Key, sections: &mut Vec<(Key, Key)>) {
        let Some(stored) = shard.entries.remove(&hash) else {
            return;
        };
        if self.config.matching.uses_sections() {
            let keys = section_keys(shard.heap.bytes(stored.offset, stored.len));
            sections.extend(keys.iter().map(|k| (super::entry::hash(k), hash)));
        }
        shard.heap.free(stored.offset);
    }

    /// The counters now.
    pub fn counters(&self) -> ResultCacheCounters {
        let mut counters = ResultCacheCounters {
            hits: self.hits.load(Ordering::Relaxed),
            section_hits: self.section_hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            approximate_hits: self.approximate_hits.load(Ordering::Relaxed),
            admissions: self.admissions.load(Ordering::Relaxed),
            refusals: self.refusals.load(Ordering::Relaxed),
            evictions: self.evictions.load(Ordering::Relaxed),
            fragmentation_evictions: self.fragmentation_evictions.load(Ordering::Relaxed),
            ..ResultCacheCounters::default()
        };
        for shard in &self.shards {
            let shard = shard.lock().expect("result cache lock");
            let allocator = shard.heap.allocator();
            counters.bytes += allocator.capacity() - allocator.free_bytes();
            counters.entries += shard.entries.len() as u64;
            counters.unusable_bytes += allocator.unusable_bytes();
        }
        counters
    }

    /// The allocation time at percentile `p` (0 to 1), nanoseconds (20 ns resolution).
    pub fn allocation_ns(&self, p: f64) -> Option<u64> {
        self.alloc_times.percentile(p)
    }
}

/// The terms of a query made only of plain term clauses, all optional (a disjunction) or all
/// required (a conjunction), and whether it is a conjunction.
fn term_bag(query: &Query) -> Option<(Vec<String>, bool)> {
    let Query::Bool(b) = query else {
        return None;
    };
    if !b.must_not.is_empty() {
        return None;
    }
    let (clauses, conjunction) = match (b.must.is_empty(), b.should.is_empty()) {
        (true, false) => (&b.should, false),
        (false, true) => (&b.must, true),
        _ => return None,
    };
    let terms = clauses
        .iter()
        .map(|c| match c {
            Query::Term(t) => Some(t.clone()),
            _ => None,
        })
        .collect::<Option<Vec<String>>>()?;
    Some((terms, conjunction))
}

/// The query of `terms` under the operator: a single term alone.
fn bag_query(terms: &[&String], conjunction: bool) -> Query {
    if let [one] = terms {
        return Query::Term((*one).clone());
    }
    let clauses: Vec<Query> = terms.iter().map(|t| Query::Term((*t).clone())).collect();
    let bool_query = if conjunction {
        apcache_index::query::BoolQuery {
            must: clauses,
            ..Default::default()
        }
    } else {
        apcache_index::query::BoolQuery {
            should: clauses,
            ..Default::default()
        }
    };
    Query::Bool(bool_query).canonical()
}

/// The subsets of `0..n` with `size` elements, in lexicographic order, lazily.
fn subsets_of_size(n: usize, size: usize) -> impl Iterator<Item = Vec<usize>> {
    let mut next = Some((0..size).collect::<Vec<usize>>());
    std::iter::from_fn(move || {
        let current = next.take()?;
        // Advance: the rightmost index that can move right moves, those after it follow.
        let mut c = current.clone();
        let mut i = size;
        while i > 0 {
            i -= 1;
            if c[i] < n - size + i {
                c[i] += 1;
                for j in i + 1..size {
                    c[j] = c[j - 1] + 1;
                }
                next = Some(c);
                break;
            }
        }
        Some(current)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use apcache_index::search::Hit;
    use proptest::prelude::*;
    use std::collections::HashMap;

    fn result(seed: u32, n: u32) -> CachedResult {
        CachedResult {
            total_hits: u64::from(seed) * 1000 + u64::from(n),
            total_hits_exact: seed.is_multiple_of(2),
            hits: (0..n)
                .map(|i| Hit {
                    doc: seed * 31 + i,
                    score: seed as f32 + i as f32 / 8.0,
                })
                .collect(),
        }
    }

    fn term(t: u32) -> Query {
        Query::Term(format!("t{t}"))
    }

    proptest! {
        /// Random inserts and lookups on a tiny heap: a lookup finds nothing or exactly what
        /// was last stored under its key (its own entry or a section), for every policy,
        /// allocator and shard count; the heap never holds more than its bytes.
        #[test]
        fn a_lookup_gives_what_was_stored_or_nothing(
            ops in prop::collection::vec((0u32..40, 0u32..40, 0u32..12, any::<bool>()), 1..300),
            policy in prop::sample::select(PolicyKind::ALL.to_vec()),
            allocator in prop::sample::select(AllocatorKind::ALL.to_vec()),
            shards in 1usize..4,
        ) {
            let cache = ResultCache::new(ResultCacheConfig {
                bytes: 4096,
                policy,
                allocator,
                matching: Matching::Partial1,
                min_postings: 1,
                shards,
                seed: 7,
            });
            let options = SearchOptions::default();
            let mut model: HashMap<Vec<u8>, CachedResult> = HashMap::new();
            for (i, (a, b, n, lookup)) in ops.into_iter().enumerate() {
                let single = cache.key(1, &term(a), &options);
                if lookup {
                    if let Some(got) = cache.get(&single) {
                        prop_assert_eq!(Some(&got), model.get(single.bytes()));
                    }
                    continue;
                }
                // A disjunction of two terms, with each term's section.
                let or = Query::Bool(apcache_index::query::BoolQuery {
                    must: vec![],
                    should: vec![term(a), term(b)],
                    must_not: vec![],
                });
                let key = cache.key(1, &or, &options);
                let own = result(i as u32, n);
                let sections: Vec<(ResultKey, CachedResult)> = cache
                    .section_terms(&cache.evaluated_form(&or))
                    .into_iter()
                    .map(|t| {
                        let k = cache.key(1, &Query::Term(t.clone()), &options);
                        let r = result(t.len() as u32 * 100 + i as u32, n / 2);
                        (k, r)
                    })
                    .collect();
                if cache.insert(&key, &own, &sections, 5) {
                    model.insert(key.bytes().to_vec(), own.clone());
                    for (k, r) in &sections {
                        model.insert(k.bytes().to_vec(), r.clone());
                    }
                }
                if let Some(got) = cache.get(&key) {
                    prop_assert_eq!(Some(&got), model.get(key.bytes()));
                }
                let counters = cache.counters();
                prop_assert!(counters.bytes <= 4096);
            }
        }
    }

    /// A policy that evicts an entry as it arrives keeps what it remembers of it, so that its
    /// return is known: S3-FIFO, whose small queue holds only the newest entry once every
    /// other has earned the main queue, sends that entry to its ghost queue, and a ghost's
    /// return goes to the main queue. The cache once made the policy forget it, so such an
    /// entry was evicted on arrival every time.
    #[test]
    fn an_entry_evicted_on_arrival_is_remembered_by_its_policy() {
        let options = SearchOptions::default();
        let cache = ResultCache::new(ResultCacheConfig {
            bytes: 4096,
            policy: PolicyKind::S3Fifo,
            ..ResultCacheConfig::default()
        });
        // Entries of about 500 bytes, each hit twice after it is stored (what moves an entry
        // from the small queue to the main one), larger than the small queue's share: once
        // the others have moved on, the entry just stored is the small queue's only victim.
        let mut refused = None;
        for t in 10..40 {
            let key = cache.key(1, &term(t), &options);
            if !cache.insert(&key, &result(t, 60), &[], 10) {
                refused = Some(t);
                break;
            }
            assert!(cache.get(&key).is_some());
            assert!(cache.get(&key).is_some());
        }
        let t = refused.expect("an entry evicted on arrival");
        let key = cache.key(1, &term(t), &options);
        // Its return goes to the main queue (where, behind entries hit since they came, it
        // may leave again before them, as S3-FIFO wants); forgotten, it would go to the small
        // queue and be evicted on arrival every time.
        assert!(
            (0..4).any(|_| cache.insert(&key, &result(t, 60), &[], 10)),
            "a returning entry is kept"
        );
        assert_eq!(cache.get(&key), Some(result(t, 60)));
    }

    #[test]
    fn subsets_come_each_once() {
        for n in 1..7 {
            for size in 1..=n {
                let all: Vec<Vec<usize>> = subsets_of_size(n, size).collect();
                let distinct: std::collections::HashSet<&Vec<usize>> = all.iter().collect();
                let binomial = (0..size).fold(1usize, |acc, i| acc * (n - i) / (i + 1));
                assert_eq!(
                    (all.len(), distinct.len()),
                    (binomial, binomial),
                    "{n} {size}"
                );
                assert!(all
                    .iter()
                    .all(|s| s.len() == size && s.windows(2).all(|w| w[0] < w[1])));
            }
        }
    }

    #[test]
    fn partial2_answers_from_a_subset_and_says_so() {
        let options = SearchOptions::default();
        let bag = |terms: &[u32], conjunction: bool| {
            let clauses: Vec<Query> = terms.iter().map(|&t| term(t)).collect();
            let b = if conjunction {
                apcache_index::query::BoolQuery {
                    must: clauses,
                    ..Default::default()
                }
            } else {
                apcache_index::query::BoolQuery {
                    should: clauses,
                    ..Default::default()
                }
            };
            Query::Bool(b)
        };
        for matching in [Matching::Partial1, Matching::Partial2] {
            let cache = ResultCache::new(ResultCacheConfig {
                matching,
                ..ResultCacheConfig::default()
            });
            let ab = cache.evaluated_form(&bag(&[2, 1], false));
            let key = cache.key(1, &ab, &options);
            let sections: Vec<(ResultKey, CachedResult)> = cache
                .section_terms(&ab)
                .into_iter()
                .map(|t| (cache.key(1, &Query::Term(t), &options), result(9, 2)))
                .collect();
            assert!(cache.insert(&key, &result(1, 3), &sections, 10));
            // `a b c` has no entry; `a b` answers it approximately, the largest subset.
            let abc = cache.evaluated_form(&bag(&[3, 1, 2], false));
            assert_eq!(cache.get(&cache.key(1, &abc, &options)), None);
            let approximate = cache.get_approximate(1, &abc, &options);
            // `+a +c`: the single term `a`, from the section of `a b`'s entry.
            let and = cache.evaluated_form(&bag(&[1, 3], true));
            let from_section = cache.get_approximate(1, &and, &options);
            // Another generation never answers.
            let stale = cache.get_approximate(2, &abc, &options);
            if matching == Matching::Partial2 {
                let mut expected = result(1, 3);
                expected.total_hits_exact = false;
                assert_eq!(approximate, Some(expected));
                let mut expected = result(9, 2);
                expected.total_hits_exact = false;
                assert_eq!(from_section, Some(expected));
                assert_eq!(cache.counters().approximate_hits, 2);
            } else {
                assert_eq!((approximate, from_section), (None, None));
            }
            assert_eq!(stale, None);
            // A single term, or a query with a phrase or an exclusion, is never approximated.
            assert_eq!(cache.get_approximate(1, &term(1), &options), None);
        }
    }

    #[test]
    fn isomorphic_queries_share_an_entry_and_other_generations_miss() {
        let cache = ResultCache::new(ResultCacheConfig::default());
        let options = SearchOptions::default();
        let or = |x: u32, y: u32| {
            Query::Bool(apcache_index::query::BoolQuery {
                must: vec![],
                should: vec![term(x), term(y)],
                must_not: vec![],
            })
        };
        let key = cache.key(1, &or(1, 2), &options);
        assert!(cache.insert(&key, &result(1, 3), &[], 10));
        assert_eq!(
            cache.get(&cache.key(1, &or(2, 1), &options)),
            Some(result(1, 3))
        );
        assert_eq!(cache.get(&cache.key(2, &or(1, 2), &options)), None);
        let k11 = SearchOptions { k: 11, ..options };
        assert_eq!(cache.get(&cache.key(1, &or(1, 2), &k11)), None);
        // Below the admission threshold: refused.
        let strict = ResultCache::new(ResultCacheConfig {
            min_postings: 70,
            ..ResultCacheConfig::default()
        });
        assert!(!strict.insert(&key, &result(1, 3), &[], 69));
        assert!(strict.insert(&key, &result(1, 3), &[], 70));
        let c = cache.counters();
        assert_eq!((c.hits, c.misses, c.admissions, c.entries), (1, 2, 1, 1));
    }
}
