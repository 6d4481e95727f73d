//! The options as the report records them.

use std::collections::BTreeMap;

use crate::options::Cli;

use retry_budget::default_budget::DefaultBudget;
use retry_budget::model::DEFAULT_BUDGET_TERMS;
use retry_policy::attempts::AttemptLimit;
use retry_policy::nesting::Nested;
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};

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

/// The budget a run spends from, as the report records it. The default budget's name and terms
/// are put in words only as a report is written, so that a run without one formats neither.
#[derive(Clone, Debug)]
pub(crate) enum BudgetInForce {
    /// `--budget NAME` or `RETRY_BUDGET=NAME`.
    Named { name: String },
    /// This machine's default budget for the command's target.
    Default(DefaultBudget),
    /// None, as `by` turned it off.
    Off { by: &'static str },
}

impl Serialize for BudgetInForce {
    /// `{"kind": ...}` and the fields of its kind: the name; the target, the file's name and the
    /// terms; or what turned it off.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut record = serializer.serialize_map(None)?;
        match self {
            BudgetInForce::Named { name } => {
                record.serialize_entry("kind", "named")?;
                record.serialize_entry("name", name)?;
            }
            BudgetInForce::Default(budget) => {
                record.serialize_entry("kind", "default")?;
                record.serialize_entry("target", &budget.target.to_string())?;
                record.serialize_entry("name", budget.name().as_str())?;
                record.serialize_entry("terms", &DEFAULT_BUDGET_TERMS.describe())?;
            }
            BudgetInForce::Off { by } => {
                record.serialize_entry("kind", "off")?;
                record.serialize_entry("by", by)?;
            }
        }
        record.end()
    }
}
