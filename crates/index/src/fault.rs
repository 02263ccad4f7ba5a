//! Injected I/O faults, for the tests that prove a failed write never damages the last
//! committed index.
//!
//! The writers call [`injected`] at each place where the operating system can fail them (a
//! write, an fsync, the rename that commits); with the `failpoints` feature off it is an
//! inlined `None`. With it on, a test configures a fail point of the `fail` crate with
//! `return(eio)` or `return(enospc)` and the writer sees that error as if the system had
//! returned it.

/// Fail point of every body write of an index file.
pub const WRITE: &str = "apcache::index::write";
/// Fail point of every fsync of an index file or directory.
pub const FSYNC: &str = "apcache::index::fsync";
/// Fail point of the rename that commits a manifest.
pub const COMMIT: &str = "apcache::index::commit";

/// The error the fail point `name` injects now, if any: `return(eio)` (the default) or
/// `return(enospc)`.
#[inline]
pub(crate) fn injected(name: &str) -> Option<std::io::Error> {
    #[cfg(feature = "failpoints")]
    {
        fail::eval(name, |arg| io_error(arg.as_deref()))
    }
    #[cfg(not(feature = "failpoints"))]
    {
        let _ = name;
        None
    }
}

/// The system error a fail point's argument names (Linux numbers).
#[cfg(feature = "failpoints")]
fn io_error(arg: Option<&str>) -> std::io::Error {
    const EIO: i32 = 5;
    const ENOSPC: i32 = 28;
    match arg {
        Some("enospc") => std::io::Error::from_raw_os_error(ENOSPC),
        _ => std::io::Error::from_raw_os_error(EIO),
    }
}
