//! Resolving the parsed command line into one consistent run, and building the run's parts.
//!
//! [`Config`] is the only reader of [`Cli`]: every cross-flag check lives here, and the one read
//! of the environment (the default budget directory) and the one draw of a random seed. Its
//! fields are private; it hands out the parts a run is made of (the loop's rules, the waits, the
//! process runner, the budget, the reporter, the report), as ripgrep's `HiArgs` hands out its
//! matcher. A new flag touches `cli.rs`, this file, the module that uses it, and the README.

use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rand::SeedableRng;
use rand::rngs::Xoshiro256PlusPlus;
use serde::Serialize;

use crate::attempts::AttemptLimit;
use crate::backoff::{self, Backoff, BackoffError, DEFAULT_MULTIPLIER, Jitter, Schedule};
use crate::budget::file::{BudgetFile, Refused};
use crate::budget::model::Terms;
use crate::budget::show::ShowRequest;
use crate::budget::store::{Location, OnFailure, RedisAddress, Store};
use crate::budget::{BudgetName, Prepared};
use crate::cli::simulate::{
    ContentionArgs, Experiment as SimulateExperiment, LoadArgs, SimulateCommand,
};
use crate::cli::{BudgetCommand, BudgetShowArgs, Cli, Subcommand};
use crate::duration::{format_duration, to_millis};
use crate::environment;
use crate::nesting::{Layer, Nested};
use crate::output::OutputOptions;
use crate::output::conditions::{OutputConditions, PatternError, PatternTexts};
use crate::plan::PlanRequest;
use crate::policy::{Overlap, Policy};
use crate::process::command_line::CommandLine;
use crate::process::hooks::{HookLines, HookRunner};
use crate::process::request_file::RequestFiles;
use crate::process::signals::SignalWatch;
use crate::process::stdin_replay::HeldInput;
use crate::process::terminal::Terminal;
use crate::process::{Isolation, ProcessOptions, ProcessRunner};
use crate::report::file::{ReportTarget, ReportWriter};
use crate::report::outlet::Outlet;
use crate::report::reporter::Reporter;
use crate::report::verbosity::{LogFormat, LogSettings, Verbosity};
use crate::retry_loop::Rules;
use crate::seed::Seed;
use crate::simulate;

/// Everything an invocation needs, checked for consistency.
#[derive(Debug)]
pub(crate) struct Config {
    action: Action,
    /// The attempt limit in force: `--max-attempts`, or one with `--nested once` when nested.
    limit: AttemptLimit,
    /// Where the run sits among nested retries, and what `--nested` makes of it.
    layer: Layer,
    nested: Nested,
    max_requested_wait: Duration,
    backoff: Backoff,
    policy: Policy,
    /// The jitter's seed: given, derived from the host, or drawn.
    seed: u64,
    splay: Option<Duration>,
    budget: Option<BudgetSettings>,
    log: LogSettings,
    max_time: Option<Duration>,
    process: ProcessOptions,
    replay_stdin: bool,
    output: OutputOptions,
    hooks: HookLines,
    reset_after: Option<Duration>,
    report: Option<PathBuf>,
    recorded: ReportOptions,
}

/// What the invocation asks for.
#[derive(Debug)]
pub(crate) enum Action {
    /// Run this command until it succeeds or the run gives up.
    Run(CommandLine),
    /// Print the schedule of waits and exit.
    Plan,
    /// Run the simulator.
    Simulate(simulate::Settings),
    /// Print a budget's state.
    ShowBudget(ShowRequest),
}

/// A shared retry budget.
#[derive(Clone, Debug, PartialEq)]
struct BudgetSettings {
    name: BudgetName,
    terms: Terms,
    location: Location,
    on_failure: OnFailure,
}

/// The options in force, as `--report` records them: the report's `options` object.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct ReportOptions {
    command: Vec<String>,
    shell: bool,
    max_attempts: AttemptLimit,
    base_ms: f64,
    cap_ms: f64,
    multiplier: f64,
    jitter: &'static str,
    seed: u64,
    splay_ms: Option<f64>,
    budget: Option<String>,
    budget_rate: Option<String>,
    budget_ratio: Option<f64>,
    budget_window_ms: Option<f64>,
    budget_store: Option<String>,
    budget_store_fail: Option<&'static str>,
    success_on: String,
    retry_on: Option<String>,
    stop_on: Option<String>,
    retry_on_output: Vec<String>,
    stop_on_output: Vec<String>,
    retry_after_output: Vec<String>,
    success_on_output: Vec<String>,
    output_stream: &'static str,
    max_requested_wait_ms: f64,
    nested: &'static str,
    timeout_signal: String,
    on_retry: Option<String>,
    on_give_up: Option<String>,
    hold_output: bool,
    timeout_ms: Option<f64>,
    max_time_ms: Option<f64>,
    kill_after_ms: f64,
    reset_after_ms: Option<f64>,
    foreground: bool,
    replay_stdin: bool,
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
        Config::resolve(cli, |name| std::env::var_os(name))
    }
}

impl Config {
    /// Resolve `cli`, reading the environment through `env`.
    fn resolve(mut cli: Cli, env: impl Fn(&str) -> Option<OsString>) -> Result<Self, ConfigError> {
        // 0s is no limit, as coreutils timeout takes it.
        cli.timeout = cli.timeout.filter(|limit| !limit.is_zero());
        cli.max_time = cli.max_time.filter(|limit| !limit.is_zero());
        if cli.reset_after == Some(Duration::ZERO) {
            return Err(ConfigError(
                "--reset-after (0s) must be more than 0s, or every failure would start the count \
                 over; leave it out to never start over"
                    .into(),
            ));
        }
        if let (Some(multiplier), Jitter::Decorrelated) = (cli.multiplier, cli.jitter()) {
            return Err(ConfigError(format!(
                "--multiplier ({multiplier}) has no effect with --jitter decorrelated, whose waits \
                 grow from the previous wait; leave out --multiplier, or choose another --jitter"
            )));
        }
        let multiplier = cli.multiplier();
        let backoff = Backoff::new(cli.base(), cli.cap(), multiplier, cli.jitter())
            .map_err(|err| backoff_error(err, cli.base(), cli.cap(), multiplier))?;
        if let (Some(splay), Some(max_time)) = (cli.splay, cli.max_time)
            && splay >= max_time
        {
            return Err(ConfigError(format!(
                "--splay ({}) must be below --max-time ({}), or no attempt could start",
                format_duration(splay),
                format_duration(max_time)
            )));
        }
        let budget = match cli.budget.clone() {
            None => None,
            Some(name) => Some(budget_settings(name, &cli, &env)?),
        };
        if cli.max_requested_wait().is_zero() {
            return Err(ConfigError(
                "--max-requested-wait (0s) must be more than 0s, e.g. 15m; to bound the whole \
                 run, give --max-time"
                    .into(),
            ));
        }
        let conditions = OutputConditions::new(&PatternTexts {
            retry: cli.retry_on_output.clone(),
            stop: cli.stop_on_output.clone(),
            success: cli.success_on_output.clone(),
            after: cli.retry_after_output.clone(),
        })
        .map_err(|PatternError(message)| ConfigError(message))?;
        let layer = Layer::of(
            env(environment::OUTER_DEPTH.name).as_deref(),
            env(environment::OUTER_TOTAL_ATTEMPTS.name).as_deref(),
            env(environment::OUTER_MAX_ATTEMPTS.name).as_deref(),
        );
        let policy = Policy::new(cli.success_on(), cli.retry_on, cli.stop_on)
            .map_err(|overlap| overlap_error(overlap, &cli))?
            .requiring_retry_match(conditions.requires_retry_match())
            .requiring_success_match(conditions.requires_success_match());
        let seed = Seed::resolve(cli.seed, &cli.command);
        let recorded = ReportOptions::of(&cli, seed, budget.as_ref());
        let action = match (cli.subcommand.take(), cli.plan) {
            (Some(Subcommand::Simulate(args)), _) => Action::Simulate(simulate_settings(*args)?),
            (Some(Subcommand::Budget { command }), _) => {
                let BudgetCommand::Show(args) = command;
                cli.log_format = Some(args.log_format);
                Action::ShowBudget(show_request(args, &env)?)
            }
            (None, true) => Action::Plan,
            (None, false) => Action::Run(command_line(&cli)?),
        };
        Ok(Config {
            action,
            limit: layer.limit(cli.nested(), cli.max_attempts()),
            layer,
            nested: cli.nested(),
            max_requested_wait: cli.max_requested_wait(),
            backoff,
            policy,
            seed,
            splay: cli.splay,
            budget,
            max_time: cli.max_time,
            process: ProcessOptions {
                timeout: cli.timeout,
                kill_after: cli.kill_after(),
                timeout_signal: cli.timeout_signal(),
                isolation: match cli.foreground {
                    true => Isolation::Foreground,
                    false => Isolation::OwnGroup,
                },
            },
            replay_stdin: cli.replay_stdin,
            output: OutputOptions {
                conditions: Arc::new(conditions),
                stream: cli.output_stream(),
                hold: cli.hold_output,
            },
            hooks: HookLines {
                on_retry: cli.on_retry.clone(),
                on_give_up: cli.on_give_up.clone(),
            },
            reset_after: cli.reset_after,
            log: LogSettings {
                format: cli.log_format(),
                verbosity: match (cli.quiet, cli.verbose) {
                    (true, _) => Verbosity::Quiet,
                    (false, true) => Verbosity::Verbose,
                    (false, false) => Verbosity::Normal,
                },
            },
            report: cli.report,
            recorded,
        })
    }

    /// What the invocation asks for.
    pub(crate) fn action(&self) -> &Action {
        &self.action
    }

    /// The form of the tool's own output.
    pub(crate) fn log_format(&self) -> LogFormat {
        self.log.format
    }

    /// What `--plan` shows.
    pub(crate) fn plan(&self) -> PlanRequest {
        PlanRequest {
            limit: self.limit,
            backoff: self.backoff,
            seed: self.seed,
            splay: self.splay.unwrap_or_default(),
            max_time: self.max_time,
            budget: self.budget.as_ref().map(BudgetSettings::describe),
            max_requested_wait: self.max_requested_wait,
        }
    }

    /// What the user should know before the run starts: a run inside another retry, a run that
    /// can go on for ever, fast.
    pub(crate) fn warnings(&self) -> Vec<String> {
        let mut warnings: Vec<String> = self
            .layer
            .warning(self.nested, self.limit)
            .into_iter()
            .collect();
        if self.max_time.is_some() {
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
                "--reset-after ({}) is shorter than --cap ({}): every failure that lasts \
                     that long starts the count over, so --max-attempts {limit} may never run \
                     out; give --max-time to bound the run",
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
            policy: self.policy.clone(),
            max_time: self.max_time,
            reset_after: self.reset_after,
            splay: backoff::splay(self.seed, self.splay.unwrap_or_default()),
            max_requested_wait: self.max_requested_wait,
            depth: self.layer.depth(),
        }
    }

    /// The waits between attempts, drawn from the seed.
    pub(crate) fn waits(&self) -> Schedule<Xoshiro256PlusPlus> {
        self.backoff
            .schedule(Xoshiro256PlusPlus::seed_from_u64(self.seed))
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

    /// The runner of `command`'s attempts, taking signals from `watch`.
    pub(crate) fn runner<'a>(
        &self,
        command: CommandLine,
        watch: &'a SignalWatch,
        terminal: Option<&'a Terminal>,
        input: Option<HeldInput>,
        requests: RequestFiles,
    ) -> ProcessRunner<'a> {
        ProcessRunner {
            command,
            total: self.layer.total(self.limit),
            options: self.process,
            watch,
            terminal,
            input,
            output: self.output.clone(),
            requests: Some(requests),
        }
    }

    /// The runner of the hooks, taking signals from `watch` and handing them `terminal`, as
    /// attempts are.
    pub(crate) fn hooks<'a>(
        &self,
        watch: &'a SignalWatch,
        terminal: Option<&'a Terminal>,
    ) -> HookRunner<'a> {
        HookRunner {
            lines: self.hooks.clone(),
            options: self.process,
            watch,
            terminal,
            total: self.layer.total(self.limit),
        }
    }

    /// The `--report` writer, its path checked; the error is the message.
    pub(crate) fn report_writer(&self) -> Result<Option<ReportWriter>, String> {
        let Some(path) = &self.report else {
            return Ok(None);
        };
        let target = ReportTarget::check(path)?;
        Ok(Some(ReportWriter::new(
            target,
            path,
            &self.recorded,
            self.layer.depth(),
        )))
    }

    /// The `--budget`, its file checked when the file store keeps it: one that cannot be used
    /// says why, for the run to warn of it and go on as `--budget-store-fail` says.
    pub(crate) fn budget(&self) -> Option<Prepared> {
        let budget = self.budget.as_ref()?;
        let terms = budget.terms;
        let on_failure = budget.on_failure;
        Some(match &budget.location {
            Location::File(dir) => match BudgetFile::check(dir, &budget.name) {
                Ok(file) => Prepared::File {
                    file,
                    terms,
                    on_failure,
                },
                Err(Refused(why)) => Prepared::Unusable { why, on_failure },
            },
            Location::Shared { address, fallback } => Prepared::Shared {
                address: address.clone(),
                on_failure,
                dir: fallback.clone(),
                name: budget.name.clone(),
                terms,
            },
        })
    }

    /// The reporter of the tool's own messages on stderr.
    pub(crate) fn reporter(&self) -> Reporter<Outlet> {
        Reporter::on_stderr(self.log)
    }

    /// The shared store's address, whose secrets to hide where the tool was given them.
    pub(crate) fn store_address(&self) -> Option<&RedisAddress> {
        let location = match &self.action {
            Action::ShowBudget(request) => Some(&request.location),
            _ => self.budget.as_ref().map(|budget| &budget.location),
        };
        match location {
            Some(Location::Shared { address, .. }) => Some(address),
            _ => None,
        }
    }

    /// `--max-time`, the limit of the whole run.
    pub(crate) fn max_time(&self) -> Option<Duration> {
        self.max_time
    }
}

impl BudgetSettings {
    /// The budget as the plan's header names it: its name, its terms, and a shared store.
    fn describe(&self) -> String {
        let terms = &self.terms;
        let mut text = format!("{} at {}", self.name.as_str(), terms.rate);
        if let Some(ratio) = terms.ratio {
            text += &format!(
                " plus {ratio} per first attempt over {}",
                format_duration(terms.window)
            );
        }
        if let Location::Shared { address, .. } = &self.location {
            text += &format!(" in {address} ({} when it fails)", self.on_failure.name());
        }
        text
    }
}

impl ReportOptions {
    fn of(cli: &Cli, seed: u64, budget: Option<&BudgetSettings>) -> Self {
        let millis = |duration: Option<Duration>| duration.map(to_millis);
        let text = |words: &[String]| words.to_vec();
        ReportOptions {
            command: cli
                .command
                .iter()
                .map(|word| word.to_string_lossy().into_owned())
                .collect(),
            shell: cli.shell,
            max_attempts: cli.max_attempts(),
            base_ms: to_millis(cli.base()),
            cap_ms: to_millis(cli.cap()),
            multiplier: cli.multiplier(),
            jitter: cli.jitter().name(),
            seed,
            splay_ms: millis(cli.splay),
            budget: budget.map(|budget| budget.name.as_str().to_string()),
            budget_rate: budget.map(|budget| budget.terms.rate.to_string()),
            budget_ratio: budget.and_then(|budget| budget.terms.ratio),
            budget_window_ms: budget.map(|budget| to_millis(budget.terms.window)),
            budget_store: budget.map(|budget| budget.location.to_string()),
            budget_store_fail: budget.map(|budget| budget.on_failure.name()),
            success_on: cli.success_on().to_string(),
            retry_on: cli.retry_on.map(|set| set.to_string()),
            stop_on: cli.stop_on.map(|set| set.to_string()),
            retry_on_output: text(&cli.retry_on_output),
            stop_on_output: text(&cli.stop_on_output),
            retry_after_output: text(&cli.retry_after_output),
            success_on_output: text(&cli.success_on_output),
            output_stream: cli.output_stream().name(),
            timeout_signal: cli.timeout_signal().to_string(),
            on_retry: cli.on_retry.clone(),
            on_give_up: cli.on_give_up.clone(),
            max_requested_wait_ms: to_millis(cli.max_requested_wait()),
            nested: cli.nested().name(),
            hold_output: cli.hold_output,
            timeout_ms: millis(cli.timeout),
            max_time_ms: millis(cli.max_time),
            kill_after_ms: to_millis(cli.kill_after()),
            reset_after_ms: millis(cli.reset_after),
            foreground: cli.foreground,
            replay_stdin: cli.replay_stdin,
        }
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

/// The simulator's settings, from the options of the experiment `command` names (contention
/// unless it names one); the backoff comes from the simulator's own flags.
fn simulate_settings(command: SimulateCommand) -> Result<simulate::Settings, ConfigError> {
    match command.experiment {
        Some(SimulateExperiment::Load(args)) => load_settings(args),
        Some(SimulateExperiment::Contention(args)) => contention_settings(args),
        None => contention_settings(command.contention),
    }
}

/// The most trials one run of the contention experiment may hold results for, all strategies
/// and client counts together.
const CONTENTION_TRIALS: usize = 1_000_000;

fn contention_settings(args: ContentionArgs) -> Result<simulate::Settings, ConfigError> {
    let backoff = Backoff::new(args.base, args.cap, args.multiplier, Jitter::None)
        .map_err(|err| backoff_error(err, args.base, args.cap, args.multiplier))?;
    let mut jitters: Vec<Jitter> = Vec::new();
    for jitter in args.jitter {
        if !jitters.contains(&jitter) {
            jitters.push(jitter);
        }
    }
    // The no-backoff baseline is always simulated too.
    let trials = (jitters.len() + 1) * args.clients.0.len() * args.trials as usize;
    if trials > CONTENTION_TRIALS {
        return Err(ConfigError(format!(
            "this contention simulation is too large: {trials} trials (at most \
             {CONTENTION_TRIALS}: strategies, the baseline among them, times client counts \
             times --trials)"
        )));
    }
    Ok(simulate::Settings {
        experiment: simulate::Experiment::Contention(simulate::contention::Experiment {
            clients: args.clients.0,
            jitters,
            backoff,
            trials: args.trials,
            seed: Seed::resolve(args.output.seed.map(Seed::Number), &[]),
        }),
        csv: args.output.csv,
        svg: args.output.svg,
    })
}

/// The most first tries one trial of the load experiment may simulate, and the most trials one
/// run may: beyond them a run would take hours.
const LOAD_LIMITS: (f64, usize) = (10_000_000.0, 100_000);

fn load_settings(args: LoadArgs) -> Result<simulate::Settings, ConfigError> {
    let positive = [
        ("--duration", args.duration),
        ("--budget-window", args.budget_window),
    ];
    for (flag, value) in positive {
        if value.is_zero() {
            return Err(ConfigError(format!("{flag} (0s) must be more than 0s")));
        }
    }
    let duration = args.duration.as_secs_f64();
    let first_tries = f64::from(args.clients) * args.rate.0 * duration;
    let trials = args.failure_rates.0.len() * args.policies.len() * args.trials as usize;
    if first_tries > LOAD_LIMITS.0 || trials > LOAD_LIMITS.1 {
        return Err(ConfigError(format!(
            "this load simulation is too large: {first_tries:.0} first tries a trial (at most \
             {:.0}: --clients times --rate times --duration) and {trials} trials (at most {}: \
             failure rates times policies times --trials)",
            LOAD_LIMITS.0, LOAD_LIMITS.1
        )));
    }
    let cap = args.base.max(Duration::from_secs(60));
    let backoff = Backoff::new(args.base, cap, DEFAULT_MULTIPLIER, args.jitter)
        .map_err(|err| backoff_error(err, args.base, cap, DEFAULT_MULTIPLIER))?;
    let mut policies = args.policies;
    policies.dedup();
    Ok(simulate::Settings {
        experiment: simulate::Experiment::Load(simulate::load::Experiment {
            failure_rates: args.failure_rates.0,
            policies,
            retries: args.retries,
            clients: args.clients,
            rate: args.rate.0,
            serial: args.serial,
            backoff: args.backoff.then_some(backoff),
            budget: simulate::load::BudgetPolicy {
                terms: Terms {
                    rate: args.budget_rate,
                    ratio: Some(args.budget_ratio.0),
                    window: args.budget_window,
                },
                shared: args.shared,
            },
            duration,
            trials: args.trials,
            seed: Seed::resolve(args.output.seed.map(Seed::Number), &[]),
        }),
        csv: args.output.csv,
        svg: args.output.svg,
    })
}

/// The `--budget` settings, the store read from `RETRY_BUDGET_STORE` through `env` when no
/// `--budget-store` is given.
fn budget_settings(
    name: BudgetName,
    cli: &Cli,
    env: impl Fn(&str) -> Option<OsString>,
) -> Result<BudgetSettings, ConfigError> {
    if cli.budget_window().is_zero() {
        return Err(ConfigError(
            "--budget-window (0s) must be more than 0s, e.g. 1m: earned tokens would be gone \
             at once"
                .into(),
        ));
    }
    let store = budget_store(
        cli.budget_store.as_deref(),
        cli.budget_password_file.as_deref(),
        &env,
    )?;
    let dir = cli.budget_dir.clone().or_else(|| default_budget_dir(&env));
    let location = Location::new(store, dir).ok_or_else(|| {
        ConfigError("--budget needs a directory: give --budget-dir, or set HOME".into())
    })?;
    Ok(BudgetSettings {
        name,
        terms: Terms {
            rate: cli.budget_rate(),
            ratio: cli.budget_ratio.map(|ratio| ratio.0),
            window: cli.budget_window(),
        },
        location,
        on_failure: cli.budget_store_fail(),
    })
}

/// What `retry budget show` shows.
fn show_request(
    args: BudgetShowArgs,
    env: impl Fn(&str) -> Option<OsString>,
) -> Result<ShowRequest, ConfigError> {
    let store = budget_store(
        args.budget_store.as_deref(),
        args.budget_password_file.as_deref(),
        &env,
    )?;
    let dir = args.budget_dir.or_else(|| default_budget_dir(&env));
    let location = Location::new(store, dir).ok_or_else(|| {
        ConfigError("retry budget show needs a directory: give --budget-dir, or set HOME".into())
    })?;
    Ok(ShowRequest {
        name: args.name,
        location,
    })
}

/// The store `flag` (`--budget-store`) names, or else `RETRY_BUDGET_STORE` (an empty one is
/// none), or else the file store, with the password in `password_file` if one is given; the
/// error names where the address came from, its password hidden.
fn budget_store(
    flag: Option<&str>,
    password_file: Option<&Path>,
    env: impl Fn(&str) -> Option<OsString>,
) -> Result<Store, ConfigError> {
    let variable = environment::BUDGET_STORE.name;
    let (source, text) = match (flag, env(variable).filter(|value| !value.is_empty())) {
        (Some(text), _) => ("--budget-store", text.to_string()),
        (None, Some(value)) => match value.into_string() {
            Ok(text) => (variable, text),
            Err(_) => {
                return Err(ConfigError(format!(
                    "{variable} is not valid UTF-8; expected file or a redis:// URL"
                )));
            }
        },
        (None, None) => ("--budget-store", "file".to_string()),
    };
    let store = Store::parse(&text).map_err(|err| ConfigError(format!("{source}: {err}")))?;
    match (store, password_file) {
        (Store::Redis(address), Some(file)) => address
            .with_password_from(file)
            .map(Store::Redis)
            .map_err(ConfigError),
        (Store::File, Some(_)) => Err(ConfigError(
            "--budget-password-file needs a shared store: give --budget-store redis://... or \
             set RETRY_BUDGET_STORE"
                .into(),
        )),
        (store, None) => Ok(store),
    }
}

/// The default `--budget-dir`: `$XDG_STATE_HOME/retry/budgets`, or
/// `$HOME/.local/state/retry/budgets`.
fn default_budget_dir(env: impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    let state_home = env("XDG_STATE_HOME")
        .filter(|dir| Path::new(dir).is_absolute())
        .map(PathBuf::from)
        .or_else(|| env("HOME").map(|home| Path::new(&home).join(".local/state")))?;
    Some(state_home.join("retry/budgets"))
}

/// The error for backoff parameters that [`Backoff::new`] refused, naming the flags and values.
fn backoff_error(err: BackoffError, base: Duration, cap: Duration, multiplier: f64) -> ConfigError {
    ConfigError(match err {
        BackoffError::CapBelowBase => format!(
            "--cap ({}) must not be below --base ({}); raise --cap or lower --base",
            format_duration(cap),
            format_duration(base)
        ),
        BackoffError::BadMultiplier => {
            format!("--multiplier ({multiplier}) must be a finite number of at least 1")
        }
    })
}

fn overlap_error(overlap: Overlap, cli: &Cli) -> ConfigError {
    let failures = match overlap.flag {
        "--retry-on" => cli.retry_on,
        _ => cli.stop_on,
    };
    ConfigError(format!(
        "status {} is in both --success-on ({}) and {} ({}); a status cannot be success and failure",
        overlap.status,
        cli.success_on(),
        overlap.flag,
        failures.unwrap_or_default(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

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
        resolve(args, &[("HOME", "/home/someone")])
    }

    #[test]
    fn resolves_a_plain_run() {
        let config = config(&["--", "true"]).unwrap();
        let Action::Run(command) = config.action() else {
            panic!("not a run")
        };
        assert_eq!(command, &CommandLine::direct(vec!["true".into()]).unwrap());
        assert_eq!(config.limit.count(), Some(5));
        assert_eq!(config.log.verbosity, Verbosity::Normal);
        assert_eq!(config.rules().splay, Duration::ZERO);
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
    fn success_and_failure_lists_must_not_overlap() {
        let err = config(&["--retry-on", "0-5", "true"])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("status 0 is in both --success-on (0) and --retry-on (0-5)"),
            "{err}"
        );
        let err = config(&["--success-on", "0,3", "--stop-on", "3", "true"]).unwrap_err();
        assert!(err.to_string().contains("--stop-on (3)"), "{err}");
    }

    #[test]
    fn command_is_required_except_for_a_plan() {
        assert!(
            config(&[])
                .unwrap_err()
                .to_string()
                .starts_with("no COMMAND given")
        );
        assert!(matches!(
            config(&["--plan"]).unwrap().action(),
            Action::Plan
        ));
        assert!(matches!(
            config(&["--plan", "true"]).unwrap().action(),
            Action::Plan
        ));
    }

    #[test]
    fn zero_time_limits_mean_no_limit_as_for_coreutils_timeout() {
        let unlimited = config(&["--timeout", "0s", "--max-time", "0ms", "true"]).unwrap();
        assert_eq!(unlimited.process.timeout, None);
        assert_eq!(unlimited.rules().max_time, None);
        let err = config(&["--reset-after", "0s", "true"]).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("--reset-after (0s) must be more than 0s")
        );
        let config = config(&["-t", "2s", "--max-time", "1m", "--foreground", "true"]).unwrap();
        assert_eq!(config.process.timeout, Some(Duration::from_secs(2)));
        assert_eq!(config.process.kill_after, Duration::from_secs(10));
        assert_eq!(config.process.isolation, Isolation::Foreground);
        assert_eq!(config.rules().max_time, Some(Duration::from_secs(60)));
    }

    #[test]
    fn output_patterns_are_compiled_and_checked() {
        let err = config(&["--stop-on-output", "a(", "true"])
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("--stop-on-output 'a(' is not a valid regex"),
            "{err}"
        );
        let config = config(&[
            "--retry-on-output",
            "503",
            "--retry-on-output",
            "429",
            "true",
        ])
        .unwrap();
        assert!(config.output.conditions.requires_retry_match());
        assert!(!config.output.hold);
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

    #[test]
    fn budget_flags_need_a_budget_and_resolve_a_directory() {
        let cli = Cli::try_parse_from(["retry", "--budget-rate", "5/1h", "true"]);
        assert!(cli.is_err(), "--budget-rate without --budget");
        let config = config(&["--budget", "api", "--budget-dir", "/tmp/b", "true"]).unwrap();
        let budget = config.budget.unwrap();
        assert_eq!(
            (budget.name.as_str(), budget.terms.rate.to_string()),
            ("api", "10/1m".into())
        );
        assert_eq!(budget.location, Location::File("/tmp/b".into()));
        assert_eq!(
            (budget.terms.ratio, budget.terms.window),
            (None, Duration::from_secs(60)),
            "no ratio unless asked"
        );
    }

    #[test]
    fn the_budget_directory_comes_from_the_environment() {
        let dir = |env: &[(&str, &str)]| {
            resolve(&["--budget", "api", "true"], env).map(|config| {
                match config.budget.unwrap().location {
                    Location::File(dir) => dir,
                    other => panic!("{other:?}"),
                }
            })
        };
        assert_eq!(
            dir(&[("HOME", "/h")]).unwrap(),
            PathBuf::from("/h/.local/state/retry/budgets")
        );
        assert_eq!(
            dir(&[("HOME", "/h"), ("XDG_STATE_HOME", "/state")]).unwrap(),
            PathBuf::from("/state/retry/budgets")
        );
        assert_eq!(
            dir(&[("HOME", "/h"), ("XDG_STATE_HOME", "relative")]).unwrap(),
            PathBuf::from("/h/.local/state/retry/budgets"),
            "a relative XDG_STATE_HOME is ignored, as the spec says"
        );
        assert!(dir(&[]).unwrap_err().to_string().contains("set HOME"));
    }

    #[test]
    fn the_store_comes_from_the_flag_then_the_environment() {
        let store = |args: &[&str], env: &[(&str, &str)]| {
            let mut all = vec!["--budget", "api"];
            all.extend_from_slice(args);
            all.push("true");
            resolve(&all, env).map(|config| config.budget.unwrap().location.to_string())
        };
        let home = ("HOME", "/h");
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
    fn the_budget_terms_and_store_reach_the_plan_and_the_report() {
        let env = [("RETRY_BUDGET_STORE", "redis://app:s3cret@cache")];
        let args = [
            "--budget",
            "api",
            "--budget-ratio",
            "0.1",
            "--budget-window",
            "30s",
        ];
        let config = resolve(
            &[&args[..], &["--budget-store-fail", "closed", "true"]].concat(),
            &env,
        )
        .unwrap();
        assert_eq!(
            config.plan().budget.unwrap(),
            "api at 10/1m plus 0.1 per first attempt over 30s in redis://app:***@cache (closed \
             when it fails)"
        );
        let recorded = serde_json::to_value(&config.recorded).unwrap();
        assert_eq!(recorded["budget_ratio"], 0.1);
        assert_eq!(recorded["budget_window_ms"], 30000.0);
        assert_eq!(recorded["budget_store"], "redis://app:***@cache");
        assert_eq!(recorded["budget_store_fail"], "closed");
        assert!(!recorded.to_string().contains("s3cret"));
        let err = resolve(&["--budget", "api", "--budget-window", "0s", "true"], &env).unwrap_err();
        assert!(
            err.to_string()
                .contains("--budget-window (0s) must be more than 0s"),
            "{err}"
        );
        let cli = Cli::try_parse_from(["retry", "--budget-ratio", "0.1", "true"]);
        assert!(cli.is_err(), "--budget-ratio without --budget");
    }

    #[test]
    fn shell_wraps_the_words() {
        let config = config(&["--shell", "echo", "a"]).unwrap();
        let Action::Run(line) = config.action() else {
            panic!("not a run")
        };
        assert_eq!(line.program(), "sh");
    }

    #[test]
    fn the_report_records_the_options_in_force() {
        let recorded = config(&["--seed", "9", "-n", "unlimited", "--", "a", "b"])
            .unwrap()
            .recorded;
        let json = serde_json::to_value(&recorded).unwrap();
        assert_eq!(json["seed"], 9);
        assert_eq!(json["max_attempts"], "unlimited");
        assert_eq!(json["command"], serde_json::json!(["a", "b"]));
        assert_eq!(json["budget_rate"], serde_json::Value::Null);
    }

    #[test]
    fn the_readme_lists_every_option_the_report_records() {
        let recorded = config(&["true"]).unwrap().recorded;
        let keys = crate::readme::object_keys(&serde_json::to_value(&recorded).unwrap(), &[]);
        assert_eq!(keys, crate::readme::row_keys("options"));
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
        assert!(plain.report_writer().unwrap().is_none());
        assert!(plain.budget().is_none());

        let scratch = tempfile::tempdir().unwrap();
        let report = scratch.path().join("report.json");
        let budgets = scratch.path().join("budgets");
        let [report_arg, budgets_arg] = [&report, &budgets].map(|path| path.to_str().unwrap());
        let every = config(&[
            "--foreground",
            "--replay-stdin",
            "--report",
            report_arg,
            "--budget",
            "api",
            "--budget-dir",
            budgets_arg,
            "true",
        ])
        .unwrap();
        assert!(!every.hands_over_terminal());
        assert!(every.replay_stdin());
        assert!(every.report_writer().unwrap().is_some());
        assert!(matches!(every.budget(), Some(Prepared::File { .. })));
        assert!(budgets.join("api").exists(), "checked, and so created");

        let shared = config(&["--budget", "api", "--budget-store", "redis://cache", "true"]);
        assert!(matches!(
            shared.unwrap().budget(),
            Some(Prepared::Shared { .. })
        ));
    }

    #[test]
    fn a_nested_run_knows_it_from_the_environment() {
        let outer = [("RETRY_DEPTH", "1"), ("RETRY_MAX_ATTEMPTS", "3")];
        let nested = resolve(&["-n", "4", "true"], &outer).unwrap();
        assert_eq!((nested.rules().depth, nested.limit.count()), (2, Some(4)));
        assert!(nested.warnings()[0].contains("up to 3 × 4 = 12 attempts"));
        let once = resolve(&["-n", "4", "--nested", "once", "true"], &outer).unwrap();
        assert_eq!(
            (once.rules().limit.count(), once.warnings().len()),
            (Some(1), 0)
        );
        let alone = config(&["-n", "4", "--nested", "once", "true"]).unwrap();
        assert_eq!((alone.rules().depth, alone.limit.count()), (1, Some(4)));
        let recorded = serde_json::to_value(&once.recorded).unwrap();
        assert_eq!(recorded["nested"], "once");
    }

    #[test]
    fn requested_waits_need_a_limit_and_a_group() {
        let err = config(&["--max-requested-wait", "0s", "true"]).unwrap_err();
        assert!(
            err.to_string()
                .contains("--max-requested-wait (0s) must be more than 0s")
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

    #[test]
    fn simulate_gets_its_own_settings() {
        let simulation =
            config(&["simulate", "--clients", "3", "--trials", "2", "--seed", "4"]).unwrap();
        let contention = |config: &Config| match config.action() {
            Action::Simulate(simulate::Settings {
                experiment: simulate::Experiment::Contention(experiment),
                ..
            }) => experiment.clone(),
            _ => panic!("not the contention experiment"),
        };
        let experiment = contention(&simulation);
        assert_eq!((experiment.clients, experiment.seed), (vec![3], 4));
        let named = config(&["simulate", "contention", "--clients", "3", "--seed", "4"]).unwrap();
        assert_eq!(contention(&named).clients, [3]);
        let err = config(&["simulate", "--base", "5s", "--cap", "1s"]).unwrap_err();
        assert!(err.to_string().contains("--cap (1s)"));
    }

    #[test]
    fn the_load_experiment_gets_its_own_settings_within_limits() {
        let load = config(&[
            "simulate",
            "load",
            "--shared",
            "--backoff",
            "--policies",
            "budget,budget",
        ]);
        let Action::Simulate(simulate::Settings {
            experiment: simulate::Experiment::Load(experiment),
            ..
        }) = load.unwrap().action
        else {
            panic!("not the load experiment")
        };
        assert_eq!(experiment.policies, [simulate::load::Policy::Budget]);
        assert!(experiment.budget.shared && experiment.backoff.is_some());
        assert_eq!(
            (experiment.failure_rates.len(), experiment.rate),
            (13, 10.0)
        );
        let too_large = config(&[
            "simulate",
            "load",
            "--clients",
            "100000",
            "--duration",
            "1h",
        ]);
        assert!(too_large.unwrap_err().to_string().contains("too large"));
        let resolve_load = |args: &[&str]| config(&[&["simulate", "load"], args].concat());
        let first_tries = |duration| {
            resolve_load(&[
                "--clients",
                "1000",
                "--rate",
                "100/s",
                "--duration",
                duration,
            ])
        };
        assert!(first_tries("100s").is_ok(), "10^7 first tries a trial");
        assert!(first_tries("101s").is_err());
        let trials = |count: usize| {
            let rates: Vec<String> = (0..count).map(|i| format!("0.0{i}")).collect();
            resolve_load(&["--failure-rates", &rates.join(","), "--trials", "1000"])
        };
        assert!(
            trials(25).is_ok(),
            "25 rates, 4 policies, 1000 trials: 10^5"
        );
        assert!(trials(26).is_err());
        let zero = config(&["simulate", "load", "--duration", "0s"]).unwrap_err();
        assert!(
            zero.to_string()
                .contains("--duration (0s) must be more than 0s")
        );
    }
}
