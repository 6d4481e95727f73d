//! One attempt as a real process: spawn the command, supervise it to its end (`retry-process`'s
//! `Supervision`), clean up after it, with its output copied on or held, its variables set and
//! its request file read.
//!
//! Each attempt runs in a process group of its own (unless `--foreground`), so a timeout or a
//! forwarded signal reaches everything the command started, and when the attempt ends nothing
//! it started is left running in that group. `sys::spawn` starts it: with the variables of
//! `environment` (built once per run by `environ`), the terminal when the tool has it, the signal
//! mask the tool started with, and (on Linux) SIGTERM as its parent-death signal, so a command
//! outlives a tool killed by SIGKILL only as long as it ignores SIGTERM. A command that cannot be
//! started is reported with the status coreutils `env` and `timeout` use: 127 when it is not
//! found, 126 otherwise.

pub(crate) mod environ;
pub(crate) mod hooks;
mod not_found;
pub(crate) mod release;
pub(crate) mod request_file;
pub(crate) mod stdin_replay;

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::fd::RawFd;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use crate::environment;
use crate::held_job::SharedJob;
use crate::output::copy::{CopyOutcome, Destination, HeldOutput, Outlet, StreamCopy, merge};
use crate::output::tail::KeptTails;
use crate::output::{Hold, OutputOptions};
use crate::process::request_file::{RequestFile, RequestFiles};
use crate::process::stdin_replay::HeldInput;
use crate::report::outlet::GRACE;
use crate::spill::SpillBuffer;
use retry_policy::attempts::{AttemptLimit, Numbering};
use retry_policy::matching::Stream;
use retry_policy::outcome::SpawnFailure;
use retry_policy::requested;
use retry_policy::run::{AttemptReport, Attempts, SpawnError};
use retry_policy::termination::TimeLimit;
use retry_policy::trace_context::TraceContext;
use retry_process::command_line::CommandLine;
use retry_process::signals::{Signal, SignalWatch, Wake, reaper};
use retry_process::terminal::Terminal;
use retry_sys::environ::{ChildEnvironment, Value};
use retry_sys::spawn::{ChildStdio, Launcher, Setup, StartError, Started, Step};

use retry_process::supervision::Supervision;

/// How attempts are isolated from the tool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Isolation {
    /// Each attempt leads a process group of its own; signals and timeouts reach the group.
    OwnGroup,
    /// `--foreground`: the command stays in the tool's group; signals reach only the command.
    Foreground,
}

/// The process-control options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ProcessOptions {
    /// `--timeout`: the limit of one attempt.
    pub(crate) timeout: Option<Duration>,
    /// `--kill-after`: how long after the timeout signal (or a passed-on one) to send SIGKILL.
    pub(crate) kill_after: Duration,
    /// `--timeout-signal`: what ends an attempt at its time limit.
    pub(crate) timeout_signal: Signal,
    /// Process group or `--foreground`.
    pub(crate) isolation: Isolation,
}

impl ProcessOptions {
    /// How an attempt is ended: the signal sent at its time limit, and how long after it (or
    /// after a passed-on signal) SIGKILL follows.
    pub(crate) fn ending(&self) -> (Signal, Duration) {
        (self.timeout_signal, self.kill_after)
    }
}

/// Runs the command as a child process of this one.
pub(crate) struct ProcessRunner<'a> {
    /// What each attempt runs.
    pub(crate) command: CommandLine,
    /// The attempts all nested layers together may make, passed on in `RETRY_TOTAL_ATTEMPTS`.
    pub(crate) total: AttemptLimit,
    /// Timeout, kill-after and process-group options.
    pub(crate) options: ProcessOptions,
    /// The signal watch, installed on the thread that runs attempts.
    pub(crate) watch: &'a SignalWatch,
    /// The controlling terminal to hand to attempts (never with `--foreground`).
    pub(crate) terminal: Option<&'a Terminal>,
    /// The held stdin, for `--replay-stdin`.
    pub(crate) input: Option<HeldInput>,
    /// What each stream is matched against, and what is held.
    pub(crate) output: OutputOptions,
    /// The run's directory of `RETRY_AFTER_FILE`s; none when it could not be made (the run
    /// warned of that).
    pub(crate) requests: Option<RequestFiles>,
    /// The environment each attempt gets, built once.
    pub(crate) environment: ChildEnvironment,
    /// What starts each attempt's process.
    pub(crate) launcher: Launcher,
    /// Where each attempt's output tails go, for a report that shows them.
    pub(crate) tails: Option<KeptTails>,
    /// The run's place in a trace, whose attempts each get a `TRACEPARENT` of their own.
    pub(crate) trace: Option<TraceContext>,
    /// The run's job, whose hold each attempt is handed the proof of.
    pub(crate) job: SharedJob,
    /// Whether the attempts' environment has the run's own proof in place of an outer run's.
    pub(crate) holds_job: bool,
}

impl ProcessRunner<'_> {
    /// Start the attempt `numbering` names, its variables telling it the run's `deadline` and
    /// its own `limit`.
    fn spawn(
        &mut self,
        numbering: Numbering,
        request_file: Option<&RequestFile>,
        deadline: Option<Instant>,
        limit: Option<Instant>,
    ) -> Result<Started, SpawnError> {
        // The clocks are read only for an attempt that has a limit to tell of.
        let limits = match deadline.or(limit) {
            Some(_) => {
                let now = Instant::now();
                let left = |at: Instant| at.saturating_duration_since(now);
                environment::of_limits(deadline.map(left), limit.map(left), SystemTime::now())
            }
            None => [None, None],
        };
        let values = environment::of_attempt(numbering, self.total);
        let request = request_file.map(|file| {
            (
                environment::AFTER_FILE.name,
                Value::Text(file.path().as_os_str()),
            )
        });
        let traceparent = self
            .trace
            .map(|context| OsString::from(context.traceparent(numbering.attempt)));
        let traceparent = traceparent
            .as_deref()
            .map(|value| (environment::TRACEPARENT.name, Value::Text(value)));
        let job = Rc::clone(&self.job);
        let held = job.handed_on();
        if held.is_some() && !self.holds_job {
            // The run's own proof takes the place of an outer run's, which passed through.
            self.environment.remove(environment::JOB_HOLD.name);
            self.holds_job = true;
        }
        let held = held
            .as_deref()
            .map(|value| (environment::JOB_HOLD.name, Value::Text(value)));
        self.environment.set_attempt(
            values
                .into_iter()
                .chain(limits.into_iter().flatten())
                .chain(request)
                .chain(traceparent)
                .chain(held),
        );
        let piped = |piped: bool, fd| match piped {
            true => ChildStdio::Pipe,
            false => inherited(fd),
        };
        let setup = Setup {
            environ: self.environment.environ(),
            stdio: [
                piped(self.input.is_some(), 0),
                piped(self.output.pipes_stdout(), 1),
                piped(self.output.pipes_stderr(), 2),
            ],
            own_group: self.options.isolation == Isolation::OwnGroup,
            outlives_the_tool: false,
            handover: self.terminal.map(Terminal::handover),
            mask: self.watch.child_mask(),
        };
        self.launcher
            .start(&setup)
            .map_err(|err| spawn_error(&self.command, &err))
    }

    /// Start copying the attempt's piped stdout and stderr on, or into the hold; a copy that
    /// cannot start is an output failure of the attempt.
    fn start_copies(&self, child: &mut Started) -> (Vec<StreamCopy>, Option<String>) {
        let stdout = child.stdout.take().map(|pipe| {
            let destination = match self.output.hold {
                Hold::Nothing => Destination::PassOn(Outlet::stdout()),
                Hold::Stdout | Hold::Everything => Destination::Hold(SpillBuffer::default()),
            };
            (Stream::Stdout, pipe, destination, &self.output.stdout)
        });
        let stderr = child.stderr.take().map(|pipe| {
            let destination = match self.output.hold {
                Hold::Everything => Destination::Hold(SpillBuffer::default()),
                Hold::Nothing | Hold::Stdout => Destination::PassOn(Outlet::stderr()),
            };
            (Stream::Stderr, pipe, destination, &self.output.stderr)
        });
        let mut failure = None;
        let mut copies = Vec::new();
        for (stream, pipe, destination, conditions) in stdout.into_iter().chain(stderr) {
            let doorbell = self.watch.doorbell();
            // A stream piped only to be held has no conditions, and is not matched.
            let conditions = Arc::clone(conditions);
            let on_end = move || doorbell.ring();
            let tail = self.tails.is_some();
            match StreamCopy::start(stream, pipe, destination, conditions, tail, on_end) {
                Ok(copy) => copies.push(copy),
                Err(err) => {
                    failure.get_or_insert(format!("cannot read the command's output: {err}"));
                }
            }
        }
        (copies, failure)
    }

    /// Wait for the copies to reach the end of their streams, `--kill-after` at most (a process
    /// that left the attempt's group may hold them open), and not at all once a signal that
    /// ends the run has come or past the run's `deadline`; then stop them and collect what they
    /// found and kept. A stream is said to be held by such a process, or its reader to have
    /// stopped reading, only when the wait for it ran out: a signal that ends the run stops the
    /// reading without a word.
    fn finish_copies(
        &self,
        mut copies: Vec<StreamCopy>,
        supervision: &mut Supervision,
        deadline: Option<Instant>,
    ) -> CopyOutcome {
        let last = deadline.map(|deadline| deadline.max(Instant::now()) + GRACE);
        let mut until = earliest(Instant::now().checked_add(self.options.kill_after), last);
        let mut reading = true;
        let mut waited_out = false;
        while supervision.interrupted_by().is_none() && !copies.iter().all(StreamCopy::is_finished)
        {
            match self.watch.wait_until(until) {
                Wake::Changed => {
                    reaper::reap_ended(None, false);
                }
                Wake::Stop(signal) => supervision.interrupt(signal),
                Wake::PassOn(_) => {}
                // Stop reading; each copy finishes the chunk in hand, which a reader of the
                // tool's own stream that does not read may hold up, until the deadline.
                Wake::Timeout if reading => {
                    copies.iter_mut().for_each(StreamCopy::stop);
                    reading = false;
                    waited_out = true;
                    until = last;
                }
                Wake::Timeout => break,
            }
        }
        copies.iter_mut().for_each(StreamCopy::stop);
        let mut outcome = copies
            .into_iter()
            .map(StreamCopy::outcome)
            .fold(CopyOutcome::default(), merge);
        if !waited_out {
            outcome.cut_short = false;
            outcome.stalled = None;
        }
        outcome
    }
}

impl Attempts for ProcessRunner<'_> {
    type Held = HeldOutput;

    fn run(
        &mut self,
        numbering: Numbering,
        deadline: Option<Instant>,
    ) -> Result<AttemptReport<HeldOutput>, SpawnError> {
        let started = Instant::now();
        let own_limit = self
            .options
            .timeout
            .and_then(|timeout| started.checked_add(timeout));
        let limit = match (own_limit, deadline) {
            (Some(own), Some(run)) if run <= own => Some((run, TimeLimit::Deadline)),
            (Some(own), _) => Some((own, TimeLimit::Attempt)),
            (None, run) => run.map(|run| (run, TimeLimit::Deadline)),
        };
        let (request_file, mut request_problems) =
            match self.requests.as_mut().map(RequestFiles::create) {
                Some(Ok(file)) => (Some(file), Vec::new()),
                Some(Err(problem)) => {
                    // Said once: every attempt's file would go to the same directory.
                    self.requests = None;
                    let problem =
                        format!("{problem}; no attempt can ask for a wait in a file in this run");
                    (None, vec![problem])
                }
                None => (None, Vec::new()),
            };
        let limit_at = limit.map(|(at, _)| at);
        let mut child = self.spawn(numbering, request_file.as_ref(), deadline, limit_at)?;
        if let Some(requests) = &mut self.requests {
            requests.make_ahead();
        }
        let (copies, mut failure) = self.start_copies(&mut child);
        if let Some(input) = &self.input
            && let Err(err) = input.feed(child.stdin.take().map(std::fs::File::from))
        {
            failure.get_or_insert(format!("cannot give stdin to the command: {err}"));
        }
        let leader = child.pid;
        let group = self.options.isolation == Isolation::OwnGroup;
        let terminal = self.terminal;
        let mut supervision =
            Supervision::new(self.watch, leader, group, terminal, self.options.ending());
        let status = supervision.await_leader(limit);
        let held_terminal = terminal.is_some_and(|terminal| terminal.is_held_by(leader));
        if let Some(terminal) = terminal {
            terminal.take_back_from(leader);
        }
        supervision.keyboard_interrupt(status, held_terminal);
        supervision.clear_group();
        let mut output = self.finish_copies(copies, &mut supervision, deadline);
        output.failure = failure.or(output.failure);
        if let Some(tails) = &self.tails {
            tails.keep(std::mem::take(&mut output.held.tails));
        }
        let capture = output
            .matched
            .requested
            .as_ref()
            .map(|capture| capture.text.clone());
        let mut report = supervision.report(status, output);
        let (requested, problems) = requested::read(
            request_file.map(RequestFile::take),
            capture.as_deref(),
            numbering.attempt,
            SystemTime::now(),
        );
        request_problems.extend(problems);
        report.requested = requested;
        report.request_problems = request_problems;
        Ok(report)
    }
}

/// The tool's own stdin, stdout or stderr (`fd`), for a child that shares it: closed where the
/// tool's parent left it closed (`retry ... >&-`), as the child would have it without the tool,
/// never the `/dev/null` std's runtime opened there for the tool alone.
pub(crate) fn inherited(fd: RawFd) -> ChildStdio<'static> {
    match retry_sys::descriptors::closed_at_start(fd) {
        true => ChildStdio::Closed,
        false => ChildStdio::Inherit,
    }
}

/// The earlier of two moments, either of which may be never.
fn earliest(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Whether `program` is a number, which a user meant as the count of attempts (`retry 3 curl`).
fn is_count(program: &OsStr) -> bool {
    !program.is_empty() && program.as_encoded_bytes().iter().all(u8::is_ascii_digit)
}

/// Who failed when a process could not be started: the command only when executing it failed
/// (not found, 127; found but not executable, 126); any failure before that, whatever its error
/// number, is the tool's (125).
pub(crate) fn spawn_failure(err: &StartError) -> SpawnFailure {
    if err.step != Step::Execute {
        return SpawnFailure::ToolFailed;
    }
    match err.error.raw_os_error() {
        Some(libc::ENOENT) => SpawnFailure::NotFound,
        Some(libc::EAGAIN | libc::ENOMEM | libc::EMFILE | libc::ENFILE) => SpawnFailure::ToolFailed,
        _ if err.error.kind() == io::ErrorKind::NotFound => SpawnFailure::NotFound,
        _ => SpawnFailure::CannotExecute,
    }
}

fn spawn_error(command: &CommandLine, err: &StartError) -> SpawnError {
    let failure = spawn_failure(err);
    let message = match failure {
        SpawnFailure::NotFound if command.program().to_string_lossy().trim().is_empty() => {
            format!(
                "command not found: '{command}' (COMMAND is an empty or blank word, as \"$VAR\" \
                 gives when VAR is unset or blank)"
            )
        }
        SpawnFailure::NotFound
            if command
                .program()
                .to_string_lossy()
                .contains(char::is_whitespace) =>
        {
            format!(
                "command not found: {command} (the whole command line is one word here: give \
                 COMMAND and its arguments as separate words, or use --shell)"
            )
        }
        SpawnFailure::NotFound if is_count(command.program()) => format!(
            "command not found: {command} (to make {command} attempts, give -n {command} before \
             the command)"
        ),
        SpawnFailure::NotFound => {
            match not_found::missing_part(command.program(), environment::own("PATH").as_deref()) {
                Some(part) => format!("cannot run {command}{part}"),
                None => format!("command not found: {command}"),
            }
        }
        SpawnFailure::CannotExecute => format!("cannot execute {command}: {}", err.error),
        SpawnFailure::ToolFailed => format!(
            "could not start an attempt of {command}: {err}; {}",
            short_of(&err.error)
        ),
    };
    SpawnError { failure, message }
}

/// What the tool is short of, by the error, for a message.
fn short_of(err: &io::Error) -> &'static str {
    match err.raw_os_error() {
        Some(libc::EMFILE) => "retry itself is out of file descriptors (see ulimit -n)",
        Some(libc::ENFILE) => "the system is out of file descriptors",
        Some(libc::EAGAIN) => "retry itself is out of processes (see ulimit -u)",
        Some(libc::ENOMEM) => "retry itself is out of memory",
        _ => "the failure is retry's own, not the command's",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed(step: Step, errno: i32) -> StartError {
        StartError {
            step,
            error: io::Error::from_raw_os_error(errno),
        }
    }

    #[test]
    fn a_failed_start_is_blamed_on_whoever_failed() {
        let of = |errno| spawn_failure(&failed(Step::Execute, errno));
        assert_eq!(of(libc::ENOENT), SpawnFailure::NotFound);
        for errno in [
            libc::EACCES,
            libc::ENOEXEC,
            libc::EISDIR,
            libc::E2BIG,
            libc::EPERM,
        ] {
            assert_eq!(of(errno), SpawnFailure::CannotExecute, "{errno}");
        }
        for errno in [libc::EMFILE, libc::ENFILE, libc::EAGAIN, libc::ENOMEM] {
            assert_eq!(of(errno), SpawnFailure::ToolFailed, "{errno}");
        }
        for step in [Step::Prepare, Step::Split, Step::Setup] {
            for errno in [libc::ENOENT, libc::EACCES, libc::EPERM] {
                let failure = spawn_failure(&failed(step, errno));
                assert_eq!(failure, SpawnFailure::ToolFailed, "{step:?} {errno}");
            }
        }
        let command = CommandLine::direct(vec!["curl".into()]).unwrap();
        let error = spawn_error(&command, &failed(Step::Split, libc::EAGAIN));
        assert_eq!(
            error.message,
            "could not start an attempt of curl: cannot start a process: Resource temporarily \
             unavailable (os error 11); retry itself is out of processes (see ulimit -u)"
        );
        let error = spawn_error(&command, &failed(Step::Split, libc::EPERM));
        assert!(
            error
                .message
                .ends_with("the failure is retry's own, not the command's"),
            "{}",
            error.message
        );
    }
}
