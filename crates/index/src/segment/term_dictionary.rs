//! A segment's term dictionary: from term to term ordinal, in one of two kinds.
//!
//! - [`DictionaryKind::Fst`], what a segment that queries read keeps: an FST (`fst::Map`),
//!   small and fast to look up, costly to build (its states are shared by a minimising
//!   registry).
//! - [`DictionaryKind::TermList`], what a segment flushed only to be merged keeps: a sorted
//!   list of front-coded terms ([`TermList`]), written in one pass and read in order by the
//!   merge, which builds the merged segment's FST once. It answers lookups too, so an index
//!   that an interrupted build left stays searchable.
//!
//! The manifest records each segment's kind; a segment without the field has an FST.

use std::io::Write;

use fst::IntoStreamer;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::format::{TermList, TermListStream, TermListWriter};
use crate::IndexError;

/// Which structure a segment's dictionary file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DictionaryKind {
    /// An FST from term to ordinal (the `fst` crate's map format).
    #[default]
    Fst,
    /// A sorted list of front-coded terms ([`TermList`]).
    TermList,
}

impl DictionaryKind {
    /// True for the default kind, which the manifest leaves unsaid.
    pub fn is_fst(&self) -> bool {
        *self == DictionaryKind::Fst
    }
}

/// An open term dictionary.
pub enum TermDictionary<D> {
    /// An FST.
    Fst(fst::Map<D>),
    /// A sorted term list.
    TermList(TermList<D>),
}

impl<D: AsRef<[u8]>> TermDictionary<D> {
    /// Opens the dictionary of `kind` in `body`; `name` names the file in errors.
    pub fn open(kind: DictionaryKind, body: D, name: &str) -> Result<Self, IndexError> {
        let corrupt =
            |e: &dyn std::fmt::Display| IndexError::corrupt(name, format!("dictionary: {e}"));
        Ok(match kind {
            DictionaryKind::Fst => {
                TermDictionary::Fst(fst::Map::new(body).map_err(|e| corrupt(&e))?)
            }
            DictionaryKind::TermList => {
                TermDictionary::TermList(TermList::new(body).map_err(|e| corrupt(&e))?)
            }
        })
    }

    /// The ordinal of `term`, if the dictionary has it.
    pub fn get(&self, term: impl AsRef<[u8]>) -> Option<u64> {
        match self {
            TermDictionary::Fst(map) => map.get(term),
            TermDictionary::TermList(list) => list.get(term.as_ref()),
        }
    }

    /// The ordinals of `terms` into `out` (cleared first), in their order: what
    /// [`TermDictionary::get`] gives for each.
    ///
    /// A query's terms are looked up together because an FST walk is a chain of dependent
    /// loads, a node per byte, and a dictionary far larger than the caches misses on most of
    /// them. The walks here advance together, one node per term per step, each prefetching its
    /// next node before the other terms step, so the query waits for memory about once per
    /// byte of its longest term instead of once per byte of every term.
    pub fn get_many(&self, terms: &[&[u8]], out: &mut Vec<Option<u64>>) {
        out.clear();
        match self {
            TermDictionary::Fst(map) => get_in_lockstep(map.as_fst(), terms, out),
            TermDictionary::TermList(list) => out.extend(terms.iter().map(|term| list.get(term))),
        }
    }

    /// Number of terms.
    pub fn len(&self) -> u64 {
        match self {
            TermDictionary::Fst(map) => map.len() as u64,
            TermDictionary::TermList(list) => list.len(),
        }
    }

    /// True when it has no term.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every term in order, with its ordinal.
    pub fn stream(&self) -> TermStream<'_> {
        self.range(None, None)
    }

    /// The terms from `from` (inclusive) to `to` (exclusive) in order, with their ordinals;
    /// `None` leaves that end open.
    pub fn range(&self, from: Option<&[u8]>, to: Option<&[u8]>) -> TermStream<'_> {
        match self {
            TermDictionary::Fst(map) => {
                let mut range = map.range();
                if let Some(from) = from {
                    range = range.ge(from);
                }
                if let Some(to) = to {
                    range = range.lt(to);
                }
                TermStream::Fst(range.into_stream())
            }
            TermDictionary::TermList(list) => TermStream::TermList(list.range(from, to)),
        }
    }

    /// Term `ordinal` (`None` past the last).
    pub fn term_at(&self, ordinal: u64) -> Option<Vec<u8>> {
        match self {
            TermDictionary::Fst(map) => term_of_ordinal(map.as_fst(), ordinal),
            TermDictionary::TermList(list) => list.term_at(ordinal),
        }
    }

    /// The dictionary's body, as given to [`TermDictionary::open`].
    pub fn inner(&self) -> &D {
        match self {
            TermDictionary::Fst(map) => map.as_fst().as_inner(),
            TermDictionary::TermList(list) => list.inner(),
        }
    }
}

/// Terms in order with their ordinals, from either kind (an [`fst::Streamer`]).
pub enum TermStream<'a> {
    /// From an FST.
    Fst(fst::map::Stream<'a>),
    /// From a term list.
    TermList(TermListStream<'a>),
}

impl<'a> fst::Streamer<'a> for TermStream<'_> {
    type Item = (&'a [u8], u64);

    fn next(&'a mut self) -> Option<(&'a [u8], u64)> {
        match self {
            TermStream::Fst(stream) => stream.next(),
            TermStream::TermList(stream) => stream.next(),
        }
    }
}

/// Writes a dictionary of either kind, a term at a time in order.
pub(crate) struct DictionaryWriter<W: Write> {
    builder: Builder<W>,
    /// The file written, for errors.
    path: PathBuf,
}

enum Builder<W: Write> {
    Fst(fst::MapBuilder<W>),
    TermList(TermListWriter<W>),
}

impl<W: Write> DictionaryWriter<W> {
    /// A writer of a `kind` dictionary into `out`, the file at `path`.
    pub(crate) fn new(kind: DictionaryKind, out: W, path: PathBuf) -> Result<Self, IndexError> {
        let builder = match kind {
            DictionaryKind::Fst => {
                Builder::Fst(fst::MapBuilder::new(out).map_err(|e| dictionary_error(&path, e))?)
            }
            DictionaryKind::TermList => Builder::TermList(TermListWriter::new(out)),
        };
        Ok(DictionaryWriter { builder, path })
    }

    /// Appends `term` as ordinal `ordinal` (the count of terms before it).
    pub(crate) fn insert(&mut self, term: &[u8], ordinal: u64) -> Result<(), IndexError> {
        match &mut self.builder {
            Builder::Fst(builder) => builder
                .insert(term, ordinal)
                .map_err(|e| dictionary_error(&self.path, e)),
            Builder::TermList(writer) => {
                debug_assert_eq!(writer.len(), ordinal);
                writer.push(term).map_err(|e| io_error(&self.path, e))
            }
        }
    }

    /// Writes what is left and returns the output.
    pub(crate) fn finish(self) -> Result<W, IndexError> {
        match self.builder {
            Builder::Fst(builder) => builder
                .into_inner()
                .map_err(|e| dictionary_error(&self.path, e)),
            Builder::TermList(writer) => writer.finish().map_err(|e| io_error(&self.path, e)),
        }
    }
}

/// A failure of the FST builder: the file's I/O error as such (a failed write is not a damaged
/// index), anything else (terms out of order) as a bad argument.
fn dictionary_error(path: &Path, e: fst::Error) -> IndexError {
    match e {
        fst::Error::Io(e) => io_error(path, e),
        e => IndexError::InvalidArgument(format!("{}: {e}", path.display())),
    }
}

/// A failure of the term list writer: terms out of order as a bad argument, others as I/O.
fn io_error(path: &Path, e: std::io::Error) -> IndexError {
    if e.kind() == std::io::ErrorKind::InvalidInput {
        IndexError::InvalidArgument(format!("{}: {e}", path.display()))
    } else {
        IndexError::io(path, e)
    }
}

/// The key whose value is `ordinal` in `fst`, a dictionary whose values are the keys' ranks
/// (`0, 1, 2, ...` in key order), found in one walk from the root: such an FST's outputs grow
/// with the key, so the arc to follow at each state is the last one whose output does not
/// pass the ordinal (Lucene's `Util.getByOutput`). A scan of the dictionary would cost a walk
/// over every term before it, which on a vocabulary of a million terms is tens of
/// milliseconds for each error that names a term.
fn term_of_ordinal<D: AsRef<[u8]>>(fst: &fst::raw::Fst<D>, ordinal: u64) -> Option<Vec<u8>> {
    let mut node = fst.root();
    let mut output = 0u64;
    let mut key = Vec::new();
    // A key is at most as long as the dictionary is, which bounds the walk.
    for _ in 0..=fst.as_bytes().len() {
        if node.is_final() && output.checked_add(node.final_output().value())? == ordinal {
            return Some(key);
        }
        let next = node
            .transitions()
            .take_while(|t| {
                output
                    .checked_add(t.out.value())
                    .is_some_and(|o| o <= ordinal)
            })
            .last()?;
        output += next.out.value();
        key.push(next.inp);
        node = fst.node(next.addr);
    }
    None
}

/// [`TermDictionary::get_many`] on an FST: one walk per term, all advanced a node at a time.
fn get_in_lockstep<D: AsRef<[u8]>>(
    fst: &fst::raw::Fst<D>,
    terms: &[&[u8]],
    out: &mut Vec<Option<u64>>,
) {
    // Each walk's node address and output so far; `None` once its term has left the FST.
    let start = (fst.root().addr(), fst::raw::Output::zero());
    let mut walks = vec![Some(start); terms.len()];
    let bytes = fst.as_bytes();
    let longest = terms.iter().map(|term| term.len()).max().unwrap_or(0);
    for depth in 0..longest {
        for (walk, term) in walks.iter_mut().zip(terms) {
            let (Some((addr, output)), Some(&input)) = (walk.as_mut(), term.get(depth)) else {
                continue;
            };
            let node = fst.node(*addr);
            let Some(i) = node.find_input(input) else {
                *walk = None;
                continue;
            };
            let transition = node.transition(i);
            *addr = transition.addr;
            *output = output.cat(transition.out);
            prefetch_node(bytes, transition.addr);
        }
    }
    out.extend(walks.into_iter().map(|walk| {
        let (addr, output) = walk?;
        let node = fst.node(addr);
        node.is_final()
            .then(|| output.cat(node.final_output()).value())
    }));
}

/// Prefetches the node at `addr` of an FST's `bytes`: a node ends at its address (its state
/// byte) and its transitions lie before it, so the line before is asked for too.
fn prefetch_node(bytes: &[u8], addr: usize) {
    if let Some(at) = bytes.get(addr) {
        crate::prefetch::prefetch_line(at);
        if let Some(before) = addr.checked_sub(64).and_then(|a| bytes.get(a)) {
            crate::prefetch::prefetch_line(before);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fst::Streamer;
    use proptest::prelude::*;

    fn written(kind: DictionaryKind, keys: &std::collections::BTreeSet<Vec<u8>>) -> Vec<u8> {
        let mut writer = DictionaryWriter::new(kind, Vec::new(), "test.dict".into()).unwrap();
        for (ordinal, key) in keys.iter().enumerate() {
            writer.insert(key, ordinal as u64).unwrap();
        }
        writer.finish().unwrap()
    }

    proptest! {
        /// Every ordinal's key is found in an FST, and ordinals past the last are not.
        #[test]
        fn every_ordinal_names_its_key(
            keys in prop::collection::btree_set(prop::collection::vec(any::<u8>(), 0..12), 0..300),
        ) {
            let mut builder = fst::MapBuilder::memory();
            for (ordinal, key) in keys.iter().enumerate() {
                builder.insert(key, ordinal as u64).unwrap();
            }
            let map = builder.into_map();
            for (ordinal, key) in keys.iter().enumerate() {
                prop_assert_eq!(term_of_ordinal(map.as_fst(), ordinal as u64), Some(key.clone()));
            }
            prop_assert_eq!(term_of_ordinal(map.as_fst(), keys.len() as u64), None);
        }

        /// Looking terms up together answers what looking each up alone does, on both kinds,
        /// for keys in the dictionary, prefixes and extensions of them, repeats and the empty
        /// key.
        #[test]
        fn lookups_together_answer_as_alone(
            keys in prop::collection::btree_set(prop::collection::vec(0u8..5, 0..8), 0..300),
            asked in prop::collection::vec(prop::collection::vec(0u8..5, 0..9), 0..40),
        ) {
            let mut asked = asked;
            asked.extend(keys.iter().take(20).cloned());
            let asked: Vec<&[u8]> = asked.iter().map(Vec::as_slice).collect();
            for kind in [DictionaryKind::Fst, DictionaryKind::TermList] {
                let dictionary = TermDictionary::open(kind, written(kind, &keys), "t").unwrap();
                let mut together = vec![Some(7)];
                dictionary.get_many(&asked, &mut together);
                let alone: Vec<Option<u64>> = asked.iter().map(|t| dictionary.get(t)).collect();
                prop_assert_eq!(together, alone);
            }
        }

        /// Both kinds answer the same: every ordinal's key, every key's ordinal, the same
        /// stream and the same ranges.
        #[test]
        fn both_kinds_agree(
            keys in prop::collection::btree_set(prop::collection::vec(0u8..5, 0..8), 0..300),
            bounds in prop::collection::vec((prop::option::of(prop::collection::vec(0u8..5, 0..4)), prop::option::of(prop::collection::vec(0u8..5, 0..4))), 0..6),
        ) {
            let fst_body = written(DictionaryKind::Fst, &keys);
            let list_body = written(DictionaryKind::TermList, &keys);
            let dictionaries = [
                TermDictionary::open(DictionaryKind::Fst, fst_body.as_slice(), "a").unwrap(),
                TermDictionary::open(DictionaryKind::TermList, list_body.as_slice(), "b").unwrap(),
            ];
            for dictionary in &dictionaries {
                prop_assert_eq!(dictionary.len(), keys.len() as u64);
                for (ordinal, key) in keys.iter().enumerate() {
                    prop_assert_eq!(dictionary.term_at(ordinal as u64), Some(key.clone()));
                    prop_assert_eq!(dictionary.get(key), Some(ordinal as u64));
                }
                prop_assert_eq!(dictionary.term_at(keys.len() as u64), None);
            }
            for (from, to) in bounds.iter().chain([&(None, None)]) {
                let streams: Vec<Vec<(Vec<u8>, u64)>> = dictionaries
                    .iter()
                    .map(|d| {
                        let mut stream = d.range(from.as_deref(), to.as_deref());
                        let mut out = Vec::new();
                        while let Some((key, ordinal)) = stream.next() {
                            out.push((key.to_vec(), ordinal));
                        }
                        out
                    })
                    .collect();
                prop_assert_eq!(&streams[0], &streams[1]);
            }
        }
    }

    #[test]
    fn a_term_list_refuses_terms_out_of_order() {
        let mut writer =
            DictionaryWriter::new(DictionaryKind::TermList, Vec::new(), "test.dict".into())
                .unwrap();
        writer.insert(b"b", 0).unwrap();
        assert!(matches!(
            writer.insert(b"a", 1),
            Err(IndexError::InvalidArgument(_))
        ));
    }
}
