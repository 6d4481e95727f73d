//! What the flags alone decide, each checked against the others: the waits, the rules an
//! attempt's end is judged by and the output they read, the process options, the log, and the
//! command itself. A combination that cannot make a run is refused with one line that names the
//! flags and says what would do.

use std::time::Duration;

use retry_policy::backoff::{Backoff, Jitter};
use retry_policy::duration::format_duration;
use retry_policy::presets::Preset;
use retry_policy::requests::Request;
use retry_policy::rules::{RuleList, UserRules};
use retry_policy::run_id::RunId;

use super::ConfigError;
use crate::cli::Cli;
use crate::output::{Hold, OutputOptions};
use crate::process::{Isolation, ProcessOptions};
use crate::report::formats::ReportFormat;
use crate::report::verbosity::{LogFormat, LogSettings, Verbosity};
use retry_process::command_line::CommandLine;

/// The waits between attempts, as `--base`, `--cap`, `--multiplier` and `--jitter` give them.
pub(super) fn backoff(cli: &Cli) -> Result<Backoff, ConfigError> {
    refuse(
        cli.reset_after == Some(Duration::ZERO),
        "--reset-after (0s) must be more than 0s, or every failure would start the count over; \
         leave it out to never start over",
    )?;
    // The message is made only when it is said: a run formats no number it does not show.
    if cli.multiplier.is_some() && cli.jitter() == Jitter::Decorrelated {
        return Err(ConfigError(format!(
            "--multiplier ({}) has no effect with --jitter decorrelated, whose waits grow from \
             the previous wait; leave out --multiplier, or choose another --jitter",
            cli.multiplier()
        )));
    }
    Backoff::new(cli.base(), cli.cap(), cli.multiplier(), cli.jitter())
        .map_err(|err| ConfigError(err.to_string()))
}

/// `--max-time`, 0s being no limit (as coreutils timeout takes it); `--splay` must leave room
/// before it.
pub(super) fn max_time(cli: &Cli) -> Result<Option<Duration>, ConfigError> {
    let max_time = cli.max_time.filter(|limit| !limit.is_zero());
    if let (Some(splay), Some(max_time)) = (cli.splay, max_time)
        && splay >= max_time
    {
        return Err(ConfigError(format!(
            "--splay ({}) must be below --max-time ({}), or no attempt could start",
            format_duration(splay),
            format_duration(max_time)
        )));
    }
    Ok(max_time)
}

/// The HTTP request the command sends, read only for a preset (the rules it adds are the
/// preset's), and only when the command is curl's or wget's and runs directly (a `--shell` line
/// is the shell's to read, not the tool's): a run with no preset reads nothing.
fn request(cli: &Cli, preset: Option<&'static Preset>) -> Option<Request> {
    if cli.shell || preset.is_none() {
        return None;
    }
    let args: Option<Vec<&str>> = cli.command.iter().map(|arg| arg.to_str()).collect();
    Request::of(&args?)
}

/// The rules an attempt's end is judged by (the user's, then `preset`'s), and what the output
/// is read for: their patterns, `--retry-after-output`'s and the preset's, `--hold`, and the
/// ends a JUnit report shows.
pub(super) fn rules_and_output(
    cli: &Cli,
    preset: Option<&'static Preset>,
) -> Result<(RuleList, OutputOptions), ConfigError> {
    let user = UserRules {
        success: cli.success_on.clone(),
        stop: cli.stop_on.clone(),
        retry: cli.retry_on.clone(),
    };
    let rules = RuleList::for_request(&user, preset, request(cli, preset).as_ref())
        .map_err(|why| ConfigError(why.to_string()))?;
    let mut after = cli.retry_after_output.clone();
    after.extend(
        preset
            .and_then(|preset| preset.retry_after)
            .map(str::to_string),
    );
    let hold = cli.hold.unwrap_or_default();
    refuse(
        hold == Hold::Everything && cli.log_format() == LogFormat::Json,
        "--hold all writes the held output under headers for a person to read (cron's mail), and \
         cannot keep stderr JSON; leave out --log-format json or --hold all",
    )?;
    let mut output = OutputOptions::new(rules.patterns(), &after, hold)
        .map_err(|why| ConfigError(why.to_string()))?;
    // A JUnit report shows each attempt's output: both streams go through the tool.
    output.keep_tails = cli
        .report
        .iter()
        .any(|spec| spec.format == ReportFormat::Junit);
    Ok((rules, output))
}

/// How an attempt (and a hook) is run: `--timeout` (0s being none), `--kill-after`,
/// `--timeout-signal` and `--foreground`.
pub(super) fn process(cli: &Cli) -> ProcessOptions {
    ProcessOptions {
        timeout: cli.timeout.filter(|limit| !limit.is_zero()),
        kill_after: cli.kill_after(),
        timeout_signal: cli.timeout_signal(),
        isolation: match cli.foreground {
            true => Isolation::Foreground,
            false => Isolation::OwnGroup,
        },
    }
}

/// The form and amount of the tool's own messages.
pub(super) fn log(cli: &Cli, run_id: RunId) -> LogSettings {
    LogSettings {
        format: cli.log_format(),
        run_id: Some(run_id),
        verbosity: match (cli.quiet, cli.verbose) {
            (true, _) => Verbosity::Quiet,
            (false, true) => Verbosity::Verbose,
            (false, false) => Verbosity::Normal,
        },
    }
}

/// The command to run: the words, or with `--shell` one line for `sh -c`; none for `--plan`.
pub(super) fn command(cli: &Cli) -> Result<Option<CommandLine>, ConfigError> {
    if cli.plan {
        return Ok(None);
    }
    let words = cli.command.clone();
    let command = match cli.shell {
        true => CommandLine::shell(words),
        false => CommandLine::direct(words),
    };
    command.map(Some).ok_or_else(|| {
        ConfigError(
            "no COMMAND given; put the command after the options, e.g. retry -- curl -fsS \
             https://example.com"
                .into(),
        )
    })
}

/// Refuse a run when `contradiction` holds, saying `why`.
pub(super) fn refuse(contradiction: bool, why: &str) -> Result<(), ConfigError> {
    match contradiction {
        true => Err(ConfigError(why.to_string())),
        false => Ok(()),
    }
}
