//! The run's settings: the parsed command line resolved into one consistent run, a list of
//! calls of the groups' resolutions, with every cross-group check made and the environment read
//! once (where the run sits among nested retries, how long a requested wait may be, and where
//! its budget lives).
//!
//! [`Config`] is the only reader of a run's [`Cli`]; the tool's subcommands own their options
//! (`budget show`, `budget set`) and are dispatched before it. A setting a part of the run takes
//! as it was resolved is a field the part reads; what is derived from several (the run loop's
//! rules, the plan, the warnings, the deadline in words) is a method, and so is the record of
//! the options that the report keeps, derived from the command line's definition. The fields
//! are set only here, and the run borrows them, never mutably. A new flag touches its group's
//! module, this file when the run keeps its setting, the module that uses it, and a test.

use std::ffi::OsString;
use std::time::{Duration, Instant, SystemTime};

use rand::SeedableRng;
use rand::rngs::Xoshiro256PlusPlus;
use retry_budget::RunBudget;
use retry_policy::attempts::AttemptLimit;
use retry_policy::backoff::{self, Backoff, Schedule};
use retry_policy::deadline::{Deadline, DeadlineSource};
use retry_policy::duration::{format_duration, to_millis};
use retry_policy::nesting::{Layer, Nested};
use retry_policy::presets::Preset;
use retry_policy::printable::printable;
use retry_policy::rules::RuleList;
use retry_policy::run::Rules;
use retry_policy::run_id::RunId;
use retry_policy::seed::Seed;

use super::{Cli, ConfigError};
use crate::environment;
use crate::monitor::Monitor;
use crate::output::{Hold, OutputOptions};
use crate::plan::PlanRequest;
use crate::process::hooks::HookLines;
use crate::process::{Isolation, ProcessOptions};
use crate::report::ci::CiSystem;
use crate::report::ci::outputs::GitHubFiles;
use crate::report::formats::ReportSpec;
use crate::report::verbosity::{LogFormat, LogSettings};
use crate::trace::{Traced, Tracing};
use retry_process::command_line::CommandLine;

use super::fleet::budget_in_force;
use super::from_environment::{
    Deadlines, github_files, host_name, max_requested_wait, nested, random_seed, run_id, tracing,
};
use super::job::HistoryPlace;
use super::record::{InForce, OptionsRecord};

/// Everything a run needs, checked for consistency.
#[derive(Debug)]
pub(crate) struct Config {
    /// What each attempt runs; none for `--plan`, which runs nothing.
    pub(crate) command: Option<CommandLine>,
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
    /// The budget the run spends from.
    pub(crate) budget: RunBudget,
    /// The form and amount of the tool's own messages.
    pub(crate) log: LogSettings,
    /// The run's identity: an outer run's, or its own.
    pub(crate) run_id: RunId,
    /// `--budget-store`, as given (it holds no password), for a process of the run's own.
    pub(crate) store_flag: Option<String>,
    /// The run's deadline, and what the environment said of deadlines.
    deadlines: Deadlines,
    /// The process-control options of an attempt (and of a hook).
    pub(crate) process: ProcessOptions,
    /// Whether stdin is read to its end and given to every attempt.
    pub(crate) replay_stdin: bool,
    /// The output conditions, and what is held.
    pub(crate) output: OutputOptions,
    /// The hooks' shell lines.
    pub(crate) hooks: HookLines,
    reset_after: Option<Duration>,
    flaky_exit: Option<u8>,
    reports: Vec<ReportSpec>,
    /// `--job`, or what names the job by default.
    pub(crate) job: String,
    /// Where a job named with `--job` keeps its history of runs; none for a run with no job
    /// name, or none it can keep.
    pub(crate) history: Option<HistoryPlace>,
    /// Why a named job keeps no history, if it keeps none.
    history_problem: Option<String>,
    /// Whether `--job` named it.
    job_given: bool,
    /// `--preset`, as it resolved.
    preset: PresetInForce,
    /// The heartbeat monitor told of the run's start and outcome.
    pub(crate) monitor: Option<Monitor>,
    /// The run's place in a trace, and where its spans go.
    pub(crate) tracing: Option<Tracing>,
    /// What the tracing and monitor variables held that could not be used.
    tracing_problems: Vec<String>,
    /// The CI system the run is in.
    ci: Option<CiSystem>,
    /// GitHub's files for the run's outcome.
    pub(crate) github: GitHubFiles,
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

impl TryFrom<Cli> for Config {
    type Error = ConfigError;

    fn try_from(cli: Cli) -> Result<Self, ConfigError> {
        Config::resolve(cli, environment::own)
    }
}

impl Config {
    /// Resolve `cli`, reading the environment through `env`: each group of options resolves
    /// its own, given what it needs of the others.
    fn resolve(mut cli: Cli, env: impl Fn(&str) -> Option<OsString>) -> Result<Self, ConfigError> {
        let words = &cli.command;
        let backoff = cli.waits.backoff()?;
        let max_requested_wait = max_requested_wait(&env)?;
        let nested = nested(&env)?;
        let program = words.first().and_then(|program| program.to_str());
        let preset = cli.rules.preset(program);
        let mut budget = cli.fleet.run_budget(words, &env, preset)?;
        cli.fleet
            .store_has_a_place(&budget, cli.job.job.is_some())?;
        let request = cli.limits.request(words, preset);
        let rules = cli.rules.resolve(preset, request.as_ref())?;
        let (tracing, mut tracing_problems) = tracing(&env);
        // A monitor that cannot be used is one that is down: said, and the command runs.
        let monitor = Monitor::from_environment(&env).unwrap_or_else(|why| {
            tracing_problems.push(format!(
                "the heartbeat monitor cannot be used ({why}); the run goes on, and no monitor \
                 is told of it"
            ));
            None
        });
        // The outcome's ping carries the end of the output, as a report that shows it does.
        let tails = cli.reports.show_output() || monitor.is_some();
        let output = (cli.output).options(&rules, &cli.rules.waits_asked(preset), tails)?;
        let layer = Layer::of(
            env(environment::OUTER_DEPTH.name).as_deref(),
            env(environment::OUTER_TOTAL_ATTEMPTS.name).as_deref(),
        );
        let command = cli.limits.command(words, cli.plan)?;
        let job = cli.job.name(&budget, words);
        let now = SystemTime::now();
        let known_job = cli.job.known(&cli.fleet.store, &budget, &env, now);
        // One failure of the store is the run's: its budget does not wait for it again.
        if let Some(why) = known_job.store_unanswered.clone() {
            budget.store_unanswered(why);
        }
        let deadlines = Deadlines::of(
            cli.limits.max_time(cli.fleet.splay)?,
            known_job.slot,
            &env,
            now,
        );
        // A run inside another's attempt leaves the CI system to the outermost run: its groups
        // would break the outer group (they do not nest), and its outputs would be the outer's.
        let ci = cli.output.ci().resolve(&env).filter(|_| layer.depth() == 1);
        let run_id = run_id(&env);
        let seed = Seed::resolve(cli.waits.seed, words, || host_name(&env), random_seed);
        let limit = layer.limit(nested, cli.waits.max_attempts());
        let in_force = InForce {
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
            splay: cli.fleet.splay,
            budget,
            deadlines,
            process: cli.limits.process(),
            replay_stdin: cli.limits.replay_stdin,
            output,
            preset: match (cli.rules.preset, preset) {
                (Some(_), None) => {
                    PresetInForce::NoneForProgram(program.map(str::to_string).unwrap_or_default())
                }
                (_, preset) => PresetInForce::Given(preset),
            },
            hooks: cli.hooks.lines(),
            reset_after: cli.waits.reset_after,
            flaky_exit: cli.rules.flaky_exit,
            log: cli.output.log(run_id),
            run_id,
            store_flag: cli.fleet.store.budget_store.clone(),
            job,
            history: known_job.place,
            history_problem: known_job.problem,
            job_given: cli.job.job.is_some(),
            github: github_files(ci, &env),
            monitor,
            tracing,
            tracing_problems,
            ci,
            recorded: OptionsRecord::of(&mut cli, in_force),
            reports: cli.reports.report,
        })
    }

    /// The observer that records the run's spans and sends them at its end, when it sends them.
    pub(crate) fn traced(&self) -> Option<Traced<'_>> {
        self.tracing.as_ref()?.recorder(self.run_id)
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
            attempt_time: self
                .process
                .timeout
                .map(|timeout| timeout.saturating_add(self.process.kill_after)),
            kill_after: self.process.kill_after,
            past: None,
        }
    }

    /// What the user should know before the run starts: a run inside another retry, a run that
    /// can go on for ever, fast.
    pub(crate) fn warnings(&self) -> Vec<String> {
        let mut warnings: Vec<String> = self
            .layer
            .warning(self.nested, self.limit)
            .into_iter()
            .chain(self.deadlines.problems.iter().cloned())
            .chain(self.history_problem.iter().cloned())
            .chain(self.tracing_problems.iter().cloned())
            .collect();
        if let PresetInForce::NoneForProgram(program) = &self.preset {
            warnings.push(format!(
                "--preset auto: no preset knows '{}'; deciding by the exit status alone, as \
                 without --preset",
                printable(program)
            ));
        }
        if self.deadlines.soonest.is_some() {
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
            deadline: self.deadlines.at,
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

    /// `--cap`: the longest wait between attempts, and the longest a named budget makes a
    /// retry wait for its token.
    pub(crate) fn cap(&self) -> Duration {
        self.backoff.cap()
    }

    /// The limit of the whole run, from its resolution: `--max-time`, or a sooner deadline from
    /// outside.
    fn max_time(&self) -> Option<Duration> {
        self.deadlines.soonest.map(|deadline| deadline.left)
    }

    /// When the whole run must end: the instant the run and what is written after it count to.
    pub(crate) fn deadline_at(&self) -> Option<Instant> {
        self.deadlines.at.map(|deadline| deadline.at)
    }

    /// The run's deadline, and where it came from.
    pub(crate) fn deadline(&self) -> Option<Deadline> {
        self.deadlines.soonest
    }

    /// Which deadline applies and where it came from, in words, when it is not `--max-time`'s.
    pub(crate) fn deadline_described(&self) -> Option<String> {
        self.deadlines
            .soonest
            .filter(|deadline| deadline.source != DeadlineSource::MaxTime)
            .map(|deadline| {
                let described = deadline.describe(self.deadlines.job.as_ref());
                match (deadline.source, &self.deadlines.slot) {
                    (DeadlineSource::Schedule, Some(slot)) => format!("{described} at {}", slot.at),
                    _ => described,
                }
            })
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

    /// The `--report` files, and the options in force as the JSON ones record them.
    pub(crate) fn reports(&self) -> (&[ReportSpec], &OptionsRecord) {
        (&self.reports, &self.recorded)
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

    /// `--hold all`.
    pub(crate) fn holds_everything(&self) -> bool {
        self.output.hold == Hold::Everything
    }

    /// The command's words, as given.
    pub(crate) fn command_words(&self) -> &[String] {
        &self.recorded.command
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
