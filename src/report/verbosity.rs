//! How much the tool says, and in which form: the settings of the reporter.

use clap::ValueEnum;
use retry_policy::run_id::RunId;

/// The form of the tool's own messages on stderr.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum LogFormat {
    /// One line of prose per event, prefixed `retry:`.
    Text,
    /// One JSON object per line, with an `event` key.
    Json,
}

/// How much the tool says about a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verbosity {
    /// Nothing but failures to fix (a command that cannot start, lost output).
    Quiet,
    /// Retries, warnings and giving up.
    Normal,
    /// Also each attempt's start and a success.
    Verbose,
}

/// The form and amount of the tool's own messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LogSettings {
    pub(crate) format: LogFormat,
    pub(crate) verbosity: Verbosity,
    /// The run's identity, which the JSON events carry; none for what is said before a run
    /// has one (its usage refused).
    pub(crate) run_id: Option<RunId>,
}
