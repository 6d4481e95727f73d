//! The run's settings: the parsed command line resolved into one consistent run, with every
//! cross-flag check made, and the environment read once (where the run sits among nested
//! retries, and where its budget lives).
//!
//! [`Config`] is the only reader of a run's [`Cli`]; the tool's subcommands own their options
//! (`simulate::options`, `budget::show`) and are dispatched before it. Its fields are private:
//! it hands out the settings each part of a run is built from, by the module that owns the part,
//! and the record of them that the report keeps, made from the values in force. A new flag
//! touches `cli.rs`, this file, the module that uses it, and a test.

use std::ffi::OsString;
use std::fmt;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rand::SeedableRng;
use rand::rngs::Xoshiro256PlusPlus;

use serde::Serialize;

use crate::cli::Cli;
use crate::environment;
use crate::output::{Hold, OutputOptions};
use crate::plan::PlanRequest;
use crate::process::command_line::CommandLine;
use crate::process::hooks::HookLines;
use crate::process::{Isolation, ProcessOptions};
use crate::report::ci::CiSystem;
use crate::report::ci::outputs::GitHubFiles;
use crate::report::verbosity::{LogFormat, LogSettings, Verbosity};
use crate::signals::signal::Platform;
use retry_budget::BudgetSettings;
use retry_budget::model::Terms;
use retry_budget::store::{Location, OnFailure};
use retry_policy::attempts::AttemptLimit;
use retry_policy::backoff::{self, Backoff, Jitter, Schedule};
use retry_policy::decision::Policy;
use retry_policy::duration::{format_duration, to_millis};
use retry_policy::matching::OutputStream;
use retry_policy::matching::{PatternError, PatternTexts};
use retry_policy::nesting::{Layer, Nested};
use retry_policy::presets::Preset;
use retry_policy::printable::printable;
use retry_policy::run::Rules;
use retry_policy::seed::{Seed, split_mix};

/// Everything a run needs, checked for consistency.
#[derive(Debug)]
pub(crate) struct Config {
    /// What each attempt runs; none for `--plan`, which runs nothing.
    command: Option<CommandLine>,
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
    /// `--preset`, as it resolved.
    preset: PresetInForce,
    /// The CI system the run is in, and GitHub's files for its outcome.
    ci: Option<CiSystem>,
    github: GitHubFiles,
    report_dotenv: Option<PathBuf>,
    /// `--metrics` and the job label.
    metrics: Option<(PathBuf, String)>,
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

/// The options in force, as the report records them: its `options` object. The limits are the
/// ones in force (`max_attempts` is 1 with `--nested once` inside another retry), the waits the
/// backoff's.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct OptionsRecord {
    pub(crate) command: Vec<String>,
    pub(crate) shell: bool,
    pub(crate) max_attempts: AttemptLimit,
    pub(crate) base_ms: f64,
    pub(crate) cap_ms: f64,
    pub(crate) multiplier: f64,
    pub(crate) jitter: Jitter,
    pub(crate) seed: u64,
    pub(crate) splay_ms: Option<f64>,
    pub(crate) budget: Option<String>,
    pub(crate) budget_rate: Option<String>,
    pub(crate) budget_ratio: Option<f64>,
    pub(crate) budget_window_ms: Option<f64>,
    pub(crate) budget_store: Option<String>,
    pub(crate) budget_store_fail: Option<OnFailure>,
    pub(crate) success_on: String,
    pub(crate) retry_on: Option<String>,
    pub(crate) stop_on: Option<String>,
    /// The preset in force (after `--preset auto` resolved).
    pub(crate) preset: Option<&'static str>,
    pub(crate) retry_on_output: Vec<String>,
    pub(crate) stop_on_output: Vec<String>,
    pub(crate) retry_after_output: Vec<String>,
    pub(crate) success_on_output: Vec<String>,
    pub(crate) output_stream: OutputStream,
    pub(crate) max_requested_wait_ms: f64,
    pub(crate) nested: Nested,
    pub(crate) timeout_signal: String,
    pub(crate) on_retry: Option<String>,
    pub(crate) on_give_up: Option<String>,
    pub(crate) hold_output: bool,
    pub(crate) timeout_ms: Option<f64>,
    pub(crate) max_time_ms: Option<f64>,
    pub(crate) kill_after_ms: f64,
    pub(crate) reset_after_ms: Option<f64>,
    pub(crate) foreground: bool,
    pub(crate) replay_stdin: bool,
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
    fn resolve(cli: Cli, env: impl Fn(&str) -> Option<OsString>) -> Result<Self, ConfigError> {
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
        let budget = match &cli.budget {
            None => None,
            Some(name) => Some(budget_settings(name, &cli, &env)?),
        };
        refuse(
            cli.max_requested_wait.is_zero(),
            "--max-requested-wait (0s) must be more than 0s, e.g. 15m; to bound the whole run, \
             give --max-time",
        )?;
        let program = cli.command.first().and_then(|program| program.to_str());
        let preset = cli.preset.and_then(|choice| choice.resolve(program));
        let mut after = cli.retry_after_output.clone();
        after.extend(
            preset
                .and_then(|preset| preset.retry_after)
                .map(str::to_string),
        );
        let hold = match (cli.quiet_unless_failed, cli.hold_output) {
            (true, _) => Hold::Everything,
            (false, true) => Hold::Stdout,
            (false, false) => Hold::Nothing,
        };
        let output = OutputOptions::new(
            &PatternTexts {
                retry: cli.retry_on_output.clone(),
                stop: cli.stop_on_output.clone(),
                success: cli.success_on_output.clone(),
                after,
                preset: preset.map(Preset::patterns).unwrap_or_default(),
            },
            cli.output_stream,
            preset.map_or(OutputStream::Both, |preset| preset.stream),
            hold,
        )
        .map_err(|PatternError(message)| ConfigError(message))?;
        let layer = Layer::of(
            env(environment::OUTER_DEPTH.name).as_deref(),
            env(environment::OUTER_TOTAL_ATTEMPTS.name).as_deref(),
            env(environment::OUTER_MAX_ATTEMPTS.name).as_deref(),
        );
        let policy = Policy::new(cli.success_on, cli.retry_on, cli.stop_on)
            .map_err(|overlap| ConfigError(overlap.to_string()))?
            .requiring_retry_match(!cli.retry_on_output.is_empty())
            .requiring_success_match(!cli.success_on_output.is_empty())
            .with_preset(preset);
        let command = match cli.plan {
            true => None,
            false => Some(command_line(&cli)?),
        };
        refuse(
            cli.quiet_unless_failed && cli.log_format == LogFormat::Json,
            "--quiet-unless-failed writes the held output under headers for a person to read \
             (cron's mail), and cannot keep stderr JSON; leave out --log-format json or \
             --quiet-unless-failed",
        )?;
        let metrics = match &cli.metrics {
            None => None,
            Some(path) => Some((path.clone(), metrics_job(&cli, path, budget.as_ref())?)),
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
        let seed = Seed::resolve(cli.seed, &cli.command, host_name, random_seed);
        let limit = layer.limit(cli.nested, cli.max_attempts);
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
            command: cli
                .command
                .iter()
                .map(|word| word.to_string_lossy().into_owned())
                .collect(),
            shell: cli.shell,
            max_attempts: limit,
            base_ms: to_millis(backoff.base()),
            cap_ms: to_millis(backoff.cap()),
            multiplier: backoff.multiplier(),
            jitter: backoff.jitter(),
            seed,
            splay_ms: cli.splay.map(to_millis),
            budget: budget
                .as_ref()
                .map(|budget| budget.name.as_str().to_string()),
            budget_rate: budget.as_ref().map(|budget| budget.terms.rate.to_string()),
            budget_ratio: budget.as_ref().and_then(|budget| budget.terms.ratio),
            budget_window_ms: budget.as_ref().map(|budget| to_millis(budget.terms.window)),
            budget_store: budget.as_ref().map(|budget| budget.location.to_string()),
            budget_store_fail: budget.as_ref().map(|budget| budget.on_failure),
            success_on: cli.success_on.to_string(),
            retry_on: cli.retry_on.map(|set| set.to_string()),
            stop_on: cli.stop_on.map(|set| set.to_string()),
            preset: preset.map(|preset| preset.name),
            retry_on_output: cli.retry_on_output.clone(),
            stop_on_output: cli.stop_on_output.clone(),
            retry_after_output: cli.retry_after_output.clone(),
            success_on_output: cli.success_on_output.clone(),
            output_stream: cli.output_stream,
            max_requested_wait_ms: to_millis(cli.max_requested_wait),
            nested: cli.nested,
            timeout_signal: cli.timeout_signal.name().to_string(),
            on_retry: cli.on_retry.clone(),
            on_give_up: cli.on_give_up.clone(),
            hold_output: cli.hold_output,
            timeout_ms: timeout.map(to_millis),
            max_time_ms: max_time.map(to_millis),
            kill_after_ms: to_millis(cli.kill_after),
            reset_after_ms: cli.reset_after.map(to_millis),
            foreground: cli.foreground,
            replay_stdin: cli.replay_stdin,
        };
        Ok(Config {
            command,
            limit,
            layer,
            nested: cli.nested,
            max_requested_wait: cli.max_requested_wait,
            backoff,
            policy,
            seed,
            splay: cli.splay,
            budget,
            max_time,
            process,
            replay_stdin: cli.replay_stdin,
            output,
            preset: match (cli.preset, preset) {
                (Some(_), None) => {
                    PresetInForce::NoneForProgram(program.map(str::to_string).unwrap_or_default())
                }
                (_, preset) => PresetInForce::Given(preset),
            },
            hooks: HookLines {
                on_retry: cli.on_retry,
                on_give_up: cli.on_give_up,
            },
            reset_after: cli.reset_after,
            log: LogSettings {
                format: cli.log_format,
                verbosity: match (cli.quiet, cli.verbose) {
                    (true, _) => Verbosity::Quiet,
                    (false, true) => Verbosity::Verbose,
                    (false, false) => Verbosity::Normal,
                },
            },
            report: cli.report,
            ci,
            github,
            report_dotenv: cli.report_dotenv,
            metrics,
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
    pub(crate) fn plan(&self) -> PlanRequest {
        PlanRequest {
            limit: self.limit,
            backoff: self.backoff,
            seed: self.seed,
            splay: self.splay.unwrap_or_default(),
            max_time: self.max_time,
            budget: self.budget.as_ref().map(BudgetSettings::describe),
            max_requested_wait: self.max_requested_wait,
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
            .collect();
        if let PresetInForce::NoneForProgram(program) = &self.preset {
            warnings.push(format!(
                "--preset auto: no preset knows '{}'; deciding by the exit status alone, as \
                 without --preset",
                printable(program)
            ));
        }
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

    /// `--max-time`, the limit of the whole run.
    pub(crate) fn max_time(&self) -> Option<Duration> {
        self.max_time
    }

    /// The process-control options of an attempt (and of a hook).
    pub(crate) fn process(&self) -> ProcessOptions {
        self.process
    }

    /// The output conditions, and whether stdout is held.
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

    /// `--report`, and the options in force as it records them.
    pub(crate) fn report(&self) -> Option<(&Path, &OptionsRecord)> {
        self.report.as_deref().map(|path| (path, &self.recorded))
    }

    /// The CI system whose lines go into the log: none outside one, and none with
    /// `--log-format json`, whose stderr stays JSON.
    pub(crate) fn ci_log(&self) -> Option<CiSystem> {
        self.ci.filter(|_| self.log.format == LogFormat::Text)
    }

    /// GitHub's files for the run's outcome, and `--report-dotenv`.
    pub(crate) fn step_outputs(&self) -> (&GitHubFiles, Option<&Path>) {
        (&self.github, self.report_dotenv.as_deref())
    }

    /// `--quiet-unless-failed`.
    pub(crate) fn quiet_unless_failed(&self) -> bool {
        self.output.hold == Hold::Everything
    }

    /// `--metrics`, and the job label.
    pub(crate) fn metrics(&self) -> Option<(&Path, &str)> {
        self.metrics
            .as_ref()
            .map(|(path, job)| (path.as_path(), job.as_str()))
    }

    /// The command's words, as given.
    pub(crate) fn command_words(&self) -> &[String] {
        &self.recorded.command
    }

    /// The `--budget`, if the run shares one.
    pub(crate) fn budget(&self) -> Option<&BudgetSettings> {
        self.budget.as_ref()
    }
}

/// The `job` label of `--metrics` (at `path`, whose name must end in `.prom`): `--metrics-job`,
/// else the budget's name, else the command's program name.
fn metrics_job(
    cli: &Cli,
    path: &Path,
    budget: Option<&BudgetSettings>,
) -> Result<String, ConfigError> {
    let named = path
        .file_name()
        .is_some_and(|name| name.to_string_lossy().ends_with(".prom"));
    refuse(
        !named,
        &format!(
            "--metrics {}: node_exporter's textfile collector reads only files whose names end \
             in .prom; give such a name, e.g. /var/lib/prometheus/node-exporter/backup.prom",
            printable(&path.display().to_string())
        ),
    )?;
    let program = || {
        cli.command.first().map(|program| {
            Path::new(program)
                .file_name()
                .unwrap_or(program)
                .to_string_lossy()
                .into_owned()
        })
    };
    let job = match &cli.metrics_job {
        Some(job) => job.clone(),
        None => budget
            .map(|budget| budget.name.as_str().to_string())
            .or_else(program)
            .unwrap_or_default(),
    };
    refuse(
        job.is_empty(),
        "--metrics-job is empty: give the job a name, e.g. --metrics-job nightly-backup",
    )?;
    Ok(job)
}

/// This machine's host name, or empty if it has none (for `--seed host`).
fn host_name() -> Vec<u8> {
    nix::unistd::gethostname()
        .map(|name| name.as_bytes().to_vec())
        .unwrap_or_default()
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

/// The `--budget` settings, the store read from `RETRY_BUDGET_STORE` through `env` when no
/// `--budget-store` is given.
fn budget_settings(
    name: &retry_budget::BudgetName,
    cli: &Cli,
    env: &impl Fn(&str) -> Option<OsString>,
) -> Result<BudgetSettings, ConfigError> {
    refuse(
        cli.budget_window.is_zero(),
        "--budget-window (0s) must be more than 0s, e.g. 1m: earned tokens would be gone at once",
    )?;
    let location = Location::resolve(
        cli.budget_store.as_deref(),
        cli.budget_password_file.as_deref(),
        cli.budget_dir.clone(),
        env,
        "--budget",
    )
    .map_err(ConfigError)?;
    Ok(BudgetSettings {
        name: name.clone(),
        terms: Terms {
            rate: cli.budget_rate,
            ratio: cli.budget_ratio.map(|ratio| ratio.0),
            window: cli.budget_window,
        },
        location,
        on_failure: cli.budget_store_fail,
    })
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
        assert_eq!(
            config.command(),
            Some(&CommandLine::direct(vec!["true".into()]).unwrap())
        );
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
        assert!(config(&["--plan"]).unwrap().command().is_none());
        assert!(config(&["--plan", "true"]).unwrap().command().is_none());
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
        assert!(config.output.matches_stdout() && config.output.matches_stderr());
        assert_eq!(config.output.hold, Hold::Nothing);
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
        assert_eq!(config.command().unwrap().program(), "sh");
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
    fn the_reference_lists_every_option_the_report_records() {
        let recorded = config(&["true"]).unwrap().recorded;
        let keys = crate::reference::object_keys(&serde_json::to_value(&recorded).unwrap(), &[]);
        assert_eq!(keys, crate::reference::row_keys("options"));
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
        assert!(plain.report().is_none());
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
        assert_eq!(every.report().map(|(path, _)| path), Some(report.as_path()));
        let budget = every.budget().unwrap();
        assert_eq!(budget.location, Location::File(budgets.clone()));

        let shared = config(&["--budget", "api", "--budget-store", "redis://cache", "true"]);
        let location = &shared.unwrap().budget.unwrap().location;
        assert!(matches!(location, Location::Shared { .. }), "{location:?}");
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
}
