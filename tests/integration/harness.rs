//! A small harness around the real binary: run it with arguments, environment and stdin, and
//! on a failed expectation print the argv, the exit status, stdout and stderr.

use std::ffi::OsStr;
use std::fmt;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

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

    /// Every stderr line parsed as JSON.
    pub fn events(&self) -> Vec<serde_json::Value> {
        self.stderr()
            .lines()
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
    Invocation { command, argv }
}

impl Invocation {
    /// Set an environment variable for the tool and so for the command.
    pub fn env(mut self, name: &str, value: impl AsRef<OsStr>) -> Self {
        self.command.env(name, value);
        self
    }

    /// Run to the end and collect the output.
    pub fn run(mut self) -> Run {
        self.command.stdin(Stdio::null());
        let output = self.command.output().expect("run the retry binary");
        Run {
            argv: self.argv,
            output,
        }
    }
}
