//! `check` must notice a flipped byte anywhere in any file, and a structural error that a
//! checksum cannot see (a file rewritten with a valid checksum but wrong contents).

use std::path::{Path, PathBuf};

use apcache_index::check::check_index;
use apcache_index::format::term_groups::{reseal, GROUP_TERMS};
use apcache_index::format::{FileKind, FramedFile, SkipEntry, TermGroups, TermInfo, HEADER_LEN};
use apcache_index::indexer::{build_index, IndexOptions};
use apcache_index::ingest::Input;
use apcache_index::Manifest;

fn sample() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/enwiki-sample.tsv")
}

/// A small two-segment index of the sample's first documents.
fn build(dir: &Path) {
    let text = std::fs::read_to_string(sample()).unwrap();
    let head: String = text.lines().take(300).map(|l| format!("{l}\n")).collect();
    let input = dir.join("input.tsv");
    std::fs::write(&input, head).unwrap();
    let options = IndexOptions {
        memory_budget: 1 << 20,
        batch_docs: 32,
        merge: false,
        ..IndexOptions::default()
    };
    let index = dir.join("index");
    build_index(vec![Input::from_arg(input)], &index, &options, |_, _| {}).unwrap();
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

#[test]
fn a_flipped_byte_in_any_file_is_reported_with_its_file() {
    let work = tempfile::tempdir().unwrap();
    build(work.path());
    let index = work.path().join("index");
    let clean = check_index(&index).unwrap();
    assert!(clean.is_clean(), "{:?}", clean.problems);
    assert!(clean.segments >= 2 && clean.postings > 0);

    let mut files: Vec<String> = std::fs::read_dir(&index)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|name| name != apcache_index::writer_lock::LOCK)
        .collect();
    files.sort();
    assert!(files.len() >= 13, "{files:?}");
    for (n, file) in files.iter().enumerate() {
        let len = std::fs::metadata(index.join(file)).unwrap().len() as usize;
        for at in [0, 6, 9, HEADER_LEN, len / 2, len - 13, len - 5, len - 1] {
            let copy = work.path().join(format!("copy-{n}-{at}"));
            copy_dir(&index, &copy);
            let path = copy.join(file);
            let mut bytes = std::fs::read(&path).unwrap();
            bytes[at] ^= 0x10;
            std::fs::write(&path, bytes).unwrap();
            let report = check_index(&copy).unwrap();
            assert!(
                report.problems.iter().any(|p| p.file == *file),
                "flipping byte {at} of {file} went unnoticed: {:?}",
                report.problems
            );
            std::fs::remove_dir_all(&copy).unwrap();
        }
    }
}

/// Rewrites the body of `file` through `edit`, with a valid footer, and makes the manifest
/// agree, so only the structural checks can notice.
fn rewrite(index: &Path, kind: FileKind, edit: impl FnOnce(&mut Vec<u8>)) {
    let mut manifest = Manifest::load(index).unwrap();
    let meta = manifest.segments[0].file(kind).unwrap().clone();
    let path = index.join(&meta.name);
    let bytes = std::fs::read(&path).unwrap();
    let framed = FramedFile::parse(&bytes, kind, &meta.name).unwrap();
    let mut body = framed.body(&bytes).to_vec();
    edit(&mut body);
    let mut out = bytes[..HEADER_LEN].to_vec();
    out.extend_from_slice(&body);
    out.extend_from_slice(&(body.len() as u64).to_le_bytes());
    let crc = crc32c::crc32c(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out.extend_from_slice(b"XCPA");
    std::fs::write(&path, &out).unwrap();
    let file = manifest.segments[0]
        .files
        .iter_mut()
        .find(|f| f.name == meta.name)
        .unwrap();
    file.crc32c = crc;
    file.bytes = out.len() as u64;
    manifest.commit(index).unwrap();
}

fn structural_problem(kind: FileKind, edit: impl FnOnce(&mut Vec<u8>), expect: &str) {
    let work = tempfile::tempdir().unwrap();
    build(work.path());
    let index = work.path().join("index");
    rewrite(&index, kind, edit);
    let report = check_index(&index).unwrap();
    assert!(
        report.problems.iter().any(|p| p.what.contains(expect)),
        "{kind:?}: expected a problem mentioning {expect:?}, got {:?}",
        report.problems
    );
}

/// The body of `kind`'s file of the first segment.
fn body_of(index: &Path, kind: FileKind) -> Vec<u8> {
    let manifest = Manifest::load(index).unwrap();
    let meta = manifest.segments[0].file(kind).unwrap().clone();
    let bytes = std::fs::read(index.join(&meta.name)).unwrap();
    let framed = FramedFile::parse(&bytes, kind, &meta.name).unwrap();
    framed.body(&bytes).to_vec()
}

/// Rewrites the record of the first term of the first segment's second group with more than
/// one posting through `edit` (which must keep its encoded length) and reseals the group's
/// checksum, so only the structural checks can notice. (The first group begins with the
/// documents' existence marks, `\u{2}body` and `\u{2}title`, each once in every document.)
fn structural_record_problem(edit: impl Fn(&mut TermInfo, &mut SkipEntry), expect: &str) {
    let work = tempfile::tempdir().unwrap();
    build(work.path());
    let index = work.path().join("index");
    let terms = Manifest::load(&index).unwrap().segments[0].terms;
    let skip_body = body_of(&index, FileKind::Skip);
    rewrite(&index, FileKind::TermInfos, |body| {
        let groups = TermGroups::new(body, terms).unwrap();
        let start = groups.entry(1).records_offset as usize;
        let mut pos = start;
        let (mut at, mut info) = (start, None);
        for _ in 0..GROUP_TERMS.min(terms - GROUP_TERMS) {
            at = pos;
            let read = TermInfo::read_record(body, &mut pos, 0, 0).unwrap();
            // Frequencies above one, so that the total's edit below keeps its length.
            if read.doc_freq > 1
                && read.single_block.is_some()
                && read.total_term_freq > u64::from(read.doc_freq) + 1
            {
                info = Some(read);
                break;
            }
        }
        let mut info = info.expect("a term of several postings in the second group");
        let mut block = info.single_block.unwrap();
        edit(&mut info, &mut block);
        let mut record = Vec::new();
        info.write_record(&block, &mut record);
        assert_eq!(
            record.len(),
            pos - at,
            "the edit must keep the record's length"
        );
        body[at..pos].copy_from_slice(&record);
        reseal(body, terms, &skip_body);
    });
    let report = check_index(&index).unwrap();
    assert!(
        report.problems.iter().any(|p| p.what.contains(expect)),
        "expected a problem mentioning {expect:?}, got {:?}",
        report.problems
    );
    assert!(
        !report.problems.iter().any(|p| p.what.contains("checksum")),
        "resealed, yet a checksum failed: {:?}",
        report.problems
    );
}

#[test]
fn a_wrong_skip_entry_is_reported() {
    // A single block's entry lives in its term's record.
    structural_record_problem(|_, b| b.last_doc += 1, "skip entry says DIDs");
    structural_record_problem(|_, b| b.max_freq += 1, "skip entry bounds");
    structural_record_problem(|_, b| b.best_norm ^= 1, "best posting");
}

#[test]
fn a_wrong_term_info_is_reported() {
    structural_record_problem(|i, _| i.total_term_freq -= 1, "total term frequency");
    // The second group's postings offset (the table ends the body, 24 bytes a group, the
    // postings offset 4 bytes into an entry).
    let work = tempfile::tempdir().unwrap();
    build(work.path());
    let index = work.path().join("index");
    let terms = Manifest::load(&index).unwrap().segments[0].terms;
    assert!(
        terms > GROUP_TERMS,
        "{terms} terms: a second group is needed"
    );
    let skip_body = body_of(&index, FileKind::Skip);
    rewrite(&index, FileKind::TermInfos, |body| {
        let groups = terms.div_ceil(GROUP_TERMS) as usize;
        let at = body.len() - groups * 24 + 24 + 4;
        body[at] ^= 1;
        reseal(body, terms, &skip_body);
    });
    let report = check_index(&index).unwrap();
    assert!(
        report
            .problems
            .iter()
            .any(|p| p.what.contains("contiguous")),
        "{:?}",
        report.problems
    );
}

#[test]
fn wrong_norms_are_reported() {
    structural_problem(FileKind::Norms, |body| body[0] ^= 1, "lengths sum");
    // The last document's norm byte (the body ends with one byte per document).
    structural_problem(
        FileKind::Norms,
        |body| {
            let last = body.len() - 1;
            body[last] ^= 0x40;
        },
        "norm byte",
    );
}

#[test]
fn a_truncated_store_is_reported() {
    structural_problem(
        FileKind::Store,
        |body| {
            let n = body.len();
            body.drain(n - 40..n - 12);
        },
        "store",
    );
}
