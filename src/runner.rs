//! One attempt as a real process: spawn the command, wait for it, report how it ended.
//!
//! The child inherits stdin, stdout and stderr untouched and gets `RETRY_ATTEMPT` and
//! `RETRY_MAX_ATTEMPTS` in its environment. A command that cannot be started is reported with the
//! status coreutils `env` and `timeout` use: 127 when it is not found, 126 for any other failure.

use std::io;
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, ExitStatus};

use crate::attempts::AttemptLimit;
use crate::command_line::CommandLine;
use crate::exit;
use crate::termination::Termination;

/// The variables every attempt finds in its environment, with what they hold.
pub const ENVIRONMENT: [(&str, &str); 2] = [
    ("RETRY_ATTEMPT", "this attempt's number, counting from 1"),
    (
        "RETRY_MAX_ATTEMPTS",
        "the --max-attempts value: a number, or 'unlimited'",
    ),
];

/// Runs numbered attempts; the run loop's only way to start the command.
pub trait Attempts {
    /// Run attempt number `attempt` (from 1) to its end.
    fn run(&mut self, attempt: u64) -> Result<Termination, SpawnError>;
}

/// The command could not be started, or not waited for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpawnError {
    /// The status the tool exits with.
    pub status: u8,
    /// What went wrong, naming the command.
    pub message: String,
}

/// Runs the command as a child process of this one.
#[derive(Debug)]
pub struct ProcessRunner {
    command: CommandLine,
    limit: AttemptLimit,
}

impl ProcessRunner {
    /// A runner for `command` under the attempt limit `limit` (passed on in the environment).
    pub fn new(command: CommandLine, limit: AttemptLimit) -> Self {
        ProcessRunner { command, limit }
    }
}

impl Attempts for ProcessRunner {
    fn run(&mut self, attempt: u64) -> Result<Termination, SpawnError> {
        let mut child = Command::new(self.command.program())
            .args(self.command.args())
            .env(ENVIRONMENT[0].0, attempt.to_string())
            .env(ENVIRONMENT[1].0, self.limit.to_string())
            .spawn()
            .map_err(|err| spawn_error(&self.command, &err))?;
        let status = child.wait().map_err(|err| SpawnError {
            status: exit::USAGE,
            message: format!("lost track of {}: {err}", self.command),
        })?;
        Ok(termination(status))
    }
}

fn spawn_error(command: &CommandLine, err: &io::Error) -> SpawnError {
    match err.kind() {
        io::ErrorKind::NotFound => SpawnError {
            status: exit::NOT_FOUND,
            message: format!("command not found: {command}"),
        },
        _ => SpawnError {
            status: exit::CANNOT_EXECUTE,
            message: format!("cannot execute {command}: {err}"),
        },
    }
}

/// The [`Termination`] a finished child's status stands for.
fn termination(status: ExitStatus) -> Termination {
    match (status.code(), status.signal()) {
        (Some(code), _) => Termination::Exited(u8::try_from(code & 0xff).unwrap_or(u8::MAX)),
        (None, Some(signal)) => Termination::Signaled(signal),
        (None, None) => Termination::Exited(u8::MAX),
    }
}
