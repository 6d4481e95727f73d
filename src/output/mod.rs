//! An attempt's output, when the tool must see it: the conditions each stream is matched
//! against, the copies that pass it on or hold it, and the release of held output.
//!
//! Only a stream a rule's pattern or `--retry-after-output` reads, stdout with `--hold stdout`,
//! both with `--hold all`, and both for a report that shows each attempt's output (`--report
//! junit:`), is piped through the tool; the others stay attached directly.

pub(crate) mod copy;
pub(crate) mod tail;
pub(crate) mod transcript;

use std::sync::Arc;

use retry_policy::Error;
use retry_policy::choice::Choice;
use retry_policy::matching::OutputPattern;
use retry_policy::matching::{OutputConditions, Stream};

/// What to do with an attempt's output: what each stream is matched against, and what is held.
#[derive(Clone, Debug, Default)]
pub(crate) struct OutputOptions {
    /// What the command's stdout is matched against.
    pub(crate) stdout: Arc<OutputConditions>,
    /// What the command's stderr is matched against.
    pub(crate) stderr: Arc<OutputConditions>,
    /// What is held until the attempt is judged.
    pub(crate) hold: Hold,
    /// Whether the end of both streams is kept, for a report that shows it.
    pub(crate) keep_tails: bool,
}

/// `--hold`: what of an attempt's output is held until the attempt is judged.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Hold {
    /// Nothing: the output goes on as it comes.
    #[default]
    Nothing,
    /// Stdout (`--hold stdout`).
    Stdout,
    /// Both streams and the tool's messages, for the run's transcript (`--hold all`).
    Everything,
}

impl Choice for Hold {
    const ALL: &'static [Hold] = &[Hold::Stdout, Hold::Everything];

    fn name(self) -> &'static str {
        match self {
            Hold::Nothing => "nothing",
            Hold::Stdout => "stdout",
            Hold::Everything => "all",
        }
    }

    fn about(self) -> &'static str {
        match self {
            Hold::Nothing => "Hold nothing",
            Hold::Stdout => "Write only the successful attempt's stdout to stdout",
            Hold::Everything => "Write nothing unless the run fails, then the whole story",
        }
    }
}

impl OutputOptions {
    /// The options: the rules' `patterns`, each on the streams it names, the `after` patterns
    /// (`--retry-after-output`) on both, and `hold`.
    pub(crate) fn new(
        patterns: &[OutputPattern],
        after: &[String],
        hold: Hold,
    ) -> Result<Self, Error> {
        let on = |stream| OutputConditions::for_stream(stream, patterns, after).map(Arc::new);
        Ok(OutputOptions {
            stdout: on(Stream::Stdout)?,
            stderr: on(Stream::Stderr)?,
            hold,
            keep_tails: false,
        })
    }

    /// Whether the conditions read the command's stdout.
    pub(crate) fn matches_stdout(&self) -> bool {
        self.stdout.any()
    }

    /// Whether the conditions read the command's stderr.
    pub(crate) fn matches_stderr(&self) -> bool {
        self.stderr.any()
    }

    /// Whether the command's stdout is piped through the tool.
    pub(crate) fn pipes_stdout(&self) -> bool {
        self.matches_stdout() || self.hold != Hold::Nothing || self.keep_tails
    }

    /// Whether the command's stderr is piped through the tool.
    pub(crate) fn pipes_stderr(&self) -> bool {
        self.matches_stderr() || self.hold == Hold::Everything || self.keep_tails
    }
}
