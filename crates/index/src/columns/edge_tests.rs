//! The encoding's edge cases (no documents, no values, one value, width 64, equal values, a
//! gcd), block skipping, the builder's errors, and damaged bodies.

use proptest::prelude::*;

use super::tests::{case, Rng};
use super::*;

/// The body of one numeric column `n` holding `values` (document, value).
fn numeric_body(doc_count: u32, values: &[(u32, i64)]) -> Vec<u8> {
    let mut builder = ColumnsBuilder::new();
    for &(doc, value) in values {
        builder.add_numeric("n", doc, value).unwrap();
    }
    builder.finish(doc_count).unwrap()
}

/// Every document's values and the match set of `[lo, hi]`, read from column `n`.
fn read_numeric(body: &[u8], doc_count: u32, lo: i64, hi: i64) -> (Vec<Vec<i64>>, Vec<u64>, u64) {
    let columns = Columns::parse(body, doc_count).unwrap();
    let column = columns.numeric("n").unwrap();
    let mut values = Vec::new();
    let docs = (0..doc_count)
        .map(|doc| {
            column.values(doc, &mut values);
            values.clone()
        })
        .collect();
    let mut bits = vec![0; doc_count.div_ceil(64) as usize];
    let count = column.matching(lo, hi, &mut bits);
    (docs, bits, count)
}

#[test]
fn no_documents() {
    let body = ColumnsBuilder::new().finish(0).unwrap();
    assert_eq!(body.len(), 12);
    assert_eq!(Columns::parse(&body, 0).unwrap().fields().count(), 0);

    let mut builder = ColumnsBuilder::new();
    builder.declare("n", ColumnKind::Numeric).unwrap();
    builder.declare("k", ColumnKind::Keyword).unwrap();
    let body = builder.finish(0).unwrap();
    let columns = Columns::parse(&body, 0).unwrap();
    let fields: Vec<_> = columns.fields().collect();
    assert_eq!(
        fields,
        [("k", ColumnKind::Keyword), ("n", ColumnKind::Numeric)]
    );
    let numeric = columns.numeric("n").unwrap();
    assert_eq!((numeric.range(), numeric.value_count()), (None, 0));
    assert_eq!(numeric.matching(i64::MIN, i64::MAX, &mut []), 0);
    let keyword = columns.keyword("k").unwrap();
    assert_eq!(
        (keyword.dictionary_len(), keyword.ceiling_ordinal("a")),
        (0, 0)
    );
    assert_eq!(keyword.ordinal_of(""), None);
    assert!(keyword.value(0).is_err());
}

#[test]
fn a_column_without_values() {
    let mut builder = ColumnsBuilder::new();
    builder.declare("n", ColumnKind::Numeric).unwrap();
    builder.declare("k", ColumnKind::Keyword).unwrap();
    builder.add_numeric("other", 999, 1).unwrap();
    let body = builder.finish(1000).unwrap();
    let columns = Columns::parse(&body, 1000).unwrap();
    let mut bits = vec![0; 16];
    let numeric = columns.numeric("n").unwrap();
    assert_eq!((numeric.docs_with_value(), numeric.value_count()), (0, 0));
    assert_eq!(numeric.range(), None);
    assert_eq!((numeric.min(5), numeric.max(999)), (None, None));
    assert_eq!(numeric.matching(i64::MIN, i64::MAX, &mut bits), 0);
    let keyword = columns.keyword("k").unwrap();
    let mut ordinals = vec![1];
    keyword.ordinals(3, &mut ordinals);
    assert!(ordinals.is_empty());
    assert_eq!(keyword.matching(0, u32::MAX, &mut bits), 0);
    assert_eq!(bits, [0; 16]);
}

#[test]
fn a_single_value() {
    let body = numeric_body(1000, &[(777, 5)]);
    let (docs, bits, count) = read_numeric(&body, 1000, 5, 5);
    assert!(docs
        .iter()
        .enumerate()
        .all(|(d, v)| v.is_empty() == (d != 777)));
    assert_eq!((docs[777].as_slice(), count), (&[5][..], 1));
    assert_eq!(bits[777 / 64], 1 << (777 % 64));

    let body = numeric_body(1, &[(0, -9)]);
    let (docs, _, count) = read_numeric(&body, 1, -10, -9);
    assert_eq!((docs, count), (vec![vec![-9]], 1));

    let mut builder = ColumnsBuilder::new();
    builder.add_keyword("k", 2, "x").unwrap();
    let body = builder.finish(3).unwrap();
    let keyword = Columns::parse(&body, 3).unwrap().keyword("k").unwrap();
    assert_eq!((keyword.dictionary_len(), keyword.value(0)), (1, Ok("x")));
    assert_eq!(
        (keyword.min_ordinal(1), keyword.max_ordinal(2)),
        (None, Some(0))
    );
    assert_eq!(
        (keyword.ceiling_ordinal("w"), keyword.ceiling_ordinal("y")),
        (0, 1)
    );
}

#[test]
fn values_spanning_all_of_i64_take_width_64() {
    let values = [
        (0, i64::MIN),
        (0, i64::MAX),
        (1, -1),
        (1, 0),
        (1, 1),
        (3, i64::MAX),
    ];
    let body = numeric_body(300, &values);
    let cases = [
        (i64::MIN, i64::MIN, 1),
        (i64::MAX, i64::MAX, 2),
        (-1, 1, 1),
        (i64::MIN + 1, i64::MAX - 1, 1),
        (i64::MIN, i64::MAX, 3),
    ];
    for (lo, hi, expected) in cases {
        let (docs, _, count) = read_numeric(&body, 300, lo, hi);
        assert_eq!(count, expected, "[{lo}, {hi}]");
        assert_eq!(docs[0], [i64::MIN, i64::MAX]);
        assert_eq!(docs[1], [-1, 0, 1]);
        assert_eq!((docs[2].len(), docs[3].as_slice()), (0, &[i64::MAX][..]));
    }
    let columns = Columns::parse(&body, 300).unwrap();
    assert_eq!(
        columns.numeric("n").unwrap().range(),
        Some((i64::MIN, i64::MAX))
    );
}

#[test]
fn equal_values_take_no_value_bits() {
    let values: Vec<(u32, i64)> = (0..10_000).map(|doc| (doc, 1_234_567)).collect();
    let body = numeric_body(10_000, &values);
    // Header, 40 block entries of 24 bytes, the directory: nothing per document.
    assert!(body.len() < 1100, "{} bytes", body.len());
    let (docs, _, count) = read_numeric(&body, 10_000, 1_234_567, 1_234_567);
    assert!(docs.iter().all(|v| v == &[1_234_567]));
    assert_eq!(count, 10_000);
}

#[test]
fn day_precision_dates_are_packed_by_their_gcd() {
    const DAY: i64 = 86_400_000;
    let date = |doc: u32| 1_700_000_000_000 / DAY * DAY + i64::from(doc * 7 % 1000) * DAY;
    let values: Vec<(u32, i64)> = (0..1000).map(|doc| (doc, date(doc))).collect();
    let body = numeric_body(1000, &values);
    // 10 bits a date (1,000 days), where milliseconds would take 37.
    assert!(body.len() < 1250 + 200, "{} bytes", body.len());
    let (lo, hi) = (date(10), date(20));
    let (docs, bits, count) = read_numeric(&body, 1000, lo, hi);
    assert!((0..1000).all(|doc| docs[doc as usize] == [date(doc)]));
    let expected: Vec<u32> = (0..1000)
        .filter(|&d| (lo..=hi).contains(&date(d)))
        .collect();
    assert_eq!(count, expected.len() as u64);
    assert!(expected
        .iter()
        .all(|&d| bits[d as usize / 64] >> (d % 64) & 1 == 1));
}

#[test]
fn matching_skips_and_takes_blocks_by_their_bounds() {
    let values: Vec<(u32, i64)> = (0..1024).map(|doc| (doc, i64::from(doc))).collect();
    let mut body = numeric_body(1024, &values);
    // The values, 10 bits each, end the column, which ends where the directory starts.
    let directory = u64::from_le_bytes(body[body.len() - 8..].try_into().unwrap()) as usize;
    let packed = directory - 1280;
    // Damage the values of blocks 0 to 2; their bounds still say 0..=767.
    body[packed..packed + 960].fill(0xFF);
    let (docs, bits, count) = read_numeric(&body, 1024, 800, 900);
    assert_ne!(docs[300], [300], "the damage is in the values");
    assert_eq!(count, 101);
    assert_eq!(bits.iter().map(|w| w.count_ones()).sum::<u32>(), 101);
    // Blocks 1 to 3 lie inside the range: taken whole, unread.
    let (_, bits, count) = read_numeric(&body, 1024, 256, 2000);
    assert_eq!(count, 768);
    assert_eq!(
        bits,
        [0, 0, 0, 0, !0, !0, !0, !0, !0, !0, !0, !0, !0, !0, !0, !0]
    );
}

#[test]
fn numeric_duplicates_stay_and_keyword_duplicates_go() {
    let mut builder = ColumnsBuilder::new();
    for value in [3, 1, 3] {
        builder.add_numeric("n", 0, value).unwrap();
    }
    for value in ["b", "a", "b"] {
        builder.add_keyword("k", 0, value).unwrap();
    }
    let body = builder.finish(1).unwrap();
    let columns = Columns::parse(&body, 1).unwrap();
    let (mut numbers, mut ordinals) = (Vec::new(), Vec::new());
    columns.numeric("n").unwrap().values(0, &mut numbers);
    columns.keyword("k").unwrap().ordinals(0, &mut ordinals);
    assert_eq!((numbers, ordinals), (vec![1, 3, 3], vec![0, 1]));
}

#[test]
fn the_builder_refuses_what_the_format_cannot_hold() {
    let mut builder = ColumnsBuilder::new();
    builder.add_numeric("n", 5, 1).unwrap();
    let wrong_kind = builder.add_keyword("n", 5, "x").unwrap_err();
    assert!(matches!(
        wrong_kind,
        ColumnsError::WrongKind {
            got: ColumnKind::Keyword,
            ..
        }
    ));
    builder.add_keyword("k", 5, "x").unwrap();
    assert!(builder.add_numeric("k", 6, 1).is_err());
    assert!(builder.declare("k", ColumnKind::Numeric).is_err());
    let out_of_order = builder.add_numeric("n", 4, 1).unwrap_err();
    assert!(matches!(
        out_of_order,
        ColumnsError::DocOutOfOrder {
            previous: 5,
            got: 4,
            ..
        }
    ));
    let long = "x".repeat(MAX_KEYWORD_LEN + 1);
    let too_long = builder.add_keyword("k", 6, &long).unwrap_err();
    assert!(matches!(too_long, ColumnsError::ValueTooLong { len, .. } if len == long.len()));
    builder.add_keyword("k", 6, &long[1..]).unwrap();
    let name = "f".repeat(MAX_FIELD_NAME_LEN + 1);
    assert!(builder.add_numeric(&name, 6, 1).is_err());
    builder.add_numeric(&name[1..], 6, 1).unwrap();
    let out_of_range = ColumnsBuilder::finish(
        {
            let mut b = ColumnsBuilder::new();
            b.add_numeric("n", 6, 1).unwrap();
            b
        },
        6,
    );
    assert!(matches!(
        out_of_range,
        Err(ColumnsError::DocOutOfRange { doc: 6, .. })
    ));
    // The refused values left the builder as it was.
    let body = builder.finish(7).unwrap();
    let columns = Columns::parse(&body, 7).unwrap();
    assert_eq!(columns.keyword("k").unwrap().value_count(), 2);
    assert_eq!(columns.numeric("n").unwrap().value_count(), 1);
    assert_eq!(columns.fields().count(), 3);
}

/// Documents of [`mixed_body`]: three blocks, the last short.
const MIXED_DOCS: u32 = 520;

/// A body with both kinds in each layout.
fn mixed_body() -> Vec<u8> {
    let mut builder = ColumnsBuilder::new();
    for doc in 0..MIXED_DOCS {
        builder.add_numeric("one", doc, i64::from(doc) * 3).unwrap();
        if doc % 7 == 0 {
            builder
                .add_keyword("sparse", doc, &format!("v{}", doc % 5))
                .unwrap();
        }
        for i in 0..doc % 3 {
            builder.add_numeric("many", doc, i64::from(i) - 1).unwrap();
            builder
                .add_keyword("tags", doc, ["a", "", "é"][i as usize])
                .unwrap();
        }
    }
    builder.finish(MIXED_DOCS).unwrap()
}

#[test]
fn every_cut_and_extension_is_refused() {
    let body = mixed_body();
    Columns::parse(&body, MIXED_DOCS).unwrap();
    for len in 0..body.len() {
        assert!(
            Columns::parse(&body[..len], MIXED_DOCS).is_err(),
            "cut at {len}"
        );
    }
    for byte in [0, 1, 0xFF] {
        let mut longer = body.clone();
        longer.push(byte);
        assert!(Columns::parse(&longer, MIXED_DOCS).is_err());
    }
    assert!(Columns::parse(&body, MIXED_DOCS - 1).is_err());
    assert!(Columns::parse(&body, MIXED_DOCS + 1).is_err());
}

#[test]
fn a_block_starting_before_the_one_before_is_refused() {
    let mut body = mixed_body();
    // Column "many" comes first: its 14-byte header, then block entries of 24 bytes.
    let start = |body: &[u8], block: usize| {
        let at = 14 + block * 24;
        u64::from_le_bytes(body[at..at + 8].try_into().unwrap())
    };
    let (first, second) = (start(&body, 1), start(&body, 2));
    assert!(0 < first && first < second);
    body[14 + 2 * 24..14 + 2 * 24 + 8].copy_from_slice(&(first - 1).to_le_bytes());
    let error = Columns::parse(&body, MIXED_DOCS).unwrap_err();
    assert!(
        error.to_string().contains("(column \"many\"): block 2"),
        "{error}"
    );
}

/// Runs every read of every column of `columns` (the results do not matter: only that they
/// come back).
fn read_everything(columns: &Columns<'_>, rng: &mut Rng) {
    let doc_count = columns.doc_count();
    let mut bits = vec![0u64; doc_count.div_ceil(64) as usize];
    let (mut numbers, mut ordinals) = (Vec::new(), Vec::new());
    for (name, _) in columns.fields() {
        if let Some(column) = columns.numeric(name) {
            for doc in 0..doc_count + 1 {
                column.values(doc, &mut numbers);
                let _ = (column.min(doc), column.max(doc));
            }
            let _ = (
                column.range(),
                column.docs_with_value(),
                column.value_count(),
            );
            for _ in 0..4 {
                let (a, b) = (rng.next() as i64 >> rng.below(64), rng.next() as i64);
                column.matching(a.min(b), a.max(b), &mut bits);
                let short = bits.len().min(1);
                column.matching(a, a, &mut bits[..short]);
            }
            column.matching(i64::MIN, i64::MAX, &mut bits);
        }
        if let Some(column) = columns.keyword(name) {
            for doc in 0..doc_count + 1 {
                column.ordinals(doc, &mut ordinals);
                let _ = (column.min_ordinal(doc), column.max_ordinal(doc));
            }
            for ordinal in 0..column.dictionary_len().saturating_add(1).min(5000) {
                let _ = column.value(ordinal);
            }
            for probe in ["", "a", "v3", "\u{10FFFF}"] {
                let _ = (column.ordinal_of(probe), column.ceiling_ordinal(probe));
            }
            let len = u64::from(column.dictionary_len()) + 2;
            for _ in 0..4 {
                let (a, b) = (rng.below(len) as u32, rng.below(len) as u32);
                column.matching(a.min(b), a.max(b), &mut bits);
            }
            column.matching(0, u32::MAX, &mut bits);
            let _ = (column.docs_with_value(), column.value_count());
        }
    }
}

#[test]
fn every_single_damage_to_the_mixed_body_is_harmless() {
    let body = mixed_body();
    let mut rng = Rng(7);
    for at in 0..body.len() {
        let mut damaged: Vec<Vec<u8>> = [0x01, 0x80, 0xFF]
            .iter()
            .map(|&xor| {
                let mut b = body.clone();
                b[at] ^= xor;
                b
            })
            .collect();
        // Fields cleared or turned small: a start before the one before, a short length.
        for width in [2, 4, 8] {
            let end = (at + width).min(body.len());
            for value in [0u8, 1] {
                let mut b = body.clone();
                b[at..end].fill(0);
                b[at] = value;
                damaged.push(b);
            }
        }
        for b in damaged {
            if let Ok(columns) = Columns::parse(&b, MIXED_DOCS) {
                read_everything(&columns, &mut rng);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn damaged_bodies_never_panic(
        case in case(700),
        flips in prop::collection::vec((any::<u64>(), 1u8..=255), 0..4),
        words in prop::collection::vec((any::<u64>(), prop_oneof![0u64..600, any::<u64>()]), 0..3),
        cut in prop::option::weighted(0.2, any::<u64>()),
        seed in any::<u64>(),
    ) {
        let mut body = case.body.clone();
        for (at, xor) in flips {
            let len = body.len() as u64;
            body[(at % len) as usize] ^= xor;
        }
        for (at, value) in words {
            // A little-endian field overwritten with a small or a random value.
            let at = (at % body.len() as u64) as usize;
            let end = (at + 8).min(body.len());
            body[at..end].copy_from_slice(&value.to_le_bytes()[..end - at]);
        }
        if let Some(cut) = cut {
            body.truncate((cut % (body.len() as u64 + 1)) as usize);
        }
        if let Ok(columns) = Columns::parse(&body, case.doc_count) {
            read_everything(&columns, &mut Rng(seed));
        }
    }

}
