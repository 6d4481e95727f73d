//! The run's settings: the parsed command line resolved into one consistent run, with every
//! cross-flag check made, and the environment read once (where the run sits among nested
//! retries, how long a requested wait may be, and where its budget lives).
//!
//! [`Config`] is the only reader of a run's [`Cli`]; the tool's subcommands own their options
//! (`budget show`, `budget set`) and are dispatched before it. Its fields are private: it hands
//! out the settings each part of a run is built from, by the module that owns the part, and the
//! record of the options that the report keeps, derived from the command line's definition. A
//! new flag touches `cli.rs`, this file, the module that uses it, and a test.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fmt;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use rand::SeedableRng;
use rand::rngs::Xoshiro256PlusPlus;
use retry_budget::default_budget::DefaultBudget;
use retry_budget::history;
use retry_budget::model::DEFAULT_BUDGET_TERMS;
use retry_budget::state_dir::StateHome;
use retry_budget::store::{Location, StoreSettings};
use retry_budget::{BudgetChoice, BudgetName, BudgetSettings, RunBudget};
use retry_policy::attempts::AttemptLimit;
use retry_policy::backoff::{self, Backoff, Jitter, Schedule};
use retry_policy::choice::Choice;
use retry_policy::deadline::{self as deadlines, Deadline, DeadlineSource, JobLimit, Limit};
use retry_policy::duration::{format_duration, parse_duration, to_millis};
use retry_policy::nesting::{Layer, Nested};
use retry_policy::outcome::Hook;
use retry_policy::presets::Preset;
use retry_policy::printable::printable;
use retry_policy::rules::{RuleList, UserRules};
use retry_policy::run::Rules;
use retry_policy::seed::{Seed, split_mix, words_hash};
use retry_policy::target::Target;
use serde::Serialize;

use crate::cli::Cli;
use crate::environment;
use crate::git_remote;
use crate::output::{Hold, OutputOptions};
use crate::plan::PlanRequest;
use crate::process::command_line::CommandLine;
use crate::process::hooks::HookLines;
use crate::process::{Isolation, ProcessOptions};
use crate::report::ci::CiSystem;
use crate::report::ci::outputs::GitHubFiles;
use crate::report::formats::{ReportFormat, ReportSpec};
use crate::report::verbosity::{LogFormat, LogSettings, Verbosity};

/// The longest wait a command may ask for, unless `RETRY_MAX_REQUESTED_WAIT` says otherwise.
const MAX_REQUESTED_WAIT: Duration = Duration::from_secs(15 * 60);

/// Everything a run needs, checked for consistency.
#[derive(Debug)]
pub(crate) struct Config {
    /// What each attempt runs; none for `--plan`, which runs nothing.
    command: Option<CommandLine>,
    /// The attempt limit in force: `--max-attempts`, or one with `RETRY_NESTED=once` when nested.
    limit: AttemptLimit,
    /// Where the run sits among nested retries, and what `RETRY_NESTED` makes of it.
    layer: Layer,
    nested: Nested,
    max_requested_wait: Duration,
    backoff: Backoff,
    rules: RuleList,
    /// The jitter's seed: given, derived from the host, or drawn.
    seed: u64,
    splay: Option<Duration>,
    budget: RunBudget,
    log: LogSettings,
    /// The run's deadline: the soonest of `--max-time`, an outer run's and the CI job's, as the
    /// time it leaves when the run was resolved.
    deadline: Option<Deadline>,
    /// The same deadline as the instant it falls at, from the same reading of the clocks: the
    /// one value the run and what is written after it count from.
    deadline_at: Option<Limit>,
    /// The CI job's time limit, when the environment tells one.
    job_limit: Option<JobLimit>,
    /// What was wrong with a deadline the environment gave, which the run goes on without.
    deadline_problems: Vec<String>,
    process: ProcessOptions,
    replay_stdin: bool,
    output: OutputOptions,
    hooks: HookLines,
    reset_after: Option<Duration>,
    flaky_exit: Option<u8>,
    reports: Vec<ReportSpec>,
    /// `--job`, or what names the job by default.
    job: String,
    /// Where a job named with `--job` keeps its history of runs; none for a run with no job
    /// name, or none it can keep.
    history: Option<HistoryPlace>,
    /// Why a named job keeps no history, if it keeps none.
    history_problem: Option<String>,
    /// Whether `--job` named it.
    job_given: bool,
    /// `--preset`, as it resolved.
    preset: PresetInForce,
    /// The CI system the run is in, and GitHub's files for its outcome.
    ci: Option<CiSystem>,
    github: GitHubFiles,
    recorded: OptionsRecord,
}

/// The `--preset` of a run.
#[derive(Clone, Debug)]
enum PresetInForce {
    /// This one, or none given.
    Given(Option<&'static Preset>),
    /// `--preset auto`, and no preset knows this program.
    NoneForProgram(String),
}

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

/// A combination of flags that cannot make a run; the message says which and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ConfigError(String);

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConfigError {}

impl TryFrom<Cli> for Config {
    type Error = ConfigError;

    fn try_from(cli: Cli) -> Result<Self, ConfigError> {
        Config::resolve(cli, environment::own)
    }
}

impl Config {
    /// Resolve `cli`, reading the environment through `env`.
    fn resolve(mut cli: Cli, env: impl Fn(&str) -> Option<OsString>) -> Result<Self, ConfigError> {
        refuse(
            cli.reset_after == Some(Duration::ZERO),
            "--reset-after (0s) must be more than 0s, or every failure would start the count \
             over; leave it out to never start over",
        )?;
        refuse(
            cli.multiplier_given && cli.jitter == Jitter::Decorrelated,
            &format!(
                "--multiplier ({}) has no effect with --jitter decorrelated, whose waits grow \
                 from the previous wait; leave out --multiplier, or choose another --jitter",
                cli.multiplier
            ),
        )?;
        let backoff = Backoff::new(cli.base, cli.cap, cli.multiplier, cli.jitter)
            .map_err(|err| ConfigError(err.to_string()))?;
        // 0s is no limit, as coreutils timeout takes it.
        let timeout = cli.timeout.filter(|limit| !limit.is_zero());
        let max_time = cli.max_time.filter(|limit| !limit.is_zero());
        if let (Some(splay), Some(max_time)) = (cli.splay, max_time) {
            refuse(
                splay >= max_time,
                &format!(
                    "--splay ({}) must be below --max-time ({}), or no attempt could start",
                    format_duration(splay),
                    format_duration(max_time)
                ),
            )?;
        }
        let (outer, job_limit, deadline_problems) = outside_deadlines(&env, SystemTime::now());
        let deadline = deadlines::soonest(max_time, outer, job_limit);
        let deadline_at = deadline.and_then(|deadline| deadline.from(Instant::now()));
        let max_requested_wait = max_requested_wait(&env)?;
        let nested = nested(&env)?;
        let program = cli.command.first().and_then(|program| program.to_str());
        let preset = cli.preset.and_then(|choice| choice.resolve(program));
        let budget = run_budget(&cli, &env, preset)?;
        let user = UserRules {
            success: cli.success_on.clone(),
            stop: cli.stop_on.clone(),
            retry: cli.retry_on.clone(),
        };
        let rules = RuleList::new(&user, preset).map_err(|why| ConfigError(why.to_string()))?;
        let mut after = cli.retry_after_output.clone();
        after.extend(
            preset
                .and_then(|preset| preset.retry_after)
                .map(str::to_string),
        );
        let hold = cli.hold.unwrap_or_default();
        let mut output = OutputOptions::new(rules.patterns(), &after, hold)
            .map_err(|why| ConfigError(why.to_string()))?;
        // A JUnit report shows each attempt's output: both streams go through the tool.
        output.keep_tails = cli
            .report
            .iter()
            .any(|spec| spec.format == ReportFormat::Junit);
        let layer = Layer::of(
            env(environment::OUTER_DEPTH.name).as_deref(),
            env(environment::OUTER_TOTAL_ATTEMPTS.name).as_deref(),
        );
        let command = match cli.plan {
            true => None,
            false => Some(command_line(&cli)?),
        };
        refuse(
            hold == Hold::Everything && cli.log_format == LogFormat::Json,
            "--hold all writes the held output under headers for a person to read (cron's \
             mail), and cannot keep stderr JSON; leave out --log-format json or --hold all",
        )?;
        let job = job_name(&cli, &budget)?;
        let (history, history_problem) = match &cli.job {
            Some(job) => match history_place(job, &cli, &budget, &env) {
                Ok(place) => (Some(place), None),
                Err(why) => (None, Some(why)),
            },
            None => (None, None),
        };
        // A run inside another's attempt leaves the CI system to the outermost run: its groups
        // would break the outer group (they do not nest), and its outputs would be the outer's.
        let ci = cli.ci.resolve(&env).filter(|_| layer.depth() == 1);
        let github = match ci {
            Some(CiSystem::GitHub) => {
                let path = |variable: environment::Variable| {
                    env(variable.name)
                        .filter(|value| !value.is_empty())
                        .map(PathBuf::from)
                };
                GitHubFiles {
                    output: path(environment::GITHUB_OUTPUT),
                    summary: path(environment::GITHUB_STEP_SUMMARY),
                }
            }
            _ => GitHubFiles::default(),
        };
        let seed = Seed::resolve(cli.seed, &cli.command, || host_name(&env), random_seed);
        let limit = layer.limit(nested, cli.max_attempts);
        let process = ProcessOptions {
            timeout,
            kill_after: cli.kill_after,
            timeout_signal: cli.timeout_signal,
            isolation: match cli.foreground {
                true => Isolation::Foreground,
                false => Isolation::OwnGroup,
            },
        };
        let recorded = OptionsRecord {
            given: std::mem::take(&mut cli.given),
            command: cli
                .command
                .iter()
                .map(|word| word.to_string_lossy().into_owned())
                .collect(),
            in_force: InForce {
                max_attempts: limit,
                seed,
                preset: preset.map(|preset| preset.name),
                budget: budget_in_force(&budget),
                budget_store: match &budget {
                    RunBudget::Named(settings) => Some(settings.store.location.to_string()),
                    _ => None,
                },
                nested,
                max_requested_wait_ms: to_millis(max_requested_wait),
            },
        };
        Ok(Config {
            command,
            limit,
            layer,
            nested,
            max_requested_wait,
            backoff,
            rules,
            seed,
            splay: cli.splay,
            budget,
            deadline,
            deadline_at,
            job_limit,
            deadline_problems,
            process,
            replay_stdin: cli.replay_stdin,
            output,
            preset: match (cli.preset, preset) {
                (Some(_), None) => {
                    PresetInForce::NoneForProgram(program.map(str::to_string).unwrap_or_default())
                }
                (_, preset) => PresetInForce::Given(preset),
            },
            hooks: HookLines::new([
                (Hook::OnRetry, cli.on_retry),
                (Hook::OnGiveUp, cli.on_give_up),
            ]),
            reset_after: cli.reset_after,
            flaky_exit: cli.flaky_exit,
            log: LogSettings {
                format: cli.log_format,
                verbosity: match (cli.quiet, cli.verbose) {
                    (true, _) => Verbosity::Quiet,
                    (false, true) => Verbosity::Verbose,
                    (false, false) => Verbosity::Normal,
                },
            },
            reports: cli.report,
            job,
            history,
            history_problem,
            job_given: cli.job.is_some(),
            ci,
            github,
            recorded,
        })
    }

    /// What each attempt runs; none for `--plan`, which runs nothing.
    pub(crate) fn command(&self) -> Option<&CommandLine> {
        self.command.as_ref()
    }

    /// The form and amount of the tool's own messages.
    pub(crate) fn log(&self) -> LogSettings {
        self.log
    }

    /// What `--plan` shows.
    pub(crate) fn plan(&self) -> PlanRequest<'_> {
        PlanRequest {
            limit: self.limit,
            backoff: self.backoff,
            seed: self.seed,
            splay: self.splay.unwrap_or_default(),
            max_time: self.max_time(),
            deadline: self.deadline_described(),
            budget: self.budget.describe(),
            max_requested_wait: self.max_requested_wait,
            rules: &self.rules,
            preset: match self.preset {
                PresetInForce::Given(preset) => preset,
                PresetInForce::NoneForProgram(_) => None,
            },
        }
    }

    /// What the user should know before the run starts: a run inside another retry, a run that
    /// can go on for ever, fast.
    pub(crate) fn warnings(&self) -> Vec<String> {
        let mut warnings: Vec<String> = self
            .layer
            .warning(self.nested, self.limit)
            .into_iter()
            .chain(self.deadline_problems.iter().cloned())
            .chain(self.history_problem.iter().cloned())
            .collect();
        if let PresetInForce::NoneForProgram(program) = &self.preset {
            warnings.push(format!(
                "--preset auto: no preset knows '{}'; deciding by the exit status alone, as \
                 without --preset",
                printable(program)
            ));
        }
        if self.deadline.is_some() {
            return warnings;
        }
        let endless = self.limit.count().is_none() || self.reset_after.is_some();
        if endless && self.backoff.base().is_zero() {
            warnings.push(
                "with --base 0s and no --max-time, this run retries at once without end, \
                 hundreds of attempts a second if the command fails fast; give --base or \
                 --max-time"
                    .to_string(),
            );
        }
        if let (Some(reset_after), Some(limit)) = (self.reset_after, self.limit.count())
            && reset_after < self.backoff.cap()
        {
            warnings.push(format!(
                "--reset-after ({}) is shorter than --cap ({}): every failure that lasts that \
                 long starts the count over, so --max-attempts {limit} may never run out; give \
                 --max-time to bound the run",
                format_duration(reset_after),
                format_duration(self.backoff.cap())
            ));
        }
        warnings
    }

    /// The fixed rules of the run loop, the splay drawn from the seed.
    pub(crate) fn rules(&self) -> Rules {
        Rules {
            limit: self.limit,
            decide: self.rules.clone(),
            deadline: self.deadline_at,
            reset_after: self.reset_after,
            splay: backoff::splay(self.seed, self.splay.unwrap_or_default()),
            max_requested_wait: self.max_requested_wait,
            depth: self.layer.depth(),
            flaky_exit: self.flaky_exit,
        }
    }

    /// The waits between attempts, drawn from the seed.
    pub(crate) fn waits(&self) -> Schedule<Xoshiro256PlusPlus> {
        self.backoff
            .schedule(Xoshiro256PlusPlus::seed_from_u64(self.seed))
    }

    /// The limit of the whole run, from its resolution: `--max-time`, or a sooner deadline from
    /// outside.
    fn max_time(&self) -> Option<Duration> {
        self.deadline.map(|deadline| deadline.left)
    }

    /// When the whole run must end: the instant the run and what is written after it count to.
    pub(crate) fn deadline_at(&self) -> Option<Instant> {
        self.deadline_at.map(|deadline| deadline.at)
    }

    /// The run's deadline, and where it came from.
    pub(crate) fn deadline(&self) -> Option<Deadline> {
        self.deadline
    }

    /// Which deadline applies and where it came from, in words, when it is not `--max-time`'s.
    pub(crate) fn deadline_described(&self) -> Option<String> {
        self.deadline
            .filter(|deadline| deadline.source != DeadlineSource::MaxTime)
            .map(|deadline| deadline.describe(self.job_limit.as_ref()))
    }

    /// The process-control options of an attempt (and of a hook).
    pub(crate) fn process(&self) -> ProcessOptions {
        self.process
    }

    /// The output conditions, and what is held.
    pub(crate) fn output(&self) -> &OutputOptions {
        &self.output
    }

    /// The hooks' shell lines.
    pub(crate) fn hooks(&self) -> &HookLines {
        &self.hooks
    }

    /// The most attempts of the command all nested layers together may make.
    pub(crate) fn total_attempts(&self) -> AttemptLimit {
        self.layer.total(self.limit)
    }

    /// The run's depth among nested retries: 1 for the outermost.
    pub(crate) fn depth(&self) -> u32 {
        self.layer.depth()
    }

    /// Whether attempts may be handed the controlling terminal (when the tool is in its
    /// foreground): never with `--foreground`, where they share the tool's process group.
    pub(crate) fn hands_over_terminal(&self) -> bool {
        self.process.isolation == Isolation::OwnGroup
    }

    /// Whether stdin is read to its end and given to every attempt.
    pub(crate) fn replay_stdin(&self) -> bool {
        self.replay_stdin
    }

    /// The `--report` files, and the options in force as the JSON ones record them.
    pub(crate) fn reports(&self) -> (&[ReportSpec], &OptionsRecord) {
        (&self.reports, &self.recorded)
    }

    /// The job's name: `--job`, else the budget's name, else the command's program name.
    pub(crate) fn job(&self) -> &str {
        &self.job
    }

    /// Where the job keeps its history of runs, if it keeps one.
    pub(crate) fn history(&self) -> Option<&HistoryPlace> {
        self.history.as_ref()
    }

    /// `--job`, if it was given: the start of each CI group's title.
    pub(crate) fn job_given(&self) -> Option<&str> {
        self.job_given.then_some(self.job.as_str())
    }

    /// The CI system whose lines go into the log: none outside one, and none with
    /// `--log-format json`, whose stderr stays JSON.
    pub(crate) fn ci_log(&self) -> Option<CiSystem> {
        self.ci.filter(|_| self.log.format == LogFormat::Text)
    }

    /// GitHub's files for the run's outcome.
    pub(crate) fn github(&self) -> &GitHubFiles {
        &self.github
    }

    /// `--hold all`.
    pub(crate) fn holds_everything(&self) -> bool {
        self.output.hold == Hold::Everything
    }

    /// The command's words, as given.
    pub(crate) fn command_words(&self) -> &[String] {
        &self.recorded.command
    }

    /// The budget the run spends from.
    pub(crate) fn budget(&self) -> &RunBudget {
        &self.budget
    }
}

/// The budget a run spends from: the one `--budget` names, else the one `RETRY_BUDGET` names
/// (either may say `off`), else this machine's default one for the command's target.
fn run_budget(
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
        Some(BudgetChoice::Named(name)) => RunBudget::Named(BudgetSettings {
            name,
            store: StoreSettings::resolve(cli.budget_store.as_deref(), env, "--budget")
                .map_err(|why| ConfigError(why.to_string()))?,
            host: words_hash(std::iter::once(host_name(env).as_slice())),
        }),
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
        cli.budget_store.is_some() && !matches!(budget, RunBudget::Named(_)),
        "--budget-store says where a named budget lives: give --budget NAME (or RETRY_BUDGET=NAME) \
         too, or leave --budget-store out",
    )?;
    Ok(budget)
}

/// The budget in force, as the report records it.
fn budget_in_force(budget: &RunBudget) -> BudgetInForce {
    match budget {
        RunBudget::Named(settings) => BudgetInForce::Named {
            name: settings.name.as_str().to_string(),
        },
        RunBudget::Default(budget) => BudgetInForce::Default {
            target: budget.target.to_string(),
            name: budget.name().as_str().to_string(),
            terms: DEFAULT_BUDGET_TERMS.describe(),
        },
        RunBudget::Off(by) => BudgetInForce::Off { by },
    }
}

/// The job's name (`--job`): given, else the budget's name, else the command's program name.
fn job_name(cli: &Cli, budget: &RunBudget) -> Result<String, ConfigError> {
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

/// Where the job `job` keeps its history: in a named budget's store, else in the store a named
/// budget would use (`RETRY_BUDGET_STORE`, or this machine's file store); why it keeps none when
/// that store cannot be named.
fn history_place(
    job: &str,
    cli: &Cli,
    budget: &RunBudget,
    env: &impl Fn(&str) -> Option<OsString>,
) -> Result<HistoryPlace, String> {
    let name = history::history_name(job);
    let location = match budget {
        RunBudget::Named(settings) => settings.store.location.clone(),
        _ => {
            StoreSettings::resolve(cli.budget_store.as_deref(), env, "--job's history")
                .map_err(|why| format!("no history of the job's runs is kept: {why}"))?
                .location
        }
    };
    Ok(HistoryPlace {
        location,
        job: name,
    })
}

/// `RETRY_MAX_REQUESTED_WAIT`, read through `env`: the longest wait a command may ask for.
fn max_requested_wait(env: &impl Fn(&str) -> Option<OsString>) -> Result<Duration, ConfigError> {
    let variable = environment::MAX_REQUESTED_WAIT.name;
    let Some(value) = env(variable).filter(|value| !value.is_empty()) else {
        return Ok(MAX_REQUESTED_WAIT);
    };
    let text = value.to_string_lossy();
    match parse_duration(&text) {
        Ok(wait) if !wait.is_zero() => Ok(wait),
        Ok(_) => Err(ConfigError(format!(
            "{variable} (0s) must be more than 0s, e.g. 15m; to bound the whole run, give \
             --max-time"
        ))),
        Err(why) => Err(ConfigError(format!(
            "{variable} '{}': {why}",
            printable(&text)
        ))),
    }
}

/// The deadlines the environment gives, read through `env` at `now`: the time left until an
/// outer run's `RETRY_DEADLINE`, and the CI job's time limit (GitLab's, else Buildkite's); and
/// what was wrong with any value, which is then left out.
fn outside_deadlines(
    env: &impl Fn(&str) -> Option<OsString>,
    now: SystemTime,
) -> (Option<Duration>, Option<JobLimit>, Vec<String>) {
    let text = |variable: environment::Variable| {
        env(variable.name)
            .filter(|value| !value.is_empty())
            .map(|value| value.to_string_lossy().into_owned())
    };
    let mut problems = Vec::new();
    let outer = text(environment::OUTER_DEADLINE).and_then(|value| {
        let read = deadlines::outer_deadline(&value, now)
            .map_err(|why| format!("{}: {why}", environment::OUTER_DEADLINE.name));
        kept(read, &mut problems)
    });
    let gitlab = match (
        text(environment::CI_JOB_TIMEOUT),
        text(environment::CI_JOB_STARTED_AT),
    ) {
        (Some(timeout), Some(started)) => kept(
            deadlines::gitlab_job(&timeout, &started, now),
            &mut problems,
        ),
        _ => None,
    };
    let job = match gitlab {
        Some(job) => Some(job),
        None => text(environment::BUILDKITE_TIMEOUT)
            .and_then(|value| kept(deadlines::buildkite_job(&value), &mut problems).flatten()),
    };
    (outer, job, problems)
}

/// The value `read` gave, or none with what was wrong added to `problems`.
fn kept<T>(read: Result<T, impl fmt::Display>, problems: &mut Vec<String>) -> Option<T> {
    read.map_err(|why| problems.push(format!("{why}; going on without it")))
        .ok()
}

/// `RETRY_NESTED`, read through `env`: what a run inside another retry's attempt does.
fn nested(env: &impl Fn(&str) -> Option<OsString>) -> Result<Nested, ConfigError> {
    let variable = environment::NESTED.name;
    let Some(value) = env(variable).filter(|value| !value.is_empty()) else {
        return Ok(Nested::default());
    };
    let text = value.to_string_lossy();
    Nested::named(&text).ok_or_else(|| {
        ConfigError(format!(
            "{variable} '{}' is not once, retry or quiet",
            printable(&text)
        ))
    })
}

/// The name this machine goes by, for `--seed host` and a shared budget's breaker:
/// `RETRY_HOST`, else its host name (empty if it has none).
fn host_name(env: &impl Fn(&str) -> Option<OsString>) -> Vec<u8> {
    match env(environment::HOST.name).filter(|name| !name.is_empty()) {
        Some(name) => name.as_bytes().to_vec(),
        None => nix::unistd::gethostname()
            .map(|name| name.as_bytes().to_vec())
            .unwrap_or_default(),
    }
}

/// A seed from the operating system's entropy, or from the clock if that is unavailable.
fn random_seed() -> u64 {
    use rand::TryRng;
    rand::rngs::SysRng.try_next_u64().unwrap_or_else(|_| {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
        split_mix(now.map_or(0, |since| since.as_nanos() as u64) ^ u64::from(std::process::id()))
    })
}

/// Refuse a run when `contradiction` holds, saying `why`.
fn refuse(contradiction: bool, why: &str) -> Result<(), ConfigError> {
    match contradiction {
        true => Err(ConfigError(why.to_string())),
        false => Ok(()),
    }
}

/// The command to run: the words, or with `--shell` one line for `sh -c`.
fn command_line(cli: &Cli) -> Result<CommandLine, ConfigError> {
    let words = cli.command.clone();
    let command = match cli.shell {
        true => CommandLine::shell(words),
        false => CommandLine::direct(words),
    };
    command.ok_or_else(|| {
        ConfigError(
            "no COMMAND given; put the command after the options, e.g. retry -- curl -fsS \
             https://example.com"
                .into(),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use retry_budget::store::Location;

    fn resolve(args: &[&str], env: &[(&str, &str)]) -> Result<Config, ConfigError> {
        let args: Vec<OsString> = std::iter::once("retry")
            .chain(args.iter().copied())
            .map(OsString::from)
            .collect();
        let cli = Cli::parse_args(&args);
        let env: Vec<(String, OsString)> = env
            .iter()
            .map(|(name, value)| (name.to_string(), OsString::from(value)))
            .collect();
        Config::resolve(cli.unwrap(), move |name| {
            env.iter()
                .find(|(key, _)| key == name)
                .map(|(_, value)| value.clone())
        })
    }

    fn config(args: &[&str]) -> Result<Config, ConfigError> {
        resolve(args, &[("XDG_STATE_HOME", "/home/someone/.local/state")])
    }

    #[test]
    fn resolves_a_plain_run() {
        let config = config(&["--", "true"]).unwrap();
        assert_eq!(
            config.command(),
            Some(&CommandLine::direct(vec!["true".into()]).unwrap())
        );
        assert_eq!(config.limit.count(), Some(5));
        assert_eq!(config.log.verbosity, Verbosity::Normal);
        assert_eq!(config.rules().splay, Duration::ZERO);
        assert_eq!(config.max_requested_wait, MAX_REQUESTED_WAIT);
    }

    #[test]
    fn cap_below_base_names_both_values() {
        let err = config(&["--base", "2s", "--cap", "1s", "true"]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "--cap (1s) must not be below --base (2s); raise --cap or lower --base"
        );
    }

    #[test]
    fn a_status_cannot_be_success_and_failure() {
        let err = config(&["--retry-on", "0-5", "true"])
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("--retry-on 0-5 names status 0, a success status"),
            "{err}"
        );
        let err = config(&["--success-on", "0,3", "--stop-on", "3", "true"]).unwrap_err();
        assert!(
            err.to_string().starts_with("--stop-on 3 names status 3"),
            "{err}"
        );
        assert!(config(&["--retry-on", "0,stdout:pending", "true"]).is_ok());
    }

    #[test]
    fn command_is_required_except_for_a_plan() {
        assert!(
            config(&[])
                .unwrap_err()
                .to_string()
                .starts_with("no COMMAND given")
        );
        assert!(config(&["--plan"]).unwrap().command().is_none());
        assert!(config(&["--plan", "true"]).unwrap().command().is_none());
    }

    #[test]
    fn zero_time_limits_mean_no_limit_as_for_coreutils_timeout() {
        let unlimited = config(&["--timeout", "0s", "--max-time", "0ms", "true"]).unwrap();
        assert_eq!(unlimited.process.timeout, None);
        assert_eq!(unlimited.rules().deadline, None);
        let err = config(&["--reset-after", "0s", "true"]).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("--reset-after (0s) must be more than 0s")
        );
        let config = config(&["-t", "2s", "--max-time", "1m", "--foreground", "true"]).unwrap();
        assert_eq!(config.process.timeout, Some(Duration::from_secs(2)));
        assert_eq!(config.process.kill_after, Duration::from_secs(10));
        assert_eq!(config.process.isolation, Isolation::Foreground);
        assert_eq!(config.max_time(), Some(Duration::from_secs(60)));
        let (at, source) = config
            .rules()
            .deadline
            .map(|deadline| (deadline.at, deadline.source))
            .unwrap();
        assert_eq!(source, DeadlineSource::MaxTime);
        assert_eq!(Some(at), config.deadline_at(), "one value, read once");
    }

    #[test]
    fn output_rules_are_compiled_checked_and_read_their_streams() {
        let err = config(&["--stop-on", "output:a(", "true"])
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("--stop-on 'output:a(' is not a valid regex"),
            "{err}"
        );
        let both = config(&[
            "--retry-on",
            "output:503",
            "--retry-on",
            "output:429",
            "true",
        ]);
        let both = both.unwrap();
        assert!(both.output.matches_stdout() && both.output.matches_stderr());
        assert_eq!(both.output.hold, Hold::Nothing);
        let stderr = config(&["--stop-on", "22,stderr:404", "true"]).unwrap();
        assert!(!stderr.output.pipes_stdout() && stderr.output.pipes_stderr());
        let held = config(&["--hold", "all", "true"]).unwrap();
        assert!(held.holds_everything() && held.output.pipes_stderr());
    }

    #[test]
    fn splay_must_leave_room_before_the_deadline() {
        let err = config(&["--splay", "1m", "--max-time", "30s", "true"])
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "--splay (1m) must be below --max-time (30s), or no attempt could start"
        );
    }

    #[test]
    fn the_splay_is_drawn_from_the_seed() {
        let config = config(&["--splay", "1m", "--seed", "5", "true"]).unwrap();
        let splay = config.rules().splay;
        assert_eq!(splay, backoff::splay(5, Duration::from_secs(60)));
        assert_eq!(config.plan().splay, Duration::from_secs(60));
    }

    /// The settings of a named budget.
    fn named(budget: RunBudget) -> BudgetSettings {
        match budget {
            RunBudget::Named(settings) => settings,
            other => panic!("not a named budget: {other:?}"),
        }
    }

    #[test]
    fn a_budget_store_needs_a_named_budget_and_resolves_a_directory() {
        let err = config(&["--budget-store", "file", "true"]).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("--budget-store says where a named budget")
        );
        let err = config(&["--budget", "off", "--budget-store", "file", "true"]).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("--budget-store says where a named budget")
        );
        let config = config(&["--budget", "api", "--budget-store", "file:/tmp/b", "true"]);
        let budget = named(config.unwrap().budget);
        assert_eq!(budget.name.as_str(), "api");
        assert_eq!(budget.store.location, Location::File("/tmp/b".into()));
    }

    #[test]
    fn without_a_named_budget_a_run_spends_from_the_default_one_for_its_target() {
        let home = [("HOME", "/h")];
        let run = |args: &[&str], env: &[(&str, &str)]| resolve(args, env).unwrap().budget;
        let RunBudget::Default(budget) = run(&["curl", "https://api.example.com/x"], &home) else {
            panic!("no default budget");
        };
        assert_eq!(budget.target.to_string(), "api.example.com");
        assert_eq!(budget.home, StateHome::Home("/h".into()));
        let RunBudget::Default(budget) = run(&["--cap", "5s", "make"], &[]) else {
            panic!("no default budget");
        };
        assert_eq!(budget.home, StateHome::Unset);
        assert_eq!(
            run(&["--budget", "off", "true"], &home),
            RunBudget::Off("--budget off")
        );
        let off = [("RETRY_BUDGET", "off")];
        assert_eq!(run(&["true"], &off), RunBudget::Off("RETRY_BUDGET=off"));
        let api = [("RETRY_BUDGET", "api"), ("XDG_STATE_HOME", "/h")];
        assert_eq!(named(run(&["true"], &api)).name.as_str(), "api");
        let off_at_home = [("RETRY_BUDGET", "off"), ("XDG_STATE_HOME", "/h")];
        assert_eq!(
            named(run(&["--budget", "other", "true"], &off_at_home))
                .name
                .as_str(),
            "other",
            "the flag wins"
        );
        let err = resolve(&["true"], &[("RETRY_BUDGET", "a/b")]).unwrap_err();
        assert!(err.to_string().starts_with("RETRY_BUDGET 'a/b': "), "{err}");
    }

    #[test]
    fn the_budget_directory_comes_from_the_environment() {
        let dir = |env: &[(&str, &str)]| {
            resolve(&["--budget", "api", "true"], env).map(|config| {
                match named(config.budget).store.location {
                    Location::File(dir) => dir,
                    other => panic!("{other:?}"),
                }
            })
        };
        let home = tempfile::tempdir().unwrap();
        let home_var = home.path().to_str().unwrap();
        assert_eq!(
            dir(&[("HOME", home_var)]).unwrap(),
            home.path().join(".local/state/retry/budgets")
        );
        assert_eq!(
            dir(&[("HOME", "/h"), ("XDG_STATE_HOME", "/state")]).unwrap(),
            PathBuf::from("/state/retry/budgets")
        );
        assert_eq!(
            dir(&[("HOME", home_var), ("XDG_STATE_HOME", "relative")]).unwrap(),
            home.path().join(".local/state/retry/budgets"),
            "a relative XDG_STATE_HOME is ignored, as the spec says"
        );
        assert!(
            dir(&[])
                .unwrap_err()
                .to_string()
                .contains("set XDG_STATE_HOME")
        );
        let missing = dir(&[("HOME", "/nonexistent")]).unwrap_err().to_string();
        assert!(
            missing.contains("HOME (/nonexistent) does not exist"),
            "{missing}"
        );
    }

    #[test]
    fn the_store_comes_from_the_flag_then_the_environment() {
        let store = |args: &[&str], env: &[(&str, &str)]| {
            let mut all = vec!["--budget", "api"];
            all.extend_from_slice(args);
            all.push("true");
            resolve(&all, env).map(|config| named(config.budget).store.location.to_string())
        };
        let home = ("XDG_STATE_HOME", "/h");
        let variable = ("RETRY_BUDGET_STORE", "redis://app:s3cret@cache:6379");
        assert_eq!(store(&[], &[home]).unwrap(), "file");
        assert_eq!(
            store(&[], &[home, variable]).unwrap(),
            "redis://app:***@cache:6379"
        );
        assert_eq!(
            store(&[], &[home, ("RETRY_BUDGET_STORE", "")]).unwrap(),
            "file",
            "an empty variable is none"
        );
        assert_eq!(
            store(&["--budget-store", "file"], &[home, variable]).unwrap(),
            "file",
            "the flag wins"
        );
        assert_eq!(
            store(&["--budget-store", "redis+unix:///run/r.sock"], &[]).unwrap(),
            "redis+unix:///run/r.sock",
            "a shared store needs no directory"
        );
        let err = store(&[], &[home, ("RETRY_BUDGET_STORE", "mysql://u:s3cret@db")]).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("RETRY_BUDGET_STORE: 'mysql' is not a budget store's scheme"),
            "{err}"
        );
        assert!(!err.to_string().contains("s3cret"), "{err}");
        let err = store(&["--budget-store", "redis//u:s3cret@h"], &[home]).unwrap_err();
        assert!(err.to_string().starts_with("--budget-store: "), "{err}");
        assert!(!err.to_string().contains("s3cret"), "{err}");
    }

    #[test]
    fn the_budget_and_its_store_reach_the_plan_and_the_report() {
        let env = [("RETRY_BUDGET_STORE", "redis://app:s3cret@cache?fail=closed")];
        let args = ["--budget", "api", "--report", "r.json", "true"];
        let config = resolve(&args, &env).unwrap();
        assert!(
            config.plan().budget.starts_with(
                "api, on the terms its store keeps (retry budget show api), in \
                 redis://app:***@cache (fail=closed)"
            ),
            "{}",
            config.plan().budget
        );
        let recorded = serde_json::to_value(&config.recorded).unwrap();
        assert_eq!(recorded["budget"], "api");
        assert_eq!(recorded["in_force"]["budget"]["kind"], "named");
        assert_eq!(
            recorded["in_force"]["budget_store"],
            "redis://app:***@cache"
        );
        assert!(!recorded.to_string().contains("s3cret"));
    }

    #[test]
    fn shell_wraps_the_words() {
        let config = config(&["--shell", "echo", "a"]).unwrap();
        assert_eq!(config.command().unwrap().program(), "sh");
    }

    #[test]
    fn the_report_records_every_option_as_given_or_by_default() {
        let recorded = config(&[
            "--report",
            "r.json",
            "--seed",
            "9",
            "-n",
            "unlimited",
            "--retry-on",
            "1",
            "--retry-on",
            "2",
            "--",
            "a",
            "b",
        ])
        .unwrap()
        .recorded;
        let json = serde_json::to_value(&recorded).unwrap();
        assert_eq!(json["seed"], "9");
        assert_eq!(json["in_force"]["seed"], 9);
        assert_eq!(json["max_attempts"], "unlimited");
        assert_eq!(json["base"], "1s", "a default");
        assert_eq!(json["retry_on"], serde_json::json!(["1", "2"]));
        assert_eq!(json["foreground"], false);
        assert_eq!(json["timeout"], serde_json::Value::Null);
        assert_eq!(json["command"], serde_json::json!(["a", "b"]));
        // Only a report reads them, so only a run that asks for one records them.
        let unreported = config(&["--seed", "9", "a"]).unwrap().recorded;
        assert_eq!(serde_json::to_value(&unreported).unwrap().get("seed"), None);
        let options: Vec<String> = crate::cli::full_command()
            .get_arguments()
            .filter_map(|arg| arg.get_long())
            .filter(|long| !matches!(*long, "help" | "version"))
            .map(|long| long.replace('-', "_"))
            .collect();
        for option in options {
            assert!(json.get(&option).is_some(), "{option} is not recorded");
        }
    }

    #[test]
    fn the_report_records_every_option_and_the_reference_the_rest() {
        let mut keys = Vec::new();
        // Each kind of budget in force has keys of its own.
        for args in [
            &["--report", "r.json", "true"][..],
            &["--report", "r.json", "--budget", "off", "true"],
            &["--report", "r.json", "--budget", "api", "true"],
        ] {
            let recorded = resolve(args, &[("XDG_STATE_HOME", "/h")]).unwrap().recorded;
            let recorded = serde_json::to_value(&recorded).unwrap();
            keys.extend(crate::reference::object_keys(&recorded, &["in_force"]));
            keys.extend(crate::reference::object_keys(
                &recorded["in_force"]["budget"],
                &[],
            ));
        }
        keys.sort();
        keys.dedup();
        let command = <Cli as clap::CommandFactory>::command();
        let options = command
            .get_arguments()
            .filter(|arg| !arg.is_positional())
            .filter_map(|arg| arg.get_long())
            .filter(|long| !matches!(*long, "help" | "version"))
            .map(|long| long.replace('-', "_"));
        let mut expected = crate::reference::row_keys("options");
        expected.extend(options);
        expected.sort();
        expected.dedup();
        assert_eq!(keys, expected);
    }

    #[test]
    fn multiplier_has_no_place_beside_decorrelated_jitter() {
        let err = config(&["--jitter", "decorrelated", "--multiplier", "3", "true"]).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("--multiplier (3) has no effect"),
            "{err}"
        );
        assert!(config(&["--jitter", "decorrelated", "true"]).is_ok());
        let default = config(&["true"]).unwrap();
        assert_eq!(default.backoff.multiplier(), 2.0);
    }

    #[test]
    fn runs_that_can_spin_for_ever_are_warned_about() {
        let warnings = |args: &[&str]| config(args).unwrap().warnings();
        assert!(warnings(&["-n", "unlimited", "--base", "0s", "true"])[0].contains("without end"));
        assert!(warnings(&["-n", "3", "--reset-after", "1s", "true"])[0].contains("never run out"));
        for bounded in [
            &[
                "-n",
                "unlimited",
                "--base",
                "0s",
                "--max-time",
                "1m",
                "true",
            ][..],
            &["-n", "3", "--base", "0s", "true"],
            &["-n", "3", "--reset-after", "10m", "true"],
            &["-n", "3", "--reset-after", "1m", "--cap", "1m", "true"],
            &["-n", "unlimited", "true"],
        ] {
            assert!(warnings(bounded).is_empty(), "{bounded:?}");
        }
    }

    #[test]
    fn the_parts_of_a_run_follow_the_flags() {
        let plain = config(&["true"]).unwrap();
        assert!(plain.hands_over_terminal());
        assert!(!plain.replay_stdin());
        assert!(plain.reports().0.is_empty());
        assert!(matches!(plain.budget(), RunBudget::Default(_)));
        assert_eq!((plain.job(), plain.job_given()), ("true", None));

        let every = config(&[
            "--foreground",
            "--replay-stdin",
            "--report",
            "r.json",
            "--report",
            "dotenv:r.txt",
            "--job",
            "nightly",
            "--budget",
            "api",
            "--budget-store",
            "file:/tmp/budgets",
            "true",
        ])
        .unwrap();
        assert!(!every.hands_over_terminal());
        assert!(every.replay_stdin());
        let formats: Vec<_> = every.reports().0.iter().map(|spec| spec.format).collect();
        assert_eq!(
            formats,
            [
                crate::report::formats::ReportFormat::Json,
                crate::report::formats::ReportFormat::Dotenv
            ]
        );
        assert_eq!(
            (every.job(), every.job_given()),
            ("nightly", Some("nightly"))
        );
        let api = config(&["--budget", "api", "true"]).unwrap();
        assert_eq!(api.job(), "api", "the budget names the job");

        let shared = config(&["--budget", "api", "--budget-store", "redis://cache", "true"]);
        let location = &named(shared.unwrap().budget).store.location;
        assert!(matches!(location, Location::Shared { .. }), "{location:?}");
    }

    #[test]
    fn a_nested_run_knows_it_from_the_environment() {
        let outer = [("RETRY_DEPTH", "1"), ("RETRY_TOTAL_ATTEMPTS", "3")];
        let nested = resolve(&["-n", "4", "true"], &outer).unwrap();
        assert_eq!((nested.rules().depth, nested.limit.count()), (2, Some(4)));
        assert!(nested.warnings()[0].contains("up to 3 × 4 = 12 attempts"));
        let once = resolve(
            &["-n", "4", "true"],
            &[outer[0], outer[1], ("RETRY_NESTED", "once")],
        );
        let once = once.unwrap();
        assert_eq!(
            (once.rules().limit.count(), once.warnings().len()),
            (Some(1), 0)
        );
        let alone = resolve(&["-n", "4", "true"], &[("RETRY_NESTED", "once")]).unwrap();
        assert_eq!((alone.rules().depth, alone.limit.count()), (1, Some(4)));
        let recorded = serde_json::to_value(&once.recorded).unwrap();
        assert_eq!(recorded["in_force"]["nested"], "once");
        let err = resolve(&["true"], &[("RETRY_NESTED", "twice")]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "RETRY_NESTED 'twice' is not once, retry or quiet"
        );
    }

    #[test]
    fn requested_waits_need_a_limit_and_a_group() {
        let limited = |value: &str| resolve(&["true"], &[("RETRY_MAX_REQUESTED_WAIT", value)]);
        let err = limited("0s").unwrap_err();
        assert!(
            err.to_string()
                .contains("RETRY_MAX_REQUESTED_WAIT (0s) must be more than 0s")
        );
        assert!(
            limited("5")
                .unwrap_err()
                .to_string()
                .contains("unit is needed")
        );
        assert_eq!(
            limited("1h").unwrap().max_requested_wait,
            Duration::from_secs(3600)
        );
        let err = config(&["--retry-after-output", "after: \\d+", "true"]).unwrap_err();
        assert!(
            err.to_string()
                .contains("has no group to read the wait from"),
            "{err}"
        );
        let config = config(&["--retry-after-output", "after: (.+)", "true"]).unwrap();
        assert_eq!(config.rules().max_requested_wait, Duration::from_secs(900));
        assert!(config.output.pipes_stdout() && config.output.pipes_stderr());
    }
}
