//! The tool's own subcommands, `retry budget show|set` and `retry job show|set|history`: their
//! options, which belong to the capability they drive, and `--budget-store` (the run's, as
//! `fleet` declares it) in each. They are added to the interface only when used.

use std::ffi::OsString;
use std::time::Duration;

use retry_budget::breaker::GiveUps;
use retry_budget::job::Overlap;
use retry_budget::model::Rate;
use retry_budget::show::ShowRequest;
use retry_budget::terms_change::Clearable;
use retry_budget::{BudgetName, Ratio};
use retry_policy::causes::parsed;
use retry_policy::duration::parse_duration;
use retry_policy::numbers::whole_number;

use super::fleet::StoreOption;
use super::job::job_name;
use super::{Deferred, choice};
use crate::report::verbosity::LogFormat;

/// What `retry` can do besides running a command: only the first argument can name one
/// (`retry -- budget` and `retry -n 3 budget` run a program called budget).
#[derive(clap::Subcommand, Debug)]
pub(crate) enum ToolCommand {
    /// Look at a retry budget, or set its terms.
    #[command(
        about = "Look at a retry budget, or set its terms.",
        hide = true,
        subcommand_required = true,
        arg_required_else_help = false,
        disable_help_subcommand = true
    )]
    Budget(Deferred<BudgetArgs>),
    /// Look at a job's terms or history, or set its terms.
    #[command(
        about = "Look at a job's terms or history, or set its terms.",
        hide = true,
        subcommand_required = true,
        arg_required_else_help = false,
        disable_help_subcommand = true
    )]
    Job(Deferred<JobArgs>),
}

/// `retry job`'s subcommand; without one, a usage error rather than the help.
#[derive(clap::Args, Debug)]
#[command(about = None, arg_required_else_help = false)]
pub(crate) struct JobArgs {
    #[command(subcommand)]
    pub(crate) command: JobCommand,
}

/// What `retry job` can do.
#[derive(clap::Subcommand, Debug)]
pub(crate) enum JobCommand {
    /// Print a job's terms: whether its runs may overlap, and the run in progress.
    #[command(long_about = JOB_SHOW_ABOUT)]
    Show(JobShowArgs),
    /// Set a job's terms, which every run of the job obeys.
    #[command(long_about = JOB_SET_ABOUT)]
    Set(JobSetArgs),
    /// Print a job's history of runs: clean, flaky and failed, and its pass rate.
    #[command(long_about = JOB_HISTORY_ABOUT)]
    History(JobShowArgs),
}

/// What `retry job show --help` says it does.
const JOB_SHOW_ABOUT: &str = "\
Print the terms of the job JOB (a run's --job) from the store its budget uses, changing \
nothing: whether its runs may overlap, and on a shared store the run in progress (its \
RETRY_RUN_ID) that holds the job.";

/// What `retry job set --help` says it does.
const JOB_SET_ABOUT: &str = "\
Keep the terms of the job JOB (a run's --job) in the store its budget uses, where every run \
of the job reads them before its first attempt: so that runs on every machine obey the same \
terms, they are stated here once, never by a run.";

/// The `retry job show` and `retry job history` options.
#[derive(clap::Args, Debug)]
pub(crate) struct JobShowArgs {
    /// The job's name, as runs give it to --job.
    #[arg(value_name = "JOB", value_parser = job_name)]
    pub(crate) job: String,

    #[command(flatten)]
    pub(crate) reading: Reading,
}

/// The `retry job set` options: at least one term.
#[derive(clap::Args, Debug)]
#[command(group(clap::ArgGroup::new("terms").required(true).multiple(true).args(["overlap", "alert_after", "schedule"])))]
pub(crate) struct JobSetArgs {
    /// The job's name, as runs give it to --job.
    #[arg(value_name = "JOB", value_parser = job_name)]
    pub(crate) job: String,

    /// Whether a run of the job may start while another is in progress, on any machine that
    /// shares the store: allow, skip (it makes no attempt and exits 75) or wait (for the other
    /// to end, within its --max-time), e.g. skip (kept when not given; allow the first time).
    #[arg(long, value_name = "MODE", value_parser = choice::<Overlap>())]
    pub(crate) overlap: Option<Overlap>,

    /// From which failed run in a row the job's monitor (RETRY_MONITOR) is told of a failure,
    /// 1 to 99, e.g. 3 (kept when not given; 1 the first time).
    #[arg(long, value_name = "N", value_parser = whole_number(1..=retry_budget::job::MOST_ALERT_AFTER))]
    pub(crate) alert_after: Option<u32>,

    /// When the job is due, in cron's five fields (or an @ name), optionally after CRON_TZ=ZONE:
    /// a run of the job ends before the next slot, its last status its own, and a failed run is
    /// retried until then and never past it; none to keep none, e.g. '*/15 * * * *' (kept when
    /// not given; none the first time).
    #[arg(long, value_name = "CRON")]
    pub(crate) schedule: Option<String>,

    #[command(flatten)]
    pub(crate) store: StoreOption,
}

/// `retry budget`'s subcommand; without one, a usage error rather than the help.
#[derive(clap::Args, Debug)]
#[command(about = None, arg_required_else_help = false)]
pub(crate) struct BudgetArgs {
    #[command(subcommand)]
    pub(crate) command: BudgetCommand,
}

/// What `retry budget` can do.
#[derive(clap::Subcommand, Debug)]
pub(crate) enum BudgetCommand {
    /// Print a budget's state now: its terms, its tokens, its counters, and when it will be full.
    #[command(long_about = BUDGET_SHOW_ABOUT)]
    Show(BudgetShowArgs),
    /// Set a budget's terms, which every run that shares the budget uses.
    #[command(long_about = BUDGET_SET_ABOUT)]
    Set(BudgetSetArgs),
}

/// What `retry job history --help` says it does.
const JOB_HISTORY_ABOUT: &str = "\
Print the history of the job JOB (a run's --job) from the store its budget uses, changing \
nothing: how its last 100 runs ended (clean at the first attempt, flaky after failed ones, or \
failed), in order; the share that passed at the first attempt and in the end, each with its \
95% Wilson interval; and the runs counted in all. A run named with --job adds to it.";

/// Where `retry budget show`, `retry job show` and `retry job history` read, and how they
/// print.
#[derive(clap::Args, Debug)]
pub(crate) struct Reading {
    #[command(flatten)]
    pub(crate) store: StoreOption,

    /// Print it as text, or as one JSON object (json).
    #[arg(
        long,
        value_name = "FORMAT",
        default_value = "text",
        hide_possible_values = true
    )]
    pub(crate) log_format: LogFormat,
}

/// What `retry budget show --help` says it does.
const BUDGET_SHOW_ABOUT: &str = "\
Print the state of the retry budget NAME now, changing nothing: its terms, the rate bucket's \
tokens and when it will be full, the earned tokens, and the first attempts, retries and \
refusals counted by every run that shared it.

(`budget` is the tool's own word only as the first word: `retry -- budget` runs a program \
called budget.)";

/// What `retry budget set --help` says it does.
const BUDGET_SET_ABOUT: &str = "\
Keep the terms of the retry budget NAME in its store, where every run that shares the budget \
reads them: so that all its runs spend on the same terms, they are stated here once, never by \
a run. A budget nobody set terms for has 10/1m, and earns nothing. The state is carried over \
to the new terms (its counters kept, its tokens within the new capacity).";

/// The `retry budget show` options.
#[derive(clap::Args, Debug)]
pub(crate) struct BudgetShowArgs {
    /// The budget's name, as runs give it to --budget.
    #[arg(value_name = "NAME")]
    pub(crate) name: BudgetName,

    #[command(flatten)]
    pub(crate) reading: Reading,
}

impl BudgetShowArgs {
    /// The budget these options name, and where it lives; `env` reads the environment.
    pub(crate) fn request(
        &self,
        env: &impl Fn(&str) -> Option<OsString>,
    ) -> Result<ShowRequest, retry_budget::Error> {
        let store = self.reading.store.settings(env, "retry budget show")?;
        Ok(ShowRequest {
            name: self.name.clone(),
            location: store.location,
        })
    }
}

/// The `retry budget set` options: each term given replaces the one kept, each left out is
/// kept, and `--clear` removes one.
#[derive(clap::Args, Debug)]
pub(crate) struct BudgetSetArgs {
    /// The budget's name, as runs give it to --budget.
    #[arg(value_name = "NAME")]
    pub(crate) name: BudgetName,

    /// At most N tokens, regaining N every DURATION; each retry takes one (e.g. 10/1m); needed
    /// the first time, kept when not given.
    #[arg(long, value_name = "N/DURATION", value_parser = parsed::<Rate>, allow_hyphen_values = true)]
    pub(crate) rate: Option<Rate>,

    /// Also earn R tokens (more than 0, at most 1, e.g. 0.1) for every first attempt of any run
    /// sharing the budget, spent before the rate's, at once or not at all (kept when not
    /// given; none the first time).
    #[arg(long, value_name = "R", allow_hyphen_values = true)]
    pub(crate) ratio: Option<Ratio>,

    /// Let earned tokens fade exponentially with this time constant (e.g. 30s, 5m; kept when
    /// not given; 1m the first time).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, allow_hyphen_values = true)]
    pub(crate) window: Option<Duration>,

    /// A breaker: once N runs sharing the budget gave up within DURATION, runs make no attempt
    /// (they exit 75) until a cool-down is over, when one run's attempt decides (e.g. 5/1m;
    /// kept when not given; none the first time).
    #[arg(long, value_name = "N/DURATION", value_parser = parsed::<GiveUps>, allow_hyphen_values = true)]
    pub(crate) breaker: Option<GiveUps>,

    /// The breaker opens only when the runs that gave up are at least this share of the runs
    /// that ended in its window (more than 0, at most 1; kept when not given; 0.5 the first
    /// time).
    #[arg(long, value_name = "R", allow_hyphen_values = true)]
    pub(crate) breaker_share: Option<Ratio>,

    /// On a shared store, the breaker opens only when the runs that gave up came from at least
    /// this many hosts (1 to 16; kept when not given; 2 the first time), so that one broken
    /// host cannot stop a fleet.
    #[arg(long, value_name = "N", value_parser = whole_number(1..=16u32))]
    pub(crate) breaker_hosts: Option<u32>,

    /// How long the breaker stays open the first time; each re-opening doubles it, up to 32
    /// times (e.g. 30s, 5m; kept when not given; 30s the first time).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, allow_hyphen_values = true)]
    pub(crate) cool_down: Option<Duration>,

    /// Remove a term: ratio (no tokens earned) or breaker; refused beside the --ratio or
    /// --breaker that would set it. May be repeated.
    #[arg(long, value_name = "TERM", value_parser = choice::<Clearable>())]
    pub(crate) clear: Vec<Clearable>,

    #[command(flatten)]
    pub(crate) store: StoreOption,
}
