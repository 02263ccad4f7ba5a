//! The DRAM budget. Joining a memory cgroup moves the whole process, so the tests that join
//! one run in a child process: this test binary itself, started with `APCACHE_CGROUP_CHILD`
//! set and told to run only [`child_process_entry_point`]. They skip, saying why, where no
//! memory cgroup can be made (not root, no controller).

use std::os::unix::process::ExitStatusExt;
use std::process::Command;

use apcache_tier::cgroup::{format_bytes, parse_size, process_peak_rss, CgroupError, MemoryCgroup};

const CHILD_ENV: &str = "APCACHE_CGROUP_CHILD";

#[test]
fn sizes_parse_with_binary_units() {
    let cases = [
        ("4096", 4096),
        ("4096B", 4096),
        ("1K", 1024),
        ("1kib", 1024),
        ("64MiB", 64 << 20),
        ("64 MiB", 64 << 20),
        ("64M", 64 << 20),
        ("64MB", 64 << 20),
        ("2G", 2 << 30),
        ("2GiB", 2 << 30),
        ("1.5GiB", 3 << 29),
        ("1T", 1 << 40),
        (" 7 ", 7),
    ];
    for (text, bytes) in cases {
        assert_eq!(parse_size(text).unwrap(), bytes, "{text}");
    }
    for bad in [
        "",
        "MiB",
        "12 XB",
        "-5",
        "1.2.3G",
        "99999999999999999999",
        "20000000T",
    ] {
        assert!(parse_size(bad).is_err(), "{bad}");
    }
}

#[test]
fn sizes_format_with_binary_units() {
    assert_eq!(format_bytes(0), "0 B");
    assert_eq!(format_bytes(1023), "1023 B");
    assert_eq!(format_bytes(4096), "4 KiB");
    assert_eq!(format_bytes(256 << 20), "256 MiB");
    assert_eq!(format_bytes(3 << 29), "1.5 GiB");
    assert_eq!(parse_size(&format_bytes(64 << 20)).unwrap(), 64 << 20);
}

#[test]
fn process_memory_is_read() {
    let m = process_peak_rss().unwrap();
    assert!(m.peak_rss > 0 && m.rss > 0 && m.peak_rss >= m.rss, "{m:?}");
    assert!(m.rss_anon + m.rss_file + m.rss_shmem > 0, "{m:?}");
}

#[test]
fn zero_limit_is_refused() {
    let err = MemoryCgroup::create_and_join(0).unwrap_err();
    assert!(matches!(err, CgroupError::ZeroLimit));
}

/// Runs [`child_process_entry_point`] in a child process in `mode`; returns its status and
/// standard output, or `None` (after saying why) when the child could not make a cgroup.
fn run_child(mode: &str) -> Option<(std::process::ExitStatus, String)> {
    let exe = std::env::current_exe().unwrap();
    let out = Command::new(exe)
        .args([
            "--exact",
            "child_process_entry_point",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, mode)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    // The harness prints "test child_process_entry_point ... " before the child's own lines.
    if let Some((_, reason)) = stdout.lines().find_map(|l| l.split_once("SKIP: ")) {
        eprintln!("SKIP: {reason}");
        return None;
    }
    eprintln!(
        "child ({mode}) stdout:\n{stdout}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some((out.status, stdout))
}

#[test]
fn joining_and_leaving_a_cgroup() {
    let Some((status, stdout)) = run_child("basic") else {
        return;
    };
    assert!(status.success(), "{status:?}");
    assert!(stdout.contains("CHILD OK"), "{stdout}");
}

#[test]
fn allocating_past_the_limit_is_stopped() {
    let Some((status, stdout)) = run_child("oom") else {
        return;
    };
    // The child printed its cgroup's path before allocating; the OOM killer leaves it behind.
    if let Some((_, path)) = stdout.lines().find_map(|l| l.split_once("CGROUP ")) {
        let path = std::path::Path::new(path.trim());
        for _ in 0..50 {
            if std::fs::remove_dir(path).is_ok() || !path.exists() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert!(!path.exists(), "{} left behind", path.display());
    }
    assert!(
        !stdout.contains("SURVIVED"),
        "the child allocated past its limit: {stdout}"
    );
    assert_eq!(status.signal(), Some(libc::SIGKILL), "{status:?}");
}

/// Does nothing unless started by [`run_child`] with `APCACHE_CGROUP_CHILD` set.
#[test]
fn child_process_entry_point() {
    let Ok(mode) = std::env::var(CHILD_ENV) else {
        return;
    };
    const LIMIT: u64 = 32 << 20;
    let cgroup = match MemoryCgroup::create_and_join(LIMIT) {
        Ok(c) => c,
        Err(e) => {
            println!("SKIP: DRAM limit NOT enforced: {e}");
            return;
        }
    };
    let name = cgroup
        .path()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let own = std::fs::read_to_string("/proc/self/cgroup").unwrap();
    assert!(own.contains(&name), "not moved into {name}: {own}");
    assert_eq!(cgroup.limit_bytes(), LIMIT);
    println!("CGROUP {}", cgroup.path().display());
    println!("{}", cgroup.describe());
    match mode.as_str() {
        "basic" => {
            // 8 MiB touched after joining is charged here.
            let block = touch(8 << 20);
            let usage = cgroup.usage_bytes().unwrap();
            let peak = cgroup.peak_bytes().unwrap();
            println!("usage {usage} peak {peak} failcnt {:?}", cgroup.failcnt());
            assert!((8 << 20..=LIMIT).contains(&usage), "usage {usage}");
            assert!(peak >= usage);
            assert_eq!(cgroup.oom_kills().unwrap_or(0), 0);
            drop(block);
            let path = cgroup.path().to_path_buf();
            drop(cgroup);
            let own = std::fs::read_to_string("/proc/self/cgroup").unwrap();
            assert!(!own.contains(&name), "still in {name}: {own}");
            assert!(!path.exists(), "{} not removed", path.display());
            println!("CHILD OK");
        }
        "oom" => {
            use std::io::Write;
            std::io::stdout().flush().unwrap();
            // Eight times the limit, in 1 MiB blocks, every page written.
            let blocks: Vec<Vec<u8>> = (0..256).map(|_| touch(1 << 20)).collect();
            println!(
                "SURVIVED with {} blocks, usage {:?}",
                blocks.len(),
                cgroup.usage_bytes()
            );
        }
        other => panic!("unknown child mode {other}"),
    }
}

/// Allocates `bytes` and writes every page, so that they are charged.
fn touch(bytes: usize) -> Vec<u8> {
    let mut v = vec![0u8; bytes];
    for i in (0..bytes).step_by(4096) {
        v[i] = 1;
    }
    std::hint::black_box(v)
}
