//! Stopping and continuing an engine's child process between its turns.
//!
//! An idle engine process still runs threads of its own (a JVM's compiler, collector and
//! periodic tasks; any engine's background merges), and on two cores they take the CPU from the
//! engine being timed, for whole scheduler ticks. Engines that take turns are stopped
//! (`SIGSTOP`) while another one runs and continued (`SIGCONT`) for their own turn.

use std::process::Child;

/// Sends `signal` to `child`, which must not have been waited for.
pub fn signal(child: &Child, signal: libc::c_int) -> std::io::Result<()> {
    let pid = libc::pid_t::try_from(child.id()).map_err(|_| {
        std::io::Error::new(std::io::ErrorKind::InvalidInput, "pid does not fit a pid_t")
    })?;
    // SAFETY: kill(2) has no memory-safety preconditions; the pid is our own child's, which
    // has not been waited for (the caller holds its `Child`), so it cannot have been reused.
    if unsafe { libc::kill(pid, signal) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Stops `child` until [`resume`].
pub fn stop(child: &Child) -> std::io::Result<()> {
    signal(child, libc::SIGSTOP)
}

/// Continues a child that [`stop`] stopped.
pub fn resume(child: &Child) -> std::io::Result<()> {
    signal(child, libc::SIGCONT)
}
