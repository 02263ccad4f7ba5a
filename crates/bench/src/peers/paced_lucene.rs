//! Lucene timed in turns with other engines: `tools/lucene-peer bench --paced` in a child JVM
//! that runs each round when told to.
//!
//! The tool times its queries itself (`System.nanoTime`, after its JIT warm-up), so a round
//! has to run inside the JVM; pacing it lets `apcache-bench peers` time apcache's and tantivy's
//! rounds between Lucene's, so that a slow spell of the machine falls on every engine alike.
//! The protocol: the tool prints `{"ready":true}` after its JIT warm-up, then before each round
//! reads a line from its stdin and after it prints `{"round":R}`; when the rounds are done it
//! prints one line per query as the unpaced `bench` does.
//!
//! Between its rounds the JVM is stopped (`SIGSTOP`, then `SIGCONT` before the next): an idle
//! JVM still runs its compiler, collector and periodic threads, and on two cores they took the
//! CPU from the engine being timed, for whole scheduler ticks (4 ms spikes in the p99 of every
//! engine in a trial run).

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Stdio};

use crate::peer_engines::{lucene_bench_command, LuceneBenchOptions, LuceneOutcome, PeerError};
use crate::peers::child_signal;

/// A running `bench --paced` process.
pub struct PacedLucene {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl PacedLucene {
    /// Starts the tool and waits for its JIT warm-up to end.
    pub fn start(
        java: &Path,
        jar: &Path,
        index: &Path,
        queries_file: &Path,
        options: &LuceneBenchOptions,
    ) -> Result<PacedLucene, PeerError> {
        let mut child = lucene_bench_command(java, jar, index, queries_file, options)
            .arg("--paced")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| PeerError::Lucene(format!("cannot run java: {e}")))?;
        let stdin = child.stdin.take().expect("piped");
        let stdout = BufReader::new(child.stdout.take().expect("piped"));
        let mut lucene = PacedLucene {
            child,
            stdin: Some(stdin),
            stdout,
        };
        lucene.expect_line("ready")?;
        lucene.signal(libc::SIGSTOP)?;
        Ok(lucene)
    }

    /// Runs one round (the warm-up rounds come first) and waits for it to end.
    pub fn round(&mut self) -> Result<(), PeerError> {
        self.signal(libc::SIGCONT)?;
        let stdin = self.stdin.as_mut().expect("open until finish");
        stdin
            .write_all(b"go\n")
            .and_then(|()| stdin.flush())
            .map_err(|e| PeerError::Lucene(format!("lucene-peer stopped taking rounds: {e}")))?;
        self.expect_line("round")?;
        self.signal(libc::SIGSTOP)
    }

    /// After the last round: each query's outcome, in file order.
    pub fn finish(mut self) -> Result<Vec<LuceneOutcome>, PeerError> {
        self.signal(libc::SIGCONT)?;
        drop(self.stdin.take());
        let mut rest = String::new();
        self.stdout
            .read_to_string(&mut rest)
            .map_err(|e| PeerError::Lucene(format!("reading lucene-peer: {e}")))?;
        let status = self
            .child
            .wait()
            .map_err(|e| PeerError::Lucene(format!("waiting for lucene-peer: {e}")))?;
        if !status.success() {
            return Err(PeerError::Lucene(self.stderr()));
        }
        rest.lines().map(LuceneOutcome::parse).collect()
    }

    /// Reads the next line and checks that it is the JSON object with key `key`.
    fn expect_line(&mut self, key: &str) -> Result<(), PeerError> {
        let mut line = String::new();
        let read = self
            .stdout
            .read_line(&mut line)
            .map_err(|e| PeerError::Lucene(format!("reading lucene-peer: {e}")))?;
        let value: Option<serde_json::Value> = serde_json::from_str(line.trim()).ok();
        if read == 0 || value.as_ref().and_then(|v| v.get(key)).is_none() {
            // The process ended or printed something else: its stderr says why.
            let _ = self.child.kill();
            let _ = self.child.wait();
            return Err(PeerError::Lucene(format!(
                "expected {{\"{key}\":..}} from lucene-peer bench --paced, got {:?}: {}",
                line.trim(),
                self.stderr()
            )));
        }
        Ok(())
    }

    /// Sends `signal` to the JVM (stop or continue it).
    fn signal(&self, signal: libc::c_int) -> Result<(), PeerError> {
        child_signal::signal(&self.child, signal)
            .map_err(|e| PeerError::Lucene(format!("cannot signal lucene-peer: {e}")))
    }

    fn stderr(&mut self) -> String {
        let mut text = String::new();
        if let Some(stderr) = self.child.stderr.as_mut() {
            let _ = stderr.read_to_string(&mut text);
        }
        text
    }
}

impl Drop for PacedLucene {
    fn drop(&mut self) {
        // A run that failed halfway leaves no JVM behind.
        if self.stdin.is_some() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
