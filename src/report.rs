//! `--report FILE`: a JSON summary of the run, written when it ends, for a CI job to archive.
//!
//! The report is an [`EventSink`] beside the stderr reporter. Its file is created in the target
//! directory when the run starts (so a path that cannot be written fails before anything runs)
//! and renamed into place when the run ends, so a reader never sees half a report. The schema is
//! in the README.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{json, Value};
use tempfile::NamedTempFile;

use crate::cli::Cli;
use crate::duration::to_millis;
use crate::events::{attempt_end_json, limit_json, Event, EventSink, Reason, WaitCause};
use crate::signals;

/// The report's format version, raised when a key changes meaning or goes away.
const VERSION: u32 = 1;

/// Collects a run's attempts and writes the report when the run ends.
pub struct ReportWriter {
    path: PathBuf,
    file: Option<NamedTempFile>,
    options: Value,
    /// The `--splay` wait before the first attempt, once it is drawn.
    splay: Option<Duration>,
    attempts: Vec<Value>,
}

impl ReportWriter {
    /// Prepare to write the report to `path`; `options` is what [`options`] returned.
    pub fn create(path: &Path, options: Value) -> io::Result<Self> {
        let directory = match path.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent,
            _ => Path::new("."),
        };
        let file = NamedTempFile::new_in(directory)?;
        Ok(ReportWriter {
            path: path.to_path_buf(),
            file: Some(file),
            options,
            splay: None,
            attempts: Vec::new(),
        })
    }

    fn write(&mut self, report: &Value) -> io::Result<()> {
        let Some(mut file) = self.file.take() else {
            return Ok(());
        };
        serde_json::to_writer_pretty(&mut file, report)?;
        file.write_all(b"\n")?;
        file.persist(&self.path).map_err(|err| err.error)?;
        Ok(())
    }

    fn last_attempt(&mut self) -> Option<&mut Value> {
        self.attempts.last_mut()
    }
}

impl EventSink for ReportWriter {
    fn emit(&mut self, event: Event) {
        match event {
            Event::AttemptStart { numbering, at } => self.attempts.push(json!({
                "attempt": numbering.attempt,
                "attempt_since_reset": numbering.since_reset,
                "start_offset_ms": to_millis(at),
            })),
            Event::AttemptEnd(end) => {
                let Some(attempt) = self.last_attempt() else {
                    return;
                };
                // The event's keys, and the ones it leaves out when they do not apply.
                attempt["signal"] = Value::Null;
                attempt["pattern"] = Value::Null;
                attempt["reset"] = json!(false);
                if let Value::Object(facts) = attempt_end_json(&end) {
                    for (key, value) in facts.into_iter().filter(|(key, _)| key != "event") {
                        attempt[key.as_str()] = value;
                    }
                }
                attempt["wait_after_ms"] = Value::Null;
                attempt["wait_cause"] = Value::Null;
            }
            Event::Wait {
                wait,
                cause: WaitCause::Splay,
                ..
            } => self.splay = Some(wait),
            Event::Wait { wait, cause, .. } => {
                if let Some(attempt) = self.last_attempt() {
                    attempt["wait_after_ms"] = json!(to_millis(wait));
                    attempt["wait_cause"] = json!(cause.name());
                }
            }
            Event::Done(done) => {
                let signal = match done.reason {
                    Reason::Interrupted(signal) => Some(signals::name(signal)),
                    _ => None,
                };
                let report = json!({
                    "version": VERSION,
                    "options": self.options,
                    "splay_ms": self.splay.map(to_millis),
                    "attempts": self.attempts,
                    "exit_code": done.status,
                    "reason": done.reason.name(),
                    "signal": signal,
                    "elapsed_ms": to_millis(done.elapsed),
                });
                if let Err(err) = self.write(&report) {
                    let line = format!(
                        "retry: cannot write --report {}: {err}\n",
                        self.path.display()
                    );
                    let _ = io::stderr().write_all(line.as_bytes());
                }
            }
        }
    }
}

/// The options in force, as the report records them; `seed` is the seed actually used.
pub fn options(cli: &Cli, seed: u64) -> Value {
    let millis = |duration: Option<Duration>| duration.map(to_millis);
    json!({
        "command": cli.command.iter().map(|word| word.to_string_lossy()).collect::<Vec<_>>(),
        "shell": cli.shell,
        "max_attempts": limit_json(cli.max_attempts),
        "base_ms": to_millis(cli.base),
        "cap_ms": to_millis(cli.cap),
        "multiplier": cli.multiplier,
        "jitter": cli.jitter.name(),
        "seed": seed,
        "splay_ms": millis(cli.splay),
        "budget": cli.budget.as_ref().map(|name| name.as_str()),
        "budget_rate": cli.budget.as_ref().map(|_| cli.budget_rate.to_string()),
        "success_on": cli.success_on.to_string(),
        "retry_on": cli.retry_on.map(|set| set.to_string()),
        "stop_on": cli.stop_on.map(|set| set.to_string()),
        "retry_on_output": cli.retry_on_output,
        "stop_on_output": cli.stop_on_output,
        "hold_output": cli.hold_output,
        "timeout_ms": millis(cli.timeout),
        "max_time_ms": millis(cli.max_time),
        "kill_after_ms": to_millis(cli.kill_after),
        "reset_after_ms": millis(cli.reset_after),
        "foreground": cli.foreground,
        "replay_stdin": cli.replay_stdin,
    })
}
