//! The options as the report records them.

use std::collections::BTreeMap;

use crate::cli::Cli;

use retry_policy::attempts::AttemptLimit;
use retry_policy::nesting::Nested;
use serde::Serialize;

/// The options as the report records them, its `options` object: every option of the command
/// line's definition, as given or by its default (derived from the parse, so that a new option
/// is recorded with nothing more to write), the command's words, and what is in force where the
/// options and the environment leave it to the run (the attempts of a nested run, the seed
/// drawn, the preset `auto` picked, the store with its password hidden).
#[derive(Clone, Debug, Serialize)]
pub(crate) struct OptionsRecord {
    #[serde(flatten)]
    pub(crate) given: BTreeMap<String, serde_json::Value>,
    pub(crate) command: Vec<String>,
    pub(crate) in_force: InForce,
}

impl OptionsRecord {
    /// The record of `cli`'s options (taken from it), and what is `in_force`.
    pub(super) fn of(cli: &mut Cli, in_force: InForce) -> OptionsRecord {
        OptionsRecord {
            given: std::mem::take(&mut cli.given),
            command: cli
                .command
                .iter()
                .map(|word| word.to_string_lossy().into_owned())
                .collect(),
            in_force,
        }
    }
}

/// What a run does where its options leave it to the run.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct InForce {
    pub(crate) max_attempts: AttemptLimit,
    pub(crate) seed: u64,
    pub(crate) preset: Option<&'static str>,
    pub(crate) budget: BudgetInForce,
    pub(crate) budget_store: Option<String>,
    pub(crate) nested: Nested,
    pub(crate) max_requested_wait_ms: f64,
}

/// The budget a run spends from, as the report records it.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum BudgetInForce {
    /// `--budget NAME` or `RETRY_BUDGET=NAME`.
    Named { name: String },
    /// This machine's default budget for the command's target, in the file `name`.
    Default {
        target: String,
        name: String,
        terms: String,
    },
    /// None, as `by` turned it off.
    Off { by: &'static str },
}
