//! Intersecting two increasing DID arrays, eight DIDs against eight.
//!
//! The evaluators' innermost loop. A scalar merge steps one DID at a time and every step
//! waits on the compare of the step before (about six cycles a DID, branch-free). With AVX2,
//! eight DIDs of one array are compared with eight of the other at once: the second vector is
//! rotated through its eight positions, so that every pair meets, and the equal lanes are
//! gathered to the output with a permutation looked up by their mask; then the vector whose
//! last DID is smaller (or both) moves on by eight. About twelve cycles cover eight DIDs of
//! each array. Where each common DID sits in both arrays is noted on request (the top-k
//! evaluator reads frequencies there). The tails, shorter than a vector, are merged in scalar
//! code, which is also the whole path on CPUs without AVX2.

use apcache_codec::Isa;

/// Where the common DIDs of two increasing arrays sit (see [`intersect`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Intersection {
    /// Number of common DIDs written.
    pub matches: usize,
    /// How far into `a` and `b` the intersection went: one of them is consumed whole.
    pub a_end: usize,
    pub b_end: usize,
}

/// The output of [`intersect`]: the common DIDs and, for each, its index in `a` and in `b`
/// plus the caller's offsets.
pub struct MatchBuffers<'o> {
    pub docs: &'o mut [u32],
    /// `None` when the caller needs the DIDs alone.
    pub places: Option<Places<'o>>,
}

/// Where each common DID sits: `in_a[m] = a_offset + index in a`, likewise for `b`.
pub struct Places<'o> {
    pub in_a: &'o mut [u16],
    pub in_b: &'o mut [u16],
    pub a_offset: u16,
    pub b_offset: u16,
}

/// Room an output needs beyond the matches it can receive: vector stores write eight lanes.
pub const OUTPUT_SLACK: usize = 8;

/// Intersects `a` and `b` (each increasing, without repeats) until one of them is consumed,
/// writing the common DIDs in order to `out`.
///
/// Every common DID of `a[..a_end]` and `b[..b_end]` is written, and neither remainder
/// (`a[a_end..]`, `b[b_end..]`) holds a DID of the other's consumed part. `out`'s slices
/// must each hold `min(a.len(), b.len()) + OUTPUT_SLACK` values; positions must fit `u16`.
pub fn intersect(a: &[u32], b: &[u32], out: MatchBuffers<'_>, isa: Isa) -> Intersection {
    let room = a.len().min(b.len()) + OUTPUT_SLACK;
    assert!(out.docs.len() >= room, "intersect: output too small");
    if let Some(places) = &out.places {
        assert!(
            places.in_a.len() >= room && places.in_b.len() >= room,
            "intersect: output too small"
        );
    }
    #[cfg(target_arch = "x86_64")]
    if isa >= Isa::Avx2
        && std::arch::is_x86_feature_detected!("avx2")
        && std::arch::is_x86_feature_detected!("popcnt")
    {
        // SAFETY: AVX2 and POPCNT are present, and the output holds `room` values, as `avx2`
        // needs.
        return unsafe { avx2::intersect(a, b, out) };
    }
    let _ = isa;
    merge_tail(
        a,
        b,
        out,
        Intersection {
            matches: 0,
            a_end: 0,
            b_end: 0,
        },
    )
}

/// Branch-free scalar merge from `at` on (the whole intersection when `at` is zero).
fn merge_tail(a: &[u32], b: &[u32], out: MatchBuffers<'_>, at: Intersection) -> Intersection {
    let Intersection {
        matches: mut m,
        a_end: mut i,
        b_end: mut j,
    } = at;
    let docs = out.docs;
    match out.places {
        None => {
            while i < a.len() && j < b.len() {
                let (x, y) = (a[i], b[j]);
                docs[m] = x;
                m += usize::from(x == y);
                i += usize::from(x <= y);
                j += usize::from(y <= x);
            }
        }
        Some(places) => {
            let (a_offset, b_offset) = (usize::from(places.a_offset), usize::from(places.b_offset));
            while i < a.len() && j < b.len() {
                let (x, y) = (a[i], b[j]);
                docs[m] = x;
                places.in_a[m] = (a_offset + i) as u16;
                places.in_b[m] = (b_offset + j) as u16;
                m += usize::from(x == y);
                i += usize::from(x <= y);
                j += usize::from(y <= x);
            }
        }
    }
    Intersection {
        matches: m,
        a_end: i,
        b_end: j,
    }
}

#[cfg(target_arch = "x86_64")]
pub(super) mod avx2 {
    use std::arch::x86_64::*;

    use super::{merge_tail, Intersection, MatchBuffers};

    /// For each 8-bit mask, the lanes whose bit is set, lowest first, then zeros: the
    /// permutation that gathers a vector's matching lanes to its front.
    pub(crate) const GATHER: [[u8; 8]; 256] = {
        let mut table = [[0u8; 8]; 256];
        let mut mask = 0;
        while mask < 256 {
            let (mut lane, mut k) = (0, 0);
            while lane < 8 {
                if mask & (1 << lane) != 0 {
                    table[mask][k] = lane as u8;
                    k += 1;
                }
                lane += 1;
            }
            mask += 1;
        }
        table
    };

    /// [`super::intersect`] with AVX2.
    ///
    /// # Safety
    /// The CPU has AVX2 and POPCNT, and `out`'s slices hold `min(a.len(), b.len()) + 8` values.
    #[target_feature(enable = "avx2,popcnt")]
    pub(super) unsafe fn intersect(a: &[u32], b: &[u32], out: MatchBuffers<'_>) -> Intersection {
        let (mut i, mut j, mut m) = (0usize, 0usize, 0usize);
        let lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        // Rotations of `b` by one, two and three lanes within each half, and the halves
        // swapped: with these, lane l of `a` meets every lane of `b` in eight compares.
        let swap_halves = |v: __m256i| _mm256_permute2x128_si256::<0x01>(v, v);
        let places = out.places;
        let docs = out.docs;
        let (a_offset, b_offset) = match &places {
            Some(p) => (i32::from(p.a_offset), i32::from(p.b_offset)),
            None => (0, 0),
        };
        let (mut in_a, mut in_b) = match places {
            Some(p) => (Some(p.in_a), Some(p.in_b)),
            None => (None, None),
        };
        let want_places = in_a.is_some();
        // Lane l of rotation r holds b's lane `index_r[l]`.
        let idx0 = lanes;
        let idx1 = _mm256_shuffle_epi32::<0b00_11_10_01>(idx0);
        let idx2 = _mm256_shuffle_epi32::<0b01_00_11_10>(idx0);
        let idx3 = _mm256_shuffle_epi32::<0b10_01_00_11>(idx0);
        let idx4 = swap_halves(idx0);
        let idx5 = _mm256_shuffle_epi32::<0b00_11_10_01>(idx4);
        let idx6 = _mm256_shuffle_epi32::<0b01_00_11_10>(idx4);
        let idx7 = _mm256_shuffle_epi32::<0b10_01_00_11>(idx4);
        while i + 8 <= a.len() && j + 8 <= b.len() {
            // SAFETY: i + 8 <= a.len() and j + 8 <= b.len(); unaligned loads.
            let (va, vb) = unsafe {
                (
                    _mm256_loadu_si256(a.as_ptr().add(i).cast()),
                    _mm256_loadu_si256(b.as_ptr().add(j).cast()),
                )
            };
            let vb4 = swap_halves(vb);
            let e0 = _mm256_cmpeq_epi32(va, vb);
            let e1 = _mm256_cmpeq_epi32(va, _mm256_shuffle_epi32::<0b00_11_10_01>(vb));
            let e2 = _mm256_cmpeq_epi32(va, _mm256_shuffle_epi32::<0b01_00_11_10>(vb));
            let e3 = _mm256_cmpeq_epi32(va, _mm256_shuffle_epi32::<0b10_01_00_11>(vb));
            let e4 = _mm256_cmpeq_epi32(va, vb4);
            let e5 = _mm256_cmpeq_epi32(va, _mm256_shuffle_epi32::<0b00_11_10_01>(vb4));
            let e6 = _mm256_cmpeq_epi32(va, _mm256_shuffle_epi32::<0b01_00_11_10>(vb4));
            let e7 = _mm256_cmpeq_epi32(va, _mm256_shuffle_epi32::<0b10_01_00_11>(vb4));
            let any = _mm256_or_si256(
                _mm256_or_si256(_mm256_or_si256(e0, e1), _mm256_or_si256(e2, e3)),
                _mm256_or_si256(_mm256_or_si256(e4, e5), _mm256_or_si256(e6, e7)),
            );
            let mask = _mm256_movemask_ps(_mm256_castsi256_ps(any)) as usize;
            // Written whether or not anything matched: a branch here would be mispredicted
            // about as often as taken.
            // SAFETY: a row of `GATHER` is 8 bytes, which `_mm_loadl_epi64` reads unaligned.
            let gather =
                _mm256_cvtepu8_epi32(unsafe { _mm_loadl_epi64(GATHER[mask].as_ptr().cast()) });
            // SAFETY: m <= min(i, j) (one match per consumed DID of each) and the output
            // holds min(a.len(), b.len()) + 8 values, so m + 8 is within it; unaligned store.
            unsafe {
                _mm256_storeu_si256(
                    docs.as_mut_ptr().add(m).cast(),
                    _mm256_permutevar8x32_epi32(va, gather),
                )
            };
            if want_places {
                // Lane l of `a` met its equal in rotation r, at b's lane idx_r[l].
                let pick = |e: __m256i, idx: __m256i| _mm256_and_si256(e, idx);
                let at_b = _mm256_or_si256(
                    _mm256_or_si256(
                        _mm256_or_si256(pick(e0, idx0), pick(e1, idx1)),
                        _mm256_or_si256(pick(e2, idx2), pick(e3, idx3)),
                    ),
                    _mm256_or_si256(
                        _mm256_or_si256(pick(e4, idx4), pick(e5, idx5)),
                        _mm256_or_si256(pick(e6, idx6), pick(e7, idx7)),
                    ),
                );
                let at_a = _mm256_add_epi32(lanes, _mm256_set1_epi32(a_offset + i as i32));
                let at_b = _mm256_add_epi32(at_b, _mm256_set1_epi32(b_offset + j as i32));
                let narrow = |v: __m256i| {
                    let packed = _mm256_packus_epi32(v, v);
                    _mm256_castsi256_si128(_mm256_permute4x64_epi64::<0b00_00_10_00>(packed))
                };
                let (in_a, in_b) = (
                    in_a.as_deref_mut().expect("places wanted"),
                    in_b.as_deref_mut().expect("places wanted"),
                );
                // SAFETY: as for `docs` above: each place buffer holds min(a.len(), b.len())
                // + 8 values, so the eight u16 at `m` are within it; unaligned stores.
                unsafe {
                    _mm_storeu_si128(
                        in_a.as_mut_ptr().add(m).cast(),
                        narrow(_mm256_permutevar8x32_epi32(at_a, gather)),
                    );
                    _mm_storeu_si128(
                        in_b.as_mut_ptr().add(m).cast(),
                        narrow(_mm256_permutevar8x32_epi32(at_b, gather)),
                    );
                }
            }
            m += mask.count_ones() as usize;
            // Scalar loads on purpose: taken from the vectors, the two DIDs would put a lane
            // extraction (about seven cycles) on the loop's critical path.
            // SAFETY: i + 8 <= a.len() and j + 8 <= b.len(), so both are in bounds, aligned
            // u32 of the slices.
            let (last_a, last_b) = unsafe {
                (
                    std::ptr::read_volatile(a.as_ptr().add(i + 7)),
                    std::ptr::read_volatile(b.as_ptr().add(j + 7)),
                )
            };
            i += 8 * usize::from(last_a <= last_b);
            j += 8 * usize::from(last_b <= last_a);
        }
        // A vector that stayed has met every DID of the other array up to that array's last
        // consumed one: its DIDs up to there are settled (and may have been written), so they
        // count as consumed, and the scalar merge starts after them.
        if i > 0 {
            j += b[j..].iter().take_while(|&&y| y <= a[i - 1]).count();
        }
        if j > 0 {
            i += a[i..].iter().take_while(|&&x| x <= b[j - 1]).count();
        }
        let places = match (in_a, in_b) {
            (Some(in_a), Some(in_b)) => Some(super::Places {
                in_a,
                in_b,
                a_offset: a_offset as u16,
                b_offset: b_offset as u16,
            }),
            _ => None,
        };
        merge_tail(
            a,
            b,
            MatchBuffers { docs, places },
            Intersection {
                matches: m,
                a_end: i,
                b_end: j,
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn sorted_set(max: u32, len: usize) -> impl Strategy<Value = Vec<u32>> {
        proptest::collection::btree_set(0..max, 0..len).prop_map(|s| s.into_iter().collect())
    }

    /// Checks `intersect` under `isa` against a reference built from sets.
    fn check(a: &[u32], b: &[u32], isa: Isa, offsets: (u16, u16)) {
        let room = a.len().min(b.len()) + OUTPUT_SLACK;
        let (mut docs, mut in_a, mut in_b) = (vec![0; room], vec![0u16; room], vec![0u16; room]);
        let result = intersect(
            a,
            b,
            MatchBuffers {
                docs: &mut docs,
                places: Some(Places {
                    in_a: &mut in_a,
                    in_b: &mut in_b,
                    a_offset: offsets.0,
                    b_offset: offsets.1,
                }),
            },
            isa,
        );
        assert!(result.a_end == a.len() || result.b_end == b.len());
        let (done_a, done_b) = (&a[..result.a_end], &b[..result.b_end]);
        let expected: Vec<u32> = done_a
            .iter()
            .copied()
            .filter(|d| done_b.binary_search(d).is_ok())
            .collect();
        assert_eq!(&docs[..result.matches], &expected[..]);
        for (m, doc) in expected.iter().enumerate() {
            let ia = usize::from(in_a[m] - offsets.0);
            let ib = usize::from(in_b[m] - offsets.1);
            assert_eq!((a[ia], b[ib]), (*doc, *doc));
        }
        // Nothing common is left across the consumed parts.
        assert!(a[result.a_end..]
            .iter()
            .all(|d| done_b.binary_search(d).is_err()));
        assert!(b[result.b_end..]
            .iter()
            .all(|d| done_a.binary_search(d).is_err()));
        // Without places, the same DIDs.
        let mut alone = vec![0; room];
        let again = intersect(
            a,
            b,
            MatchBuffers {
                docs: &mut alone,
                places: None,
            },
            isa,
        );
        assert_eq!(again, result);
        assert_eq!(&alone[..again.matches], &expected[..]);
    }

    proptest! {
        #[test]
        fn matches_a_set_intersection(
            a in sorted_set(600, 300),
            b in sorted_set(600, 300),
            offsets in (0u16..300, 0u16..300),
        ) {
            for isa in Isa::all_supported() {
                check(&a, &b, isa, offsets);
            }
        }

        #[test]
        fn sparse_against_dense(a in sorted_set(100_000, 40), b in sorted_set(2_000, 260)) {
            for isa in Isa::all_supported() {
                check(&a, &b, isa, (0, 0));
                check(&b, &a, isa, (0, 0));
            }
        }
    }

    #[test]
    fn edges() {
        for isa in Isa::all_supported() {
            check(&[], &[1, 2, 3], isa, (0, 0));
            let all: Vec<u32> = (0..64).collect();
            check(&all, &all, isa, (5, 7));
            let evens: Vec<u32> = (0..128).map(|d| d * 2).collect();
            check(&all, &evens, isa, (0, 0));
            let top = [u32::MAX - 9, u32::MAX - 3, u32::MAX - 1];
            let near: Vec<u32> = (u32::MAX - 20..u32::MAX).collect();
            check(&top, &near, isa, (0, 0));
        }
    }
}
