//! The job a run is one run of (`--job`): its definition, and what it resolves to: the job's
//! name, where its terms and history live (the store its budget uses), and the next slot of
//! its schedule (`retry job set --schedule`), which is one more deadline.

use std::ffi::OsString;
use std::path::Path;
use std::time::SystemTime;

use retry_budget::history;
use retry_budget::job::{self, NotASchedule, Schedule, Slot};
use retry_budget::store::Location;
use retry_budget::unread::{StoreFailure, Unread};
use retry_budget::waiter::Threads;
use retry_budget::{BudgetName, RunBudget};
use retry_policy::causes::{WithCauses, with_causes};

use super::OUTPUT;
use super::fleet::StoreOption;

/// The job a run is one run of.
#[derive(clap::Args, Debug)]
#[group(skip)]
pub(crate) struct JobNameArgs {
    /// The job's name, for its history, metrics and CI groups
    ///
    /// Name the job: each run so named adds to the job's history in the budget's store (clean,
    /// flaky or failed; retry job history NAME shows it), and it is the job label of the
    /// prom: report's gauges and the title of the CI system's groups (default: no history, and
    /// the --budget name, else the command's program name, for the rest; e.g. nightly-backup).
    #[arg(long, value_name = "NAME", value_parser = job_name, hide_short_help = true, help_heading = OUTPUT)]
    pub(crate) job: Option<String>,
}

impl JobNameArgs {
    /// The job's name: `--job`, else the budget's name, else the program's name of the
    /// command `words`.
    pub(super) fn name(&self, budget: &RunBudget, words: &[OsString]) -> String {
        let program = || {
            words.first().map(|program| {
                Path::new(program)
                    .file_name()
                    .unwrap_or(program)
                    .to_string_lossy()
                    .into_owned()
            })
        };
        match &self.job {
            Some(job) => job.clone(),
            None => match budget {
                RunBudget::Named(settings) => Some(settings.name.as_str().to_string()),
                _ => None,
            }
            .or_else(program)
            .unwrap_or_default(),
        }
    }

    /// What a run of the job `--job` names learns of it before it starts, its terms read once:
    /// where its terms and history live (a named budget's store, else the store a named budget
    /// would use: `store`, `RETRY_BUDGET_STORE`, or this machine's file store), the next slot
    /// of its schedule after `now` (its zone read through `env`), and what the run goes on
    /// without. A job whose terms cannot be read, for want of a store or because its store
    /// cannot be reached or does not answer, keeps no place: the run says so once and calls
    /// that store no more, neither for its hold nor for its history, as a budget's store that
    /// fails is called no more. A store that answers (a file another program wrote, a key the
    /// server refuses) is tried again for each, as each reads or writes a place of its own.
    pub(super) fn known(
        &self,
        store: &StoreOption,
        budget: &RunBudget,
        env: &impl Fn(&str) -> Option<OsString>,
        now: SystemTime,
    ) -> KnownJob {
        let Some(job) = &self.job else {
            return KnownJob::default();
        };
        let location = match budget {
            RunBudget::Named(settings) => Ok(settings.store.location.clone()),
            _ => store.settings(env, "--job").map(|store| store.location),
        };
        let unread = |why: NoTerms, from: String| KnownJob {
            problem: Some(with_causes(&TermsUnread {
                job: job.clone(),
                from,
                why,
            })),
            ..KnownJob::default()
        };
        let place = match location {
            Ok(location) => HistoryPlace {
                location,
                job: history::history_name(job),
            },
            Err(why) => return unread(why.into(), String::new()),
        };
        match next_slot(&place, env, now) {
            Ok(slot) => KnownJob {
                place: Some(place),
                slot,
                ..KnownJob::default()
            },
            Err(ScheduleTrouble::Unread(Unread::Store(why))) if unanswered(&why) => KnownJob {
                store_unanswered: Some(why.clone()),
                ..unread(Unread::Store(why).into(), place.location.named_if_shared())
            },
            Err(why) => KnownJob {
                place: Some(place),
                problem: Some(with_causes(&ScheduleUnused {
                    job: job.clone(),
                    why,
                })),
                ..KnownJob::default()
            },
        }
    }
}

/// Whether `why` is a store that cannot be reached or does not answer: what a call made a
/// moment later would meet too.
fn unanswered(why: &StoreFailure) -> bool {
    matches!(
        why,
        StoreFailure::Unreachable(_) | StoreFailure::TimedOut(_)
    )
}

/// What a run learns of its job before it starts.
#[derive(Debug, Default)]
pub(super) struct KnownJob {
    /// Where its terms and history live; none for a run with no job name, or one whose terms
    /// cannot be read.
    pub(super) place: Option<HistoryPlace>,
    /// The next slot of its schedule, when it has one.
    pub(super) slot: Option<Slot>,
    /// What the run goes on without, and why: said as a warning.
    pub(super) problem: Option<String>,
    /// How the shared store failed to give the terms when it did not answer, for the budget
    /// kept there, which then does not wait for it again.
    pub(super) store_unanswered: Option<StoreFailure>,
}

/// Where a job's history lives: the store the budget uses, and the job's name there.
#[derive(Clone, Debug)]
pub(crate) struct HistoryPlace {
    pub(crate) location: Location,
    pub(crate) job: BudgetName,
}

/// A job's name that is blank, as `--job "$JOB"` gives it when `JOB` is unset: no run could
/// name the job, so it is refused wherever a job is named.
#[derive(Debug, thiserror::Error)]
#[error("a job's name may not be empty or blank: give the job a name, e.g. nightly-backup")]
pub(crate) struct BlankJobName;

/// A job's name, as `--job` and `retry job show|set|history JOB` take it: any text but a blank
/// one.
pub(super) fn job_name(text: &str) -> Result<String, BlankJobName> {
    match text.trim().is_empty() {
        true => Err(BlankJobName),
        false => Ok(text.to_string()),
    }
}

/// A job whose terms cannot be read (from a shared store: " from ADDRESS"), and why: said as a
/// warning, with all that the run goes on without.
#[derive(Debug, thiserror::Error)]
#[error(
    "job {job}: its terms (--overlap, --alert-after, --schedule: retry job set) cannot be \
     read{from}, so its runs may overlap, every failure alerts and no schedule ends them, and no \
     history of its runs is kept"
)]
pub(crate) struct TermsUnread {
    job: String,
    from: String,
    #[source]
    why: NoTerms,
}

/// Why a job's terms cannot be read.
#[derive(Debug, thiserror::Error)]
enum NoTerms {
    /// There is no store to read them from.
    #[error(transparent)]
    NoStore(#[from] retry_budget::Error),
    /// The store could not give them.
    #[error(transparent)]
    Unread(#[from] Unread),
}

/// A job's schedule that gives its run no deadline, and why: said as a warning.
#[derive(Debug, thiserror::Error)]
#[error(
    "job {job}: its schedule cannot be used: {}; going on without it",
    WithCauses(.why)
)]
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

/// The next slot of the schedule of the job whose terms are at `place` (`retry job set
/// --schedule`), its zone read through `env` (`CRON_TZ`) where the schedule names none, after
/// `now`; or why the run goes on without one.
fn next_slot(
    place: &HistoryPlace,
    env: &impl Fn(&str) -> Option<OsString>,
    now: SystemTime,
) -> Result<Option<Slot>, ScheduleTrouble> {
    let Some(text) = job::schedule_of(&place.location, &place.job, &Threads)? else {
        return Ok(None);
    };
    let env = |name: &str| env(name).and_then(|value| value.into_string().ok());
    let schedule = Schedule::parse(&text, &env)?;
    match schedule.next_slot(now) {
        Some(slot) => Ok(Some(slot)),
        None => Err(ScheduleTrouble::NeverComes(text)),
    }
}
