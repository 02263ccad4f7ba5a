//! Columns against a model (a map from field and document to sorted values), the edge cases
//! of the encoding, the builder's errors, and damaged bodies (no panic, whatever the bytes).

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;

use super::*;

/// Names of the generated fields, the empty name and a non-ASCII one among them.
const NAMES: [&str; 5] = ["price", "", "tag", "日付", "z"];

/// Which values a generated field's documents get.
#[derive(Debug, Clone, Copy)]
enum Style {
    ExactlyOne,
    AtMostOne,
    UpToFour,
    Nothing,
}

#[derive(Debug, Clone, Copy)]
struct FieldSpec {
    kind: ColumnKind,
    /// Which values (see [`numeric_value`], [`keyword_value`]).
    flavor: u8,
    style: Style,
    /// Whether the field is declared before any value.
    declare: bool,
}

fn field_spec() -> impl Strategy<Value = FieldSpec> {
    (
        prop_oneof![Just(ColumnKind::Numeric), Just(ColumnKind::Keyword)],
        0u8..5,
        prop_oneof![
            Just(Style::ExactlyOne),
            Just(Style::AtMostOne),
            Just(Style::UpToFour),
            Just(Style::Nothing),
        ],
        any::<bool>(),
    )
        .prop_map(|(kind, flavor, style, declare)| FieldSpec {
            kind,
            flavor,
            style,
            declare,
        })
}

/// splitmix64: the documents of a case come from a seed, not from proptest's trees, so that a
/// case of 3,000 documents stays cheap to generate.
pub(super) struct Rng(pub(super) u64);

impl Rng {
    pub(super) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    pub(super) fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn numeric_value(flavor: u8, rng: &mut Rng) -> i64 {
    match flavor {
        0 => rng.below(7) as i64 - 3,
        1 => match rng.below(8) {
            0 => i64::MIN,
            1 => i64::MAX,
            _ => rng.next() as i64,
        },
        // Epoch milliseconds at day precision: gcd 86,400,000.
        2 => 1_600_000_000_000 + rng.below(1000) as i64 * 86_400_000,
        3 => 42,
        _ => rng.below(2) as i64,
    }
}

fn keyword_value(flavor: u8, rng: &mut Rng) -> String {
    const SMALL: [&str; 6] = ["", "a", "b", "ab", "ba", "z"];
    const CHARS: [char; 8] = ['a', 'b', 'y', '0', '-', 'é', '日', '\u{10FFFF}'];
    match flavor {
        0 | 4 => SMALL[rng.below(6) as usize].to_owned(),
        1 => (0..rng.below(10))
            .map(|_| CHARS[rng.below(8) as usize])
            .collect(),
        2 => "only".to_owned(),
        _ => rng.below(10_000).to_string(),
    }
}

/// A generated segment: its documents' values by field, and the builder's body.
pub(super) struct Case {
    pub(super) doc_count: u32,
    seed: u64,
    specs: Vec<FieldSpec>,
    numerics: BTreeMap<(usize, u32), Vec<i64>>,
    keywords: BTreeMap<(usize, u32), Vec<String>>,
    pub(super) body: Vec<u8>,
}

fn build(doc_count: u32, seed: u64, specs: Vec<FieldSpec>) -> Case {
    let mut rng = Rng(seed);
    let mut builder = ColumnsBuilder::new();
    for (f, spec) in specs.iter().enumerate() {
        if spec.declare {
            builder.declare(NAMES[f], spec.kind).unwrap();
        }
    }
    // Each field's chance of a value in a document, for AtMostOne.
    let sparse: Vec<u64> = specs.iter().map(|_| 1 + rng.below(10)).collect();
    let (mut numerics, mut keywords) = (BTreeMap::new(), BTreeMap::new());
    for doc in 0..doc_count {
        let mut adds: Vec<(usize, u64)> = Vec::new();
        for (f, spec) in specs.iter().enumerate() {
            let count = match spec.style {
                Style::ExactlyOne => 1,
                Style::AtMostOne => u64::from(rng.below(10) < sparse[f]),
                Style::UpToFour => rng.below(5),
                Style::Nothing => 0,
            };
            adds.extend((0..count).map(|_| (f, rng.next())));
        }
        // Fields interleaved, a document's values in any order.
        for i in (1..adds.len()).rev() {
            adds.swap(i, rng.below(i as u64 + 1) as usize);
        }
        for (f, value_seed) in adds {
            let spec = specs[f];
            let mut value_rng = Rng(value_seed);
            match spec.kind {
                ColumnKind::Numeric => {
                    let value = numeric_value(spec.flavor, &mut value_rng);
                    builder.add_numeric(NAMES[f], doc, value).unwrap();
                    numerics
                        .entry((f, doc))
                        .or_insert_with(Vec::new)
                        .push(value);
                }
                ColumnKind::Keyword => {
                    let value = keyword_value(spec.flavor, &mut value_rng);
                    builder.add_keyword(NAMES[f], doc, &value).unwrap();
                    keywords
                        .entry((f, doc))
                        .or_insert_with(Vec::new)
                        .push(value);
                }
            }
        }
    }
    assert!(builder.heap_bytes() > 0 || specs.iter().all(|s| !s.declare));
    for values in numerics.values_mut() {
        values.sort_unstable();
    }
    for values in keywords.values_mut() {
        values.sort_unstable();
        values.dedup();
    }
    Case {
        doc_count,
        seed,
        specs,
        numerics,
        keywords,
        body: builder.finish(doc_count).unwrap(),
    }
}

impl std::fmt::Debug for Case {
    /// What regenerates the case (the values are many).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Case")
            .field("doc_count", &self.doc_count)
            .field("seed", &self.seed)
            .field("specs", &self.specs)
            .field("body_len", &self.body.len())
            .finish()
    }
}

/// Segments of up to `max_docs` documents with 1 to 4 fields.
pub(super) fn case(max_docs: u32) -> impl Strategy<Value = Case> {
    (
        0u32..max_docs,
        any::<u64>(),
        prop::collection::vec(field_spec(), 1..5),
    )
        .prop_map(|(doc_count, seed, specs)| build(doc_count, seed, specs))
}

/// The match set the model gives for documents whose values satisfy `hit`.
fn expected_matches(doc_count: u32, mut hit: impl FnMut(u32) -> bool) -> (Vec<u64>, u64) {
    let mut bits = vec![0u64; doc_count.div_ceil(64) as usize];
    let mut count = 0;
    for doc in 0..doc_count {
        if hit(doc) {
            bits[doc as usize / 64] |= 1 << (doc % 64);
            count += 1;
        }
    }
    (bits, count)
}

fn check_numeric(case: &Case, f: usize, column: NumericColumn<'_>, rng: &mut Rng) {
    let model = |doc: u32| case.numerics.get(&(f, doc)).map_or(&[][..], |v| &v[..]);
    let mut out = vec![7];
    for doc in 0..case.doc_count + 2 {
        column.values(doc, &mut out);
        assert_eq!(out, model(doc), "field {f} doc {doc}");
        assert_eq!(column.min(doc), model(doc).first().copied());
        assert_eq!(column.max(doc), model(doc).last().copied());
    }
    let all: Vec<i64> = (0..case.doc_count)
        .flat_map(|d| model(d).iter().copied())
        .collect();
    let with_value = (0..case.doc_count)
        .filter(|&d| !model(d).is_empty())
        .count();
    assert_eq!(column.docs_with_value() as usize, with_value);
    assert_eq!(column.value_count(), all.len() as u64);
    let range = all.iter().min().zip(all.iter().max());
    assert_eq!(column.range(), range.map(|(a, b)| (*a, *b)));
    let pick = |rng: &mut Rng| match all.len() {
        0 => rng.next() as i64,
        n => all[rng.below(n as u64) as usize].saturating_add(rng.below(3) as i64 - 1),
    };
    let mut ranges = vec![(i64::MIN, i64::MAX), (1, 0), (i64::MAX, i64::MIN)];
    for _ in 0..8 {
        let (a, b) = (pick(rng), pick(rng));
        ranges.push((a.min(b), a.max(b)));
        ranges.push((a, a));
        ranges.push((rng.next() as i64, rng.next() as i64));
    }
    for (lo, hi) in ranges {
        let (expected, count) = expected_matches(case.doc_count, |doc| {
            model(doc).iter().any(|v| (lo..=hi).contains(v))
        });
        let mut bits = vec![0u64; expected.len()];
        assert_eq!(column.matching(lo, hi, &mut bits), count, "[{lo}, {hi}]");
        assert_eq!(bits, expected, "field {f} [{lo}, {hi}]");
        // The same documents found one at a time, from every start.
        let ones = |test: Option<super::RangeTest<'_>>| {
            let mut found = vec![0u64; expected.len()];
            let mut from = 0;
            while let Some(doc) = test.and_then(|t| t.next_match(from)) {
                found[doc as usize / 64] |= 1 << (doc % 64);
                from = doc + 1;
            }
            found
        };
        assert_eq!(
            ones(column.range_test(lo, hi)),
            expected,
            "field {f} [{lo}, {hi}] one at a time"
        );
    }
}

fn check_keyword(case: &Case, f: usize, column: KeywordColumn<'_>, rng: &mut Rng) {
    let model = |doc: u32| case.keywords.get(&(f, doc)).map_or(&[][..], |v| &v[..]);
    let dictionary: Vec<&str> = (0..case.doc_count)
        .flat_map(|d| model(d).iter().map(|s| s.as_str()))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    assert_eq!(column.dictionary_len() as usize, dictionary.len());
    for (ordinal, value) in dictionary.iter().enumerate() {
        assert_eq!(column.value(ordinal as u32).unwrap(), *value);
        assert_eq!(column.ordinal_of(value), Some(ordinal as u32));
    }
    assert!(column.value(dictionary.len() as u32).is_err());
    let ordinal = |value: &String| dictionary.binary_search(&value.as_str()).unwrap() as u32;
    let mut out = vec![7];
    for doc in 0..case.doc_count + 2 {
        column.ordinals(doc, &mut out);
        let expected: Vec<u32> = model(doc).iter().map(ordinal).collect();
        assert_eq!(out, expected, "field {f} doc {doc}");
        assert_eq!(column.min_ordinal(doc), expected.first().copied());
        assert_eq!(column.max_ordinal(doc), expected.last().copied());
    }
    let with_value = (0..case.doc_count)
        .filter(|&d| !model(d).is_empty())
        .count();
    assert_eq!(column.docs_with_value() as usize, with_value);
    let values: usize = (0..case.doc_count).map(|d| model(d).len()).sum();
    assert_eq!(column.value_count(), values as u64);
    let mut probes: Vec<String> = (0..20)
        .map(|_| keyword_value(rng.below(5) as u8, rng))
        .collect();
    for value in &dictionary {
        probes.push(format!("{value}\0"));
        let mut shorter = value.to_string();
        shorter.pop();
        probes.push(shorter);
    }
    for probe in &probes {
        let ceiling = dictionary.partition_point(|v| *v < probe.as_str()) as u32;
        assert_eq!(column.ceiling_ordinal(probe), ceiling, "{probe:?}");
        let found = dictionary
            .binary_search(&probe.as_str())
            .ok()
            .map(|o| o as u32);
        assert_eq!(column.ordinal_of(probe), found, "{probe:?}");
    }
    let len = dictionary.len() as u64;
    let mut ranges = vec![(0, u32::MAX), (1, 0)];
    for _ in 0..8 {
        let (a, b) = (rng.below(len + 2) as u32, rng.below(len + 2) as u32);
        ranges.push((a.min(b), a.max(b)));
        ranges.push((a, a));
    }
    for (lo, hi) in ranges {
        let (expected, count) = expected_matches(case.doc_count, |doc| {
            model(doc).iter().any(|v| (lo..=hi).contains(&ordinal(v)))
        });
        let mut bits = vec![0u64; expected.len()];
        assert_eq!(column.matching(lo, hi, &mut bits), count, "[{lo}, {hi}]");
        assert_eq!(bits, expected, "field {f} [{lo}, {hi}]");
        // The same documents found one at a time, from every start.
        let ones = |test: Option<super::RangeTest<'_>>| {
            let mut found = vec![0u64; expected.len()];
            let mut from = 0;
            while let Some(doc) = test.and_then(|t| t.next_match(from)) {
                found[doc as usize / 64] |= 1 << (doc % 64);
                from = doc + 1;
            }
            found
        };
        assert_eq!(
            ones(column.range_test(lo, hi)),
            expected,
            "field {f} [{lo}, {hi}] one at a time"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn columns_read_back_as_the_model_says(case in case(3000), seed in any::<u64>()) {
        let columns = Columns::parse(&case.body, case.doc_count).unwrap();
        let mut rng = Rng(seed);
        let mut expected: Vec<(&str, ColumnKind)> = case
            .specs
            .iter()
            .enumerate()
            .filter(|(f, spec)| {
                spec.declare
                    || case.numerics.keys().chain(case.keywords.keys()).any(|k| k.0 == *f)
            })
            .map(|(f, spec)| (NAMES[f], spec.kind))
            .collect();
        expected.sort_unstable_by(|a, b| a.0.cmp(b.0));
        prop_assert_eq!(columns.fields().collect::<Vec<_>>(), expected.clone());
        for (f, spec) in case.specs.iter().enumerate() {
            let listed = expected.iter().any(|(name, _)| *name == NAMES[f]);
            match spec.kind {
                ColumnKind::Numeric => {
                    prop_assert!(columns.keyword(NAMES[f]).is_none());
                    prop_assert_eq!(columns.numeric(NAMES[f]).is_some(), listed);
                    if let Some(column) = columns.numeric(NAMES[f]) {
                        check_numeric(&case, f, column, &mut rng);
                    }
                }
                ColumnKind::Keyword => {
                    prop_assert!(columns.numeric(NAMES[f]).is_none());
                    prop_assert_eq!(columns.keyword(NAMES[f]).is_some(), listed);
                    if let Some(column) = columns.keyword(NAMES[f]) {
                        check_keyword(&case, f, column, &mut rng);
                    }
                }
            }
        }
        prop_assert!(columns.numeric("absent").is_none());
    }
}
