//! The segmented postings cache in the second memory tier.
//!
//! The tier region is cut into fixed-size segments ([`SegmentChains`]). A cached term owns a
//! chain of them, laid out by [`TermLayout`] (its block table first, then its blocks). The
//! cache's bookkeeping lives in DRAM and is bounded by the number of segments, not by the
//! index: a slot per possible cached term (a term takes at least one segment), a hash map from
//! (segment of the index, term ordinal) to slot, the chain array and the eviction order.
//!
//! # Protecting readers
//! A query pins each term it reads ([`PostingsCache::pin`] returns a [`PinnedTerm`]; dropping
//! it unpins). Eviction only picks terms with no pins, so a chain is never released, and its
//! segments never rewritten, while a query reads it. A loading term is invisible to queries
//! until the worker has written it and publishes it under the lock. With `guard_queued`, a
//! term that a prefetched but unfinished query will read is reserved and not evictable either
//! (the eviction rule that uses the lookahead window itself). One mutex guards the
//! bookkeeping; tier bytes are copied outside it, into segments that only the loading thread
//! can reach.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};

use apcache_index::format::HEADER_LEN;
use apcache_index::search::TermEntry;
use apcache_index::segment::SegmentReader;
use serde::Serialize;

use crate::ahead_window::AheadWindow;
use crate::cache_error::CacheError;
use crate::eviction::{EvictionOrder, EvictionPolicy};
use crate::loader::StorageLoader;
use crate::pinned_term::{PinnedPositions, PinnedTerm};
use crate::positions_layout::PositionsLayout;
use crate::region::TierRegion;
use crate::segment_chains::{Chain, SegmentChains};
use crate::term_layout::{TermLayout, TABLE_ENTRY};

/// Smallest segment accepted: a page, and more than any encoded block.
pub const MIN_SEGMENT_SIZE: usize = 4096;

/// How the cache is set up.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct CacheOptions {
    /// Bytes per segment (a multiple of 8, at least [`MIN_SEGMENT_SIZE`]).
    pub segment_size: usize,
    /// Which unpinned term leaves first.
    pub policy: EvictionPolicy,
    /// Never evict a term that a prefetched, unfinished query will read.
    pub guard_queued: bool,
}

impl Default for CacheOptions {
    fn default() -> Self {
        CacheOptions {
            segment_size: 32 * 1024,
            policy: EvictionPolicy::Lru,
            guard_queued: false,
        }
    }
}

/// Which part of a term a cache entry holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Part {
    /// Its posting blocks (DIDs and frequencies).
    Postings,
    /// Its positions, for phrases.
    Positions,
}

/// The key of a term's part: the index of its segment in the reader, its ordinal there (below
/// 2^40), and the part in the top bit.
fn term_key(segment: usize, ordinal: u64, part: Part) -> u64 {
    let part_bit = match part {
        Part::Postings => 0,
        Part::Positions => 1 << 63,
    };
    part_bit | ((segment as u64) << 40) | ordinal
}

#[derive(Debug, Clone, Copy)]
struct Slot {
    key: u64,
    chain: Chain,
    pins: u32,
    reserved: u32,
    loading: bool,
}

struct CacheState {
    chains: SegmentChains,
    order: EvictionOrder,
    slots: Vec<Slot>,
    free_slots: Vec<u32>,
    map: HashMap<u64, u32>,
    window: AheadWindow,
}

/// Counters of the cache's work since it was created.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct CacheCounters {
    /// Terms copied from storage into the tier.
    pub terms_loaded: u64,
    /// Bytes copied from storage into the tier (block bytes, without tables).
    pub bytes_loaded: u64,
    /// Terms evicted.
    pub evictions: u64,
    /// Times the worker waited for room (pinned terms, or the lookahead rule).
    pub waits: u64,
    /// Terms that could not be cached (no room even after waiting): served from storage.
    pub bypassed: u64,
    /// Of the terms loaded, positions of phrase terms.
    pub positions_loaded: u64,
}

#[derive(Default)]
struct AtomicCounters {
    terms_loaded: AtomicU64,
    bytes_loaded: AtomicU64,
    evictions: AtomicU64,
    waits: AtomicU64,
    bypassed: AtomicU64,
    positions_loaded: AtomicU64,
}

/// What [`PostingsCache::ensure`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ensured {
    /// The term was already cached (a hit); its segment count.
    Hit(u32),
    /// The term was copied from storage (a miss); its segment count.
    Loaded(u32),
    /// The term could not be cached; queries read it from storage.
    Bypassed,
    /// The term has one posting, kept in its record: it has nothing to cache.
    Inline,
}

/// How the worker should treat the window when it makes room.
#[derive(Debug, Clone, Copy)]
pub struct Prefetch {
    /// The queued query the term is made ready for.
    pub query: u64,
    /// Apply the adaptive-lookahead rule before evicting.
    pub adaptive: bool,
}

/// The postings cache: a tier region, its segments and their bookkeeping.
pub struct PostingsCache {
    region: TierRegion,
    options: CacheOptions,
    total_segments: u32,
    state: Mutex<CacheState>,
    changed: Condvar,
    loaders: Vec<Box<dyn StorageLoader>>,
    counters: AtomicCounters,
}

impl PostingsCache {
    /// A cache over `region`, loading segment `i` of the index through `loaders[i]` (which
    /// reads that segment's postings file).
    pub fn new(
        region: TierRegion,
        options: CacheOptions,
        loaders: Vec<Box<dyn StorageLoader>>,
    ) -> Result<PostingsCache, CacheError> {
        let seg = options.segment_size;
        if seg < MIN_SEGMENT_SIZE || !seg.is_multiple_of(TABLE_ENTRY) {
            return Err(CacheError::Config(format!(
                "segment size {seg} must be a multiple of {TABLE_ENTRY} and at least {MIN_SEGMENT_SIZE}"
            )));
        }
        let total = region.len() / seg;
        if total == 0 {
            return Err(CacheError::Config(format!(
                "a {}-byte tier holds no {seg}-byte segment",
                region.len()
            )));
        }
        let total = u32::try_from(total)
            .ok()
            .filter(|&t| t < u32::MAX)
            .ok_or_else(|| CacheError::Config(format!("{total} segments are too many")))?;
        let state = CacheState {
            chains: SegmentChains::new(total),
            order: EvictionOrder::new(options.policy, total, u64::from(total)),
            slots: Vec::with_capacity(total as usize),
            free_slots: Vec::new(),
            map: HashMap::with_capacity(total as usize),
            window: AheadWindow::new(),
        };
        Ok(PostingsCache {
            region,
            options,
            total_segments: total,
            state: Mutex::new(state),
            changed: Condvar::new(),
            loaders,
            counters: AtomicCounters::default(),
        })
    }

    /// The cache's options.
    pub fn options(&self) -> &CacheOptions {
        &self.options
    }

    /// The tier region.
    pub fn region(&self) -> &TierRegion {
        &self.region
    }

    /// Segments in the tier.
    pub fn total_segments(&self) -> u32 {
        self.total_segments
    }

    /// Bytes per segment.
    pub fn segment_size(&self) -> usize {
        self.options.segment_size
    }

    /// Counters so far.
    pub fn counters(&self) -> CacheCounters {
        let c = &self.counters;
        CacheCounters {
            terms_loaded: c.terms_loaded.load(Ordering::Relaxed),
            bytes_loaded: c.bytes_loaded.load(Ordering::Relaxed),
            evictions: c.evictions.load(Ordering::Relaxed),
            waits: c.waits.load(Ordering::Relaxed),
            bypassed: c.bypassed.load(Ordering::Relaxed),
            positions_loaded: c.positions_loaded.load(Ordering::Relaxed),
        }
    }

    /// What the first storage loader is (they are all of one kind).
    pub fn loader_description(&self) -> Option<String> {
        self.loaders.first().map(|l| l.describe())
    }

    /// Bytes the storage loaders have read so far.
    pub fn loader_bytes(&self) -> u64 {
        self.loaders.iter().map(|l| l.stats().bytes_read).sum()
    }

    /// Segments currently free, and terms cached.
    pub fn occupancy(&self) -> (u32, usize) {
        let state = self.lock();
        (state.chains.free(), state.map.len())
    }

    /// Segments of the lookahead window, and its term occurrences.
    pub fn window(&self) -> (u64, usize) {
        let state = self.lock();
        (state.window.rolling_sum(), state.window.len())
    }

    fn lock(&self) -> MutexGuard<'_, CacheState> {
        // A panic while holding the lock leaves counts that no other thread can trust; the
        // bookkeeping is simple enough that none is expected, so poisoning is propagated.
        self.state.lock().expect("postings cache lock poisoned")
    }

    /// Whether `term` of segment `segment` is cached (and loaded).
    pub fn contains(&self, segment: usize, term: &TermEntry) -> bool {
        let state = self.lock();
        state
            .map
            .get(&term_key(segment, term.ordinal, Part::Postings))
            .is_some_and(|&s| !state.slots[s as usize].loading)
    }

    /// Whether the positions of `term` of segment `segment` are cached (and loaded).
    pub fn contains_positions(&self, segment: usize, term: &TermEntry) -> bool {
        let state = self.lock();
        state
            .map
            .get(&term_key(segment, term.ordinal, Part::Positions))
            .is_some_and(|&s| !state.slots[s as usize].loading)
    }

    /// Pins `term` of segment `segment` if it is cached: the returned value reads its blocks
    /// from the tier until dropped. `None` when it is absent (or still loading). `touch`
    /// counts the pin as a use for eviction; the prefetching mode leaves the order to the
    /// worker, whose sequence the adaptive rule reasons about.
    pub fn pin(&self, segment: usize, term: &TermEntry, touch: bool) -> Option<PinnedTerm<'_>> {
        self.pin_key(term_key(segment, term.ordinal, Part::Postings), term, touch)
    }

    /// Pins the positions of `term` of segment `segment` if they are cached, as
    /// [`PostingsCache::pin`] pins its postings.
    pub fn pin_positions(
        &self,
        segment: usize,
        term: &TermEntry,
        touch: bool,
    ) -> Option<PinnedPositions<'_>> {
        self.pin_key(
            term_key(segment, term.ordinal, Part::Positions),
            term,
            touch,
        )
        .map(PinnedPositions::new)
    }

    fn pin_key(&self, key: u64, term: &TermEntry, touch: bool) -> Option<PinnedTerm<'_>> {
        let mut state = self.lock();
        let slot = *state.map.get(&key)?;
        let s = &mut state.slots[slot as usize];
        if s.loading {
            return None;
        }
        s.pins += 1;
        let chain = s.chain;
        if touch {
            state.order.touch(slot);
        }
        let mut segments = Vec::with_capacity(chain.len as usize);
        state.chains.collect(chain, &mut segments);
        drop(state);
        Some(PinnedTerm::new(
            self,
            slot,
            segments,
            term.info.blocks() as u32,
        ))
    }

    /// Called by [`PinnedTerm`]'s drop.
    pub(crate) fn unpin(&self, slot: u32) {
        let mut state = self.lock();
        let s = &mut state.slots[slot as usize];
        s.pins -= 1;
        if s.pins == 0 {
            self.changed.notify_all();
        }
    }

    /// Query `query` finished: it no longer needs the terms made ready for it (its window
    /// counts leave, its reservations are released).
    pub fn finish_query(&self, query: u64, reserved: &[(usize, u64, Part)]) {
        let mut state = self.lock();
        state.window.finish(query);
        for &(segment, ordinal, part) in reserved {
            if let Some(&slot) = state.map.get(&term_key(segment, ordinal, part)) {
                let s = &mut state.slots[slot as usize];
                s.reserved = s.reserved.saturating_sub(1);
            }
        }
        self.changed.notify_all();
    }

    /// Makes sure `term` of segment `segment` (read through `reader`) is cached, copying it
    /// from storage when it is not. With `prefetch`, the term is made ready for a queued
    /// query: it enters the lookahead window, is reserved (with `guard_queued`), and with
    /// `adaptive` eviction waits by the window's rule.
    pub fn ensure(
        &self,
        segment: usize,
        reader: &SegmentReader,
        term: &TermEntry,
        prefetch: Option<Prefetch>,
        layout: &mut TermLayout,
        segments: &mut Vec<u32>,
    ) -> Result<Ensured, CacheError> {
        if term.info.lone_posting().is_some() {
            return Ok(Ensured::Inline);
        }
        let key = term_key(segment, term.ordinal, Part::Postings);
        if let Some(hit) = self.hit(key, prefetch) {
            return Ok(hit);
        }
        let skips = reader.term_skip_entries(&term.info)?;
        layout.plan_into(&term.info, &skips, self.options.segment_size)?;
        // What came from storage is checked against the term's checksum before any query
        // reads it from the cache.
        self.load_entry(key, layout.segments, prefetch, segments, |segments| {
            let bytes = self.write_term(segment, term, layout, segments)?;
            reader.accept_postings(term, self.loaded_checksum(layout, segments))?;
            Ok(bytes)
        })
    }

    /// Makes sure the positions of `term` of segment `segment` are cached, as
    /// [`PostingsCache::ensure`] does for its postings; only for terms that stand in a phrase.
    /// The positions are copied from the segment's mapping of its positions file, once the
    /// checksum of the term's group there has been verified (a group's checksum covers 64
    /// terms' positions, so the cache does not read them through its storage loader, which
    /// would read all 64 to check one). A term with a posting block's positions larger than a
    /// segment is not cached ([`Ensured::Bypassed`]).
    pub fn ensure_positions(
        &self,
        segment: usize,
        reader: &SegmentReader,
        term: &TermEntry,
        prefetch: Option<Prefetch>,
        layout: &mut PositionsLayout,
        segments: &mut Vec<u32>,
    ) -> Result<Ensured, CacheError> {
        let key = term_key(segment, term.ordinal, Part::Positions);
        if let Some(hit) = self.hit(key, prefetch) {
            return Ok(hit);
        }
        let region = reader.verified_positions(term)?;
        if !layout.plan_into(&region, self.options.segment_size)? {
            self.counters.bypassed.fetch_add(1, Ordering::Relaxed);
            return Ok(Ensured::Bypassed);
        }
        let ensured = self.load_entry(key, layout.segments, prefetch, segments, |segments| {
            for (i, entry) in layout.table().enumerate() {
                self.write_chain(segments, (i * TABLE_ENTRY) as u32, &entry);
            }
            let bytes = region.bytes();
            for piece in &layout.pieces {
                let (from, to) = (piece.source as usize, (piece.source + piece.len) as usize);
                self.write_chain(segments, piece.target, &bytes[from..to]);
            }
            Ok(bytes.len() as u64)
        })?;
        if let Ensured::Loaded(_) = ensured {
            self.counters
                .positions_loaded
                .fetch_add(1, Ordering::Relaxed);
        }
        Ok(ensured)
    }

    /// Loads the entry `key` of `need` segments: reserves room (evicting, or waiting by the
    /// window's rule), a slot and a chain, has `write` fill the chain (it returns the bytes it
    /// copied), and publishes the entry, or forgets it if `write` failed.
    fn load_entry(
        &self,
        key: u64,
        need: u32,
        prefetch: Option<Prefetch>,
        segments: &mut Vec<u32>,
        write: impl FnOnce(&[u32]) -> Result<u64, CacheError>,
    ) -> Result<Ensured, CacheError> {
        if need > self.total_segments {
            self.counters.bypassed.fetch_add(1, Ordering::Relaxed);
            return Ok(Ensured::Bypassed);
        }
        // Reserve room and a slot.
        let mut state = self.lock();
        loop {
            if let Some(&slot) = state.map.get(&key) {
                // Another worker loaded (or is loading) it meanwhile.
                if state.slots[slot as usize].loading {
                    state = self
                        .changed
                        .wait(state)
                        .expect("postings cache lock poisoned");
                    continue;
                }
                drop(state);
                return Ok(self.hit(key, prefetch).unwrap_or(Ensured::Bypassed));
            }
            if state.chains.free() >= need {
                break;
            }
            match self.make_room(&mut state, prefetch) {
                Room::Evicted(_) => {}
                Room::Wait => {
                    self.counters.waits.fetch_add(1, Ordering::Relaxed);
                    state = self
                        .changed
                        .wait(state)
                        .expect("postings cache lock poisoned");
                }
                Room::None => {
                    self.counters.bypassed.fetch_add(1, Ordering::Relaxed);
                    return Ok(Ensured::Bypassed);
                }
            }
        }
        segments.clear();
        let chain = state
            .chains
            .allocate(need, segments)
            .expect("free segments checked");
        let slot_value = Slot {
            key,
            chain,
            pins: 0,
            reserved: 0,
            loading: true,
        };
        let slot = match state.free_slots.pop() {
            Some(slot) => {
                state.slots[slot as usize] = slot_value;
                slot
            }
            None => {
                state.slots.push(slot_value);
                (state.slots.len() - 1) as u32
            }
        };
        state.map.insert(key, slot);
        drop(state);

        let copied = write(segments);

        let mut state = self.lock();
        match copied {
            Ok(bytes) => {
                let s = &mut state.slots[slot as usize];
                s.loading = false;
                if prefetch.is_some() && self.options.guard_queued {
                    s.reserved += 1;
                }
                state.order.insert(slot, key, u64::from(need));
                if let Some(p) = prefetch {
                    state.window.push(p.query, need);
                }
                self.counters.terms_loaded.fetch_add(1, Ordering::Relaxed);
                self.counters
                    .bytes_loaded
                    .fetch_add(bytes, Ordering::Relaxed);
                self.changed.notify_all();
                Ok(Ensured::Loaded(need))
            }
            Err(e) => {
                Self::forget(&mut state, slot);
                self.changed.notify_all();
                Err(e)
            }
        }
    }

    /// A hit on `key`, counted into the window and reserved when prefetching.
    fn hit(&self, key: u64, prefetch: Option<Prefetch>) -> Option<Ensured> {
        let mut state = self.lock();
        let &slot = state.map.get(&key)?;
        let s = &mut state.slots[slot as usize];
        if s.loading {
            return None;
        }
        if prefetch.is_some() && self.options.guard_queued {
            s.reserved += 1;
        }
        let segments = s.chain.len;
        state.order.touch(slot);
        if let Some(p) = prefetch {
            state.window.push(p.query, segments);
        }
        Some(Ensured::Hit(segments))
    }

    fn forget(state: &mut CacheState, slot: u32) {
        let s = state.slots[slot as usize];
        state.map.remove(&s.key);
        state.order.remove(slot);
        state.chains.release(s.chain);
        state.free_slots.push(slot);
    }

    /// Evicts one term, or says why not.
    fn make_room(&self, state: &mut CacheState, prefetch: Option<Prefetch>) -> Room {
        let guard = self.options.guard_queued;
        let decision = {
            let CacheState {
                order,
                slots,
                window,
                chains,
                ..
            } = &mut *state;
            let free = chains.free();
            let victim = order.victim(|slot| {
                let s = &slots[slot as usize];
                s.pins == 0 && !s.loading && !(guard && s.reserved > 0)
            });
            // Waiting helps only while something can change: a query holds a pin, a term is
            // loading, or a prefetched query other than the one being prepared has yet to
            // finish.
            let others = prefetch.is_some_and(|p| window.others_than(p.query));
            match victim {
                None if others || slots.iter().any(|s| s.pins > 0 || s.loading) => Room::Wait,
                None => Room::None,
                Some(victim) => {
                    let segments = slots[victim as usize].chain.len;
                    let adaptive = prefetch.is_some_and(|p| p.adaptive);
                    if adaptive && others && !window.may_evict(segments, free, self.total_segments)
                    {
                        Room::Wait
                    } else {
                        Room::Evicted(victim)
                    }
                }
            }
        };
        if let Room::Evicted(victim) = decision {
            Self::forget(state, victim);
            self.counters.evictions.fetch_add(1, Ordering::Relaxed);
        }
        decision
    }

    /// Copies the term's table and blocks into its (exclusively owned) segments; returns the
    /// block bytes copied.
    fn write_term(
        &self,
        segment: usize,
        term: &TermEntry,
        layout: &TermLayout,
        segments: &[u32],
    ) -> Result<u64, CacheError> {
        let write = |pos: u32, bytes: &[u8]| self.write_chain(segments, pos, bytes);
        for (i, entry) in layout.table().enumerate() {
            write((i * TABLE_ENTRY) as u32, &entry);
        }
        let loader = self.loaders.get(segment).ok_or_else(|| {
            CacheError::Config(format!("no storage loader for index segment {segment}"))
        })?;
        let len = term.info.postings_bytes();
        let start = HEADER_LEN as u64 + term.info.postings_offset;
        loader
            .read_range(start, len, &mut |at, bytes| {
                let at = at as u32;
                for piece in layout.overlapping(at, bytes.len() as u32) {
                    let from = piece.source.max(at);
                    let to = (piece.source + piece.len).min(at + bytes.len() as u32);
                    if from < to {
                        write(
                            piece.target + (from - piece.source),
                            &bytes[(from - at) as usize..(to - at) as usize],
                        );
                    }
                }
            })
            .map_err(|source| CacheError::Load {
                file: format!("index segment {segment}"),
                source,
            })?;
        Ok(len)
    }

    /// Copies `bytes` to chain position `pos` of the chain of `segments`, which the caller is
    /// loading (it owns them exclusively); the bytes lie within one segment.
    fn write_chain(&self, segments: &[u32], pos: u32, bytes: &[u8]) {
        let seg = self.options.segment_size;
        let (k, off) = (pos as usize / seg, pos as usize % seg);
        assert!(off + bytes.len() <= seg, "a write straddles a segment");
        // SAFETY: segment `segments[k]` belongs to a chain in the loading state, which no
        // reader can pin and no other writer can allocate; `off + len` stays inside the
        // segment (checked above; the layouts never let a block or table entry straddle
        // one), and the segment lies inside the region.
        unsafe {
            let dst = self.region.as_ptr().add(segments[k] as usize * seg + off);
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), dst, bytes.len());
        }
    }

    /// The CRC32C of a term's blocks as [`PostingsCache::write_term`] placed them, read back in
    /// their on-storage order: the checksum of the term's postings when the copy is whole.
    fn loaded_checksum(&self, layout: &TermLayout, segments: &[u32]) -> u32 {
        let seg = self.options.segment_size;
        layout.pieces.iter().fold(0, |crc, piece| {
            let (k, off) = (piece.target as usize / seg, piece.target as usize % seg);
            // SAFETY: the chain is still in the loading state (no other writer), the piece
            // lies inside segment `segments[k]` (the layout never lets a block straddle one),
            // and the segment lies inside the region.
            let bytes = unsafe {
                std::slice::from_raw_parts(
                    self.region.as_ptr().add(segments[k] as usize * seg + off),
                    piece.len as usize,
                )
            };
            crc32c::crc32c_append(crc, bytes)
        })
    }

    /// The bytes of segment `segment` from `offset` to its end.
    ///
    /// # Safety
    /// The segment must belong to a chain pinned by the caller.
    pub(crate) unsafe fn segment_bytes(&self, segment: u32, offset: usize) -> &[u8] {
        let seg = self.options.segment_size;
        debug_assert!(offset <= seg);
        // SAFETY: the caller holds a pin on the chain, so no writer touches the segment, and
        // the segment lies inside the region.
        unsafe {
            std::slice::from_raw_parts(
                self.region.as_ptr().add(segment as usize * seg + offset),
                seg - offset,
            )
        }
    }
}

enum Room {
    Evicted(u32),
    Wait,
    None,
}
