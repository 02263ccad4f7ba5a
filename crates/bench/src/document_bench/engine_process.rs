//! An engine in its own process, asked one request line at a time: the client writes the
//! line, flushes, and reads the one answer line back; the time between is the round trip the
//! benchmark reports. Between its turns the process is stopped ([`child_signal`]).

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Instant;

use crate::peers::child_signal;

use super::DocumentBenchError;

/// A running engine process.
pub struct EngineProcess {
    name: String,
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    line: String,
}

impl EngineProcess {
    /// Starts `command` with piped standard input and output (its standard error is the
    /// benchmark's), stopped until its first turn.
    pub fn start(name: &str, mut command: Command) -> Result<EngineProcess, DocumentBenchError> {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| DocumentBenchError::Engine(name.into(), format!("cannot start: {e}")))?;
        let stdin = child.stdin.take().expect("piped");
        let stdout = BufReader::new(child.stdout.take().expect("piped"));
        let engine = EngineProcess {
            name: name.into(),
            child,
            stdin: Some(stdin),
            stdout,
            line: String::new(),
        };
        engine.pause()?;
        Ok(engine)
    }

    /// Its name in reports.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Continues the process for its turn.
    pub fn resume(&self) -> Result<(), DocumentBenchError> {
        child_signal::resume(&self.child).map_err(|e| self.failed(format!("cannot continue: {e}")))
    }

    /// Stops the process until its next turn.
    pub fn pause(&self) -> Result<(), DocumentBenchError> {
        child_signal::stop(&self.child).map_err(|e| self.failed(format!("cannot stop: {e}")))
    }

    /// Sends `request` (one line, without its newline) and returns the round trip in
    /// nanoseconds and the answer line.
    pub fn ask(&mut self, request: &str) -> Result<(u64, &str), DocumentBenchError> {
        debug_assert!(!request.contains('\n'));
        self.line.clear();
        let stdin = self.stdin.as_mut().expect("open until finish");
        let start = Instant::now();
        let sent = stdin
            .write_all(request.as_bytes())
            .and_then(|()| stdin.write_all(b"\n"))
            .and_then(|()| stdin.flush());
        let read = sent.and_then(|()| self.stdout.read_line(&mut self.line));
        let nanos = start.elapsed().as_nanos() as u64;
        match read {
            Ok(0) => Err(self.failed("exited without answering".into())),
            Ok(_) => Ok((nanos, self.line.trim_end())),
            Err(e) => Err(self.failed(format!("lost its pipes: {e}"))),
        }
    }

    /// Closes its input and waits for it to exit.
    pub fn finish(mut self) -> Result<(), DocumentBenchError> {
        self.resume()?;
        drop(self.stdin.take());
        let status = self
            .child
            .wait()
            .map_err(|e| self.failed(format!("cannot wait: {e}")))?;
        if !status.success() {
            return Err(self.failed(format!("exited with {status}")));
        }
        Ok(())
    }

    fn failed(&self, why: String) -> DocumentBenchError {
        DocumentBenchError::Engine(self.name.clone(), why)
    }
}

impl Drop for EngineProcess {
    fn drop(&mut self) {
        // A run that failed halfway leaves no process behind (stopped ones included).
        if self.stdin.is_some() {
            let _ = child_signal::resume(&self.child);
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
