//! A small harness around the real binary: run it (or a shell pipeline around it) with
//! arguments, environment and stdin, under a time limit, and on a failed expectation print the
//! argv, the exit status, stdout and stderr.
//!
//! Every run starts with the signal dispositions a test needs, whatever the test process got from
//! its own parent: `cargo test &` in a script ignores SIGINT and SIGQUIT, and a tool that keeps
//! what its parent ignored would then ignore them too. Tests that are about an ignored signal say
//! so with [`Invocation::ignoring`].

use std::ffi::OsStr;
use std::fmt;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;

/// How long any run of the binary may take before the test fails.
pub(crate) const TIME_LIMIT: Duration = Duration::from_secs(30);

/// How long a test waits for something it expects to happen soon.
pub(crate) const PATIENCE: Duration = Duration::from_secs(10);

/// A shell loop that waits until the file `$GATE` exists: the gate a test opens to let a
/// command it holds go on. It also ends once `$GATE`'s directory (the test's scratch directory)
/// is gone, so that a test that fails before opening the gate leaves no command behind.
#[allow(unused_macros)] // Used by the integration suite, not the presets' one.
macro_rules! at_the_gate {
    () => {
        "while [ ! -e \"$GATE\" ] && [ -d \"${GATE%/*}\" ]; do sleep 0.01; done"
    };
}
#[allow(unused_imports)]
pub(crate) use at_the_gate;

/// The signals a run starts with at their default action.
const DEFAULTED: [Signal; 11] = [
    Signal::SIGINT,
    Signal::SIGQUIT,
    Signal::SIGTERM,
    Signal::SIGHUP,
    Signal::SIGUSR1,
    Signal::SIGUSR2,
    Signal::SIGALRM,
    Signal::SIGWINCH,
    Signal::SIGPIPE,
    Signal::SIGCHLD,
    Signal::SIGTSTP,
];

/// coreutils' `env`, by its path: a run may be given a `PATH` that does not lead to it.
const ENV: &str = "/usr/bin/env";

/// The arguments of coreutils' `env` that start the program after them with the [`DEFAULTED`]
/// signals at their default action but those in `ignored`, which it ignores: `env` sets them and
/// then executes the program in its own place (the same process), so the tests need no `unsafe`.
pub(crate) fn dispositions(ignored: &[i32]) -> Vec<String> {
    let names = |signals: &mut dyn Iterator<Item = Signal>| {
        signals.map(Signal::as_str).collect::<Vec<_>>().join(",")
    };
    let ignored: Vec<Signal> = ignored
        .iter()
        .map(|&n| Signal::try_from(n).unwrap())
        .collect();
    let defaulted = names(&mut DEFAULTED.into_iter().filter(|s| !ignored.contains(s)));
    let mut arguments = vec![format!("--default-signal={defaulted}")];
    if !ignored.is_empty() {
        arguments.push(format!(
            "--ignore-signal={}",
            names(&mut ignored.into_iter())
        ));
    }
    arguments.push("--".into());
    arguments
}

/// Fail the test at once, naming what to install, when `program` is nowhere on the PATH.
pub(crate) fn require_installed(program: &str) {
    let found = match program.contains('/') {
        true => Path::new(program).exists(),
        false => std::env::var_os("PATH").is_some_and(|path| {
            std::env::split_paths(&path).any(|dir| dir.join(program).is_file())
        }),
    };
    if !found {
        let missing = std::io::Error::from(std::io::ErrorKind::NotFound);
        panic!("{}", cannot_run(program, &missing));
    }
}

/// The binary under test: the one cargo built, or the one `RETRY_TEST_BINARY` names (a
/// packaged build, or an older one to see a new test fail against it).
pub(crate) fn binary() -> String {
    std::env::var("RETRY_TEST_BINARY").unwrap_or_else(|_| env!("CARGO_BIN_EXE_retry").into())
}

/// A scratch directory for one test, removed when dropped.
pub(crate) struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    /// A new empty directory.
    pub(crate) fn new() -> Self {
        Scratch {
            dir: tempfile::tempdir().expect("create a temporary directory"),
        }
    }

    /// A path inside the directory.
    pub(crate) fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// The file `name` as text; empty when it does not exist.
    pub(crate) fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.path(name)).unwrap_or_default()
    }

    /// How many lines the file `name` has; 0 when it does not exist.
    pub(crate) fn lines(&self, name: &str) -> usize {
        std::fs::read_to_string(self.path(name)).map_or(0, |text| text.lines().count())
    }

    /// The process id written to the file `name`.
    #[track_caller]
    pub(crate) fn pid(&self, name: &str) -> i32 {
        let text = self.read(name);
        text.trim()
            .parse()
            .unwrap_or_else(|_| panic!("no pid in {name}: {text:?}"))
    }
}

/// One finished run.
pub(crate) struct Run {
    argv: Vec<String>,
    output: Output,
}

impl Run {
    /// Standard output as text.
    pub(crate) fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.output.stdout).into_owned()
    }

    /// Standard error as text.
    pub(crate) fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.output.stderr).into_owned()
    }

    /// Assert the exit code.
    #[track_caller]
    /// The exit status, if the run exited (rather than died of a signal).
    pub(crate) fn code(&self) -> Option<i32> {
        self.output.status.code()
    }

    pub(crate) fn expect_code(&self, code: i32) -> &Self {
        assert_eq!(
            self.output.status.code(),
            Some(code),
            "unexpected exit status\n{self}"
        );
        self
    }

    /// Assert that the run died of `signal`.
    #[track_caller]
    pub(crate) fn expect_signal(&self, signal: i32) -> &Self {
        assert_eq!(
            self.output.status.signal(),
            Some(signal),
            "it should have died of signal {signal}\n{self}"
        );
        self
    }

    /// Assert that stderr contains `text`.
    #[track_caller]
    pub(crate) fn expect_stderr(&self, text: &str) -> &Self {
        assert!(
            self.stderr().contains(text),
            "stderr lacks {text:?}\n{self}"
        );
        self
    }

    /// Assert that stderr does not contain `text`.
    #[track_caller]
    pub(crate) fn expect_no_stderr(&self, text: &str) -> &Self {
        assert!(
            !self.stderr().contains(text),
            "stderr should not have {text:?}\n{self}"
        );
        self
    }

    /// Assert that stdout contains `text`.
    #[track_caller]
    pub(crate) fn expect_stdout_contains(&self, text: &str) -> &Self {
        assert!(
            self.stdout().contains(text),
            "stdout lacks {text:?}\n{self}"
        );
        self
    }

    /// Assert that stdout is exactly `text`.
    #[track_caller]
    pub(crate) fn expect_stdout(&self, text: &str) -> &Self {
        assert_eq!(self.stdout(), text, "unexpected stdout\n{self}");
        self
    }

    /// The signal the run died of, if it did.
    pub(crate) fn signal(&self) -> Option<i32> {
        self.output.status.signal()
    }

    /// The tool's JSON events: every stderr line that is one (the command's own stderr may be
    /// mixed in).
    #[track_caller]
    pub(crate) fn events(&self) -> Vec<serde_json::Value> {
        self.stderr()
            .lines()
            .filter(|line| line.starts_with("{\"event\""))
            .map(|line| {
                serde_json::from_str(line)
                    .unwrap_or_else(|err| panic!("stderr line {line:?} is not JSON: {err}\n{self}"))
            })
            .collect()
    }

    /// The events named `name`.
    #[track_caller]
    pub(crate) fn events_named(&self, name: &str) -> Vec<serde_json::Value> {
        self.events()
            .into_iter()
            .filter(|event| event["event"] == name)
            .collect()
    }

    /// The message of the one `warning` event.
    #[track_caller]
    pub(crate) fn warning(&self) -> String {
        let warning = self.event("warning");
        warning["message"].as_str().unwrap_or_default().to_string()
    }

    /// The one event named `name`.
    #[track_caller]
    pub(crate) fn event(&self, name: &str) -> serde_json::Value {
        let mut events = self.events_named(name);
        assert_eq!(events.len(), 1, "not one {name:?} event\n{self}");
        events.remove(0)
    }
}

impl fmt::Display for Run {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "argv: {:?}", self.argv)?;
        writeln!(f, "status: {}", self.output.status)?;
        writeln!(f, "--- stdout ---\n{}", self.stdout())?;
        write!(f, "--- stderr ---\n{}", self.stderr())
    }
}

/// A run being set up.
pub(crate) struct Invocation {
    command: Command,
    argv: Vec<String>,
    stdin: Input,
    ignored: Vec<i32>,
    stdout: Option<Stdio>,
    stderr: Option<Stdio>,
}

/// What a run reads on stdin.
enum Input {
    /// Nothing: /dev/null.
    Nothing,
    /// These bytes, through a pipe.
    Bytes(Vec<u8>),
    /// This file or pipe.
    // Only tests that watch the run through Linux's /proc give it one.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    From(Stdio),
}

/// A loopback port for a server a test starts, or one that nothing listens on: below the range
/// the kernel hands out for a bind to port 0 (32768 and up on Linux), so that no other test's
/// listener can take it between the pick and the server's own bind; unique within this run of
/// the tests, and free when picked.
pub(crate) fn server_port() -> u16 {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let base = std::process::id() % 1_000 * 12;
    loop {
        let next = NEXT.fetch_add(1, Ordering::SeqCst);
        let port = 20_000 + ((base + next) % 12_000) as u16;
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
}

/// Start setting up a run of the binary with `args`.
pub(crate) fn retry<I, S>(args: I) -> Invocation
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    Invocation::of(&binary(), "retry").args(args)
}

/// Start setting up a run of `program` (which runs the tool in its turn).
pub(crate) fn program(program: &str) -> Invocation {
    Invocation::of(program, program)
}

/// A shell line that exits with each status of `statuses` in turn, one per attempt, and with 0
/// once they run out, counting its attempts as the lines of `scratch`'s `count` file.
pub(crate) fn exiting_in_turn(scratch: &Scratch, statuses: &[i32]) -> String {
    let count = scratch.path("count");
    let cases: String = statuses
        .iter()
        .enumerate()
        .map(|(index, status)| format!("{}) exit {status};; ", index + 1))
        .collect();
    format!(
        "echo >> {count}; n=$(wc -l < {count}); case $n in {cases}*) exit 0;; esac",
        count = count.display()
    )
}

/// Start setting up `sh -c script`, where `$RETRY` names the binary under test: for pipelines
/// and redirections around the tool.
pub(crate) fn shell(script: &str) -> Invocation {
    Invocation::of("sh", "sh")
        .args(["-c", script])
        .env("RETRY", binary())
}

/// The variables by which CI systems make themselves known, GitHub's step files, and the time
/// limits of a CI job or an outer retry: no run inherits them from the machine the tests run on,
/// so that the tests hold inside a CI job (or a retry) too.
const CI_VARIABLES: [&str; 10] = [
    "GITHUB_ACTIONS",
    "GITLAB_CI",
    "BUILDKITE",
    "TF_BUILD",
    "GITHUB_OUTPUT",
    "GITHUB_STEP_SUMMARY",
    "CI_JOB_TIMEOUT",
    "CI_JOB_STARTED_AT",
    "BUILDKITE_TIMEOUT",
    "RETRY_DEADLINE",
];

impl Invocation {
    fn of(program: &str, name: &str) -> Invocation {
        let mut command = Command::new(program);
        for variable in CI_VARIABLES {
            command.env_remove(variable);
        }
        Invocation {
            command,
            argv: vec![name.to_string()],
            stdin: Input::Nothing,
            ignored: Vec::new(),
            stdout: None,
            stderr: None,
        }
    }

    /// Take an environment variable away from the run.
    pub(crate) fn env_remove(mut self, name: &str) -> Self {
        self.command.env_remove(name);
        self
    }

    /// Set an environment variable for the run and so for the command.
    pub(crate) fn env(mut self, name: &str, value: impl AsRef<OsStr>) -> Self {
        self.command.env(name, value);
        self
    }

    /// Add more arguments.
    pub(crate) fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        for arg in args {
            self.argv.push(arg.as_ref().to_string_lossy().into_owned());
            self.command.arg(arg);
        }
        self
    }

    /// Give the run these bytes on stdin (default: none, stdin is /dev/null).
    pub(crate) fn stdin(mut self, bytes: impl Into<Vec<u8>>) -> Self {
        self.stdin = Input::Bytes(bytes.into());
        self
    }

    /// Give the run this file or pipe as stdin.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    pub(crate) fn stdin_from(mut self, input: impl Into<Stdio>) -> Self {
        self.stdin = Input::From(input.into());
        self
    }

    /// Run in `dir` instead of the test's own directory.
    pub(crate) fn current_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.command.current_dir(dir);
        self
    }

    /// Send the run's stdout here instead of collecting it.
    pub(crate) fn stdout(mut self, stdout: impl Into<Stdio>) -> Self {
        self.stdout = Some(stdout.into());
        self
    }

    /// Send the run's stderr here instead of collecting it (the run's [`Run::stderr`] is then
    /// empty).
    pub(crate) fn stderr(mut self, stderr: impl Into<Stdio>) -> Self {
        self.stderr = Some(stderr.into());
        self
    }

    /// Start the run with `signal` ignored, as a parent that ignores it would leave it.
    pub(crate) fn ignoring(mut self, signal: i32) -> Self {
        self.ignored.push(signal);
        self
    }

    /// Run to the end and collect the output.
    #[track_caller]
    pub(crate) fn run(self) -> Run {
        self.spawn().finish()
    }

    /// The command as set up, started through `env` with the [`dispositions`] it needs.
    fn with_dispositions(&self) -> Command {
        let program = self.command.get_program();
        require_installed(&program.to_string_lossy());
        let mut command = Command::new(ENV);
        command.args(dispositions(&self.ignored)).arg(program);
        command.args(self.command.get_args());
        for (name, value) in self.command.get_envs() {
            match value {
                Some(value) => command.env(name, value),
                None => command.env_remove(name),
            };
        }
        if let Some(dir) = self.command.get_current_dir() {
            command.current_dir(dir);
        }
        command
    }

    /// A state directory of the run's own (`XDG_STATE_HOME`), unless the test gives it one or a
    /// home: every run keeps its default retry budgets apart from every other test's, and from
    /// the home of whoever runs the tests.
    fn own_state(&self, command: &mut Command) -> Option<tempfile::TempDir> {
        let given = self
            .command
            .get_envs()
            .any(|(name, _)| name == "XDG_STATE_HOME" || name == "HOME");
        if given {
            return None;
        }
        let state = tempfile::tempdir().expect("a state directory for the run");
        command.env("XDG_STATE_HOME", state.path());
        Some(state)
    }

    /// Start the run and return at once.
    pub(crate) fn spawn(mut self) -> Running {
        let (stdin, bytes) = match std::mem::replace(&mut self.stdin, Input::Nothing) {
            Input::Nothing => (Stdio::null(), None),
            Input::Bytes(bytes) => (Stdio::piped(), Some(bytes)),
            Input::From(input) => (input, None),
        };
        let stdout = self.stdout.take().unwrap_or_else(Stdio::piped);
        let stderr = self.stderr.take().unwrap_or_else(Stdio::piped);
        let mut command = self.with_dispositions();
        let state = self.own_state(&mut command);
        command.stdin(stdin).stdout(stdout).stderr(stderr);
        let mut child = command
            .spawn()
            .unwrap_or_else(|err| panic!("{}", cannot_run(ENV, &err)));
        if let Some(bytes) = bytes {
            let mut pipe = child.stdin.take().expect("piped stdin");
            // A writer thread, so that input larger than a pipe cannot block the test.
            std::thread::spawn(move || {
                let _ = pipe.write_all(&bytes);
            });
        }
        let stdout = drain(child.stdout.take());
        let stderr = StderrLines::follow(child.stderr.take());
        Running {
            child,
            argv: self.argv,
            stdout,
            stderr,
            started: Instant::now(),
            _state: state,
        }
    }
}

/// A run still going.
pub(crate) struct Running {
    child: Child,
    argv: Vec<String>,
    stdout: std::sync::mpsc::Receiver<Vec<u8>>,
    stderr: StderrLines,
    started: Instant,
    /// The run's own state directory, if the harness gave it one; gone with the run.
    _state: Option<tempfile::TempDir>,
}

impl Running {
    /// The process id of the run.
    pub(crate) fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// Send `signal` to the run.
    pub(crate) fn signal(&self, signal: i32) {
        // The child is not reaped yet, so its pid still names it.
        let pid = nix::unistd::Pid::from_raw(self.pid());
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::try_from(signal).ok());
    }

    /// Wait until the run has written a JSON event named `name` on stderr; returns it.
    #[track_caller]
    pub(crate) fn await_event(&self, name: &str) -> serde_json::Value {
        self.await_any_event(&[name])
    }

    /// Wait until the run has written a JSON event named one of `names` on stderr; returns the
    /// first.
    #[track_caller]
    pub(crate) fn await_any_event(&self, names: &[&str]) -> serde_json::Value {
        let markers: Vec<String> = names
            .iter()
            .map(|name| format!("{{\"event\":\"{name}\""))
            .collect();
        let line = self
            .stderr
            .await_line(|line| markers.iter().any(|marker| line.starts_with(marker)))
            .unwrap_or_else(|| panic!("no {names:?} event within {PATIENCE:?}: {:?}", self.argv));
        serde_json::from_str(&line).expect("an event is JSON")
    }

    /// Wait until the run has written a stderr line containing `text`.
    #[track_caller]
    pub(crate) fn await_stderr(&self, text: &str) {
        if self.stderr.await_line(|line| line.contains(text)).is_none() {
            panic!("stderr never showed {text:?}: {:?}", self.argv);
        }
    }

    /// Wait for the run to end and collect its output; kills it and fails after [`TIME_LIMIT`].
    #[track_caller]
    pub(crate) fn finish(mut self) -> Run {
        let left = TIME_LIMIT.saturating_sub(self.started.elapsed());
        let Some(status) = wait_at_most(&mut self.child, left) else {
            let _ = self.child.kill();
            let _ = self.child.wait();
            panic!(
                "the run did not end within {TIME_LIMIT:?}: {:?}\n--- stderr so far ---\n{}",
                self.argv,
                self.stderr.text()
            );
        };
        let left = TIME_LIMIT.saturating_sub(self.started.elapsed());
        let (Ok(stdout), Some(stderr)) = (self.stdout.recv_timeout(left), self.stderr.finish(left))
        else {
            panic!(
                "the run ended ({status}), but a process it left behind still holds its stdout \
                 or stderr after {TIME_LIMIT:?}: {:?}",
                self.argv
            );
        };
        Run {
            argv: self.argv,
            output: Output {
                status,
                stdout,
                stderr: stderr.into_bytes(),
            },
        }
    }
}

/// A run's stderr, read line by line as it comes, so that a test can wait for a line.
struct StderrLines {
    seen: Arc<(Mutex<(String, bool)>, Condvar)>,
}

impl StderrLines {
    /// Follow `pipe`; none (stderr not collected) reads as nothing.
    fn follow(pipe: Option<impl Read + Send + 'static>) -> StderrLines {
        let seen = Arc::new((Mutex::new((String::new(), pipe.is_none())), Condvar::new()));
        let theirs = Arc::clone(&seen);
        let Some(pipe) = pipe else {
            return StderrLines { seen };
        };
        std::thread::spawn(move || {
            let mut lines = BufReader::new(pipe);
            let mut line = Vec::new();
            loop {
                line.clear();
                let ended = !matches!(lines.read_until(b'\n', &mut line), Ok(1..));
                let (text, done) = &mut *theirs.0.lock().unwrap();
                text.push_str(&String::from_utf8_lossy(&line));
                *done = ended;
                theirs.1.notify_all();
                if ended {
                    return;
                }
            }
        });
        StderrLines { seen }
    }

    /// The first complete line that satisfies `wanted`, waiting for it up to [`PATIENCE`].
    fn await_line(&self, wanted: impl Fn(&str) -> bool) -> Option<String> {
        let (lock, changed) = &*self.seen;
        let deadline = Instant::now() + PATIENCE;
        let mut seen = lock.lock().unwrap();
        loop {
            let (text, done) = &*seen;
            if let Some(line) = text.lines().find(|line| wanted(line)) {
                return Some(line.to_string());
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if *done || left.is_zero() {
                return None;
            }
            seen = changed.wait_timeout(seen, left).unwrap().0;
        }
    }

    fn text(&self) -> String {
        self.seen.0.lock().unwrap().0.clone()
    }

    /// Everything, once the stream has ended; `None` if it is still open after `limit`.
    fn finish(self, limit: Duration) -> Option<String> {
        let (lock, changed) = &*self.seen;
        let seen = lock.lock().unwrap();
        let (seen, _) = changed
            .wait_timeout_while(seen, limit, |(_, done)| !*done)
            .unwrap();
        let (text, done) = &*seen;
        done.then(|| text.clone())
    }
}

/// Read a pipe to its end on a thread of its own; the bytes come on the channel.
fn drain(pipe: Option<impl Read + Send + 'static>) -> std::sync::mpsc::Receiver<Vec<u8>> {
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_end(&mut bytes);
        }
        let _ = sender.send(bytes);
    });
    receiver
}

/// Wait for `child` to end, for at most `limit`; `None` if it is still running then.
pub(crate) fn wait_at_most(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait for a child process") {
            return Some(status);
        }
        if start.elapsed() > limit {
            return None;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Wait until `condition` holds, looking every few milliseconds; fails the test after
/// [`PATIENCE`]. For states that announce themselves no other way (a process stopped, gone).
#[track_caller]
pub(crate) fn wait_for(what: &str, condition: impl Fn() -> bool) {
    let start = Instant::now();
    while !condition() {
        assert!(start.elapsed() < PATIENCE, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Whether process `pid` exists and is not a zombie.
pub(crate) fn process_exists(pid: i32) -> bool {
    matches!(process_state(pid), Some(state) if state != 'Z' && state != 'X')
}

/// The state letter of process `pid` (`S`, `R`, `T` for stopped, `Z`...), if it exists.
pub(crate) fn process_state(pid: i32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The state follows the command name, which is in parentheses.
    stat.rsplit(')')
        .next()?
        .split_whitespace()
        .next()?
        .chars()
        .next()
}

/// Wait until process `pid` is blocked reading its stdin, as Linux's `/proc/PID/syscall` shows it.
#[cfg(target_os = "linux")]
#[track_caller]
pub(crate) fn wait_until_reading_stdin(pid: i32) {
    let reading = format!("{} 0x0 ", libc::SYS_read);
    wait_for("the process to read its stdin", || {
        std::fs::read_to_string(format!("/proc/{pid}/syscall"))
            .is_ok_and(|call| call.starts_with(&reading))
    });
}

/// Whether the tests run as root (as CI does), which some need.
pub(crate) fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

/// Why a test could not run `program`: for one that is not installed, which `scripts/test`
/// installs (or names), rather than a bare "not found".
pub(crate) fn cannot_run(program: &str, err: &std::io::Error) -> String {
    match err.kind() {
        std::io::ErrorKind::NotFound => format!(
            "cannot run {program}: it is not installed; this test runs it for real \
             (scripts/test installs what the tests run, or names it)"
        ),
        _ => format!("cannot run {program}: {err}"),
    }
}

/// Kill process `pid` if it is still there (a test's own leftover).
pub(crate) fn kill_leftover(pid: i32) {
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGKILL,
    );
}

impl Invocation {
    /// Run to the end, and also return the peak resident set of the run's own process, in KiB:
    /// its `VmHWM`, sampled until it exits. (The `ru_maxrss` of a child also counts the parent's
    /// memory at the moment of the spawn, so it cannot tell the tool's own peak.) Only samples
    /// taken once the process is the program count: before it executes `env`, a child that
    /// shares the test binary's memory (as `vfork` does) shows the test's, which on busy cores
    /// lasts long enough to be sampled. 0 when the program ended before a sample: a test that
    /// bounds the peak checks that it was measured.
    #[track_caller]
    pub(crate) fn run_measuring_peak_rss(self) -> (Run, u64) {
        // The kernel keeps the first 15 bytes of a program's name (TASK_COMM_LEN).
        let program = Path::new(self.command.get_program());
        let name: String = program.file_name().map_or(String::new(), |name| {
            name.to_string_lossy().chars().take(15).collect()
        });
        let running = self.spawn();
        let status_file = format!("/proc/{}/status", running.pid());
        let mut peak = 0;
        while let Ok(status) = std::fs::read_to_string(&status_file) {
            let field = |field: &str| status.lines().find_map(|line| line.strip_prefix(field));
            let hwm = field("VmHWM:");
            match hwm.and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok()) {
                Some(kib) if field("Name:").map(str::trim) == Some(name.as_str()) => {
                    peak = peak.max(kib);
                }
                Some(_) => {}
                // A zombie has no memory left to measure.
                None => break,
            }
            if running.started.elapsed() > TIME_LIMIT {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        (running.finish(), peak)
    }
}

/// The file store in `dir`, as `--budget-store` names it.
pub(crate) fn file_store(dir: &std::path::Path) -> String {
    format!("file:{}", dir.display())
}

/// Give the budget `name` in `store` the terms `terms` (`--rate 5/1h`, and more), as a person
/// would with `retry budget set`, before the test's runs share it.
pub(crate) fn set_budget(name: &str, store: &str, terms: &[&str]) {
    retry(["budget", "set", name, "--budget-store", store])
        .args(terms)
        .run()
        .expect_code(0);
}

/// The budget `name` in `store`, as `retry budget show --log-format json` gives it.
pub(crate) fn shown_budget(name: &str, store: &str) -> serde_json::Value {
    let shown = retry([
        "budget",
        "show",
        name,
        "--log-format",
        "json",
        "--budget-store",
    ])
    .args([store])
    .run();
    shown.expect_code(0);
    serde_json::from_str(shown.stdout().trim())
        .unwrap_or_else(|err| panic!("{err}: not the budget's JSON\n{shown}"))
}

/// The tool sharing the budget `name` in the file store in `dir`, its terms `rate` set first
/// when `rate` is given, with JSON events; the test adds its flags and command.
pub(crate) fn sharing_budget(name: &str, rate: Option<&str>, dir: &std::path::Path) -> Invocation {
    let store = file_store(dir);
    if let Some(rate) = rate {
        set_budget(name, &store, &["--rate", rate]);
    }
    retry(["--log-format", "json", "--budget", name, "--budget-store"]).args([store])
}

/// The fault injector (`fault/inject.c`), built once per test run with the system's C compiler;
/// load it into a run with `LD_PRELOAD` and steer it with `FAULT_PATH` and `FAULT`. A statically
/// linked binary under test (`RETRY_TEST_BINARY`) would not load it, so the test fails saying so.
pub(crate) fn fault_injector() -> PathBuf {
    assert!(
        is_dynamic(Path::new(&binary())),
        "fault injection loads through LD_PRELOAD, which {} (statically linked) ignores; run \
         these tests on the debug build",
        binary()
    );
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
            let source = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/support/fault/inject.c");
            let library = Path::new(env!("CARGO_TARGET_TMPDIR")).join("retry-inject.so");
            let built = Command::new("cc")
                .args(["-shared", "-fPIC", "-o"])
                .arg(&library)
                .arg(source)
                .arg("-ldl")
                .status()
                .expect("a C compiler (cc) to build the fault injector: apt-get install gcc");
            assert!(built.success(), "building the fault injector failed");
            library
        })
        .clone()
}

/// Whether the ELF executable at `path` asks for a dynamic loader (has a PT_INTERP header).
pub(crate) fn is_dynamic(path: &Path) -> bool {
    const PT_INTERP: u32 = 3;
    let elf = std::fs::read(path).expect("read the binary");
    let number = |at: usize, width: usize| {
        elf[at..at + width]
            .iter()
            .rev()
            .fold(0usize, |value, &byte| value << 8 | usize::from(byte))
    };
    assert_eq!(
        &elf[..5],
        b"\x7fELF\x02",
        "{} is not a 64-bit ELF file",
        path.display()
    );
    let (table, entry_size, entries) = (number(0x20, 8), number(0x36, 2), number(0x38, 2));
    (0..entries).any(|index| number(table + index * entry_size, 4) == PT_INTERP as usize)
}
