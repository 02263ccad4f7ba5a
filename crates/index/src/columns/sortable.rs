//! Doubles as `i64`s that sort as the doubles do, so numeric columns hold only `i64`s.
//!
//! This is Lucene's `NumericUtils.doubleToSortableLong`: the IEEE bits of a double, with the
//! bits below the sign flipped for negative numbers, compare as signed integers in the
//! doubles' order (`-0.0` just before `0.0`, NaN after `+∞`). NaNs are first made Java's one
//! canonical NaN (`Double.doubleToLongBits`), so every NaN is the same value, as in Lucene.

/// The `i64` that sorts among others as `value` does among doubles.
pub fn double_to_sortable(value: f64) -> i64 {
    let value = if value.is_nan() { f64::NAN } else { value };
    flip(value.to_bits() as i64)
}

/// The double [`double_to_sortable`] made `sortable` from.
pub fn sortable_to_double(sortable: i64) -> f64 {
    f64::from_bits(flip(sortable) as u64)
}

/// Flips the bits below the sign of a negative number (its own inverse).
fn flip(bits: i64) -> i64 {
    bits ^ ((bits >> 63) & i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn any_double() -> impl Strategy<Value = f64> {
        prop_oneof![
            any::<f64>(),
            -1e6f64..1e6,
            Just(0.0),
            Just(-0.0),
            Just(f64::INFINITY),
            Just(f64::NEG_INFINITY),
            Just(f64::MIN_POSITIVE),
            Just(-f64::MIN_POSITIVE),
            Just(f64::MAX),
            Just(f64::MIN),
        ]
    }

    proptest! {
        #[test]
        fn sortable_keeps_order_and_round_trips(a in any_double(), b in any_double()) {
            prop_assume!(!a.is_nan() && !b.is_nan());
            let (sa, sb) = (double_to_sortable(a), double_to_sortable(b));
            prop_assert_eq!(sa.cmp(&sb), a.total_cmp(&b));
            prop_assert_eq!(sortable_to_double(sa).to_bits(), a.to_bits());
            prop_assert_eq!(sortable_to_double(sb).to_bits(), b.to_bits());
        }
    }

    #[test]
    fn nan_sorts_last_and_is_canonical() {
        let nan = double_to_sortable(f64::NAN);
        assert_eq!(nan, double_to_sortable(-f64::NAN));
        assert_eq!(
            nan,
            double_to_sortable(f64::from_bits(0x7ff0_0000_0000_0001))
        );
        assert!(nan > double_to_sortable(f64::INFINITY));
        assert!(sortable_to_double(nan).is_nan());
    }

    #[test]
    fn lucene_values() {
        // What Lucene's formula gives: the bits as they are for positives, flipped below the
        // sign for negatives.
        assert_eq!(double_to_sortable(0.0), 0);
        assert_eq!(double_to_sortable(-0.0), -1);
        assert_eq!(double_to_sortable(1.0), 0x3ff0_0000_0000_0000);
        assert_eq!(double_to_sortable(-1.0), -0x3ff0_0000_0000_0001);
    }
}
