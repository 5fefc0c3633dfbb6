//! `--summarizer-cmd 'CMD'`: the request handed to a command of the user's.
//!
//! ## What it does
//! Runs `sh -c CMD` with the Chat Completions request body (JSON) on its
//! standard input and reads the summary body from its standard output. A
//! command that exits non-zero, is killed, or outlives the timeout gives a
//! [`Fallback`]; its standard error is left to the terminal.
//!
//! ## Why
//! Anything that is not an OpenAI-compatible endpoint (a TLS endpoint through
//! `curl`, a provider SDK, a local script) plugs in without code here.

use super::{Answer, Slots};
use crate::policy::summary_writer::Fallback;
use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How often a running command is polled for its exit.
const POLL: Duration = Duration::from_millis(10);

/// A command that writes summary bodies.
#[derive(Debug)]
pub struct Runner {
    command: String,
    timeout: Duration,
}

impl Runner {
    pub fn new(command: String, timeout: Duration) -> Runner {
        Runner { command, timeout }
    }

    /// The command line, for the cache key: another command may answer differently.
    pub fn command(&self) -> &str {
        &self.command
    }

    /// Runs the command on `body`, holding one of `slots`.
    pub fn send(&self, body: &[u8], slots: &Slots) -> Result<Answer, Fallback> {
        let _slot = slots.acquire();
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(&self.command)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|_| Fallback::Spawn)?;
        let (Some(mut stdin), Some(mut stdout)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(Fallback::Spawn);
        };
        let input = body.to_vec();
        // A command that never reads its input must not block us: write on the side.
        let writer = std::thread::spawn(move || {
            let _ = stdin.write_all(&input);
        });
        let reader = std::thread::spawn(move || {
            let mut out = Vec::new();
            let _ = stdout.read_to_end(&mut out);
            out
        });
        let started = Instant::now();
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if started.elapsed() >= self.timeout => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(Fallback::Timeout);
                }
                Ok(None) => std::thread::sleep(POLL),
                Err(_) => return Err(Fallback::Spawn),
            }
        };
        let _ = writer.join();
        let out = reader.join().unwrap_or_default();
        if !status.success() {
            return Err(Fallback::ExitStatus(status.code()));
        }
        Ok(Answer {
            text: String::from_utf8_lossy(&out).into_owned(),
            prompt_tokens: None,
            completion_tokens: None,
        })
    }
}
