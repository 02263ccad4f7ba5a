//! The documents of a segment that a range query matches, read from the segment's columns: a
//! [`RangeTest`] of the range's field, its bounds turned into the column's stored units (keyword
//! values into ordinals, once per query).

use std::ops::Bound;

use crate::columns::RangeTest;
use crate::query::{RangeBounds, RangeQuery};
use crate::segment::SegmentReader;

/// The test of `range` over `segment`'s column of its field; `None` when no document of the
/// segment can match (no such column, or no value in the range).
pub(crate) fn range_test<'s>(
    segment: &'s SegmentReader,
    range: &RangeQuery,
) -> Option<RangeTest<'s>> {
    let columns = segment.columns()?;
    match &range.bounds {
        RangeBounds::Numbers { lower, upper } => columns
            .numeric(&range.field)
            .filter(|_| lower <= upper)
            .and_then(|column| column.range_test(*lower, *upper)),
        RangeBounds::Keywords { lower, upper } => {
            let column = columns.keyword(&range.field)?;
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
            (first < end)
                .then(|| column.range_test(first, end - 1))
                .flatten()
        }
    }
}
