//! The process's `SIGBUS` handler: a failed read through one of apcache's mappings becomes a
//! flag the reader checks, instead of the end of the process.
//!
//! When the kernel cannot supply a page of a mapped file (the file was truncated under the
//! mapping, or the device returned an error reading it), the reading instruction gets
//! `SIGBUS`, whose default action ends the process. The handler looks the faulting address up
//! in the [registry](super::registry) of live mappings. If one holds it, the handler marks
//! that mapping as faulted, maps an anonymous page of zeros over the faulting page (a raw
//! `mmap` with `MAP_FIXED`, which Linux runs safely in a handler), and returns: the read
//! resumes and reads zeros, and the query that made it fails when its reader sees the flag
//! (the answer it computed is never returned). Any other `SIGBUS` goes where it went before:
//! to the handler installed earlier (Rust's own, which tells a stack overflow from anything
//! else), or to the default action, so real bugs still end the process.
//!
//! The handler runs only async-signal-safe code: atomic loads and stores, `mmap`,
//! `sigaction` and `raise`, with `errno` saved and restored.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Once, OnceLock};

use super::registry;

/// The page size, read once at installation (`sysconf` is not async-signal-safe).
static PAGE_SIZE: AtomicUsize = AtomicUsize::new(0);

/// The action `SIGBUS` had before ours, for faults that are not ours (set before ours is
/// installed; reading it is an atomic load).
static PREVIOUS: OnceLock<libc::sigaction> = OnceLock::new();

static INSTALL: Once = Once::new();

/// Installs the handler, once per process; later calls return at once. A failure to install
/// leaves `SIGBUS` as it was (mapped reads then end the process on a fault, as without this
/// module).
pub(crate) fn install() {
    INSTALL.call_once(|| {
        // SAFETY: `sysconf`, `sigemptyset` and `sigaction` with valid pointers.
        unsafe {
            let page = libc::sysconf(libc::_SC_PAGESIZE);
            PAGE_SIZE.store(
                usize::try_from(page).unwrap_or(4096).max(1),
                Ordering::Relaxed,
            );
            let mut previous: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(libc::SIGBUS, std::ptr::null(), &mut previous) != 0 {
                return;
            }
            let _ = PREVIOUS.set(previous);
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_sigbus as *const () as usize;
            // SA_ONSTACK: run on the thread's alternate stack where it has one, as the
            // handler we may forward to (Rust's stack overflow handler) needs.
            action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(libc::SIGBUS, &action, std::ptr::null_mut());
        }
    });
}

extern "C" fn on_sigbus(
    signal: libc::c_int,
    info: *mut libc::siginfo_t,
    context: *mut libc::c_void,
) {
    // SAFETY: the kernel passes a valid `siginfo_t` to an SA_SIGINFO handler.
    let (code, addr) = unsafe { ((*info).si_code, (*info).si_addr() as usize) };
    // A positive code: raised by the kernel for a fault (not sent by `kill` or `raise`).
    if code > 0 && registry::mark_faulted(addr) && map_zeros_over(addr) {
        return;
    }
    forward(signal, info, context, PREVIOUS.get().copied());
}

/// Maps a private anonymous page of zeros over the page holding `addr`; whether it did.
fn map_zeros_over(addr: usize) -> bool {
    let page = PAGE_SIZE.load(Ordering::Relaxed);
    let start = addr & !(page - 1);
    // SAFETY: the page lies in a registered mapping of a file, read-only and owned by a live
    // `MappedFile`; replacing it with zeros changes no memory Rust code owns otherwise, and
    // the mapping's eventual `munmap` covers it. `errno` is restored for the interrupted code.
    unsafe {
        let errno = libc::__errno_location();
        let saved = *errno;
        let mapped = libc::mmap(
            start as *mut libc::c_void,
            page,
            libc::PROT_READ,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
            -1,
            0,
        );
        *errno = saved;
        mapped != libc::MAP_FAILED
    }
}

/// Hands a `SIGBUS` that is not ours to the action installed before ours: its handler, or
/// the default action (the process ends, with a core dump where enabled).
fn forward(
    signal: libc::c_int,
    info: *mut libc::siginfo_t,
    context: *mut libc::c_void,
    previous: Option<libc::sigaction>,
) {
    if let Some(previous) = previous {
        let handler = previous.sa_sigaction;
        if handler != libc::SIG_DFL && handler != libc::SIG_IGN {
            // SAFETY: a handler installed with `sigaction` has the signature its flags say.
            unsafe {
                if previous.sa_flags & libc::SA_SIGINFO != 0 {
                    let handler: extern "C" fn(
                        libc::c_int,
                        *mut libc::siginfo_t,
                        *mut libc::c_void,
                    ) = std::mem::transmute(handler);
                    handler(signal, info, context);
                } else {
                    let handler: extern "C" fn(libc::c_int) = std::mem::transmute(handler);
                    handler(signal);
                }
            }
            return;
        }
    }
    // SAFETY: resetting a signal's action and raising it are async-signal-safe. The raised
    // signal is blocked until this handler returns, then ends the process; a fault that
    // returns to its instruction faults again under the default action anyway.
    unsafe {
        let mut default: libc::sigaction = std::mem::zeroed();
        default.sa_sigaction = libc::SIG_DFL;
        libc::sigemptyset(&mut default.sa_mask);
        libc::sigaction(libc::SIGBUS, &default, std::ptr::null_mut());
        libc::raise(libc::SIGBUS);
    }
}
