//! The hooks, `--on-retry` and `--on-give-up`: a shell line run with `sh -c` in a process group
//! of its own, started as an attempt is (by `launch`, so that a tool killed meanwhile leaves
//! nothing behind) and under the supervision an attempt gets.
//!
//! A hook gets the last attempt's variables (but for its `RETRY_AFTER_FILE`, already gone) and `RETRY_STATUS`, with `RETRY_NEXT_WAIT_MS` or
//! `RETRY_REASON`; no stdin, and its stdout goes to the tool's stderr, so that the command's
//! stdout stays the command's. When the tool holds the terminal, the hook is handed it as an
//! attempt is, so that it may write there whatever `stty tostop` says. Its time limit is `--timeout`, or [`HOOK_LIMIT`], and never past
//! `--max-time`; then the time-limit signal, SIGKILL after `--kill-after`, and its whole group
//! is cleared after it, as for an attempt. A signal that ends the run is passed on to it.

use std::ffi::OsStr;
use std::fs::File;
use std::io;
use std::os::fd::AsFd;
use std::time::{Duration, Instant};

use super::{ProcessOptions, inherited, spawn_failure};
use crate::environment;
use retry_policy::attempts::AttemptLimit;
use retry_policy::exit::Exit;
use retry_policy::outcome::{Hook, HookEnd, HookOutcome};
use retry_policy::run::{HookCall, Hooks};
use retry_policy::run_id::RunId;
use retry_policy::termination::TimeLimit;
use retry_process::command_line::CommandLine;
use retry_process::signals::SignalWatch;
use retry_process::supervision::Supervision;
use retry_process::terminal::Terminal;
use retry_sys::environ::{ChildEnvironment, Value};
use retry_sys::spawn::{ChildStdio, Launcher, Setup};

/// A hook's time limit without `--timeout`.
pub(crate) const HOOK_LIMIT: Duration = Duration::from_secs(60);

/// The shell lines of the hooks given, one place a hook (`Hook::index`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct HookLines([Option<String>; Hook::ALL.len()]);

impl HookLines {
    /// The lines `given`, by their hook.
    pub(crate) fn new(given: impl IntoIterator<Item = (Hook, Option<String>)>) -> Self {
        let mut lines = HookLines::default();
        for (hook, line) in given {
            lines.0[hook.index()] = line;
        }
        lines
    }

    /// The line of `hook`, if it is given.
    pub(crate) fn line(&self, hook: Hook) -> Option<&String> {
        self.0[hook.index()].as_ref()
    }
}

/// Runs the hooks as processes.
pub(crate) struct HookRunner<'a> {
    lines: HookLines,
    options: ProcessOptions,
    watch: &'a SignalWatch,
    /// The controlling terminal, when the tool holds it.
    terminal: Option<&'a Terminal>,
    /// The attempts all nested layers together may make, passed on in `RETRY_TOTAL_ATTEMPTS`.
    total: AttemptLimit,
    /// The run's identity, passed on in `RETRY_RUN_ID`.
    run_id: RunId,
    /// The budget store the run passes on to its children, without its password.
    store: Option<&'a str>,
    /// What starts each hook, and its environment, made when a hook first runs.
    prepared: Option<Prepared>,
}

/// What every start of a hook shares, made once.
struct Prepared {
    /// What starts each hook given, one place a hook.
    launchers: Vec<Option<Launcher>>,
    environment: ChildEnvironment,
    /// A hook's stdin.
    null: File,
}

impl Prepared {
    /// The launchers of `lines` (`sh -c LINE`), the environment of the run `run_id` (with the
    /// `store` it passes on) and `/dev/null`.
    fn new(lines: &HookLines, (run_id, store): (RunId, Option<&str>)) -> io::Result<Prepared> {
        let launcher = |line: &String| {
            let words = ["sh", "-c", line].map(std::ffi::OsString::from).to_vec();
            let command = CommandLine::direct(words).expect("sh is a word");
            Launcher::new(command.program(), command.args())
        };
        let launchers = Hook::ALL
            .iter()
            .map(|&hook| lines.line(hook).map(launcher).transpose())
            .collect::<io::Result<_>>()?;
        Ok(Prepared {
            launchers,
            environment: crate::process::environ::of_run(
                crate::process::environ::inherited().0,
                run_id,
                store,
            ),
            null: File::open("/dev/null")?,
        })
    }
}

impl<'a> HookRunner<'a> {
    /// The runner of the hooks `lines`, with the attempts' process `options`, taking signals
    /// from `watch` and handing over `terminal`; `total` is what all nested layers together may
    /// make; `run_id` is the run's identity, and `store` the budget store it passes on.
    pub(crate) fn new(
        lines: HookLines,
        options: ProcessOptions,
        watch: &'a SignalWatch,
        terminal: Option<&'a Terminal>,
        (total, run_id, store): (AttemptLimit, RunId, Option<&'a str>),
    ) -> Self {
        HookRunner {
            lines,
            options,
            watch,
            terminal,
            total,
            run_id,
            store,
            prepared: None,
        }
    }
}

impl Hooks for HookRunner<'_> {
    fn run(&mut self, call: &HookCall, deadline: Option<Instant>) -> Option<HookEnd> {
        self.lines.line(call.hook)?;
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
        let leader = match self.start(call) {
            Ok(leader) => leader,
            Err((status, why)) => return Some(not_run(call.hook, status, why)),
        };
        let terminal = self.terminal;
        let mut supervision =
            Supervision::new(self.watch, leader, true, terminal, self.options.ending());
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
    /// Start `sh -c line` for `call`, set up as the module header says; its process, or the
    /// status a shell would give and why it did not start.
    fn start(&mut self, call: &HookCall) -> Result<nix::unistd::Pid, (u8, String)> {
        let prepared = match &mut self.prepared {
            Some(prepared) => prepared,
            unprepared => match Prepared::new(&self.lines, (self.run_id, self.store)) {
                Ok(prepared) => unprepared.insert(prepared),
                Err(err) => {
                    return Err((Exit::ToolFailed.status(), format!("cannot run sh: {err}")));
                }
            },
        };
        let attempt = call
            .numbering
            .map(|numbering| environment::of_attempt(numbering, self.total));
        let next_wait = call.next_wait.map(|wait| {
            (
                environment::NEXT_WAIT_MS.name,
                Value::Number(whole_millis(wait)),
            )
        });
        let reason = call
            .reason
            .map(|reason| (environment::REASON.name, Value::Text(OsStr::new(reason))));
        let values = attempt
            .into_iter()
            .flatten()
            .chain([(environment::STATUS.name, Value::Number(call.status.into()))])
            .chain(next_wait)
            .chain(reason);
        prepared.environment.set_attempt(values);
        let launcher = prepared.launchers[call.hook.index()]
            .as_mut()
            .expect("a hook that is given has a launcher");
        let stderr = io::stderr();
        let setup = Setup {
            environ: prepared.environment.environ(),
            stdio: [
                ChildStdio::From(prepared.null.as_fd()),
                // A hook's stdout is the tool's stderr, closed when that is.
                match inherited(2) {
                    ChildStdio::Closed => ChildStdio::Closed,
                    _ => ChildStdio::From(stderr.as_fd()),
                },
                inherited(2),
            ],
            own_group: true,
            outlives_the_tool: false,
            handover: self.terminal.map(Terminal::handover),
            mask: self.watch.child_mask(),
        };
        match launcher.start(&setup) {
            Ok(started) => Ok(started.pid),
            Err(err) => {
                let status = Exit::from(spawn_failure(&err)).status();
                Err((status, format!("cannot run sh: {err}")))
            }
        }
    }
}

/// `wait` in whole milliseconds, to the nearest, as shell arithmetic takes them.
fn whole_millis(wait: Duration) -> u64 {
    u64::try_from((wait.as_micros() + 500) / 1000).unwrap_or(u64::MAX)
}

/// An option given where a hook's shell line goes: the option.
#[derive(Debug, thiserror::Error)]
#[error(
    "'{0}' is an option, not a shell line (is the line missing?); give the hook's command in \
     quotes, e.g. 'echo retrying'"
)]
pub(crate) struct OptionForLine(String);

/// A hook's line as given to `--on-retry` or `--on-give-up`: refused when it is `--` or one
/// word that starts with `-`, which is an option taken for the line, never a command.
pub(crate) fn parse_shell_line(text: &str) -> Result<String, OptionForLine> {
    match text.starts_with('-') && !text.contains(char::is_whitespace) {
        true => Err(OptionForLine(text.to_string())),
        false => Ok(text.to_string()),
    }
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
