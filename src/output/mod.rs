//! An attempt's output, when the tool must see it: the output conditions, the copies that pass
//! it on or hold it, and the release of held output.
//!
//! Only a stream an output condition reads (`--output-stream` says which), stdout with
//! `--hold-output`, and both with `--quiet-unless-failed`, is piped through the tool; the others
//! stay attached directly.

pub(crate) mod copy;
pub(crate) mod transcript;

use std::sync::Arc;

use retry_policy::matching::{OutputConditions, OutputStream, PatternError, PatternTexts, Stream};

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
