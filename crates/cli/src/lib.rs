//! The `apcache` command-line tool's shared parts: the option groups its commands and the
//! benchmark binary (`apcache-bench`) flatten into theirs, and how a command's error is shown.
#![deny(missing_docs)]

pub mod options;

use std::process::ExitCode;

/// Prints a command's error with its chain of causes and turns it into the exit code. A cause
/// whose text the line above already shows is not printed again (a `#[error("...: {0}")]`
/// wrapper repeats its source), and a closed pipe on stdout (`apcache ... | head`) is success.
pub fn report_exit(result: anyhow::Result<()>) -> ExitCode {
    let Err(error) = result else {
        return ExitCode::SUCCESS;
    };
    if is_broken_pipe(&error) {
        return ExitCode::SUCCESS;
    }
    eprintln!("error: {error}");
    let mut shown = error.to_string();
    for cause in error.chain().skip(1) {
        let text = cause.to_string();
        if !shown.contains(&text) {
            eprintln!("  caused by: {text}");
        }
        shown = text;
    }
    ExitCode::FAILURE
}

/// Whether `error` comes from writing to a closed pipe.
fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
