//! Phrase frequencies in one document, from each phrase term's positions there: the exact
//! count, and Lucene's sloppy frequency.
//!
//! Both follow Lucene's `ExactPhraseMatcher` and `SloppyPhraseMatcher` (9.x and 10.x), so
//! that scores agree with Lucene's to the last bit:
//!
//! - exact: the number of places where every term sits at its offset from the first;
//! - sloppy: the terms' positions less their offsets are swept from the least up, always moving
//!   the least one on, and each window that cannot be narrowed further and spans at most the
//!   slop adds `1 / (1 + span)`. A term that occurs twice in the phrase is two cursors over
//!   one list, which may never stand on the same position of the document: the lesser of two
//!   colliding ones moves on (Lucene's repeat groups).
//!
//! Two distinct terms take their own sloppy path where the CPU has AVX-512:
//! [`super::sloppy_pair`] computes the sweep's sum from each position's rank in the other
//! term's list, without the sweep's unpredictable branch.

use apcache_codec::Isa;

use super::cancel::Countdown;
use super::common_values::count_common_shifted;
use super::sloppy_pair::{sloppy_pair_freq, within_slop_by_vectors, SloppyPairScratch};
use super::sorted_search::count_below;
use crate::IndexError;

/// The number of places in a document where each term `i` sits at `offsets[i]` from a common
/// start; `positions[i]` are term `i`'s positions in the document, increasing.
pub fn exact_phrase_freq(positions: &[&[u32]], offsets: &[u32]) -> u32 {
    count_exact(positions, offsets, u32::MAX)
}

/// Whether the phrase occurs at least once: [`exact_phrase_freq`] stopped at its first match
/// (all a filter or a count needs).
pub fn exact_phrase_occurs(positions: &[&[u32]], offsets: &[u32]) -> bool {
    count_exact(positions, offsets, 1) > 0
}

/// The exact matches, counted up to `limit`.
fn count_exact(positions: &[&[u32]], offsets: &[u32], limit: u32) -> u32 {
    debug_assert_eq!(positions.len(), offsets.len());
    let Some((lead, others)) = positions.split_first() else {
        return 0;
    };
    if let ([other], [lead_offset, other_offset]) = (others, offsets) {
        if other_offset >= lead_offset {
            return count_pairs(lead, other, other_offset - lead_offset, limit);
        }
    }
    let lead_offset = i64::from(offsets[0]);
    // At most 64 cursors on the stack; a longer phrase is rare enough to allocate.
    let mut stack = [0usize; 64];
    let mut heap = Vec::new();
    let at: &mut [usize] = if others.len() <= stack.len() {
        &mut stack[..others.len()]
    } else {
        heap.resize(others.len(), 0);
        &mut heap
    };
    let mut count = 0;
    'lead: for &p in *lead {
        let start = i64::from(p) - lead_offset;
        for (j, list) in others.iter().enumerate() {
            let want = start + i64::from(offsets[j + 1]);
            if want < 0 {
                continue 'lead;
            }
            let cursor = &mut at[j];
            while *cursor < list.len() && i64::from(list[*cursor]) < want {
                *cursor += 1;
            }
            match list.get(*cursor) {
                None => break 'lead,
                Some(&q) if i64::from(q) != want => continue 'lead,
                Some(_) => {}
            }
        }
        count += 1;
        if count >= limit {
            break;
        }
    }
    count
}

/// The starts an exact phrase can have given one of its terms: `p - offset` for each of the
/// term's positions `p` (increasing) at or past its `offset`, written to `starts`.
///
/// With [`retain_starts`] for each further term, this counts the same places as
/// [`exact_phrase_freq`] in any order of the terms, so the rarest can go first and a stop
/// word's long list be read only where the others left a start.
pub fn phrase_starts(positions: &[u32], offset: u32, starts: &mut Vec<u32>) {
    starts.clear();
    let first = positions.partition_point(|&p| p < offset);
    starts.extend(positions[first..].iter().map(|&p| p - offset));
}

/// Keeps the `starts` (increasing) where a term at `offset` stands: `start + offset` is among
/// its `positions` (increasing).
pub fn retain_starts(starts: &mut Vec<u32>, positions: &[u32], offset: u32) {
    let isa = Isa::detect();
    let search = starts.len() * LOPSIDED < positions.len();
    let (mut kept, mut at) = (0, 0);
    for i in 0..starts.len() {
        let start = starts[i];
        let Some(want) = start.checked_add(offset) else {
            break;
        };
        if search {
            at += count_below(&positions[at..], want, isa);
        } else {
            while at < positions.len() && positions[at] < want {
                at += 1;
            }
        }
        match positions.get(at) {
            None => break,
            Some(&p) if p == want => {
                starts[kept] = start;
                kept += 1;
            }
            Some(_) => {}
        }
    }
    starts.truncate(kept);
}

/// One list this many times longer than the other is searched, not merged: a stop word's
/// positions in a long document against a rare word's few.
const LOPSIDED: usize = 8;

/// Lists of this many values together are merged sixteen at a time (where the CPU can);
/// shorter ones take fewer steps one at a time than a block compare costs.
const BLOCK_MERGE_MIN: usize = 12;

/// Two terms, the second `distance` after the first, each term's positions given as
/// increasing values less a base (`a.0[i] - a.1`; running sums read in place, or positions
/// with a base of 0): the places where the first is at `p` and the second at `p + distance`,
/// counted up to `limit`. The values are compared as they are, shifted by the bases'
/// difference, without computing a position.
pub fn count_pair_matches(a: (&[u32], u32), b: (&[u32], u32), distance: u32, limit: u32) -> u32 {
    // `a - a_base + distance == b - b_base` exactly where `a + shift == b`.
    let shift = i64::from(distance) + i64::from(b.1) - i64::from(a.1);
    if let Ok(shift) = u32::try_from(shift) {
        count_pairs(a.0, b.0, shift, limit)
    } else if let Ok(back) = u32::try_from(-shift) {
        // Each place pairs one value of each list, so counting from `b`'s side is the same.
        count_pairs(b.0, a.0, back, limit)
    } else {
        0
    }
}

/// Two terms, the second `distance` after the first: the places where `a` holds `p` and `b`
/// holds `p + distance`, counted up to `limit`.
fn count_pairs(a: &[u32], b: &[u32], distance: u32, limit: u32) -> u32 {
    let shift = i64::from(distance);
    if a.len() * LOPSIDED < b.len() {
        return count_by_search(a, b, shift, limit);
    }
    if b.len() * LOPSIDED < a.len() {
        return count_by_search(b, a, -shift, limit);
    }
    if a.len() + b.len() >= BLOCK_MERGE_MIN {
        if let Some(count) = count_common_shifted(a, b, distance, limit, Isa::detect()) {
            return count;
        }
    }
    // A merge of the two lists, each step moving the one behind (both on a place), written
    // without a branch on the data: the steps of a merge are taken at random.
    let (mut i, mut j, mut count) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        let want = u64::from(a[i]) + u64::from(distance);
        let have = u64::from(b[j]);
        i += usize::from(have >= want);
        j += usize::from(have <= want);
        if have == want {
            count += 1;
            if count >= limit {
                break;
            }
        }
    }
    count
}

/// [`count_pairs`] when `short` is much the shorter list: each value `x` of `short` looks for
/// `x + shift` in `long`, from where the last search stopped.
fn count_by_search(short: &[u32], long: &[u32], shift: i64, limit: u32) -> u32 {
    let isa = Isa::detect();
    let (mut at, mut count) = (0, 0);
    for &x in short {
        let Ok(want) = u32::try_from(i64::from(x) + shift) else {
            if shift < 0 {
                continue;
            }
            break;
        };
        at += count_below(&long[at..], want, isa);
        match long.get(at) {
            None => break,
            Some(&y) if y == want => {
                count += 1;
                if count >= limit {
                    break;
                }
                at += 1;
            }
            Some(_) => {}
        }
    }
    count
}

/// Whether some `p` of `a` and `q` of `b` have `|(q - b_offset) - (p - a_offset)| <= slop`.
fn within_slop(a: &[u32], a_offset: i64, b: &[u32], b_offset: i64, slop: i64) -> bool {
    if a.len() * LOPSIDED < b.len() {
        return near_by_search(a, b, b_offset - a_offset, slop);
    }
    if b.len() * LOPSIDED < a.len() {
        return near_by_search(b, a, a_offset - b_offset, slop);
    }
    if let Some(near) = within_slop_by_vectors(a, a_offset, b, b_offset, slop) {
        return near;
    }
    within_slop_by_merge(a, a_offset, b, b_offset, slop)
}

/// [`within_slop`] by a merge of the two lists.
fn within_slop_by_merge(a: &[u32], a_offset: i64, b: &[u32], b_offset: i64, slop: i64) -> bool {
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        let x = i64::from(a[i]) - a_offset;
        let y = i64::from(b[j]) - b_offset;
        if (x - y).abs() <= slop {
            return true;
        }
        i += usize::from(x < y);
        j += usize::from(x >= y);
    }
    false
}

/// [`within_slop`] when `short` is much the shorter list: whether some `y` of `long` lies
/// within `slop` of `x + shift` for some `x` of `short`.
fn near_by_search(short: &[u32], long: &[u32], shift: i64, slop: i64) -> bool {
    let isa = Isa::detect();
    let mut at = 0;
    for &x in short {
        let centre = i64::from(x) + shift;
        let low = centre - slop;
        if low > i64::from(u32::MAX) {
            return false;
        }
        at += count_below(&long[at..], low.max(0) as u32, isa);
        match long.get(at) {
            None => return false,
            Some(&y) if i64::from(y) <= centre + slop => return true,
            Some(_) => {}
        }
    }
    false
}

/// One phrase term's cursor over its positions in the document (Lucene's `PhrasePositions`).
#[derive(Clone, Copy)]
struct Cursor {
    /// The current position less the term's offset.
    position: i64,
    /// The index of the next position to read.
    next: usize,
    offset: i64,
    /// The term's place in the phrase (ties are broken by it).
    ord: usize,
    /// The repeat group (cursors of one term) and the cursor's index in it.
    group: Option<usize>,
}

/// Sloppy phrase frequency state for one phrase; [`SloppyPhrase::freq`] evaluates a document.
pub struct SloppyPhrase {
    slop: i64,
    /// The weight of a match of each length up to the slop, then 0, for
    /// [`sloppy_pair_freq`]; empty for a slop above [`MAX_TABLED_SLOP`].
    weights: Vec<f32>,
    pair_scratch: SloppyPairScratch,
    /// Groups of cursors of one term, each sorted by offset.
    groups: Vec<Vec<usize>>,
    cursors: Vec<Cursor>,
    queue: Vec<usize>,
}

impl SloppyPhrase {
    /// A phrase whose term `i` is `term_ids[i]` (equal ids: the same term) at offset
    /// `offsets[i]`, matched within `slop`.
    pub fn new(term_ids: &[usize], offsets: &[u32], slop: u32) -> SloppyPhrase {
        let mut groups: Vec<Vec<usize>> = Vec::new();
        let mut cursors: Vec<Cursor> = offsets
            .iter()
            .enumerate()
            .map(|(ord, &offset)| Cursor {
                position: 0,
                next: 0,
                offset: i64::from(offset),
                ord,
                group: None,
            })
            .collect();
        for i in 0..term_ids.len() {
            if cursors[i].group.is_some() {
                continue;
            }
            let members: Vec<usize> = (i..term_ids.len())
                .filter(|&j| term_ids[j] == term_ids[i] && (j == i || offsets[j] != offsets[i]))
                .collect();
            if members.len() > 1 {
                let mut members = members;
                members.sort_by_key(|&j| offsets[j]);
                for &j in &members {
                    cursors[j].group = Some(groups.len());
                }
                groups.push(members);
            }
        }
        let weights = if slop <= MAX_TABLED_SLOP {
            (0..=slop + 1)
                .map(|length| {
                    if length <= slop {
                        weight(i64::from(length))
                    } else {
                        0.0
                    }
                })
                .collect()
        } else {
            Vec::new()
        };
        SloppyPhrase {
            slop: i64::from(slop),
            weights,
            pair_scratch: SloppyPairScratch::default(),
            groups,
            cursors,
            queue: Vec::with_capacity(offsets.len()),
        }
    }

    fn next_position(&mut self, c: usize, positions: &[&[u32]]) -> bool {
        let cursor = &mut self.cursors[c];
        match positions[c].get(cursor.next) {
            Some(&p) => {
                cursor.position = i64::from(p) - cursor.offset;
                cursor.next += 1;
                true
            }
            None => false,
        }
    }

    /// The order of the queue: by position, then offset, then place in the phrase.
    fn key(&self, c: usize) -> (i64, i64, usize) {
        let cursor = &self.cursors[c];
        (cursor.position, cursor.offset, cursor.ord)
    }

    /// Queues cursor `c`. The queue is kept sorted, greatest first, so that the least is
    /// popped off its end: a phrase has a handful of cursors, and a moved cursor usually
    /// lands past all others, where a linear search from the end finds its place in a
    /// few compares.
    fn push(&mut self, c: usize) {
        let key = self.key(c);
        let mut at = self.queue.len();
        while at > 0 && self.key(self.queue[at - 1]) < key {
            at -= 1;
        }
        self.queue.insert(at, c);
    }

    /// The least queued cursor, taken out of the queue.
    fn pop(&mut self) -> usize {
        self.queue.pop().expect("a queued cursor")
    }

    fn top_position(&self) -> i64 {
        self.cursors[*self.queue.last().expect("a queued cursor")].position
    }

    /// The sloppy phrase frequency of a document where term `i` occurs at `positions[i]`
    /// (increasing, not empty). `Err(Cancelled)` when the query is cancelled meanwhile (see
    /// `cancel.rs`): a long phrase of repeated words sweeps for long in one document.
    pub fn freq(&mut self, positions: &[&[u32]]) -> Result<f32, IndexError> {
        if let ([a, b], true) = (positions, self.groups.is_empty()) {
            let offsets = [self.cursors[0].offset, self.cursors[1].offset];
            return Ok(self.two_terms(a, b, offsets, offsets));
        }
        self.sweep(positions, false)
    }

    /// [`SloppyPhrase::freq`] of a phrase of two distinct terms whose positions are given as
    /// increasing values less a base (`a.0[i] - a.1`: running sums read in place, or positions
    /// with a base of 0); `None` for any other phrase.
    pub fn pair_freq(&mut self, a: (&[u32], u32), b: (&[u32], u32)) -> Option<f32> {
        let [first, second] = self.distinct_pair_offsets()?;
        let shifts = [first + i64::from(a.1), second + i64::from(b.1)];
        Some(self.two_terms(a.0, b.0, shifts, [first, second]))
    }

    /// The frequency of two distinct terms: by ranks where the CPU and the slop allow, else
    /// by the sweep; the same sum either way.
    fn two_terms(&mut self, a: &[u32], b: &[u32], shifts: [i64; 2], offsets: [i64; 2]) -> f32 {
        if !self.weights.is_empty() {
            let scratch = &mut self.pair_scratch;
            if let Some(freq) = sloppy_pair_freq(a, b, shifts, offsets, &self.weights, scratch) {
                return freq;
            }
        }
        sweep_two(a, b, shifts, offsets, self.slop)
    }

    /// [`SloppyPhrase::occurs`] of a phrase of two distinct terms, the positions given as for
    /// [`SloppyPhrase::pair_freq`]; `None` for any other phrase.
    pub fn pair_occurs(&self, a: (&[u32], u32), b: (&[u32], u32)) -> Option<bool> {
        let [first, second] = self.distinct_pair_offsets()?;
        let (a_shift, b_shift) = (first + i64::from(a.1), second + i64::from(b.1));
        Some(within_slop(a.0, a_shift, b.0, b_shift, self.slop))
    }

    /// The offsets of a phrase of two distinct terms.
    fn distinct_pair_offsets(&self) -> Option<[i64; 2]> {
        match (self.cursors.as_slice(), self.groups.is_empty()) {
            ([first, second], true) => Some([first.offset, second.offset]),
            _ => None,
        }
    }

    /// Whether the phrase occurs within the slop at all: the sweep of [`SloppyPhrase::freq`]
    /// stopped at its first match. `Err(Cancelled)` as for [`SloppyPhrase::freq`].
    pub fn occurs(&mut self, positions: &[&[u32]]) -> Result<bool, IndexError> {
        if let ([a, b], true) = (positions, self.groups.is_empty()) {
            // Two distinct terms match where their positions, less their offsets, come within
            // the slop of each other (the sweep finds a match exactly then; the property
            // tests check it): a merge of the two lists finds the closest pair.
            let (oa, ob) = (self.cursors[0].offset, self.cursors[1].offset);
            return Ok(within_slop(a, oa, b, ob, self.slop));
        }
        Ok(self.sweep(positions, true)? > 0.0)
    }

    /// The sweep: every match's weight summed, or the first one's alone with `first_only`.
    /// Each step moves one cursor on, and costs up to the phrase's length (the queue and the
    /// repeat groups are searched linearly), so the cancellation flag is checked as it goes.
    fn sweep(&mut self, positions: &[&[u32]], first_only: bool) -> Result<f32, IndexError> {
        let n = self.cursors.len();
        debug_assert_eq!(positions.len(), n);
        let mut countdown = Countdown::new();
        let mut end = i64::MIN;
        for c in 0..n {
            self.cursors[c].next = 0;
            if !self.next_position(c, positions) {
                return Ok(0.0);
            }
        }
        // Start without collisions: the k-th cursor of a repeat group moves k places on.
        for g in 0..self.groups.len() {
            for j in 1..self.groups[g].len() {
                let c = self.groups[g][j];
                for _ in 0..j {
                    countdown.step()?;
                    if !self.next_position(c, positions) {
                        return Ok(0.0);
                    }
                }
            }
        }
        self.queue.clear();
        for c in 0..n {
            end = end.max(self.cursors[c].position);
            self.queue.push(c);
        }
        let mut queue = std::mem::take(&mut self.queue);
        queue.sort_unstable_by_key(|&c| std::cmp::Reverse(self.key(c)));
        self.queue = queue;
        let mut freq = 0f32;
        let weight = |length: i64| 1f32 / (1f32 + length as f32);
        loop {
            let mut c = self.pop();
            let mut match_length = end - self.cursors[c].position;
            let mut next = self.top_position();
            let mut matched = false;
            while self.advance(c, positions, &mut end) {
                countdown.step()?;
                if self.cursors[c].group.is_some()
                    && !self.resolve_collisions(c, positions, &mut end, &mut countdown)?
                {
                    break;
                }
                if self.cursors[c].position > next {
                    self.push(c);
                    if match_length <= self.slop {
                        freq += weight(match_length);
                        if first_only {
                            return Ok(freq);
                        }
                        matched = true;
                        break;
                    }
                    c = self.pop();
                    next = self.top_position();
                    match_length = end - self.cursors[c].position;
                } else {
                    match_length = match_length.min(end - self.cursors[c].position);
                }
            }
            if matched {
                continue;
            }
            if match_length <= self.slop {
                freq += weight(match_length);
            }
            return Ok(freq);
        }
    }

    fn advance(&mut self, c: usize, positions: &[&[u32]], end: &mut i64) -> bool {
        if !self.next_position(c, positions) {
            return false;
        }
        *end = (*end).max(self.cursors[c].position);
        true
    }

    /// After cursor `c` moved: while it stands on the document position of another cursor
    /// of its term, moves the lesser of the two on. False when a cursor runs out.
    fn resolve_collisions(
        &mut self,
        c: usize,
        positions: &[&[u32]],
        end: &mut i64,
        countdown: &mut Countdown,
    ) -> Result<bool, IndexError> {
        let Some(g) = self.cursors[c].group else {
            return Ok(true);
        };
        let popped = c;
        let mut c = c;
        loop {
            countdown.step()?;
            let here = self.cursors[c].position + self.cursors[c].offset;
            let other = self.groups[g]
                .iter()
                .copied()
                .find(|&o| o != c && self.cursors[o].position + self.cursors[o].offset == here);
            let Some(other) = other else {
                return Ok(true);
            };
            let (a, b) = (&self.cursors[c], &self.cursors[other]);
            if !(a.position < b.position || (a.position == b.position && a.offset < b.offset)) {
                c = other;
            }
            if c == popped {
                if !self.advance(c, positions, end) {
                    return Ok(false);
                }
            } else {
                // A queued cursor moves: it leaves the sorted queue and comes back in its
                // new place.
                let at = self.queue.iter().position(|&q| q == c);
                let at = at.expect("every cursor but the popped one is queued");
                self.queue.remove(at);
                if !self.advance(c, positions, end) {
                    return Ok(false);
                }
                self.push(c);
            }
        }
    }
}

/// The largest slop whose match weights [`SloppyPhrase`] keeps in a table.
const MAX_TABLED_SLOP: u32 = 1024;

/// The weight of a sloppy match spanning `length` positions beyond its terms' own, as Lucene
/// weighs it.
#[inline]
fn weight(length: i64) -> f32 {
    1f32 / (1f32 + length as f32)
}

/// [`SloppyPhrase::freq`] of two distinct terms, the sweep without its queue: with two
/// cursors, the least is one and the top the other, and the end of the window is the greater
/// position. The same steps in the same order, so the same sum, bit for bit (a property test
/// compares the two). Each term's positions less its offset are its values less its `shift`
/// (its offset, plus a base where the values are running sums); ties of position go by
/// `offsets`, as in the queue.
fn sweep_two(a: &[u32], b: &[u32], shifts: [i64; 2], offsets: [i64; 2], slop: i64) -> f32 {
    let lists = [a, b];
    let (Some(&first_a), Some(&first_b)) = (a.first(), b.first()) else {
        return 0.0;
    };
    let mut position = [
        i64::from(first_a) - shifts[0],
        i64::from(first_b) - shifts[1],
    ];
    let mut next = [1usize, 1];
    // The queue's order: position, then offset, then place in the phrase.
    let key = |position: &[i64; 2], c: usize| (position[c], offsets[c], c);
    let (mut least, mut top) = if key(&position, 0) < key(&position, 1) {
        (0, 1)
    } else {
        (1, 0)
    };
    let mut end = position[0].max(position[1]);
    let mut freq = 0f32;
    'windows: loop {
        let mut match_length = end - position[least];
        let mut bound = position[top];
        while let Some(&p) = lists[least].get(next[least]) {
            next[least] += 1;
            position[least] = i64::from(p) - shifts[least];
            end = end.max(position[least]);
            if position[least] > bound {
                // The moved cursor is now the greater.
                std::mem::swap(&mut least, &mut top);
                if match_length <= slop {
                    freq += weight(match_length);
                    continue 'windows;
                }
                bound = position[top];
                match_length = end - position[least];
            } else {
                match_length = match_length.min(end - position[least]);
            }
        }
        if match_length <= slop {
            freq += weight(match_length);
        }
        return freq;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::sloppy_pair::pair_freq_bound;
    use proptest::prelude::*;

    /// Brute force: the places `s` where every term `i` is at `s + offsets[i]`.
    fn exact_by_scan(doc: &[u8], phrase: &[u8], offsets: &[u32]) -> u32 {
        let mut count = 0;
        for start in 0..doc.len() as i64 {
            if phrase.iter().zip(offsets).all(|(&t, &o)| {
                let at = start + i64::from(o);
                at >= 0 && (at as usize) < doc.len() && doc[at as usize] == t
            }) {
                count += 1;
            }
        }
        count
    }

    fn positions_of(doc: &[u8], term: u8) -> Vec<u32> {
        (0..doc.len() as u32)
            .filter(|&p| doc[p as usize] == term)
            .collect()
    }

    /// Brute force: whether the terms (distinct ones) can be placed on positions of theirs
    /// whose values less the offsets span at most `slop`.
    fn sloppy_matches_by_scan(doc: &[u8], phrase: &[u8], offsets: &[u32], slop: u32) -> bool {
        let lists: Vec<Vec<u32>> = phrase.iter().map(|&t| positions_of(doc, t)).collect();
        fn place(
            lists: &[Vec<u32>],
            offsets: &[u32],
            i: usize,
            lo: i64,
            hi: i64,
            slop: i64,
        ) -> bool {
            if i == lists.len() {
                return hi - lo <= slop;
            }
            lists[i].iter().any(|&p| {
                let v = i64::from(p) - i64::from(offsets[i]);
                let (lo, hi) = (lo.min(v), hi.max(v));
                hi - lo <= slop && place(lists, offsets, i + 1, lo, hi, slop)
            })
        }
        place(&lists, offsets, 0, i64::MAX, i64::MIN, i64::from(slop))
    }

    fn exact_freq(doc: &[u8], phrase: &[u8], offsets: &[u32]) -> u32 {
        let lists: Vec<Vec<u32>> = phrase.iter().map(|&t| positions_of(doc, t)).collect();
        if lists.iter().any(Vec::is_empty) {
            return 0;
        }
        let slices: Vec<&[u32]> = lists.iter().map(Vec::as_slice).collect();
        exact_phrase_freq(&slices, offsets)
    }

    fn sloppy_freq(doc: &[u8], phrase: &[u8], offsets: &[u32], slop: u32) -> f32 {
        let lists: Vec<Vec<u32>> = phrase.iter().map(|&t| positions_of(doc, t)).collect();
        if lists.iter().any(Vec::is_empty) {
            return 0.0;
        }
        let slices: Vec<&[u32]> = lists.iter().map(Vec::as_slice).collect();
        let ids: Vec<usize> = phrase.iter().map(|&t| usize::from(t)).collect();
        SloppyPhrase::new(&ids, offsets, slop)
            .freq(&slices)
            .unwrap()
    }

    fn case() -> impl Strategy<Value = (Vec<u8>, Vec<u8>, Vec<u32>)> {
        (
            prop::collection::vec(0u8..4, 0..40),
            prop::collection::vec((0u8..4, 1u32..3), 2..5),
        )
            .prop_map(|(doc, terms)| {
                let mut offsets = Vec::new();
                let mut at = 0;
                for (i, &(_, gap)) in terms.iter().enumerate() {
                    if i > 0 {
                        at += gap;
                    }
                    offsets.push(at);
                }
                (doc, terms.into_iter().map(|(t, _)| t).collect(), offsets)
            })
    }

    proptest! {
        #[test]
        fn exact_counts_every_place((doc, phrase, offsets) in case()) {
            let freq = exact_freq(&doc, &phrase, &offsets);
            prop_assert_eq!(freq, exact_by_scan(&doc, &phrase, &offsets));
            let lists: Vec<Vec<u32>> = phrase.iter().map(|&t| positions_of(&doc, t)).collect();
            let slices: Vec<&[u32]> = lists.iter().map(Vec::as_slice).collect();
            prop_assert_eq!(exact_phrase_occurs(&slices, &offsets), freq > 0);
        }

        #[test]
        fn starts_in_any_term_order_count_every_place(
            (doc, phrase, offsets) in case(),
            rotate in 0usize..5,
        ) {
            let lists: Vec<Vec<u32>> = phrase.iter().map(|&t| positions_of(&doc, t)).collect();
            prop_assume!(lists.iter().all(|l| !l.is_empty()));
            let mut order: Vec<usize> = (0..phrase.len()).collect();
            order.rotate_left(rotate % phrase.len());
            let mut starts = Vec::new();
            phrase_starts(&lists[order[0]], offsets[order[0]], &mut starts);
            for &i in &order[1..] {
                retain_starts(&mut starts, &lists[i], offsets[i]);
            }
            prop_assert_eq!(starts.len() as u32, exact_by_scan(&doc, &phrase, &offsets));
        }

        #[test]
        fn sloppy_matches_where_a_placement_fits((doc, phrase, offsets) in case(), slop in 0u32..6) {
            let distinct = {
                let mut p = phrase.clone();
                p.sort_unstable();
                p.dedup();
                p.len() == phrase.len()
            };
            let freq = sloppy_freq(&doc, &phrase, &offsets, slop);
            if distinct {
                prop_assert_eq!(freq > 0.0, sloppy_matches_by_scan(&doc, &phrase, &offsets, slop));
            } else if freq > 0.0 {
                // Repeated terms: a match needs every term, on distinct positions.
                prop_assert!(sloppy_matches_by_scan(&doc, &phrase, &offsets, slop));
            }
            // The first-match sweep agrees with the full one.
            let lists: Vec<Vec<u32>> = phrase.iter().map(|&t| positions_of(&doc, t)).collect();
            if lists.iter().all(|l| !l.is_empty()) {
                let slices: Vec<&[u32]> = lists.iter().map(Vec::as_slice).collect();
                let ids: Vec<usize> = phrase.iter().map(|&t| usize::from(t)).collect();
                prop_assert_eq!(SloppyPhrase::new(&ids, &offsets, slop).occurs(&slices).unwrap(), freq > 0.0);
                // The bound that top-k pruning relies on: each match but the last moves a
                // cursor on, and weighs at most 1.
                let bound = lists.iter().map(Vec::len).sum::<usize>() + 1 - lists.len();
                prop_assert!(freq <= bound as f32, "{} > {}", freq, bound);
                // Two distinct terms: the least cursor alternates between them, and each
                // turn ends in at most one match.
                if distinct && lists.len() == 2 {
                    let least = lists.iter().map(Vec::len).min().unwrap();
                    prop_assert!(freq <= (2 * least + 1) as f32, "{} > 2 x {} + 1", freq, least);
                }
            }
            // Every exact place is a sloppy one of span 0.
            if exact_freq(&doc, &phrase, &offsets) > 0 {
                prop_assert!(freq >= 1.0 || !distinct);
            }
        }
    }

    /// `list` raised by a base drawn from `seed` (as large as the values leave room for), as
    /// a chunk's running sums hold a document's positions; and the base.
    fn raised(list: &[u32], seed: u32) -> (Vec<u32>, u32) {
        let room = u32::MAX - list.last().copied().unwrap_or(0);
        let base = seed % room.saturating_add(1).max(1);
        (list.iter().map(|&p| p + base).collect(), base)
    }

    /// An increasing list of positions, of any length up to 300, near zero or near the top of
    /// the range.
    fn positions_list() -> impl Strategy<Value = Vec<u32>> {
        (
            prop::collection::btree_set(0u32..600, 0..300),
            prop::bool::weighted(0.1),
        )
            .prop_map(|(set, high)| {
                let base = if high { u32::MAX - 600 } else { 0 };
                set.into_iter().map(|p| p + base).collect()
            })
    }

    proptest! {
        // The two-term paths (merged or searched, whichever list is longer) against pairs
        // checked one by one.
        #[test]
        fn two_term_paths_match_every_pair(
            a in positions_list(),
            b in positions_list(),
            distance in 0u32..5,
            slop in 0i64..4,
            offsets in (0i64..3, 0i64..3),
            limit in 1u32..4,
            bases in (any::<u32>(), any::<u32>()),
        ) {
            let pairs = a
                .iter()
                .filter(|&&p| {
                    u32::try_from(u64::from(p) + u64::from(distance))
                        .is_ok_and(|q| b.binary_search(&q).is_ok())
                })
                .count() as u32;
            prop_assert_eq!(count_pairs(&a, &b, distance, limit), pairs.min(limit));
            // The same lists as values less a base, as running sums read in place.
            let (a_sums, a_base) = raised(&a, bases.0);
            let (b_sums, b_base) = raised(&b, bases.1);
            prop_assert_eq!(
                count_pair_matches((&a_sums, a_base), (&b_sums, b_base), distance, limit),
                pairs.min(limit)
            );
            let (oa, ob) = offsets;
            let near = a.iter().any(|&p| {
                b.iter().any(|&q| ((i64::from(q) - ob) - (i64::from(p) - oa)).abs() <= slop)
            });
            prop_assert_eq!(within_slop(&a, oa, &b, ob, slop), near);
            assert_slop_checks_agree(&a, oa, &b, ob, slop)?;
        }

        // Sparse lists, where most pairs are far apart and a match, if any, comes late.
        #[test]
        fn slop_checks_agree_on_sparse_lists(
            a in prop::collection::btree_set(0u32..2000, 0..40),
            b in prop::collection::btree_set(0u32..2000, 0..40),
            slop in 0i64..4,
            offsets in (0i64..3, 0i64..3),
        ) {
            let (a, b): (Vec<u32>, Vec<u32>) = (a.into_iter().collect(), b.into_iter().collect());
            assert_slop_checks_agree(&a, offsets.0, &b, offsets.1, slop)?;
        }
    }

    /// Both ways of checking the slop agree with every pair checked one by one.
    fn assert_slop_checks_agree(
        a: &[u32],
        oa: i64,
        b: &[u32],
        ob: i64,
        slop: i64,
    ) -> Result<(), TestCaseError> {
        let near = a.iter().any(|&p| {
            b.iter()
                .any(|&q| ((i64::from(q) - ob) - (i64::from(p) - oa)).abs() <= slop)
        });
        prop_assert_eq!(within_slop_by_merge(a, oa, b, ob, slop), near);
        if let Some(by_vectors) = within_slop_by_vectors(a, oa, b, ob, slop) {
            prop_assert_eq!(by_vectors, near);
        }
        Ok(())
    }

    proptest! {
        // Two distinct terms take the sweep without a queue: the same frequency, bit for bit.
        #[test]
        fn two_term_sweep_is_the_sweep(
            a in positions_list(),
            b in positions_list(),
            offsets in (0u32..3, 0u32..3),
            slop in 0u32..6,
            bases in (any::<u32>(), any::<u32>()),
        ) {
            prop_assume!(!a.is_empty() && !b.is_empty());
            let offsets = [offsets.0, offsets.1];
            let mut phrase = SloppyPhrase::new(&[0, 1], &offsets, slop);
            let lists: [&[u32]; 2] = [&a, &b];
            let swept = phrase.sweep(&lists, false).unwrap();
            prop_assert_eq!(phrase.freq(&lists).unwrap().to_bits(), swept.to_bits());
            let offsets = [i64::from(offsets[0]), i64::from(offsets[1])];
            let queueless = sweep_two(&a, &b, offsets, offsets, i64::from(slop));
            prop_assert_eq!(queueless.to_bits(), swept.to_bits());
            let bound = pair_freq_bound(&[a.len() as u32, b.len() as u32]);
            prop_assert!(swept <= bound, "{} above its bound {}", swept, bound);
            // The same lists as values less a base, as running sums read in place.
            let (a_sums, a_base) = raised(&a, bases.0);
            let (b_sums, b_base) = raised(&b, bases.1);
            let pair = phrase.pair_freq((&a_sums, a_base), (&b_sums, b_base));
            prop_assert_eq!(pair.map(f32::to_bits), Some(swept.to_bits()));
            let occurs = phrase.pair_occurs((&a_sums, a_base), (&b_sums, b_base));
            prop_assert_eq!(occurs, Some(phrase.sweep(&lists, true).unwrap() > 0.0));
        }
    }

    #[test]
    fn a_late_match_is_found() {
        // The one match is in the second vector of `a`, with the last value of `b`.
        let a: Vec<u32> = (0..16).map(|i| 100 * i).collect();
        for (b, near) in [
            (vec![3, 1502], true),
            (vec![3, 1503], false),
            (vec![], false),
        ] {
            assert_slop_checks_agree(&a, 0, &b, 0, 2).unwrap();
            assert_eq!(within_slop(&a, 0, &b, 0, 2), near, "{b:?}");
        }
    }

    #[test]
    fn a_pair_reaches_its_frequency_bound() {
        // Each value of the rarer term beside an equal value and one a place on: its passes
        // weigh 1 and 1/2, the bound's 1.5 per value.
        let a: Vec<u32> = (1..=50).map(|i| 10 * i).collect();
        let b: Vec<u32> = a.iter().flat_map(|&p| [p, p + 1]).collect();
        for offsets in [[0, 0], [1, 1], [0, 1]] {
            let mut phrase = SloppyPhrase::new(&[0, 1], &offsets, 1);
            let freq = phrase.freq(&[&a, &b]).unwrap();
            let bound = pair_freq_bound(&[a.len() as u32, b.len() as u32]);
            assert!(freq <= bound, "{freq} above its bound {bound}");
            if offsets[0] == offsets[1] {
                // The first tie goes to the first term, whose value then has one pass.
                assert_eq!(freq, 1.5 * a.len() as f32 - 0.5, "offsets {offsets:?}");
            }
        }
    }

    #[test]
    fn a_long_sweep_stops_when_its_query_is_cancelled() {
        use super::super::cancel::CancelScope;
        use std::sync::atomic::AtomicBool;
        use std::sync::Arc;

        // One word 64 times over a document of 4,096 of it: a sweep of a quarter of a million
        // steps, each searching the queue, in a single document.
        let positions: Vec<u32> = (0..4096).collect();
        let lists: Vec<&[u32]> = vec![&positions; 64];
        let offsets: Vec<u32> = (0..64).collect();
        let mut phrase = SloppyPhrase::new(&[0; 64], &offsets, 10);
        assert!(phrase.freq(&lists).unwrap() > 0.0);
        let _scope = CancelScope::enter(Arc::new(AtomicBool::new(true)));
        assert!(matches!(phrase.freq(&lists), Err(IndexError::Cancelled)));
        assert!(matches!(phrase.occurs(&lists), Err(IndexError::Cancelled)));
    }

    #[test]
    fn sloppy_weights_follow_lucene() {
        // "a b"~2 in "a x b": one match of span 1.
        assert_eq!(sloppy_freq(&[0, 9, 1], &[0, 1], &[0, 1], 2), 0.5);
        // Reversed: "b a" needs span 2 ("a b" moved).
        assert_eq!(sloppy_freq(&[0, 1], &[1, 0], &[0, 1], 2), 1.0 / 3.0);
        assert_eq!(sloppy_freq(&[0, 1], &[1, 0], &[0, 1], 1), 0.0);
        // Exact places count 1 each.
        assert_eq!(sloppy_freq(&[0, 1, 0, 1], &[0, 1], &[0, 1], 1), 2.0);
        assert_eq!(exact_freq(&[0, 0, 0], &[0, 0], &[0, 1]), 2);
    }
}
