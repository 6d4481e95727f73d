//! Which budget a run spends from, the job it counts as, and where that job's history lives:
//! from `--budget`, `--budget-store`, `--job` and the environment's `RETRY_BUDGET` and
//! `RETRY_BUDGET_STORE`.

use std::ffi::OsString;
use std::path::Path;
use std::time::SystemTime;

use retry_budget::default_budget::DefaultBudget;
use retry_budget::history;
use retry_budget::job::{self, NotASchedule, Schedule, Slot};
use retry_budget::state_dir::StateHome;
use retry_budget::store::Location;
use retry_budget::unread::Unread;
use retry_budget::waiter::Threads;
use retry_budget::{BudgetChoice, BudgetName, BudgetSettings, RunBudget};
use retry_policy::presets::Preset;
use retry_policy::seed::words_hash;
use retry_policy::target::Target;

use super::from_environment::host_name;
use super::record::BudgetInForce;
use super::{ConfigError, refuse};
use crate::cli::Cli;
use crate::environment;
use crate::git_remote;

/// The budget a run spends from: the one `--budget` names, else the one `RETRY_BUDGET` names
/// (either may say `off`), else this machine's default one for the command's target.
pub(super) fn run_budget(
    cli: &Cli,
    env: &impl Fn(&str) -> Option<OsString>,
    preset: Option<&'static Preset>,
) -> Result<RunBudget, ConfigError> {
    let variable = environment::BUDGET.name;
    let from_environment = match env(variable).filter(|value| !value.is_empty()) {
        None => None,
        Some(value) => Some(
            value
                .to_str()
                .unwrap_or("\u{fffd}")
                .parse::<BudgetChoice>()
                .map_err(|why| {
                    ConfigError(format!("{variable} '{}': {why}", value.to_string_lossy()))
                })?,
        ),
    };
    let (choice, by) = match (&cli.budget, from_environment) {
        (Some(choice), _) => (Some(choice.clone()), "--budget off"),
        (None, choice) => (choice, "RETRY_BUDGET=off"),
    };
    let budget = match choice {
        Some(BudgetChoice::Off) => RunBudget::Off(by),
        Some(BudgetChoice::Named(name)) => RunBudget::Named(Box::new(BudgetSettings {
            name,
            store: cli
                .store
                .settings(env, "--budget")
                .map_err(|why| ConfigError(why.to_string()))?,
            host: words_hash(std::iter::once(host_name(env).as_slice())),
        })),
        None => {
            let program = cli.command.first().and_then(|program| program.to_str());
            let finder = preset.or_else(|| program.and_then(Preset::for_program));
            RunBudget::Default(DefaultBudget {
                target: Target::of(finder, &cli.command, &|dir, remote| {
                    git_remote::url(dir, remote, env("GIT_DIR"))
                }),
                home: StateHome::of(env),
            })
        }
    };
    refuse(
        cli.store.budget_store.is_some() && !matches!(budget, RunBudget::Named(_)),
        "--budget-store says where a named budget lives: give --budget NAME (or RETRY_BUDGET=NAME) \
         too, or leave --budget-store out",
    )?;
    Ok(budget)
}

/// The budget in force, as the report records it.
pub(super) fn budget_in_force(budget: &RunBudget) -> BudgetInForce {
    match budget {
        RunBudget::Named(settings) => BudgetInForce::Named {
            name: settings.name.as_str().to_string(),
        },
        RunBudget::Default(budget) => BudgetInForce::Default(budget.clone()),
        RunBudget::Off(by) => BudgetInForce::Off { by },
    }
}

/// The job's name (`--job`): given, else the budget's name, else the command's program name.
pub(super) fn job_name(cli: &Cli, budget: &RunBudget) -> Result<String, ConfigError> {
    let program = || {
        cli.command.first().map(|program| {
            Path::new(program)
                .file_name()
                .unwrap_or(program)
                .to_string_lossy()
                .into_owned()
        })
    };
    let job = match &cli.job {
        Some(job) => job.clone(),
        None => match budget {
            RunBudget::Named(settings) => Some(settings.name.as_str().to_string()),
            _ => None,
        }
        .or_else(program)
        .unwrap_or_default(),
    };
    refuse(
        cli.job.is_some() && job.trim().is_empty(),
        "--job is empty: give the job a name, e.g. --job nightly-backup",
    )?;
    Ok(job)
}

/// Where a job's history lives: the store the budget uses, and the job's name there.
#[derive(Clone, Debug)]
pub(crate) struct HistoryPlace {
    pub(crate) location: Location,
    pub(crate) job: BudgetName,
}

/// A job whose terms and history have no store, and why: said as a warning, with all that the
/// run goes on without.
#[derive(Debug, thiserror::Error)]
#[error(
    "job {job}: its terms (--overlap, --alert-after: retry job set) cannot be read, so its runs \
     may overlap and every failure alerts, and no history of its runs is kept: {why}"
)]
pub(crate) struct NoStoreForJob {
    job: String,
    why: retry_budget::Error,
}

/// A job's schedule that gives its run no deadline, and why: said as a warning.
#[derive(Debug, thiserror::Error)]
#[error("job {job}: its schedule cannot be used: {why}; going on without it")]
pub(crate) struct ScheduleUnused {
    job: String,
    why: ScheduleTrouble,
}

/// Why a job's schedule gives no deadline.
#[derive(Debug, thiserror::Error)]
enum ScheduleTrouble {
    #[error(transparent)]
    Unread(#[from] Unread),
    #[error(transparent)]
    NotASchedule(#[from] NotASchedule),
    /// The schedule, which has no slot within the next years.
    #[error("'{0}' names no time that comes in the next years")]
    NeverComes(String),
}

/// Where the job `job` keeps its terms and its history: in a named budget's store, else in the
/// store a named budget would use (`RETRY_BUDGET_STORE`, or this machine's file store); why it
/// has none when that store cannot be named.
pub(super) fn history_place(
    job: &str,
    cli: &Cli,
    budget: &RunBudget,
    env: &impl Fn(&str) -> Option<OsString>,
) -> Result<HistoryPlace, NoStoreForJob> {
    let name = history::history_name(job);
    let location = match budget {
        RunBudget::Named(settings) => settings.store.location.clone(),
        _ => {
            cli.store
                .settings(env, "--job")
                .map_err(|why| NoStoreForJob {
                    job: job.to_string(),
                    why,
                })?
                .location
        }
    };
    Ok(HistoryPlace {
        location,
        job: name,
    })
}

/// The store a run was given (`--budget-store` as `flag`, or else `RETRY_BUDGET_STORE`, read
/// through `env`), as the runs inside its attempts are given it: without its password, which
/// stays this run's (a `password_file` is a path, and goes along).
pub(crate) fn store_passed_on(
    flag: Option<&str>,
    env: &impl Fn(&str) -> Option<OsString>,
) -> Option<String> {
    let given = match flag {
        Some(flag) => Some(flag.to_string()),
        None => env(retry_budget::store::BUDGET_STORE)?.into_string().ok(),
    };
    given
        .filter(|text| !text.is_empty())
        .map(|text| retry_budget::store::without_password(&text))
}

/// The next slot of the schedule of the job whose terms are at `place` (`retry job set
/// --schedule`), its zone read through `env` (`CRON_TZ`) where the schedule names none, after
/// `now`; or why the run goes on without one.
pub(super) fn next_slot(
    place: Option<&HistoryPlace>,
    env: &impl Fn(&str) -> Option<OsString>,
    now: SystemTime,
) -> Result<Option<Slot>, ScheduleUnused> {
    let Some(place) = place else {
        return Ok(None);
    };
    let slot = || -> Result<Option<Slot>, ScheduleTrouble> {
        let Some(text) = job::schedule_of(&place.location, &place.job, &Threads)? else {
            return Ok(None);
        };
        let env = |name: &str| env(name).and_then(|value| value.into_string().ok());
        let schedule = Schedule::parse(&text, &env)?;
        match schedule.next_slot(now) {
            Some(slot) => Ok(Some(slot)),
            None => Err(ScheduleTrouble::NeverComes(text)),
        }
    };
    slot().map_err(|why| ScheduleUnused {
        job: place.job.as_str().to_string(),
        why,
    })
}
