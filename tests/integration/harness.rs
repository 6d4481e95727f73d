//! A small harness around the real binary: run it with arguments, environment and stdin, and
//! on a failed expectation print the argv, the exit status, stdout and stderr.

use std::ffi::OsStr;
use std::fmt;
use std::io::{Read, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The binary under test.
pub fn binary() -> &'static str {
    env!("CARGO_BIN_EXE_retry")
}

/// A scratch directory for one test, removed when dropped.
pub struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    /// A new empty directory.
    pub fn new() -> Self {
        Scratch {
            dir: tempfile::tempdir().expect("create a temporary directory"),
        }
    }

    /// A path inside the directory.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// The file `name` as text; empty when it does not exist.
    pub fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.path(name)).unwrap_or_default()
    }

    /// How many lines the file `name` has; 0 when it does not exist.
    pub fn lines(&self, name: &str) -> usize {
        std::fs::read_to_string(self.path(name)).map_or(0, |text| text.lines().count())
    }
}

/// One finished run of the binary.
pub struct Run {
    argv: Vec<String>,
    output: Output,
}

impl Run {
    /// Standard output as text.
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.output.stdout).into_owned()
    }

    /// Standard error as text.
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.output.stderr).into_owned()
    }

    /// Assert the exit code.
    pub fn expect_code(&self, code: i32) -> &Self {
        assert_eq!(
            self.output.status.code(),
            Some(code),
            "unexpected exit status\n{self}"
        );
        self
    }

    /// Assert that stderr contains `text`.
    pub fn expect_stderr(&self, text: &str) -> &Self {
        assert!(
            self.stderr().contains(text),
            "stderr lacks {text:?}\n{self}"
        );
        self
    }

    /// Assert that stdout contains `text`.
    pub fn expect_stdout_contains(&self, text: &str) -> &Self {
        assert!(
            self.stdout().contains(text),
            "stdout lacks {text:?}\n{self}"
        );
        self
    }

    /// Assert that stdout is exactly `text`.
    pub fn expect_stdout(&self, text: &str) -> &Self {
        assert_eq!(self.stdout(), text, "unexpected stdout\n{self}");
        self
    }

    /// The signal the tool died of, if it did.
    pub fn signal(&self) -> Option<i32> {
        self.output.status.signal()
    }

    /// The tool's JSON events: every stderr line that is one (the command's own stderr may be
    /// mixed in).
    pub fn events(&self) -> Vec<serde_json::Value> {
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
    pub fn events_named(&self, name: &str) -> Vec<serde_json::Value> {
        self.events()
            .into_iter()
            .filter(|event| event["event"] == name)
            .collect()
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
pub struct Invocation {
    command: Command,
    argv: Vec<String>,
    stdin: Option<Vec<u8>>,
}

/// Start setting up a run of the binary with `args`.
pub fn retry<I, S>(args: I) -> Invocation
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let mut command = Command::new(binary());
    let mut argv = vec!["retry".to_string()];
    for arg in args {
        argv.push(arg.as_ref().to_string_lossy().into_owned());
        command.arg(arg);
    }
    Invocation {
        command,
        argv,
        stdin: None,
    }
}

impl Invocation {
    /// Set an environment variable for the tool and so for the command.
    pub fn env(mut self, name: &str, value: impl AsRef<OsStr>) -> Self {
        self.command.env(name, value);
        self
    }

    /// Add more arguments.
    pub fn args<I, S>(mut self, args: I) -> Self
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

    /// Give the tool these bytes on stdin (default: none, stdin is /dev/null).
    pub fn stdin(mut self, bytes: impl Into<Vec<u8>>) -> Self {
        self.stdin = Some(bytes.into());
        self
    }

    /// Run to the end and collect the output.
    pub fn run(self) -> Run {
        self.spawn().finish()
    }

    /// Start the tool and return at once.
    pub fn spawn(mut self) -> Running {
        let stdin = match self.stdin {
            Some(_) => Stdio::piped(),
            None => Stdio::null(),
        };
        self.command
            .stdin(stdin)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = self.command.spawn().expect("spawn the retry binary");
        if let Some(bytes) = self.stdin {
            let mut pipe = child.stdin.take().expect("piped stdin");
            // A writer thread, so that input larger than a pipe cannot block the test.
            std::thread::spawn(move || {
                let _ = pipe.write_all(&bytes);
            });
        }
        Running {
            child,
            argv: self.argv,
        }
    }
}

/// A tool process still running.
pub struct Running {
    child: Child,
    argv: Vec<String>,
}

impl Running {
    /// Send `signal` to the tool.
    pub fn signal(&self, signal: i32) {
        // SAFETY: kill has no memory-safety preconditions; the child is not reaped yet, so its
        // pid still names it.
        unsafe { libc::kill(self.child.id() as i32, signal) };
    }

    /// Wait for the tool to end and collect its output; kills it and fails after 20 seconds.
    pub fn finish(mut self) -> Run {
        let stdout = drain(self.child.stdout.take());
        let stderr = drain(self.child.stderr.take());
        let Some(status) = wait_at_most(&mut self.child, Duration::from_secs(20)) else {
            let _ = self.child.kill();
            panic!("retry did not end within 20s: {:?}", self.argv);
        };
        let (stdout, stderr) = (stdout.join().unwrap(), stderr.join().unwrap());
        Run {
            argv: self.argv,
            output: Output {
                status,
                stdout,
                stderr,
            },
        }
    }
}

/// Read a pipe to its end on a thread of its own.
fn drain(pipe: Option<impl Read + Send + 'static>) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_end(&mut bytes);
        }
        bytes
    })
}

/// Wait for `child` to end, for at most `limit`; `None` if it is still running then.
pub fn wait_at_most(child: &mut Child, limit: Duration) -> Option<std::process::ExitStatus> {
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

/// Wait until `condition` holds, checking every few milliseconds; fails the test after 10 s.
pub fn wait_for(what: &str, condition: impl Fn() -> bool) {
    let start = Instant::now();
    while !condition() {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Whether process `pid` exists and is not a zombie.
pub fn process_exists(pid: i32) -> bool {
    matches!(process_state(pid), Some(state) if state != 'Z' && state != 'X')
}

/// The state letter of process `pid` (`S`, `R`, `T` for stopped, `Z`...), if it exists.
pub fn process_state(pid: i32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The state follows the command name, which is in parentheses.
    stat.rsplit(')')
        .next()?
        .split_whitespace()
        .next()?
        .chars()
        .next()
}

/// Run `command` to its end and return the peak resident set of that process alone, in KiB: its
/// `VmHWM`, sampled until it exits. (The `ru_maxrss` of a child also counts the parent's memory
/// at the moment of the spawn, so it cannot tell the tool's own peak.)
pub fn peak_rss_kib(mut command: Command) -> (std::process::ExitStatus, u64) {
    let mut child = command.spawn().expect("spawn the command to measure");
    let status_file = format!("/proc/{}/status", child.id());
    let mut peak = 0;
    loop {
        let status = std::fs::read_to_string(&status_file).unwrap_or_default();
        let hwm = status.lines().find_map(|line| line.strip_prefix("VmHWM:"));
        if let Some(kib) =
            hwm.and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
        {
            peak = peak.max(kib);
        }
        if let Some(status) = child.try_wait().expect("wait for the measured command") {
            return (status, peak);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The tool as a plain `Command` (stdin closed, stderr piped for its events) sharing the budget
/// `name` at `rate` in `dir`; the test adds its flags and command.
pub fn sharing_budget(name: &str, rate: &str, dir: &std::path::Path) -> Command {
    let mut tool = Command::new(binary());
    tool.args([
        "--log-format",
        "json",
        "--budget",
        name,
        "--budget-rate",
        rate,
        "--budget-dir",
    ])
    .arg(dir)
    .stdin(Stdio::null())
    .stderr(Stdio::piped());
    tool
}
