//! The documents of a segment that a [`DocsQuery`] lists: a range's, read from the segment's
//! columns, or all of them.

use std::ops::Bound;

use super::folded::DocsQuery;
use crate::query::RangeBounds;
use crate::segment::SegmentReader;

/// The global DIDs of `segment` that `docs` lists, in increasing order.
pub(crate) fn docs_of(segment: &SegmentReader, docs: DocsQuery<'_>) -> Vec<u32> {
    let doc_map = &segment.meta().docs;
    let range = match docs {
        DocsQuery::All => return doc_map.docs().collect(),
        DocsQuery::Range(range) => range,
    };
    let Some(columns) = segment.columns() else {
        return Vec::new();
    };
    let mut bits = vec![0u64; (doc_map.len() as usize).div_ceil(64)];
    let found = match &range.bounds {
        RangeBounds::Numbers { lower, upper } => match columns.numeric(&range.field) {
            Some(column) if lower <= upper => column.matching(*lower, *upper, &mut bits),
            _ => 0,
        },
        RangeBounds::Keywords { lower, upper } => match columns.keyword(&range.field) {
            Some(column) => {
                // Ordinals follow the values' byte order: the bounds become ordinals.
                let at_or_after = |value: &str, past_equal: bool| {
                    let ceiling = column.ceiling_ordinal(value);
                    let equal = column.ordinal_of(value).is_some();
                    ceiling + u32::from(equal && past_equal)
                };
                let first = match lower {
                    Bound::Included(v) => at_or_after(v, false),
                    Bound::Excluded(v) => at_or_after(v, true),
                    Bound::Unbounded => 0,
                };
                let end = match upper {
                    Bound::Included(v) => at_or_after(v, true),
                    Bound::Excluded(v) => at_or_after(v, false),
                    Bound::Unbounded => column.dictionary_len(),
                };
                if first < end {
                    column.matching(first, end - 1, &mut bits)
                } else {
                    0
                }
            }
            None => 0,
        },
    };
    let mut out = Vec::with_capacity(found as usize);
    if found == 0 {
        return out;
    }
    // Local documents are the segment's DIDs in increasing order, run after run.
    let mut runs = doc_map.runs().iter();
    let (mut run_first, mut run_local, mut run_end) = (0u32, 0u32, 0u32);
    for (w, &word) in bits.iter().enumerate() {
        let mut word = word;
        while word != 0 {
            let local = (w * 64) as u32 + word.trailing_zeros();
            word &= word - 1;
            while local >= run_end {
                let Some(&[first, count]) = runs.next() else {
                    return out;
                };
                (run_first, run_local, run_end) = (first, run_end, run_end + count);
            }
            out.push(run_first + (local - run_local));
        }
    }
    out
}
