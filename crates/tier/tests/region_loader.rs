//! The tier's foundations: regions of every kind, and every storage loader returning exactly
//! the file's bytes for awkward ranges, the direct loader without touching the page cache,
//! and the emulated device adding at least the time it promises.

use std::fs::File;
use std::io::Write;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use apcache_tier::error::TierError;
use apcache_tier::loader::{
    open_loader, DirectLoader, Emulation, LoaderKind, LoaderOptions, MmapLoader, PreadLoader,
    StorageLoader, Throttled,
};
use apcache_tier::region::{file_system, TierRegion, TierSpec};

/// A file system that accepts O_DIRECT (tmpfs may not): /var/tmp, else the system temp dir.
fn direct_capable_tempdir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("apcache-tier-test")
        .tempdir_in("/var/tmp")
        .or_else(|_| tempfile::tempdir())
        .expect("a temp dir")
}

/// Deterministic pseudo-random numbers (xorshift64*), so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
    }
}

fn write_file(dir: &Path, name: &str, len: usize, seed: u64) -> (PathBuf, Vec<u8>) {
    let mut rng = Rng(seed | 1);
    let bytes: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
    let path = dir.join(name);
    let mut f = File::create(&path).unwrap();
    f.write_all(&bytes).unwrap();
    f.sync_all().unwrap();
    (path, bytes)
}

/// Reads the range and checks that the chunks tile it exactly once with the file's bytes.
fn check_range(loader: &dyn StorageLoader, data: &[u8], offset: u64, len: u64) {
    let mut chunks: Vec<(u64, Vec<u8>)> = Vec::new();
    loader
        .read_range(offset, len, &mut |at, bytes| {
            chunks.push((at, bytes.to_vec()))
        })
        .unwrap_or_else(|e| panic!("{}: read {offset}+{len}: {e}", loader.describe()));
    chunks.sort_by_key(|c| c.0);
    let mut covered = 0u64;
    for (at, bytes) in &chunks {
        assert_eq!(
            *at,
            covered,
            "{}: range {offset}+{len}: gap or overlap at {at}",
            loader.describe()
        );
        assert!(!bytes.is_empty(), "{}: empty chunk", loader.describe());
        let start = (offset + at) as usize;
        assert!(
            bytes[..] == data[start..start + bytes.len()],
            "{}: range {offset}+{len}: wrong bytes at {at}",
            loader.describe()
        );
        covered += bytes.len() as u64;
    }
    assert_eq!(
        covered,
        len,
        "{}: range {offset}+{len} not fully covered",
        loader.describe()
    );
}

fn check_loader(loader: &dyn StorageLoader, data: &[u8]) {
    let n = data.len() as u64;
    assert_eq!(loader.file_len(), n);
    let fixed = [
        (0, 0),
        (n, 0),
        (0, n),
        (0, 1),
        (n - 1, 1),
        (n - 5000, 5000),
        (n - 4096, 4096),
        (4095, 2),
        (4096, 4096),
        (1, 4094),
        (4097, 65536 * 3 + 17),
        (12345, 200_000),
        (n / 2, n - n / 2),
    ];
    for (offset, len) in fixed {
        check_range(loader, data, offset, len);
    }
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for i in 0..300 {
        let offset = rng.below(n + 1);
        let max = n - offset;
        // Mostly short ranges, some long ones.
        let len = if i % 10 == 0 {
            rng.below(max + 1)
        } else {
            rng.below(max.min(20_000) + 1)
        };
        check_range(loader, data, offset, len);
    }
    for (offset, len) in [(n, 1), (n - 1, 2), (0, n + 1), (u64::MAX, 1), (1, u64::MAX)] {
        let err = loader.read_range(offset, len, &mut |_, _| {}).unwrap_err();
        assert_eq!(
            err.kind(),
            std::io::ErrorKind::UnexpectedEof,
            "{}",
            loader.describe()
        );
    }
    // A loader keeps working after an out-of-range request.
    check_range(loader, data, 3, 9000);
    let stats = loader.stats();
    assert!(
        stats.reads > 0 && stats.bytes_read > 0 && stats.busy_ns > 0,
        "{stats:?}"
    );
}

/// Every loader we can open here; a direct loader that this machine refuses is reported.
fn all_loaders(path: &Path) -> Vec<Box<dyn StorageLoader>> {
    let mut loaders: Vec<Box<dyn StorageLoader>> = vec![
        Box::new(MmapLoader::open(path).unwrap()),
        Box::new(PreadLoader::open(path, 0).unwrap()),
        Box::new(PreadLoader::open(path, 1000).unwrap()),
        Box::new(Throttled::new(
            PreadLoader::open(path, 65536).unwrap(),
            Duration::from_micros(1),
            None,
        )),
    ];
    match DirectLoader::open_pread(path, 8192) {
        Ok(l) => loaders.push(Box::new(l)),
        Err(e) => eprintln!("SKIP direct-pread loader: {e}"),
    }
    for (depth, buffer) in [(0, 0), (4, 8192), (1, 4096), (3, 5000)] {
        match DirectLoader::open(path, depth, buffer) {
            Ok(l) => loaders.push(Box::new(l)),
            Err(e) => eprintln!("SKIP direct loader ({depth} x {buffer}): {e}"),
        }
    }
    loaders
}

#[test]
fn every_loader_returns_the_files_bytes() {
    let dir = direct_capable_tempdir();
    // Not a multiple of 4096, so the last block is partial.
    let (path, data) = write_file(dir.path(), "postings.bin", 1_234_567, 7);
    for loader in all_loaders(&path) {
        check_loader(&*loader, &data);
    }
}

#[test]
fn loaders_read_small_and_aligned_files() {
    let dir = direct_capable_tempdir();
    for (i, len) in [1usize, 100, 4095, 4096, 4097, 8192, 65536]
        .into_iter()
        .enumerate()
    {
        let (path, data) = write_file(dir.path(), &format!("f{i}.bin"), len, i as u64 + 1);
        for loader in all_loaders(&path) {
            check_range(&*loader, &data, 0, len as u64);
            check_range(&*loader, &data, len as u64 - 1, 1);
            check_range(&*loader, &data, len as u64 / 2, len as u64 - len as u64 / 2);
            assert!(loader
                .read_range(0, len as u64 + 1, &mut |_, _| {})
                .is_err());
        }
    }
}

#[test]
fn loaders_open_empty_files() {
    let dir = direct_capable_tempdir();
    let (path, data) = write_file(dir.path(), "empty.bin", 0, 1);
    for loader in all_loaders(&path) {
        check_range(&*loader, &data, 0, 0);
        assert!(loader.read_range(0, 1, &mut |_, _| {}).is_err());
    }
}

#[test]
fn loaders_are_shared_across_threads() {
    let dir = direct_capable_tempdir();
    let (path, data) = write_file(dir.path(), "shared.bin", 700_001, 11);
    for loader in all_loaders(&path) {
        std::thread::scope(|s| {
            for t in 0..4u64 {
                let (loader, data) = (&*loader, &data[..]);
                s.spawn(move || {
                    let mut rng = Rng(t + 100);
                    for _ in 0..50 {
                        let offset = rng.below(data.len() as u64);
                        let len = rng.below((data.len() as u64 - offset).min(100_000) + 1);
                        check_range(loader, data, offset, len);
                    }
                });
            }
        });
    }
}

#[test]
fn loaders_recover_from_a_panicking_sink() {
    let dir = direct_capable_tempdir();
    let (path, data) = write_file(dir.path(), "panic.bin", 1_000_000, 29);
    for loader in all_loaders(&path) {
        let loader = &*loader;
        // Panics on the first chunk, with (for the direct loader) other reads in flight.
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _ = loader.read_range(100, 900_000, &mut |_, _| panic!("sink failed"));
        }));
        assert!(result.is_err());
        check_range(loader, &data, 7, 800_000);
    }
}

#[test]
fn warm_range_reads_without_a_sink() {
    let dir = direct_capable_tempdir();
    let (path, _) = write_file(dir.path(), "warm.bin", 100_000, 3);
    let loader = PreadLoader::open(&path, 4096).unwrap();
    loader.warm_range(10, 50_000).unwrap();
    let stats = loader.stats();
    assert_eq!(stats.bytes_read, 50_000);
    assert_eq!(stats.reads, 50_000u64.div_ceil(4096));
    assert!(loader.warm_range(99_999, 2).is_err());
}

#[test]
fn open_loader_builds_each_kind() {
    let dir = direct_capable_tempdir();
    let (path, data) = write_file(dir.path(), "kinds.bin", 300_000, 5);
    for name in ["mmap", "pread", "direct", "direct-pread"] {
        let kind: LoaderKind = name.parse().unwrap();
        assert_eq!(kind.to_string(), name);
        match open_loader(kind, &path, &LoaderOptions::default()) {
            Ok(loader) => check_range(&*loader, &data, 1, 299_998),
            Err(e @ (TierError::IoUringSetup { .. } | TierError::DirectIoUnsupported { .. })) => {
                eprintln!("SKIP {name}: {e}")
            }
            Err(e) => panic!("{name}: {e}"),
        }
    }
    assert!("nope".parse::<LoaderKind>().is_err());
    let options = LoaderOptions {
        emulation: Some(Emulation {
            latency: Duration::from_micros(50),
            bandwidth: Some(1_000_000_000),
        }),
        ..LoaderOptions::default()
    };
    let loader = open_loader(LoaderKind::Pread, &path, &options).unwrap();
    let d = loader.describe();
    assert!(
        d.contains("emulated: +50 µs per read, 1000 MB/s cap"),
        "{d}"
    );
    check_range(&*loader, &data, 0, 300_000);
    assert!(matches!(
        open_loader(
            LoaderKind::Mmap,
            &dir.path().join("missing"),
            &LoaderOptions::default()
        ),
        Err(TierError::OpenStorage { .. })
    ));
}

/// How many of the file's pages are in the page cache, by `mincore` on a fresh mapping.
fn resident_pages(path: &Path) -> usize {
    let file = File::open(path).unwrap();
    let len = file.metadata().unwrap().len() as usize;
    let page = 4096;
    // SAFETY: a fresh read-only mapping, only inspected with mincore, unmapped below.
    unsafe {
        let addr = libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ,
            libc::MAP_SHARED,
            file.as_raw_fd(),
            0,
        );
        assert_ne!(addr, libc::MAP_FAILED);
        let mut vec = vec![0u8; len.div_ceil(page)];
        assert_eq!(libc::mincore(addr, len, vec.as_mut_ptr()), 0);
        libc::munmap(addr, len);
        vec.iter().filter(|&&b| b & 1 != 0).count()
    }
}

fn drop_from_page_cache(path: &Path) {
    let file = File::open(path).unwrap();
    file.sync_all().unwrap();
    // SAFETY: plain syscall on an open descriptor.
    let rc = unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    assert_eq!(rc, 0);
}

#[test]
fn direct_loader_bypasses_the_page_cache() {
    let dir = direct_capable_tempdir();
    let fs = file_system(dir.path()).unwrap();
    let (path, data) = write_file(dir.path(), "direct.bin", 4 * 1024 * 1024 + 123, 13);
    drop_from_page_cache(&path);
    let before = resident_pages(&path);
    if before != 0 {
        eprintln!("SKIP: {before} pages stay cached after POSIX_FADV_DONTNEED on {fs}");
        return;
    }
    let mut direct: Vec<Box<dyn StorageLoader>> = Vec::new();
    match DirectLoader::open(&path, 4, 65536) {
        Ok(l) => direct.push(Box::new(l)),
        Err(e @ TierError::DirectIoUnsupported { .. }) => {
            eprintln!("SKIP: {e}");
            return;
        }
        Err(e) => eprintln!("SKIP io_uring direct loader: {e}"),
    }
    direct.push(Box::new(DirectLoader::open_pread(&path, 65536).unwrap()));
    for loader in &direct {
        check_range(&**loader, &data, 0, data.len() as u64);
        check_range(&**loader, &data, 5, 1_000_000);
        assert_eq!(
            resident_pages(&path),
            0,
            "{} filled the page cache",
            loader.describe()
        );
        let d = loader.describe();
        assert!(d.contains("O_DIRECT") && d.contains("no page cache"), "{d}");
    }
    // The check can fail: a buffered read does fill the page cache.
    let pread = PreadLoader::open(&path, 4096).unwrap();
    check_range(&pread, &data, 0, 1_000_000);
    assert!(
        resident_pages(&path) >= 1_000_000 / 4096,
        "mincore does not see the page cache"
    );
}

#[test]
fn direct_loader_on_tmpfs_is_supported_or_says_why() {
    let Ok(dir) = tempfile::tempdir_in("/dev/shm") else {
        return;
    };
    let (path, data) = write_file(dir.path(), "shm.bin", 50_000, 17);
    match DirectLoader::open_pread(&path, 0) {
        Ok(loader) => check_range(&loader, &data, 1, 49_999),
        Err(e) => {
            assert!(matches!(e, TierError::DirectIoUnsupported { .. }), "{e}");
            assert!(e.to_string().contains("O_DIRECT"), "{e}");
        }
    }
}

#[test]
fn throttled_adds_at_least_the_latency_per_read() {
    let dir = direct_capable_tempdir();
    let (path, data) = write_file(dir.path(), "slow.bin", 64 * 1024, 19);
    let latency = Duration::from_millis(2);
    let loader = Throttled::new(PreadLoader::open(&path, 4096).unwrap(), latency, None);
    let d = loader.describe();
    assert!(
        d.contains("emulated: +2000 µs per read, no bandwidth cap"),
        "{d}"
    );
    let start = Instant::now();
    // Three 4 KiB reads.
    check_range(&loader, &data, 0, 3 * 4096);
    let elapsed = start.elapsed();
    assert!(elapsed >= 3 * latency, "{elapsed:?}");
    let stats = loader.stats();
    assert_eq!(stats.reads, 3);
    assert!(stats.busy_ns >= (3 * latency).as_nanos() as u64);
    // Nothing read, nothing added.
    let start = Instant::now();
    loader.read_range(10, 0, &mut |_, _| {}).unwrap();
    assert!(start.elapsed() < latency);
}

#[test]
fn throttled_caps_the_bandwidth_across_threads() {
    let dir = direct_capable_tempdir();
    let (path, data) = write_file(dir.path(), "bw.bin", 1_000_000, 23);
    // 10 MB/s: 1 MB in 4 threads must take 0.1 s at least.
    let loader = Throttled::new(
        MmapLoader::open(&path).unwrap(),
        Duration::ZERO,
        Some(10_000_000),
    );
    assert!(loader
        .describe()
        .contains("emulated: +0 µs per read, 10 MB/s cap"));
    let start = Instant::now();
    std::thread::scope(|s| {
        for t in 0..4u64 {
            let (loader, data) = (&loader, &data[..]);
            s.spawn(move || check_range(loader, data, t * 250_000, 250_000));
        }
    });
    let elapsed = start.elapsed();
    assert!(elapsed >= Duration::from_millis(99), "{elapsed:?}");
}

#[test]
fn anonymous_region_is_writable() {
    let region = TierRegion::create(&TierSpec::Anonymous, 1_000_001).unwrap();
    assert!(region.len() >= 1_000_001 && region.len().is_multiple_of(4096));
    assert_eq!(region.as_ptr() as usize % 4096, 0);
    region.populate().unwrap();
    fill_and_check(&region, 1);
    assert!(
        region.describe().starts_with("anonymous DRAM"),
        "{}",
        region.describe()
    );
    assert_eq!(region.spec(), &TierSpec::Anonymous);
    assert!(region.file_path().is_none());
}

/// Writes a pattern over the whole region and reads it back.
fn fill_and_check(region: &TierRegion, seed: u8) {
    let len = region.len();
    // SAFETY: the region is valid for `len` bytes and only this thread uses it.
    let bytes = unsafe { std::slice::from_raw_parts_mut(region.as_ptr(), len) };
    for (i, b) in bytes.iter_mut().enumerate() {
        *b = (i as u8).wrapping_mul(31).wrapping_add(seed);
    }
    for (i, b) in bytes.iter().enumerate() {
        assert_eq!(*b, (i as u8).wrapping_mul(31).wrapping_add(seed));
    }
}

#[test]
fn directory_region_maps_a_file_that_is_removed_on_drop() {
    let dir = tempfile::tempdir().unwrap();
    let tier_dir = dir.path().join("tier").join("nested");
    let region = TierRegion::create(&TierSpec::Directory(tier_dir.clone()), 256 * 1024).unwrap();
    let file = region.file_path().unwrap().to_path_buf();
    assert!(file.starts_with(&tier_dir));
    let name = file.file_name().unwrap().to_str().unwrap();
    assert!(
        name.starts_with("apcache-tier-") && name.ends_with(".bin"),
        "{name}"
    );
    assert_eq!(std::fs::metadata(&file).unwrap().len(), 256 * 1024);
    region.populate().unwrap();
    fill_and_check(&region, 7);
    // MAP_SHARED: the file sees the writes.
    let on_disk = std::fs::read(&file).unwrap();
    assert_eq!(
        on_disk[1000],
        (1000u32 as u8).wrapping_mul(31).wrapping_add(7)
    );
    assert!(
        region
            .describe()
            .starts_with(&format!("file {}", file.display())),
        "{}",
        region.describe()
    );
    assert!(
        region.describe().ends_with("256 KiB"),
        "{}",
        region.describe()
    );
    // A second region in the same directory gets its own file.
    let other = TierRegion::create(&TierSpec::Directory(tier_dir.clone()), 4096).unwrap();
    assert_ne!(other.file_path(), region.file_path());
    drop(region);
    assert!(!file.exists());
}

#[test]
fn tmpfs_region_says_tmpfs() {
    if !Path::new("/dev/shm").is_dir() {
        eprintln!("SKIP: no /dev/shm");
        return;
    }
    let region = TierRegion::create(&TierSpec::Directory("/dev/shm".into()), 1 << 20).unwrap();
    region.populate().unwrap();
    fill_and_check(&region, 3);
    let d = region.describe();
    assert!(d.contains("(tmpfs") && d.ends_with("1 MiB"), "{d}");
    assert!(file_system(Path::new("/dev/shm")).unwrap().is_memory());
}

#[test]
fn prepared_file_is_kept_and_reopened() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("prepared").join("tier.bin");
    {
        let region = TierRegion::create_file(&path, 64 * 1024).unwrap();
        region.populate().unwrap();
        // SAFETY: the region is valid for 64 KiB; only this thread uses it.
        unsafe { region.as_ptr().add(5000).write(0xab) };
    }
    assert!(path.exists(), "create_file keeps the file");
    let region = TierRegion::open_existing(&path, 64 * 1024).unwrap();
    // SAFETY: as above.
    assert_eq!(unsafe { region.as_ptr().add(5000).read() }, 0xab);
    assert_eq!(
        region.spec(),
        &TierSpec::Directory(path.parent().unwrap().to_path_buf())
    );
    drop(region);
    assert!(path.exists(), "open_existing keeps the file");
    // Reusing the file keeps its bytes and grows it.
    let region = TierRegion::create_file(&path, 128 * 1024).unwrap();
    // SAFETY: the region is valid for 128 KiB; only this thread uses it.
    assert_eq!(unsafe { region.as_ptr().add(5000).read() }, 0xab);
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 128 * 1024);
    drop(region);
    assert!(matches!(
        TierRegion::open_existing(&path, 1 << 20),
        Err(TierError::TierFileTooSmall {
            len: 131072,
            needed: 1048576,
            ..
        })
    ));
    assert!(matches!(
        TierRegion::open_existing(&dir.path().join("missing.bin"), 4096),
        Err(TierError::TierFile { .. })
    ));
}

#[test]
fn region_errors_are_typed() {
    assert!(matches!(
        TierRegion::create(&TierSpec::Anonymous, 0),
        Err(TierError::ZeroSize)
    ));
    assert!(matches!(
        TierRegion::create(&TierSpec::Anonymous, u64::MAX),
        Err(TierError::TooLarge { .. })
    ));
    // A directory under a regular file cannot be created, even by root.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("plain-file");
    std::fs::write(&file, b"x").unwrap();
    let err = TierRegion::create(&TierSpec::Directory(file.join("tier")), 4096).unwrap_err();
    assert!(matches!(err, TierError::CreateDir { .. }), "{err}");
    assert!(err.to_string().contains("plain-file"), "{err}");
    let err = TierRegion::create(&TierSpec::Numa(99_999), 4096).unwrap_err();
    assert!(
        matches!(err, TierError::NoSuchNumaNode { node: 99_999 }),
        "{err}"
    );
}

#[test]
fn numa_region_binds_to_node_0() {
    if !Path::new("/sys/devices/system/node/node0").is_dir() {
        eprintln!("SKIP: no NUMA node 0 in sysfs");
        return;
    }
    let region = match TierRegion::create(&TierSpec::Numa(0), 1 << 20) {
        Ok(r) => r,
        // mbind may be filtered by a container's seccomp profile.
        Err(e @ TierError::Mbind { .. }) => {
            eprintln!("SKIP: {e}");
            return;
        }
        Err(e) => panic!("{e}"),
    };
    region.populate().unwrap();
    fill_and_check(&region, 9);
    assert!(
        region.describe().starts_with("NUMA node 0 (mbind"),
        "{}",
        region.describe()
    );
}

#[test]
fn tier_specs_parse() {
    assert_eq!(
        "anonymous".parse::<TierSpec>().unwrap(),
        TierSpec::Anonymous
    );
    assert_eq!("dram".parse::<TierSpec>().unwrap(), TierSpec::Anonymous);
    assert_eq!("numa:1".parse::<TierSpec>().unwrap(), TierSpec::Numa(1));
    assert_eq!(
        "dir:/mnt/cxl".parse::<TierSpec>().unwrap(),
        TierSpec::Directory("/mnt/cxl".into())
    );
    assert_eq!(
        "/dev/shm".parse::<TierSpec>().unwrap(),
        TierSpec::Directory("/dev/shm".into())
    );
    assert!("numa:x".parse::<TierSpec>().is_err());
    assert!("".parse::<TierSpec>().is_err());
    for spec in [
        TierSpec::Anonymous,
        TierSpec::Numa(3),
        TierSpec::Directory("/x/y".into()),
    ] {
        assert_eq!(spec.to_string().parse::<TierSpec>().unwrap(), spec);
    }
}

#[test]
fn shared_types_are_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<TierRegion>();
    check::<DirectLoader>();
    check::<MmapLoader>();
    check::<PreadLoader>();
    check::<Throttled<DirectLoader>>();
    check::<Box<dyn StorageLoader>>();
}
