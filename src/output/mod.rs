//! An attempt's output, when the tool must see it: the output conditions, the copies that pass
//! it on or hold it, and the release of held output.
//!
//! Only a stream an output condition reads (`--output-stream` says which), stdout with
//! `--hold-output`, and both with `--quiet-unless-failed`, is piped through the tool; the others
//! stay attached directly.

pub(crate) mod conditions;
pub(crate) mod copy;
pub(crate) mod transcript;

use std::sync::Arc;

use conditions::OutputConditions;
pub(crate) use conditions::OutputMatch;

/// One of the command's (and the tool's) two output streams.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Stream {
    #[default]
    Stdout,
    Stderr,
}

impl Stream {
    /// Its name, for messages.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Stream::Stdout => "stdout",
            Stream::Stderr => "stderr",
        }
    }
}

/// What to do with an attempt's output.
#[derive(Clone, Debug, Default)]
pub(crate) struct OutputOptions {
    /// The output conditions.
    pub(crate) conditions: Arc<OutputConditions>,
    /// `--output-stream`: which streams the conditions read.
    pub(crate) stream: OutputStream,
    /// What is held until the attempt is judged.
    pub(crate) hold: Hold,
}

/// What of an attempt's output is held until the attempt is judged.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Hold {
    /// Nothing: the output goes on as it comes.
    #[default]
    Nothing,
    /// Stdout (`--hold-output`).
    Stdout,
    /// Both streams, for the run's transcript (`--quiet-unless-failed`).
    Everything,
}

/// `--output-stream`: which of the command's streams the output conditions read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum OutputStream {
    /// Stdout and stderr.
    #[default]
    Both,
    /// Stdout only.
    Stdout,
    /// Stderr only.
    Stderr,
}

impl OutputOptions {
    /// Whether the conditions read the command's stdout.
    pub(crate) fn matches_stdout(&self) -> bool {
        self.conditions.any() && self.stream != OutputStream::Stderr
    }

    /// Whether the conditions read the command's stderr.
    pub(crate) fn matches_stderr(&self) -> bool {
        self.conditions.any() && self.stream != OutputStream::Stdout
    }

    /// Whether the command's stdout is piped through the tool.
    pub(crate) fn pipes_stdout(&self) -> bool {
        self.matches_stdout() || self.hold != Hold::Nothing
    }

    /// Whether the command's stderr is piped through the tool.
    pub(crate) fn pipes_stderr(&self) -> bool {
        self.matches_stderr() || self.hold == Hold::Everything
    }
}
