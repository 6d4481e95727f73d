//! Resolving the parsed command line into one consistent run: every cross-flag check lives here.
//!
//! Pure: [`Config::try_from`] takes a [`Cli`] and either returns a [`Config`] or an error that names
//! the flags and values involved and says what would be accepted.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::attempts::AttemptLimit;
use crate::backoff::{Backoff, BackoffError};
use crate::budget::file::default_dir;
use crate::budget::{BudgetName, Rate};
use crate::cli::{Cli, LogFormat};
use crate::codes::StatusSet;
use crate::duration::format_duration;
use crate::output::{OutputConditions, PatternError};
use crate::policy::{Overlap, Policy};
use crate::process::command_line::CommandLine;
use crate::process::{Isolation, OutputOptions, ProcessOptions};
use crate::seed::Seed;

/// Everything a run needs, checked for consistency.
#[derive(Clone, Debug)]
pub struct Config {
    /// Run the command, or only print the plan of waits.
    pub action: Action,
    /// How many attempts may be made.
    pub limit: AttemptLimit,
    /// The wait schedule's parameters.
    pub backoff: Backoff,
    /// What each exit status means.
    pub policy: Policy,
    /// The jitter seed, when the user gave one.
    pub seed: Option<Seed>,
    /// `--splay`: the bound of the random wait before the first attempt (zero: none).
    pub splay: Duration,
    /// `--budget` and its rate and directory.
    pub budget: Option<BudgetSettings>,
    /// How the tool's own messages are written.
    pub log: LogSettings,
    /// `--max-time`: the limit of the whole run.
    pub max_time: Option<Duration>,
    /// Timeout, kill-after and process-group options.
    pub process: ProcessOptions,
    /// `--replay-stdin`: hold stdin and give it to every attempt.
    pub replay_stdin: bool,
    /// The output conditions and `--hold-output`.
    pub output: OutputOptions,
    /// `--reset-after`: a failed attempt this long starts the backoff over.
    pub reset_after: Option<Duration>,
    /// `--report`: where to write the run's JSON summary.
    pub report: Option<PathBuf>,
}

/// A shared retry budget.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BudgetSettings {
    /// Which budget.
    pub name: BudgetName,
    /// Its token rate.
    pub rate: Rate,
    /// Where its state lives.
    pub dir: PathBuf,
}

/// What the invocation asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Run this command until it succeeds or the run gives up.
    Run(CommandLine),
    /// Print the schedule of waits and exit.
    Plan,
}

/// The form and amount of the tool's own messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LogSettings {
    /// Text lines or JSON objects.
    pub format: LogFormat,
    /// How much to say.
    pub verbosity: Verbosity,
}

/// How much the tool says about a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verbosity {
    /// Nothing.
    Quiet,
    /// Retries and giving up.
    Normal,
    /// Also each attempt's start and a success.
    Verbose,
}

/// A combination of flags that cannot make a run; the message says which and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError(String);

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConfigError {}

impl TryFrom<Cli> for Config {
    type Error = ConfigError;

    fn try_from(cli: Cli) -> Result<Self, ConfigError> {
        let positive = [
            ("--timeout", cli.timeout),
            ("--max-time", cli.max_time),
            ("--reset-after", cli.reset_after),
        ];
        for (flag, value) in positive {
            if value == Some(Duration::ZERO) {
                return Err(ConfigError(format!(
                    "{flag} (0s) must be more than 0s; leave it out for no limit"
                )));
            }
        }
        let backoff = Backoff::new(cli.base, cli.cap, cli.multiplier, cli.jitter)
            .map_err(|err| backoff_error(err, cli.base, cli.cap, cli.multiplier))?;
        if let (Some(splay), Some(max_time)) = (cli.splay, cli.max_time) {
            if splay >= max_time {
                return Err(ConfigError(format!(
                    "--splay ({}) must be below --max-time ({}), or no attempt could start",
                    format_duration(splay),
                    format_duration(max_time)
                )));
            }
        }
        let budget = match cli.budget.clone() {
            None => None,
            Some(name) => Some(BudgetSettings {
                name,
                rate: cli.budget_rate,
                dir: cli.budget_dir.clone().or_else(default_dir).ok_or_else(|| {
                    ConfigError("--budget needs a directory: give --budget-dir, or set HOME".into())
                })?,
            }),
        };
        let conditions = OutputConditions::new(&cli.retry_on_output, &cli.stop_on_output)
            .map_err(|PatternError(message)| ConfigError(message))?;
        let policy = Policy::new(cli.success_on, cli.retry_on, cli.stop_on)
            .map_err(|overlap| overlap_error(overlap, &cli))?
            .requiring_retry_match(conditions.requires_retry_match());
        let action = if cli.plan {
            Action::Plan
        } else {
            let command = match cli.shell {
                true => CommandLine::shell(cli.command),
                false => CommandLine::direct(cli.command),
            };
            Action::Run(command.ok_or_else(missing_command)?)
        };
        Ok(Config {
            action,
            limit: cli.max_attempts,
            backoff,
            policy,
            seed: cli.seed,
            splay: cli.splay.unwrap_or_default(),
            budget,
            max_time: cli.max_time,
            process: ProcessOptions {
                timeout: cli.timeout,
                kill_after: cli.kill_after,
                isolation: match cli.foreground {
                    true => Isolation::Foreground,
                    false => Isolation::OwnGroup,
                },
            },
            replay_stdin: cli.replay_stdin,
            output: OutputOptions {
                conditions: Arc::new(conditions),
                hold: cli.hold_output,
            },
            reset_after: cli.reset_after,
            report: cli.report,
            log: LogSettings {
                format: cli.log_format,
                verbosity: match (cli.quiet, cli.verbose) {
                    (true, _) => Verbosity::Quiet,
                    (false, true) => Verbosity::Verbose,
                    (false, false) => Verbosity::Normal,
                },
            },
        })
    }
}

/// The error for backoff parameters that [`Backoff::new`] refused, naming the flags and values.
pub fn backoff_error(
    err: BackoffError,
    base: Duration,
    cap: Duration,
    multiplier: f64,
) -> ConfigError {
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
    let failures: Option<StatusSet> = match overlap.flag {
        "--retry-on" => cli.retry_on,
        _ => cli.stop_on,
    };
    ConfigError(format!(
        "status {} is in both --success-on ({}) and {} ({}); a status cannot be success and failure",
        overlap.status,
        cli.success_on,
        overlap.flag,
        failures.unwrap_or_default(),
    ))
}

fn missing_command() -> ConfigError {
    ConfigError(
        "no COMMAND given; put the command after the options, e.g. retry -- curl -fsS https://example.com"
            .into(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn config(args: &[&str]) -> Result<Config, ConfigError> {
        let cli = Cli::try_parse_from(std::iter::once("retry").chain(args.iter().copied()));
        Config::try_from(cli.unwrap())
    }

    #[test]
    fn resolves_a_plain_run() {
        let config = config(&["--", "true"]).unwrap();
        assert_eq!(
            config.action,
            Action::Run(CommandLine::direct(vec!["true".into()]).unwrap())
        );
        assert_eq!(config.limit.count(), Some(5));
        assert_eq!(config.log.verbosity, Verbosity::Normal);
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
        assert!(config(&[])
            .unwrap_err()
            .to_string()
            .starts_with("no COMMAND given"));
        assert_eq!(config(&["--plan"]).unwrap().action, Action::Plan);
        assert_eq!(config(&["--plan", "true"]).unwrap().action, Action::Plan);
    }

    #[test]
    fn time_limits_must_be_positive() {
        let err = config(&["--timeout", "0s", "true"]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "--timeout (0s) must be more than 0s; leave it out for no limit"
        );
        assert!(config(&["--max-time", "0ms", "true"])
            .unwrap_err()
            .to_string()
            .contains("--max-time"));
        let config = config(&["-t", "2s", "--max-time", "1m", "--foreground", "true"]).unwrap();
        assert_eq!(config.process.timeout, Some(Duration::from_secs(2)));
        assert_eq!(config.process.kill_after, Duration::from_secs(10));
        assert_eq!(config.process.isolation, Isolation::Foreground);
        assert_eq!(config.max_time, Some(Duration::from_secs(60)));
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
    fn budget_flags_need_a_budget_and_resolve_a_directory() {
        let cli = Cli::try_parse_from(["retry", "--budget-rate", "5/1h", "true"]);
        assert!(cli.is_err(), "--budget-rate without --budget");
        let config = config(&["--budget", "api", "--budget-dir", "/tmp/b", "true"]).unwrap();
        let budget = config.budget.unwrap();
        assert_eq!(
            (budget.name.as_str(), budget.rate.to_string()),
            ("api", "10/1m".into())
        );
        assert_eq!(budget.dir, PathBuf::from("/tmp/b"));
    }

    #[test]
    fn shell_wraps_the_words() {
        let config = config(&["--shell", "echo", "a"]).unwrap();
        let Action::Run(line) = config.action else {
            panic!("not a run")
        };
        assert_eq!(line.program(), "sh");
    }
}
