//! The hooks, `--on-retry` and `--on-give-up`: a shell line run with `sh -c` in a process group
//! of its own, under the supervision an attempt gets.
//!
//! A hook gets the last attempt's variables (but for its `RETRY_AFTER_FILE`, already gone) and `RETRY_STATUS`, with `RETRY_NEXT_WAIT_MS` or
//! `RETRY_REASON`; no stdin, and its stdout goes to the tool's stderr, so that the command's
//! stdout stays the command's. When the tool holds the terminal, the hook is handed it as an
//! attempt is, so that it may write there whatever `stty tostop` says. Its time limit is `--timeout`, or [`HOOK_LIMIT`], and never past
//! `--max-time`; then the time-limit signal, SIGKILL after `--kill-after`, and its whole group
//! is cleared after it, as for an attempt. A signal that ends the run is passed on to it.

use std::io;
use std::os::fd::AsFd;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use nix::unistd::Pid;

use super::supervision::Supervision;
use super::{ProcessOptions, prepare_child, set_environment, spawn_failure};
use crate::attempts::AttemptLimit;
use crate::environment;
use crate::exit::Exit;
use crate::outcome::{Hook, HookEnd, HookOutcome};
use crate::process::terminal::Terminal;
use crate::retry_loop::{HookCall, Hooks};
use crate::signals::SignalWatch;
use crate::termination::TimeLimit;

/// A hook's time limit without `--timeout`.
pub(crate) const HOOK_LIMIT: Duration = Duration::from_secs(60);

/// The shell lines of the hooks given.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct HookLines {
    pub(crate) on_retry: Option<String>,
    pub(crate) on_give_up: Option<String>,
}

/// Runs the hooks as processes.
pub(crate) struct HookRunner<'a> {
    pub(crate) lines: HookLines,
    pub(crate) options: ProcessOptions,
    pub(crate) watch: &'a SignalWatch,
    /// The controlling terminal, when the tool holds it.
    pub(crate) terminal: Option<&'a Terminal>,
    /// The attempts all nested layers together may make, passed on in `RETRY_TOTAL_ATTEMPTS`.
    pub(crate) total: AttemptLimit,
}

impl Hooks for HookRunner<'_> {
    fn run(&mut self, call: &HookCall, deadline: Option<Instant>) -> Option<HookEnd> {
        let line = match call.hook {
            Hook::OnRetry => self.lines.on_retry.as_deref(),
            Hook::OnGiveUp => self.lines.on_give_up.as_deref(),
        }?;
        let started = Instant::now();
        let own = started.checked_add(self.options.timeout.unwrap_or(HOOK_LIMIT));
        let limit = match (own, deadline) {
            (_, Some(deadline)) if deadline <= started => {
                return Some(not_run(
                    call.hook,
                    Exit::TimedOut.status(),
                    "--max-time left no time to run it".into(),
                ));
            }
            (Some(own), Some(deadline)) if deadline < own => Some((deadline, TimeLimit::Deadline)),
            (Some(own), _) => Some((own, TimeLimit::Attempt)),
            (None, deadline) => deadline.map(|deadline| (deadline, TimeLimit::Deadline)),
        };
        let child = match self.command(line, call).spawn() {
            Ok(child) => child,
            Err(err) => {
                let failure = spawn_failure(&err);
                let why = format!("cannot run sh: {err}");
                return Some(not_run(call.hook, Exit::from(failure).status(), why));
            }
        };
        let leader = Pid::from_raw(i32::try_from(child.id()).unwrap_or(i32::MAX));
        let terminal = self.terminal;
        let mut supervision = Supervision::new(self.watch, leader, true, terminal, &self.options);
        let status = supervision.await_leader(limit);
        if let Some(terminal) = terminal {
            terminal.take_back_from(leader);
        }
        supervision.clear_group();
        Some(HookEnd {
            hook: call.hook,
            outcome: HookOutcome::Ended(supervision.termination(status)),
            duration: started.elapsed(),
            interrupted_by: supervision.interrupted_by(),
        })
    }
}

impl HookRunner<'_> {
    /// `sh -c line`, set up as the module header says.
    fn command(&self, line: &str, call: &HookCall) -> Command {
        let mut command = Command::new("sh");
        command.arg("-c").arg(line).stdin(Stdio::null());
        if let Ok(stderr) = io::stderr().as_fd().try_clone_to_owned() {
            command.stdout(stderr);
        }
        set_environment(&mut command, call.numbering, self.total);
        command.env(environment::STATUS.name, call.status.to_string());
        if let Some(wait) = call.next_wait {
            command.env(
                environment::NEXT_WAIT_MS.name,
                whole_millis(wait).to_string(),
            );
        }
        if let Some(reason) = call.reason {
            command.env(environment::REASON.name, reason);
        }
        command.process_group(0);
        let handover = self.terminal.map(Terminal::handover);
        prepare_child(&mut command, self.watch.child_mask(), handover);
        command
    }
}

/// `wait` in whole milliseconds, to the nearest, as shell arithmetic takes them.
fn whole_millis(wait: Duration) -> u128 {
    (wait.as_micros() + 500) / 1000
}

/// A hook's line as given to `--on-retry` or `--on-give-up`: refused when it is `--` or one
/// word that starts with `-`, which is an option taken for the line, never a command.
pub(crate) fn parse_shell_line(text: &str) -> Result<String, String> {
    if text.starts_with('-') && !text.contains(char::is_whitespace) {
        return Err(format!(
            "'{text}' is an option, not a shell line (is the line missing?); give the hook's \
             command in quotes, e.g. 'echo retrying'"
        ));
    }
    Ok(text.to_string())
}

/// A hook that did not run, with the status a shell would give and why.
fn not_run(hook: Hook, status: u8, why: String) -> HookEnd {
    HookEnd {
        hook,
        outcome: HookOutcome::NotRun { status, why },
        duration: Duration::ZERO,
        interrupted_by: None,
    }
}
