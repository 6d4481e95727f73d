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

pub(crate) use conditions::OutputMatch;
use conditions::{OutputConditions, PatternError, PatternTexts};

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

/// What to do with an attempt's output: what each stream is matched against, and what is held.
#[derive(Clone, Debug, Default)]
pub(crate) struct OutputOptions {
    /// What the command's stdout is matched against.
    pub(crate) stdout: Arc<OutputConditions>,
    /// What the command's stderr is matched against.
    pub(crate) stderr: Arc<OutputConditions>,
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
    /// The options: the user's `patterns` matched on the streams `stream` names, the preset's on
    /// `preset_stream`, and `hold`.
    pub(crate) fn new(
        patterns: &PatternTexts,
        stream: OutputStream,
        preset_stream: OutputStream,
        hold: Hold,
    ) -> Result<Self, PatternError> {
        let on = |own: Stream| {
            let reads = |streams: OutputStream| streams.reads(own);
            let texts = PatternTexts {
                preset: match reads(preset_stream) {
                    true => patterns.preset.clone(),
                    false => Vec::new(),
                },
                ..match reads(stream) {
                    true => patterns.clone(),
                    false => PatternTexts::default(),
                }
            };
            OutputConditions::new(&texts).map(Arc::new)
        };
        Ok(OutputOptions {
            stdout: on(Stream::Stdout)?,
            stderr: on(Stream::Stderr)?,
            hold,
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
        self.matches_stdout() || self.hold != Hold::Nothing
    }

    /// Whether the command's stderr is piped through the tool.
    pub(crate) fn pipes_stderr(&self) -> bool {
        self.matches_stderr() || self.hold == Hold::Everything
    }
}

impl OutputStream {
    /// The streams in words: `stdout`, `stderr`, or `stdout and stderr`.
    pub(crate) fn described(self) -> &'static str {
        match self {
            OutputStream::Both => "stdout and stderr",
            OutputStream::Stdout => "stdout",
            OutputStream::Stderr => "stderr",
        }
    }

    /// Whether these streams take in `stream`.
    fn reads(self, stream: Stream) -> bool {
        matches!(
            (self, stream),
            (OutputStream::Both, _)
                | (OutputStream::Stdout, Stream::Stdout)
                | (OutputStream::Stderr, Stream::Stderr)
        )
    }
}
