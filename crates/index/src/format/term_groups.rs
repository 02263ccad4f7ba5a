//! The term-info file: variable-length term records ([`TermInfo`]) in groups of 16
//! consecutive ordinals, and a table with one fixed-width entry per group.
//!
//! ```text
//! body:  record* | group entry × ceil(terms / 16)
//! entry: records offset u32 | postings offset u64 | first skip u32 | short postings crc u32 |
//!        crc u32                                                                (24 bytes)
//! ```
//!
//! The dictionary gives a term's ordinal; its group's entry says where the group's records
//! start, where the group's first term's postings start in the postings file and its first
//! entry in the skip file. A reader decodes the records before the term's in its group,
//! adding up their postings bytes and stored skip entries, which is how records leave their
//! offsets out. A group of 16 keeps that walk short (15 records, about 0.1 µs: a lookup
//! costs 0.36 µs against 1.22 µs with groups of 64) and the table small (1.5 bytes a term).
//!
//! A group's `crc` is the CRC32C of its entry's first 20 bytes, its records, and the skip
//! entries of its terms (from its first skip to the next group's), which is everything a query
//! reads about a term before its postings. A reader verifies it once per group per process
//! before it trusts a record. A term's postings of more than [`SHORT_POSTINGS`](super::SHORT_POSTINGS) bytes have a
//! checksum in its record; the shorter ones of a group (most terms of a vocabulary) share the
//! entry's `short postings crc`, the CRC32C of their bytes one after the other in ordinal
//! order, which a reader verifies for all of them at once.

use std::ops::Range;

use super::{SkipEntry, TermInfo};

/// Terms per group.
pub const GROUP_TERMS: u64 = 16;

/// Lines of a group's records a batched lookup prefetches: 16 records of a few bytes each
/// (a term with one block keeps its skip entry in its record, about twice as long) mostly fit
/// in two.
const RECORD_LINES_PREFETCHED: usize = 2;

/// Bytes of one group entry.
pub const GROUP_ENTRY_LEN: usize = 24;

/// One group's entry in the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GroupEntry {
    /// Where the group's records start in the body.
    pub records_offset: u32,
    /// Where the postings of its first term start in the postings body.
    pub postings_offset: u64,
    /// The skip-file index of the first entry of its terms.
    pub first_skip: u32,
    /// CRC32C of the postings of its terms of at most [`SHORT_POSTINGS`](super::SHORT_POSTINGS) bytes, in order.
    pub short_crc: u32,
    /// CRC32C of the entry's other fields, the records and the skip entries.
    pub crc: u32,
}

impl GroupEntry {
    /// The bytes of the fields the checksum covers.
    fn covered(&self) -> [u8; 20] {
        let mut bytes = [0u8; 20];
        bytes[..4].copy_from_slice(&self.records_offset.to_le_bytes());
        bytes[4..12].copy_from_slice(&self.postings_offset.to_le_bytes());
        bytes[12..16].copy_from_slice(&self.first_skip.to_le_bytes());
        bytes[16..].copy_from_slice(&self.short_crc.to_le_bytes());
        bytes
    }

    fn write_to(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.covered());
        out.extend_from_slice(&self.crc.to_le_bytes());
    }

    fn read(bytes: &[u8; GROUP_ENTRY_LEN]) -> GroupEntry {
        let u64_at = |i: usize| u64::from_le_bytes(bytes[i..i + 8].try_into().expect("8 bytes"));
        let u32_at = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().expect("4 bytes"));
        GroupEntry {
            records_offset: u32_at(0),
            postings_offset: u64_at(4),
            first_skip: u32_at(12),
            short_crc: u32_at(16),
            crc: u32_at(20),
        }
    }

    /// The checksum of a group with this entry, `records` and `skips`.
    fn checksum(&self, records: &[u8], skips: &[u8]) -> u32 {
        let crc = crc32c::crc32c(&self.covered());
        crc32c::crc32c_append(crc32c::crc32c_append(crc, records), skips)
    }
}

/// Writes the term-info body as terms arrive in ordinal order.
#[derive(Debug, Default)]
pub struct TermGroupsWriter {
    /// The open group's entry (its checksum filled in when it closes).
    open: GroupEntry,
    /// Terms in the open group.
    in_group: u64,
    /// The open group's records and stored skip entries, for its checksum.
    records: Vec<u8>,
    skips: Vec<u8>,
    /// Bytes of records written so far.
    written: u64,
    /// The running CRC32C of the open group's short postings.
    short_crc: u32,
    /// The finished groups' entries.
    table: Vec<u8>,
}

impl TermGroupsWriter {
    /// Appends to `out` (the next bytes of the body) the record of the next term, whose
    /// postings start at `info.postings_offset` and whose skip entries at `info.first_skip`;
    /// `block` is its skip entry if it has one block, `skips` its encoded entries otherwise,
    /// `postings` its postings bytes, whose checksum goes into its record or into the group's
    /// checksum of short postings (`info.postings_crc` is not read). Fails when the records
    /// would pass 4 GiB, the most a group entry can point into.
    pub fn push(
        &mut self,
        info: &TermInfo,
        block: &SkipEntry,
        skips: &[u8],
        postings: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<(), RecordsTooLarge> {
        if self.in_group == 0 {
            self.open = GroupEntry {
                records_offset: u32::try_from(self.written).map_err(|_| RecordsTooLarge)?,
                postings_offset: info.postings_offset,
                first_skip: info.first_skip,
                short_crc: 0,
                crc: 0,
            };
            self.short_crc = 0;
        }
        let mut info = *info;
        if info.has_own_checksum() {
            info.postings_crc = crc32c::crc32c(postings);
        } else {
            self.short_crc = crc32c::crc32c_append(self.short_crc, postings);
        }
        let start = self.records.len();
        info.write_record(block, &mut self.records);
        out.extend_from_slice(&self.records[start..]);
        self.written += (self.records.len() - start) as u64;
        if info.blocks() > 1 {
            self.skips.extend_from_slice(skips);
        }
        self.in_group += 1;
        if self.in_group == GROUP_TERMS {
            self.close();
        }
        Ok(())
    }

    fn close(&mut self) {
        self.open.short_crc = self.short_crc;
        self.open.crc = self.open.checksum(&self.records, &self.skips);
        self.open.write_to(&mut self.table);
        self.records.clear();
        self.skips.clear();
        self.in_group = 0;
    }

    /// Closes the last group; returns the table, the end of the body.
    pub fn finish(mut self) -> Vec<u8> {
        if self.in_group > 0 {
            self.close();
        }
        self.table
    }
}

/// The term records passed 4 GiB, more than a group entry can point into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordsTooLarge;

/// Recomputes the checksum of every group of a term-info `body` of `terms` terms against
/// `skip_body`, the skip file's body: for tools and tests that rewrite records and must leave
/// a body that only structural checks can fault. Groups whose table contradicts itself are
/// left as they are.
#[doc(hidden)]
pub fn reseal(body: &mut [u8], terms: u64, skip_body: &[u8]) {
    let Some(groups) = TermGroups::new(body, terms) else {
        return;
    };
    let mut sums = Vec::new();
    for group in 0..groups.groups() {
        if let Some((records, skips)) = groups.group(group, skip_body.len() / SkipEntry::LEN) {
            let skips = &skip_body[skips.start * SkipEntry::LEN..skips.end * SkipEntry::LEN];
            sums.push((group, groups.entry(group).checksum(records, skips)));
        }
    }
    let table = body.len() - groups.table.len();
    for (group, crc) in sums {
        let at = table + group as usize * GROUP_ENTRY_LEN + 20;
        body[at..at + 4].copy_from_slice(&crc.to_le_bytes());
    }
}

/// A term-info body, read.
#[derive(Debug, Clone, Copy)]
pub struct TermGroups<'a> {
    records: &'a [u8],
    table: &'a [u8],
    terms: u64,
}

impl<'a> TermGroups<'a> {
    /// The body of a segment with `terms` terms; `None` if it is too short for their table.
    pub fn new(body: &'a [u8], terms: u64) -> Option<TermGroups<'a>> {
        let groups = usize::try_from(terms.div_ceil(GROUP_TERMS)).ok()?;
        let table_len = groups.checked_mul(GROUP_ENTRY_LEN)?;
        let split = body.len().checked_sub(table_len)?;
        let (records, table) = body.split_at(split);
        Some(TermGroups {
            records,
            table,
            terms,
        })
    }

    /// Number of groups.
    pub fn groups(&self) -> u64 {
        self.terms.div_ceil(GROUP_TERMS)
    }

    /// The entry of group `group` (< [`TermGroups::groups`]).
    pub fn entry(&self, group: u64) -> GroupEntry {
        let at = group as usize * GROUP_ENTRY_LEN;
        GroupEntry::read(
            self.table[at..at + GROUP_ENTRY_LEN]
                .try_into()
                .expect("24 bytes"),
        )
    }

    /// Asks for the lines of group `group`'s table entry and the next one, which say where its
    /// records lie (a prefetch: nothing is read, and any `group` is safe).
    pub fn prefetch_entry(&self, group: u64) {
        let at = usize::try_from(group)
            .ok()
            .and_then(|group| group.checked_mul(GROUP_ENTRY_LEN));
        if let Some(entries) = at.and_then(|at| self.table.get(at..)) {
            crate::prefetch::prefetch_line(entries.as_ptr());
            if let Some(last) = entries.get(2 * GROUP_ENTRY_LEN - 1) {
                crate::prefetch::prefetch_line(last);
            }
        }
    }

    /// Asks for the first lines of group `group`'s records (< [`TermGroups::groups`]), which a
    /// lookup walks to its term's: its entry is read to find them.
    pub fn prefetch_records(&self, group: u64) {
        let start = self.entry(group).records_offset as usize;
        for line in 0..RECORD_LINES_PREFETCHED {
            if let Some(at) = self.records.get(start + 64 * line) {
                crate::prefetch::prefetch_line(at);
            }
        }
    }

    /// The records of group `group`, and the range of skip-file entries its terms keep, given
    /// the skip file's entry count; `None` if the table contradicts itself.
    pub fn group(&self, group: u64, skip_entries: usize) -> Option<(&'a [u8], Range<usize>)> {
        let entry = self.entry(group);
        let (records_end, skips_end) = if group + 1 < self.groups() {
            let next = self.entry(group + 1);
            (u64::from(next.records_offset), next.first_skip as usize)
        } else {
            (self.records.len() as u64, skip_entries)
        };
        let records = self
            .records
            .get(entry.records_offset as usize..usize::try_from(records_end).ok()?)?;
        let skips = entry.first_skip as usize..skips_end;
        (skips.start <= skips.end && skips.end <= skip_entries).then_some((records, skips))
    }

    /// Whether group `group`'s checksum matches its records and skip entries (`skip_body`:
    /// the skip file's body).
    pub fn verify(&self, group: u64, skip_body: &[u8]) -> bool {
        let Some((records, skips)) = self.group(group, skip_body.len() / SkipEntry::LEN) else {
            return false;
        };
        let skips = &skip_body[skips.start * SkipEntry::LEN..skips.end * SkipEntry::LEN];
        let entry = self.entry(group);
        entry.checksum(records, skips) == entry.crc
    }

    /// A walk over group `group`'s records from its first; `None` if the table contradicts
    /// itself.
    fn walk(&self, group: u64, skip_entries: usize) -> Option<GroupWalk<'a>> {
        let (records, _) = self.group(group, skip_entries)?;
        let entry = self.entry(group);
        Some(GroupWalk {
            records,
            pos: 0,
            postings_offset: entry.postings_offset,
            first_skip: entry.first_skip,
        })
    }

    /// The record of term `ordinal` (< the term count), decoded by walking its group; `None`
    /// if its bytes do not decode. Not verified: see [`TermGroups::verify`].
    pub fn read(&self, ordinal: u64, skip_entries: usize) -> Option<TermInfo> {
        let group = ordinal / GROUP_TERMS;
        if ordinal >= self.terms {
            return None;
        }
        let mut walk = self.walk(group, skip_entries)?;
        for _ in 0..ordinal % GROUP_TERMS {
            walk.next()?;
        }
        walk.next()
    }

    /// The records of every term of group `group` (the last group may hold fewer than
    /// [`GROUP_TERMS`]) into `out`, cleared first; `None` if one does not decode. Not
    /// verified: see [`TermGroups::verify`].
    pub fn read_group(
        &self,
        group: u64,
        skip_entries: usize,
        out: &mut Vec<TermInfo>,
    ) -> Option<()> {
        out.clear();
        if group >= self.groups() {
            return None;
        }
        let first = group.checked_mul(GROUP_TERMS)?;
        let terms = self.terms.checked_sub(first)?.min(GROUP_TERMS);
        let mut walk = self.walk(group, skip_entries)?;
        for _ in 0..terms {
            out.push(walk.next()?);
        }
        Some(())
    }

    /// Every term's record in ordinal order (for `check` and merges, which read them all);
    /// the item is `None` where a record does not decode, and the iteration then ends.
    pub fn iter(&self, skip_entries: usize) -> impl Iterator<Item = Option<TermInfo>> + 'a {
        let groups = *self;
        let mut walk: Option<GroupWalk<'a>> = None;
        let mut failed = false;
        (0..self.terms).map_while(move |ordinal| {
            if failed {
                return None;
            }
            if ordinal % GROUP_TERMS == 0 {
                let group = ordinal / GROUP_TERMS;
                walk = groups.walk(group, skip_entries);
            }
            let info = walk.as_mut().and_then(GroupWalk::next);
            failed = info.is_none();
            Some(info)
        })
    }
}

/// A walk over one group's records, adding up the offsets they leave out.
struct GroupWalk<'a> {
    records: &'a [u8],
    pos: usize,
    postings_offset: u64,
    first_skip: u32,
}

impl GroupWalk<'_> {
    fn next(&mut self) -> Option<TermInfo> {
        let info = TermInfo::read_record(
            self.records,
            &mut self.pos,
            self.postings_offset,
            self.first_skip,
        )
        .ok()?;
        self.postings_offset = self.postings_offset.checked_add(info.postings_bytes())?;
        self.first_skip = self
            .first_skip
            .checked_add(u32::try_from(info.stored_skip_entries()).ok()?)?;
        Some(info)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Terms of the given document frequencies, laid out as a writer lays them out; returns
    /// the body, the skip file's body, the infos and each group's short postings checksum.
    fn build(doc_freqs: &[u32]) -> (Vec<u8>, Vec<u8>, Vec<TermInfo>, Vec<u32>) {
        let mut writer = TermGroupsWriter::default();
        let (mut body, mut skip_body, mut infos) = (Vec::new(), Vec::new(), Vec::new());
        let mut short_sums = Vec::new();
        let (mut postings, mut first_skip) = (0u64, 0u32);
        for (i, &doc_freq) in doc_freqs.iter().enumerate() {
            let lone = doc_freq == 1;
            let mut info = TermInfo {
                doc_freq,
                total_term_freq: u64::from(doc_freq) * 2,
                postings_offset: postings,
                docs_bytes: if lone { 0 } else { doc_freq + i as u32 },
                freqs_bytes: if lone { 0 } else { 3 },
                first_skip,
                single_block: None,
                postings_crc: 0,
            };
            let bytes = vec![i as u8; info.postings_bytes() as usize];
            if info.has_own_checksum() {
                info.postings_crc = crc32c::crc32c(&bytes);
            }
            let block = SkipEntry {
                first_doc: i as u32,
                last_doc: i as u32 + doc_freq - 1,
                docs_offset: 0,
                freqs_offset: info.docs_bytes,
                max_freq: if lone { 2 } else { 3 },
                min_norm: 5,
                best_freq: if lone { 2 } else { 3 },
                best_norm: 5 + (doc_freq > 1) as u8,
            };
            let mut skips = Vec::new();
            if info.blocks() == 1 {
                info.single_block = Some(block);
            } else {
                for b in 0..info.blocks() {
                    SkipEntry {
                        first_doc: b as u32,
                        ..block
                    }
                    .write_to(&mut skips);
                }
            }
            if (i as u64).is_multiple_of(GROUP_TERMS) {
                short_sums.push(0);
            }
            if !info.has_own_checksum() {
                let sum = short_sums.last_mut().expect("a group");
                *sum = crc32c::crc32c_append(*sum, &bytes);
            }
            writer
                .push(&info, &block, &skips, &bytes, &mut body)
                .unwrap();
            skip_body.extend_from_slice(&skips);
            postings += info.postings_bytes();
            first_skip += info.stored_skip_entries() as u32;
            infos.push(info);
        }
        body.extend_from_slice(&writer.finish());
        (body, skip_body, infos, short_sums)
    }

    proptest! {
        #[test]
        fn every_term_reads_back_and_every_group_verifies(
            doc_freqs in prop::collection::vec(prop_oneof![Just(1u32), 2u32..300, 300u32..3000], 0..300),
        ) {
            let (body, skip_body, infos, short_sums) = build(&doc_freqs);
            let groups = TermGroups::new(&body, infos.len() as u64).unwrap();
            let skip_entries = skip_body.len() / SkipEntry::LEN;
            let entries: Vec<_> = (0..groups.groups()).map(|g| groups.entry(g).short_crc).collect();
            prop_assert_eq!(entries, short_sums);
            for (ordinal, info) in infos.iter().enumerate() {
                prop_assert_eq!(groups.read(ordinal as u64, skip_entries), Some(*info));
            }
            prop_assert_eq!(groups.read(infos.len() as u64, skip_entries), None);
            let all: Vec<_> = groups.iter(skip_entries).collect();
            prop_assert_eq!(all, infos.iter().map(|i| Some(*i)).collect::<Vec<_>>());
            let mut group_infos = Vec::new();
            for group in 0..groups.groups() {
                prop_assert!(groups.verify(group, &skip_body));
                prop_assert!(groups.read_group(group, skip_entries, &mut group_infos).is_some());
                let first = (group * GROUP_TERMS) as usize;
                let last = infos.len().min(first + GROUP_TERMS as usize);
                prop_assert_eq!(&group_infos, &infos[first..last]);
            }
            prop_assert!(groups.read_group(groups.groups(), skip_entries, &mut group_infos).is_none());
        }

        #[test]
        fn a_flipped_byte_fails_its_group(
            doc_freqs in prop::collection::vec(prop_oneof![Just(1u32), 2u32..300, 300u32..3000], 1..200),
            at in any::<prop::sample::Index>(),
            in_skips in any::<bool>(),
            bit in 0u8..8,
        ) {
            let (mut body, mut skip_body, infos, _) = build(&doc_freqs);
            let target = if in_skips && !skip_body.is_empty() { &mut skip_body } else { &mut body };
            let at = at.index(target.len());
            target[at] ^= 1 << bit;
            let groups = TermGroups::new(&body, infos.len() as u64).unwrap();
            prop_assert!((0..groups.groups()).any(|g| !groups.verify(g, &skip_body)));
        }
    }
}
