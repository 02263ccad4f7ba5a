//! A phrase query's node: the conjunction of its terms' cursors, each candidate document
//! checked against the terms' positions there.
//!
//! Positions are read only for documents that hold every term (the cursors' conjunction
//! decides that first, on DIDs alone), and only the positions of those documents: the
//! block's frequencies, which the cursor decodes anyway, say where a document's positions
//! start (see [`crate::format::positions`]).
//!
//! A phrase of two terms whose lists are of like length finds its candidates a block at a
//! time ([`PhraseNode::for_each_pair_candidate`]), and is matched on the decoded chunk's
//! running sums in place, each term's positions being its sums less a base: copying a stop
//! word's positions out of the chunk for each candidate cost a tenth of a count's time.

use std::ops::Range;

use apcache_codec::{Isa, BLOCK_LEN};

use super::bm25::Bm25;
use super::cancel;
use super::intersect;
use super::phrase_matcher::{
    count_pair_matches, exact_phrase_freq, exact_phrase_occurs, phrase_starts, retain_starts,
    SloppyPhrase,
};
use super::postings_source::TermPositionBlocks;
use super::sloppy_pair::pair_freq_bound;
use super::sorted_intersect::{self, MatchBuffers, Places, OUTPUT_SLACK};
use super::stats::SearchStats;
use super::term_cursor::{TermCursor, NO_MORE_DOCS};
use super::top_k::{Hit, TopK};
use crate::format::{BlockPositionsReader, PositionsError, TermPositions};
use crate::segment::{DocLengths, SegmentReader};
use crate::IndexError;

/// Where a phrase term's positions are read: the segment's positions file, or a postings
/// source (the tier's cache) that holds them.
pub enum PositionsRegion<'a> {
    /// The term's region of the positions file, checked against its checksum.
    File(TermPositions<'a>),
    /// Blocks held by a source, pinned there while the query runs.
    Held(Box<dyn TermPositionBlocks + 'a>),
}

impl PositionsRegion<'_> {
    /// The positions bytes of posting block `block`.
    fn block(&self, block: usize) -> Result<&[u8], PositionsError> {
        match self {
            PositionsRegion::File(region) => region.block(block),
            PositionsRegion::Held(blocks) => blocks
                .block(block)
                .ok_or(PositionsError::Malformed("block past the term's postings")),
        }
    }
}

/// A term with this many times the lead's documents is tested for each candidate
/// ([`TermCursor::holds_and_stays`]) rather than advanced to it: the candidates skip most of
/// its postings, and a test of one bit leaves a block stored as a bitset undecoded.
const MEMBERSHIP_RATIO: u64 = 16;

/// Phrases of up to this many terms keep their per-candidate scratch on the stack.
const INLINE_TERMS: usize = 16;

/// The matches [`PhraseNode::collect_top`] counted, and whether every candidate was checked.
struct Tally {
    matches: u64,
    complete: bool,
}

/// One term of a phrase in one segment: its cursor and its positions.
pub struct PhraseTerm<'a> {
    cursor: TermCursor<'a>,
    /// The term's position in the phrase.
    offset: u32,
    /// Which of the phrase's distinct terms it is.
    term_id: usize,
    region: PositionsRegion<'a>,
    reader: BlockPositionsReader,
    /// The block the reader and `starts` are for.
    block: usize,
    /// Where each posting's values start in the block (its frequencies' running sum before
    /// it), then the block's total: computed once per block, as candidates of a dense
    /// conjunction are most of a block's postings.
    starts: Vec<usize>,
    /// The term's positions in the current candidate, when copied out.
    positions: Vec<u32>,
    /// Where the reader's decoded chunk holds them as running sums, and the base to take from
    /// each, when read in place.
    sums: Option<(Range<usize>, u32)>,
}

impl<'a> PhraseTerm<'a> {
    /// Term `term_id` of a phrase at `offset`, read by `cursor`, with positions `region`.
    pub fn new(
        cursor: TermCursor<'a>,
        offset: u32,
        term_id: usize,
        region: PositionsRegion<'a>,
    ) -> PhraseTerm<'a> {
        PhraseTerm {
            cursor,
            offset,
            term_id,
            region,
            reader: BlockPositionsReader::default(),
            block: usize::MAX,
            starts: Vec::with_capacity(BLOCK_LEN + 1),
            positions: Vec::new(),
            sums: None,
        }
    }

    /// Where the cursor's current document's values lie in its block: the values before
    /// it, its frequency and the block's total.
    #[inline]
    fn locate(&mut self) -> Result<(usize, usize, usize), IndexError> {
        self.enter_block()?;
        Ok(self.place(self.cursor.block_position()))
    }

    /// Takes the cursor's current block as the one positions are read from: its posting starts
    /// are computed if it is not already.
    #[inline]
    fn enter_block(&mut self) -> Result<(), IndexError> {
        let block = self.cursor.block_index();
        if block != self.block {
            let (_, freqs, _) = self.cursor.current_block()?;
            self.reader.reset();
            self.block = block;
            self.starts.clear();
            let mut sum = 0usize;
            self.starts.extend(freqs.iter().map(|&f| {
                let start = sum;
                sum += f as usize;
                start
            }));
            self.starts.push(sum);
        }
        Ok(())
    }

    /// Where posting `at` of the entered block has its values: the values before it, its
    /// frequency and the block's total.
    #[inline]
    fn place(&self, at: usize) -> (usize, usize, usize) {
        let (before, after) = (self.starts[at], self.starts[at + 1]);
        (before, after - before, self.starts[self.starts.len() - 1])
    }

    /// Moves the cursor to posting `place` of its current (decoded) block, at or after the
    /// current one.
    fn step_to(&mut self, place: usize) {
        let at = self.cursor.block_position();
        debug_assert!(place >= at);
        self.cursor.step_within_block(place - at);
    }

    /// Reads the positions of the cursor's current document into `self.positions`.
    fn load_positions(&mut self, segment: &SegmentReader) -> Result<(), IndexError> {
        let (before, freq, total) = self.locate()?;
        let bytes = self
            .region
            .block(self.block)
            .map_err(|e| positions_error(segment, e))?;
        self.positions.clear();
        self.sums = None;
        self.reader
            .read(
                segment.positions_codec(),
                bytes,
                total,
                before,
                freq,
                &mut self.positions,
            )
            .map_err(|e| positions_error(segment, e))
    }

    /// Reads the cursor's current document's positions in place where the reader can (see
    /// [`BlockPositionsReader::sums_of`]) and says whether it did; if not, they are to be
    /// copied out by [`Self::load_positions`].
    fn load_sums(&mut self, segment: &SegmentReader) -> Result<bool, IndexError> {
        self.enter_block()?;
        self.load_sums_at(segment, self.cursor.block_position())
    }

    /// [`Self::load_sums`] of posting `at` of the entered block ([`Self::enter_block`]),
    /// wherever the cursor is.
    #[inline]
    fn load_sums_at(&mut self, segment: &SegmentReader, at: usize) -> Result<bool, IndexError> {
        let (before, freq, total) = self.place(at);
        let bytes = self
            .region
            .block(self.block)
            .map_err(|e| positions_error(segment, e))?;
        self.sums = self
            .reader
            .sums_of(segment.positions_codec(), bytes, total, before, freq)
            .map_err(|e| positions_error(segment, e))?;
        Ok(self.sums.is_some())
    }

    /// The positions [`Self::load_sums`] or [`Self::load_positions`] read last, as values
    /// and the base to take from each.
    fn positions_and_base(&self) -> (&[u32], u32) {
        match &self.sums {
            Some((range, base)) => (self.reader.sums(range.clone()), *base),
            None => (&self.positions, 0),
        }
    }
}

/// A positions region that does not read, as an index error naming the segment.
fn positions_error(segment: &SegmentReader, e: PositionsError) -> IndexError {
    IndexError::corrupt(segment.meta().name.clone(), format!("positions: {e}"))
}

/// Documents where a phrase's terms stand at their offsets (within a slop), with the phrase
/// frequency of the current one.
pub struct PhraseNode<'a> {
    segment: &'a SegmentReader,
    /// In phrase order.
    terms: Vec<PhraseTerm<'a>>,
    /// Indexes of `terms`, rarest first: the order the conjunction advances them in.
    by_cost: Vec<usize>,
    /// `None` for an exact phrase.
    sloppy: Option<SloppyPhrase>,
    offsets: Vec<u32>,
    /// The sum of the terms' IDFs (each occurrence in the phrase counts), as Lucene weighs a
    /// phrase.
    weight: f32,
    doc: u32,
    /// The current document's phrase frequency, once computed (a match is found first, and
    /// the frequency only when the document is scored).
    freq: Option<f32>,
    /// Scratch of [`PhraseNode::exact_matches`]: the phrase starts left.
    starts: Vec<u32>,
    /// Whether the phrase is two distinct terms (a tighter sloppy bound, see
    /// [`PhraseNode::freq_bound`]).
    distinct_pair: bool,
    /// The segment's document lengths, for scores.
    lengths: DocLengths<'a>,
    /// The scorer of the phrase's named text field; `None` for the default field.
    field_bm25: Option<std::sync::Arc<Bm25>>,
}

impl<'a> PhraseNode<'a> {
    /// A phrase over `terms` (in phrase order, at least two) within `slop`, of weight
    /// `weight`.
    pub fn new(
        segment: &'a SegmentReader,
        terms: Vec<PhraseTerm<'a>>,
        slop: u32,
        weight: f32,
    ) -> PhraseNode<'a> {
        let offsets: Vec<u32> = terms.iter().map(|t| t.offset).collect();
        let sloppy = (slop > 0).then(|| {
            let ids: Vec<usize> = terms.iter().map(|t| t.term_id).collect();
            SloppyPhrase::new(&ids, &offsets, slop)
        });
        let distinct_pair = terms.len() == 2 && terms[0].term_id != terms[1].term_id;
        let terms_lengths = terms
            .first()
            .map_or_else(|| segment.doc_lengths(), |t| t.cursor.lengths());
        let field_bm25 = terms.first().and_then(|t| t.cursor.field_scorer());
        let mut by_cost: Vec<usize> = (0..terms.len()).collect();
        by_cost.sort_by_key(|&i| terms[i].cursor.doc_freq());
        PhraseNode {
            segment,
            terms,
            by_cost,
            sloppy,
            offsets,
            weight,
            doc: 0,
            freq: None,
            starts: Vec::new(),
            distinct_pair,
            // The terms of a phrase are of one field: its lengths and scorer score it.
            lengths: terms_lengths,
            field_bm25,
        }
    }

    /// An upper bound on the matches: the rarest term's documents.
    pub fn cost(&self) -> u64 {
        u64::from(self.terms[self.by_cost[0]].cursor.doc_freq())
    }

    /// The work of the terms' cursors.
    pub fn stats(&self) -> SearchStats {
        let mut stats = SearchStats::default();
        for term in &self.terms {
            stats += term.cursor.stats();
        }
        stats
    }

    /// The current DID, or [`NO_MORE_DOCS`].
    pub fn doc(&self) -> u32 {
        self.doc
    }

    /// Positions the node on its first match.
    pub fn start(&mut self) -> Result<u32, IndexError> {
        let first = self.terms[self.by_cost[0]].cursor.doc();
        self.find(first)
    }

    /// Moves to the first match at or after `target`.
    pub fn advance(&mut self, target: u32) -> Result<u32, IndexError> {
        if self.doc >= target {
            return Ok(self.doc);
        }
        self.find(target)
    }

    /// From `target` on: the first document holding every term where the phrase occurs.
    fn find(&mut self, mut target: u32) -> Result<u32, IndexError> {
        loop {
            // A candidate's positions may be long (a stop word's in a long document): the
            // flag is checked for each.
            cancel::check()?;
            let candidate = self.align(target)?;
            if candidate == NO_MORE_DOCS {
                self.doc = NO_MORE_DOCS;
                return Ok(NO_MORE_DOCS);
            }
            self.freq = None;
            if self.occurs()? {
                self.doc = candidate;
                return Ok(candidate);
            }
            target = candidate + 1;
        }
    }

    /// Collects the phrase's matches in this segment into `top`, skipping the position check
    /// of a candidate whose score cannot reach the top k: a phrase occurs at most as often as
    /// its terms allow (see [`PhraseNode::freq_bound`]), and the terms' frequencies come with
    /// the postings. Returns the matches counted and whether every candidate was checked
    /// (else the count is a lower bound).
    pub fn collect_top(&mut self, bm25: &Bm25, top: &mut TopK) -> Result<(u64, bool), IndexError> {
        let mut tally = Tally {
            matches: 0,
            complete: true,
        };
        if self.candidates_by_blocks() {
            self.for_each_pair_candidate(|node, places| {
                node.collect_pair_candidate_at(places, bm25, top, &mut tally)
            })?;
            self.doc = NO_MORE_DOCS;
            return Ok((tally.matches, tally.complete));
        }
        let mut target = 0;
        loop {
            cancel::check()?;
            let candidate = self.align(target)?;
            if candidate == NO_MORE_DOCS {
                self.doc = NO_MORE_DOCS;
                return Ok((tally.matches, tally.complete));
            }
            target = candidate + 1;
            self.doc = candidate;
            self.freq = None;
            self.collect_candidate(bm25, top, &mut tally)?;
        }
    }

    /// [`Self::collect_candidate`] for the document at postings `places` of a pair's entered
    /// blocks: its bound from the blocks' posting starts, and its positions read in place where
    /// both documents lie in one decoded chunk, with no cursor moved; else with the cursors
    /// moved there.
    fn collect_pair_candidate_at(
        &mut self,
        places: [usize; 2],
        bm25: &Bm25,
        top: &mut TopK,
        tally: &mut Tally,
    ) -> Result<(), IndexError> {
        if let Some(threshold) = top.threshold() {
            let freqs = [
                self.terms[0].place(places[0]).1 as u32,
                self.terms[1].place(places[1]).1 as u32,
            ];
            if self.score_with_freq(bm25, self.freq_bound_of(&freqs)) < threshold {
                tally.complete = false;
                return Ok(());
            }
        }
        if top.is_disabled() {
            tally.matches += u64::from(self.pair_occurs_at(places)?);
            return Ok(());
        }
        let segment = self.segment;
        let in_place = self.matches_pair_in_place()
            && self.terms[0].load_sums_at(segment, places[0])?
            && self.terms[1].load_sums_at(segment, places[1])?;
        if !in_place {
            self.step_pair_to(places);
            return self.collect_candidate(bm25, top, tally);
        }
        let freq = self.freq()?;
        self.push_match(freq, bm25, top, tally);
        Ok(())
    }

    /// Counts and pushes the current document into `top` where its phrase frequency `freq`
    /// says the phrase occurs (above zero).
    fn push_match(&self, freq: f32, bm25: &Bm25, top: &mut TopK, tally: &mut Tally) {
        if freq > 0.0 {
            tally.matches += 1;
            top.push(Hit {
                doc: self.doc,
                score: self.score_with_freq(bm25, freq),
            });
        }
    }

    /// [`Self::collect_top`]'s step on the document all cursors are on.
    fn collect_candidate(
        &mut self,
        bm25: &Bm25,
        top: &mut TopK,
        tally: &mut Tally,
    ) -> Result<(), IndexError> {
        if let Some(threshold) = top.threshold() {
            let bound = self.freq_bound()?;
            if self.score_with_freq(bm25, bound) < threshold {
                tally.complete = false;
                return Ok(());
            }
        }
        if top.is_disabled() {
            tally.matches += u64::from(self.occurs()?);
            return Ok(());
        }
        // A candidate that occurs is scored, so its frequency is computed at once: one pass
        // over its positions instead of a check and then the count (a frequency is above zero
        // exactly where the phrase occurs).
        let freq = if self.reads_rarest_first() {
            self.exact_matches()? as f32
        } else {
            if self.matches_pair_in_place() {
                self.load_pair()?;
            } else {
                self.load_positions()?;
            }
            self.freq()?
        };
        self.push_match(freq, bm25, top, tally);
        Ok(())
    }

    /// An upper bound on the phrase frequency in the document all cursors are on, from the
    /// terms' frequencies there: an exact match takes one occurrence of every term, so there
    /// are at most as many as the rarest term has; a sloppy sweep moves a cursor on for every
    /// match but the last, and each weighs at most 1; with two distinct terms, see
    /// [`pair_freq_bound`].
    fn freq_bound(&mut self) -> Result<f32, IndexError> {
        // On the stack for phrases of up to `INLINE_TERMS` terms: a bound is taken for each
        // candidate.
        let mut inline = [0u32; INLINE_TERMS];
        let mut spilled = Vec::new();
        let freqs = match inline.get_mut(..self.terms.len()) {
            Some(freqs) => freqs,
            None => {
                spilled.resize(self.terms.len(), 0);
                &mut spilled[..]
            }
        };
        for (freq, term) in freqs.iter_mut().zip(&mut self.terms) {
            *freq = term.cursor.freq()?;
        }
        Ok(self.freq_bound_of(freqs))
    }

    /// [`Self::freq_bound`] for the terms' frequencies `freqs`, in phrase order.
    fn freq_bound_of(&self, freqs: &[u32]) -> f32 {
        let least = freqs.iter().copied().min().unwrap_or(0);
        let sum: u64 = freqs.iter().map(|&f| u64::from(f)).sum();
        let sweep_moves = (sum + 1).saturating_sub(freqs.len() as u64);
        match (&self.sloppy, freqs) {
            (None, _) => least as f32,
            (Some(_), &[first, second]) if self.distinct_pair => pair_freq_bound(&[first, second]),
            (Some(_), _) => sweep_moves as f32,
        }
    }

    /// The phrase's matches in this segment, counted.
    pub fn count(&mut self) -> Result<u64, IndexError> {
        let mut count = 0u64;
        if self.candidates_by_blocks() {
            self.for_each_pair_candidate(|node, places| {
                count += u64::from(node.pair_occurs_at(places)?);
                Ok(())
            })?;
            self.doc = NO_MORE_DOCS;
            return Ok(count);
        }
        let mut doc = self.start()?;
        while doc != NO_MORE_DOCS {
            count += 1;
            doc = self.advance(doc + 1)?;
        }
        Ok(count)
    }

    /// Whether the candidates are found a block at a time by
    /// [`Self::for_each_pair_candidate`]: a phrase of two terms whose lists are of like length
    /// (the denser one is merged with the rarer's blocks, see [`intersect::merges`]). A much
    /// denser list is tested for each candidate instead ([`Self::align`]).
    fn candidates_by_blocks(&self) -> bool {
        let [lead, other] = self.by_cost[..] else {
            return false;
        };
        let (lead, other) = (&self.terms[lead].cursor, &self.terms[other].cursor);
        intersect::merges(other.doc_freq(), lead.doc_freq())
    }

    /// Calls `visit` on every document both terms of a pair hold, with the places of its
    /// postings in the terms' blocks, in phrase order (the terms have entered those blocks, and
    /// their cursors are at or before the places, see [`Self::step_pair_to`]). The rarer
    /// term's block is intersected with the denser term's blocks eight DIDs against eight
    /// ([`sorted_intersect`]), where a leapfrog of two lists of like density mispredicts a
    /// branch on about every step (on two stop words it was a fifth of a count's time).
    fn for_each_pair_candidate(
        &mut self,
        mut visit: impl FnMut(&mut Self, [usize; 2]) -> Result<(), IndexError>,
    ) -> Result<(), IndexError> {
        let (lead, other) = (self.by_cost[0], self.by_cost[1]);
        let isa = Isa::detect();
        let mut candidates = Vec::with_capacity(BLOCK_LEN);
        let room = BLOCK_LEN + OUTPUT_SLACK;
        let (mut docs, mut in_lead, mut in_other) =
            (vec![0u32; room], vec![0u16; room], vec![0u16; room]);
        loop {
            let cursor = &mut self.terms[lead].cursor;
            let first = cursor.doc();
            if first == NO_MORE_DOCS || cursor.advance(first)? == NO_MORE_DOCS {
                return Ok(());
            }
            let lead_start = cursor.block_position();
            candidates.clear();
            candidates.extend_from_slice(cursor.block_rest());
            let mut i = 0;
            while i < candidates.len() {
                let cursor = &mut self.terms[other].cursor;
                if cursor.advance(candidates[i])? == NO_MORE_DOCS {
                    return Ok(());
                }
                let other_start = cursor.block_position();
                let block = cursor.block_rest();
                let found = sorted_intersect::intersect(
                    &candidates[i..],
                    block,
                    MatchBuffers {
                        docs: &mut docs,
                        places: Some(Places {
                            in_a: &mut in_lead,
                            in_b: &mut in_other,
                            a_offset: (lead_start + i) as u16,
                            b_offset: other_start as u16,
                        }),
                    },
                    isa,
                );
                if found.matches > 0 {
                    self.terms[lead].enter_block()?;
                    self.terms[other].enter_block()?;
                }
                for m in 0..found.matches {
                    cancel::check()?;
                    let mut places = [0; 2];
                    places[lead] = usize::from(in_lead[m]);
                    places[other] = usize::from(in_other[m]);
                    self.doc = docs[m];
                    self.freq = None;
                    visit(self, places)?;
                }
                i += found.a_end;
                // Past the merged DIDs: into the next block if the merge consumed this one.
                let cursor = &mut self.terms[other].cursor;
                cursor.consume(other_start + found.b_end - cursor.block_position())?;
            }
            let cursor = &mut self.terms[lead].cursor;
            cursor.consume(lead_start + candidates.len() - cursor.block_position())?;
        }
    }

    /// Moves the two terms' cursors to postings `places` of their blocks.
    fn step_pair_to(&mut self, places: [usize; 2]) {
        for (term, place) in self.terms.iter_mut().zip(places) {
            term.step_to(place);
        }
    }

    /// [`Self::occurs`] for the document at postings `places` of a pair's entered blocks:
    /// read in place where both documents lie in one decoded chunk, with no cursor moved and
    /// no block looked up again (a count's candidates are most of a stop word's postings);
    /// else with the cursors moved there.
    fn pair_occurs_at(&mut self, places: [usize; 2]) -> Result<bool, IndexError> {
        let segment = self.segment;
        if self.matches_pair_in_place()
            && self.terms[0].load_sums_at(segment, places[0])?
            && self.terms[1].load_sums_at(segment, places[1])?
        {
            let (a, b) = (
                self.terms[0].positions_and_base(),
                self.terms[1].positions_and_base(),
            );
            if let Some(distance) = self.exact_pair_distance() {
                return Ok(count_pair_matches(a, b, distance, 1) > 0);
            }
            if let Some(occurs) = self.sloppy.as_ref().and_then(|s| s.pair_occurs(a, b)) {
                return Ok(occurs);
            }
        }
        self.step_pair_to(places);
        self.occurs()
    }

    /// Leapfrogs the cursors, rarest first, to the first DID at least `target` that all hold.
    fn align(&mut self, target: u32) -> Result<u32, IndexError> {
        let lead = self.by_cost[0];
        let lead_freq = u64::from(self.terms[lead].cursor.doc_freq());
        let mut candidate = self.terms[lead].cursor.advance(target)?;
        'search: loop {
            if candidate == NO_MORE_DOCS {
                return Ok(NO_MORE_DOCS);
            }
            for k in 1..self.by_cost.len() {
                let i = self.by_cost[k];
                let cursor = &mut self.terms[i].cursor;
                if u64::from(cursor.doc_freq()) >= MEMBERSHIP_RATIO * lead_freq {
                    // A list much denser than the lead: a bit test in a block stored as a
                    // bitset, which stays undecoded unless the candidate's positions are read.
                    if !cursor.holds_and_stays(candidate)? {
                        candidate = self.terms[lead].cursor.advance(candidate + 1)?;
                        continue 'search;
                    }
                    continue;
                }
                let doc = cursor.advance(candidate)?;
                if doc > candidate {
                    candidate = self.terms[lead].cursor.advance(doc)?;
                    continue 'search;
                }
            }
            return Ok(candidate);
        }
    }

    /// Whether the phrase occurs in the document all cursors are on (the positions that
    /// answer it are read: every term's, or for [`Self::exact_matches`] those it needs).
    fn occurs(&mut self) -> Result<bool, IndexError> {
        if self.reads_rarest_first() {
            let matches = self.exact_matches()?;
            self.freq = Some(matches as f32);
            return Ok(matches > 0);
        }
        if let Some(distance) = self.exact_pair_distance() {
            self.load_pair()?;
            return Ok(self.pair_matches(distance, 1) > 0);
        }
        if self.matches_pair_in_place() {
            self.load_pair()?;
            let (a, b) = (
                self.terms[0].positions_and_base(),
                self.terms[1].positions_and_base(),
            );
            if let Some(occurs) = self.sloppy.as_ref().and_then(|s| s.pair_occurs(a, b)) {
                return Ok(occurs);
            }
        }
        self.load_positions()?;
        let offsets = &self.offsets;
        match &mut self.sloppy {
            None => Ok(with_positions(&self.terms, |p| {
                exact_phrase_occurs(p, offsets)
            })),
            Some(sloppy) => with_positions(&self.terms, |p| sloppy.occurs(p)),
        }
    }

    /// Whether an exact match is found by [`Self::exact_matches`]: an exact phrase of three
    /// or more terms. Two terms are merged or searched at once by the pair matcher, which
    /// needs both lists whatever their order.
    fn reads_rarest_first(&self) -> bool {
        self.sloppy.is_none() && self.terms.len() > 2
    }

    /// The exact phrase frequency of the document all cursors are on. Positions are read term
    /// by term, rarest first (the conjunction's order), each keeping the phrase starts where
    /// it stands at its offset; once none is left, the other terms' positions are never read,
    /// nor their frequencies decoded. Most candidates of a phrase with a stop word fail on its
    /// rarer words, and so never touch the stop word's frequencies or long position lists.
    fn exact_matches(&mut self) -> Result<u32, IndexError> {
        for k in 0..self.by_cost.len() {
            let term = &mut self.terms[self.by_cost[k]];
            term.load_positions(self.segment)?;
            if k == 0 {
                phrase_starts(&term.positions, term.offset, &mut self.starts);
            } else {
                retain_starts(&mut self.starts, &term.positions, term.offset);
            }
            if self.starts.is_empty() {
                return Ok(0);
            }
        }
        Ok(self.starts.len() as u32)
    }

    /// The distance from the first term to the second of an exact phrase of two terms in
    /// order; `None` for any other phrase.
    fn exact_pair_distance(&self) -> Option<u32> {
        match (&self.sloppy, self.offsets.as_slice()) {
            (None, [first, second]) => second.checked_sub(*first),
            _ => None,
        }
    }

    /// Whether the phrase is matched on its two terms' positions read by [`Self::load_pair`]:
    /// an exact pair in order ([`Self::exact_pair_distance`]), or a sloppy pair of distinct
    /// terms.
    fn matches_pair_in_place(&self) -> bool {
        self.exact_pair_distance().is_some() || (self.distinct_pair && self.sloppy.is_some())
    }

    /// Reads the two terms' positions of a pair: both in place where the reader allows, else
    /// both copied out.
    fn load_pair(&mut self) -> Result<(), IndexError> {
        let segment = self.segment;
        let in_place = self.terms[0].load_sums(segment)? && self.terms[1].load_sums(segment)?;
        if !in_place {
            self.load_positions()?;
        }
        Ok(())
    }

    /// The places, up to `limit`, where the pair [`Self::load_pair`] read stands `distance`
    /// apart.
    fn pair_matches(&self, distance: u32, limit: u32) -> u32 {
        count_pair_matches(
            self.terms[0].positions_and_base(),
            self.terms[1].positions_and_base(),
            distance,
            limit,
        )
    }

    /// Reads every term's positions in the document all cursors are on.
    fn load_positions(&mut self) -> Result<(), IndexError> {
        for term in &mut self.terms {
            term.load_positions(self.segment)?;
        }
        Ok(())
    }

    /// The phrase frequency of the current document, from the positions
    /// [`Self::load_positions`] read; `Err(Cancelled)` from a sloppy sweep cancelled midway.
    fn freq(&mut self) -> Result<f32, IndexError> {
        if let Some(freq) = self.freq {
            return Ok(freq);
        }
        if let Some(distance) = self.exact_pair_distance() {
            let freq = self.pair_matches(distance, u32::MAX) as f32;
            self.freq = Some(freq);
            return Ok(freq);
        }
        if let (Some(sloppy), true) = (&mut self.sloppy, self.distinct_pair) {
            let (a, b) = (
                self.terms[0].positions_and_base(),
                self.terms[1].positions_and_base(),
            );
            if let Some(freq) = sloppy.pair_freq(a, b) {
                self.freq = Some(freq);
                return Ok(freq);
            }
        }
        let offsets = &self.offsets;
        let freq = match &mut self.sloppy {
            None => with_positions(&self.terms, |p| exact_phrase_freq(p, offsets)) as f32,
            Some(sloppy) => with_positions(&self.terms, |p| sloppy.freq(p))?,
        };
        self.freq = Some(freq);
        Ok(freq)
    }

    /// BM25 of the current document: the phrase's weight over its phrase frequency.
    pub fn score(&mut self, bm25: &Bm25) -> Result<f32, IndexError> {
        let freq = self.freq()?;
        Ok(self.score_with_freq(bm25, freq))
    }

    /// BM25 of the current document if its phrase frequency were `freq` (non-decreasing in
    /// `freq`, so a bound on the frequency bounds the score).
    fn score_with_freq(&self, bm25: &Bm25, freq: f32) -> f32 {
        let bm25 = self.field_bm25.as_deref().unwrap_or(bm25);
        // The norm byte alone where the norms are Lucene's (not the exact length).
        let inverse = bm25.norm_inverse_of(&self.lengths, self.doc);
        bm25.score_of_key(self.weight, freq * inverse)
    }
}

/// Calls `f` with the terms' positions in the current document, in phrase order, without
/// allocating for phrases of up to 16 terms.
fn with_positions<R>(terms: &[PhraseTerm<'_>], f: impl FnOnce(&[&[u32]]) -> R) -> R {
    if terms.len() <= INLINE_TERMS {
        let mut slices: [&[u32]; INLINE_TERMS] = [&[]; INLINE_TERMS];
        for (slot, term) in slices.iter_mut().zip(terms) {
            *slot = &term.positions;
        }
        f(&slices[..terms.len()])
    } else {
        let slices: Vec<&[u32]> = terms.iter().map(|t| t.positions.as_slice()).collect();
        f(&slices)
    }
}
