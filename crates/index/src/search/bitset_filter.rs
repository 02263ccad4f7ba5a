//! Candidates tested against a block stored as a bitset, without decoding it.
//!
//! A frequent term's blocks are often stored as the bitset of their documents
//! ([`apcache_codec`]'s dense blocks). An intersection that filters candidates through such a
//! block needs, per candidate, whether its bit is set and, for the frequency, its place in the
//! block: the number of bits set below it. Both come from the words directly: a bit test, and
//! the bits set in the words before the candidate's (counted once for all the candidates) and
//! in its own word below it. Decoding the block to its 256 DIDs
//! first and searching them costs more than that whenever the candidates are fewer than the
//! block's documents, which is the case of a conjunction led by its rarest term.

/// Where [`filter`] writes the candidates it keeps.
pub struct BitMatches<'o> {
    /// The candidates the bitset holds.
    pub docs: &'o mut [u32],
    /// Each one's index in the candidates, plus [`BitMatches::offset`].
    pub origin: &'o mut [u16],
    /// Each one's place in the block (the bits set below it).
    pub places: &'o mut [u16],
    /// Added to every origin.
    pub offset: usize,
}

/// Word `w` of a bitset stored as little-endian 64-bit words.
#[inline(always)]
fn word(words: &[u8], w: usize) -> u64 {
    u64::from_le_bytes(words[8 * w..8 * w + 8].try_into().expect("8 bytes"))
}

/// Whether the CPU counts bits in one instruction (without it, `count_ones` is a dozen).
#[inline]
fn has_popcnt() -> bool {
    #[cfg(target_arch = "x86_64")]
    return std::arch::is_x86_feature_detected!("popcnt");
    #[cfg(not(target_arch = "x86_64"))]
    return false;
}

/// Whether bit `k` of `words` is set (`None` past the last word).
#[inline]
pub fn test(words: &[u8], k: u32) -> Option<bool> {
    let at = (k / 64) as usize;
    (at < words.len() / 8).then(|| (word(words, at) >> (k % 64)) & 1 == 1)
}

/// The number of bits set in `words` below bit `k` (which must be in its words).
pub fn rank(words: &[u8], k: u32) -> usize {
    #[cfg(target_arch = "x86_64")]
    if has_popcnt() {
        // SAFETY: POPCNT was detected.
        return unsafe { rank_popcnt(words, k) };
    }
    rank_with(words, k)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt")]
unsafe fn rank_popcnt(words: &[u8], k: u32) -> usize {
    rank_with(words, k)
}

#[inline(always)]
fn rank_with(words: &[u8], k: u32) -> usize {
    let at = (k / 64) as usize;
    let below: u32 = (0..at).map(|w| word(words, w).count_ones()).sum();
    (below + (word(words, at) & ((1u64 << (k % 64)) - 1)).count_ones()) as usize
}

/// Keeps those of the increasing `candidates` whose bit is set in `words` (little-endian 64-bit
/// words, bit `k` for DID `first + k`, at most [`MAX_WORDS`] of them read), writing each to
/// `out` with its origin and place; returns how many. Candidates below `first` or past the
/// last word are not held. Each output slice must have room for `candidates.len()` values.
pub fn filter(words: &[u8], first: u32, candidates: &[u32], out: BitMatches<'_>) -> usize {
    #[cfg(target_arch = "x86_64")]
    if has_popcnt() {
        // SAFETY: POPCNT was detected.
        return unsafe { filter_popcnt(words, first, candidates, out) };
    }
    filter_with(words, first, candidates, out)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt")]
unsafe fn filter_popcnt(
    words: &[u8],
    first: u32,
    candidates: &[u32],
    out: BitMatches<'_>,
) -> usize {
    filter_with(words, first, candidates, out)
}

/// The most words of a bitset [`filter`] reads: a dense block has at most 128 (the codec
/// refuses a longer one).
const MAX_WORDS: usize = 128;

#[inline(always)]
fn filter_with(words: &[u8], first: u32, candidates: &[u32], out: BitMatches<'_>) -> usize {
    let words_len = (words.len() / 8).min(MAX_WORDS);
    // Candidates below the block's first DID lie in the gap before it: none is held.
    let below_first = candidates.partition_point(|&doc| doc < first);
    let offset = out.offset + below_first;
    let candidates = &candidates[below_first..];
    let (Some(&last), true) = (candidates.last(), words_len > 0) else {
        return 0;
    };
    // The bits set before each word up to the last candidate's, counted in one loop: walked
    // from candidate to candidate instead, the count's loop ended at a different word for
    // each, and the branch predictor missed most of those ends.
    let last_word = (((last - first) / 64) as usize).min(words_len - 1);
    let mut before = [0u16; MAX_WORDS];
    let mut running = 0u16;
    for (w, count) in before.iter_mut().enumerate().take(last_word + 1) {
        *count = running;
        running += word(words, w).count_ones() as u16;
    }
    let mut found = 0;
    for (j, &doc) in candidates.iter().enumerate() {
        let k = doc - first;
        let at = (k / 64) as usize;
        if at >= words_len {
            break;
        }
        let bits = word(words, at);
        let bit = k % 64;
        // Written whether or not the bit is set: only a set bit keeps them.
        out.docs[found] = doc;
        out.origin[found] = (offset + j) as u16;
        out.places[found] = before[at] + (bits & ((1u64 << bit) - 1)).count_ones() as u16;
        found += ((bits >> bit) & 1) as usize;
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn no_words_hold_nothing() {
        let (mut docs, mut origin, mut places) = ([0; 2], [0; 2], [0; 2]);
        let out = BitMatches {
            docs: &mut docs,
            origin: &mut origin,
            places: &mut places,
            offset: 0,
        };
        assert_eq!(filter(&[], 5, &[5, 9], out), 0);
    }

    proptest! {
        #[test]
        fn keeps_the_held_candidates_with_their_places(
            first in 0u32..1_000,
            offsets in proptest::collection::btree_set(0u32..2_000, 1..=256),
            probes in proptest::collection::btree_set(0u32..3_200, 0..=256),
            offset in 0usize..256,
        ) {
            let docs: Vec<u32> = offsets.iter().map(|&o| first + o).collect();
            let words_len = (*offsets.iter().last().unwrap() as usize) / 64 + 1;
            let mut bits = vec![0u64; words_len];
            for &o in &offsets {
                bits[o as usize / 64] |= 1 << (o % 64);
            }
            let words: Vec<u8> = bits.iter().flat_map(|w| w.to_le_bytes()).collect();
            let candidates: Vec<u32> = probes.into_iter().collect();
            let n = candidates.len();
            let (mut out_docs, mut origin, mut places) = (vec![0; n], vec![0; n], vec![0; n]);
            let found = filter(&words, first, &candidates, BitMatches {
                docs: &mut out_docs,
                origin: &mut origin,
                places: &mut places,
                offset,
            });
            // The reference: a search of the decoded DIDs.
            let mut expected = Vec::new();
            for (j, &c) in candidates.iter().enumerate() {
                if let Ok(place) = docs.binary_search(&c) {
                    expected.push((c, (offset + j) as u16, place as u16));
                }
            }
            let got: Vec<(u32, u16, u16)> = (0..found)
                .map(|i| (out_docs[i], origin[i], places[i]))
                .collect();
            prop_assert_eq!(got, expected);
            // One candidate at a time.
            for &c in &candidates {
                let held = c.checked_sub(first).and_then(|k| test(&words, k)) == Some(true);
                prop_assert_eq!(held, docs.binary_search(&c).is_ok());
                if held {
                    let place = rank(&words, c - first);
                    prop_assert_eq!(docs[place], c);
                }
            }
        }

    }
}
