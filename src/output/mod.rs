//! An attempt's output, when the tool must see it: the output conditions, the copies that pass
//! it on or hold it, and the release of held output.
//!
//! Only with `--retry-on-output`, `--stop-on-output` or `--hold-output` are the command's stdout
//! and stderr piped through the tool; otherwise they stay attached directly.

pub(crate) mod conditions;
pub(crate) mod copy;
pub(crate) mod held;

use std::sync::Arc;

use conditions::OutputConditions;
pub(crate) use conditions::OutputMatch;

/// What to do with an attempt's output.
#[derive(Clone, Debug, Default)]
pub(crate) struct OutputOptions {
    /// `--retry-on-output` and `--stop-on-output`.
    pub(crate) conditions: Arc<OutputConditions>,
    /// `--hold-output`.
    pub(crate) hold: bool,
}

impl OutputOptions {
    /// Whether the command's stdout is piped through the tool.
    pub(crate) fn pipes_stdout(&self) -> bool {
        self.conditions.any() || self.hold
    }

    /// Whether the command's stderr is piped through the tool.
    pub(crate) fn pipes_stderr(&self) -> bool {
        self.conditions.any()
    }
}
