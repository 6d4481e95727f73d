//! Time limits and processes: `--timeout`, `--max-time`, how an attempt is ended
//! (`--timeout-signal`, `--kill-after`), `--foreground`, `--replay-stdin` and `--shell`:
//! their definitions, and the process options, the run's limit and the command line they
//! resolve to.

use std::ffi::OsString;
use std::time::Duration;

use retry_policy::duration::{format_duration, parse_duration};
use retry_policy::presets::Preset;
use retry_policy::requests::Request;
use retry_process::command_line::CommandLine;
use retry_process::signals::Signal;
use retry_process::signals::signal::parse_signal;

use super::{ConfigError, LIMITS};
use crate::process::{Isolation, ProcessOptions};

/// The limits of an attempt and of the run, and how each attempt's process is run.
#[derive(clap::Args, Debug)]
#[group(skip)]
pub(crate) struct LimitsArgs {
    /// Time limit of one attempt (status 124)
    ///
    /// End an attempt that runs longer than this (SIGTERM, then SIGKILL after --kill-after); it
    /// counts as status 124 (e.g. 30s). 0s, or a value too large to represent (600000000000y), is
    /// no limit, as for coreutils timeout.
    #[arg(short = 't', long, value_name = "DURATION", value_parser = parse_duration, allow_hyphen_values = true, help_heading = LIMITS)]
    pub(crate) timeout: Option<Duration>,

    /// Time limit of the whole run
    ///
    /// Limit the whole run, attempts and waits together, counted from the start (e.g. 10m).
    /// Default, and 0s: no limit.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, allow_hyphen_values = true, help_heading = LIMITS)]
    pub(crate) max_time: Option<Duration>,

    /// The signal a time limit sends first
    ///
    /// Send this signal to an attempt at its --timeout or the --max-time deadline, then SIGKILL
    /// after --kill-after: a name with or without SIG, or a number (e.g. INT, as timeout -s).
    #[arg(long, value_name = "SIGNAL", value_parser = parse_signal, allow_hyphen_values = true, hide_short_help = true, help_heading = LIMITS)]
    pub(crate) timeout_signal: Option<Signal>,

    /// SIGKILL this long after SIGTERM
    ///
    /// Send SIGKILL this long after the --timeout-signal (or a passed-on signal) to an attempt
    /// still running; also the longest wait for what an attempt leaves behind.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, allow_hyphen_values = true, hide_short_help = true, help_heading = LIMITS)]
    pub(crate) kill_after: Option<Duration>,

    /// Keep COMMAND in retry's process group
    ///
    /// Keep COMMAND in retry's own process group, like `timeout --foreground`: timeouts and
    /// signals then reach only COMMAND, not its children.
    #[arg(long, hide_short_help = true, help_heading = LIMITS)]
    pub(crate) foreground: bool,

    /// Give every attempt the same stdin
    ///
    /// Read stdin to its end before the first attempt, and give every attempt the same bytes.
    #[arg(long, hide_short_help = true, help_heading = LIMITS)]
    pub(crate) replay_stdin: bool,

    /// Run COMMAND and ARGs as one `sh -c` line
    ///
    /// Join COMMAND and its ARGs with spaces and run the line with `sh -c`; a blank line, which
    /// `sh -c` would run as nothing and call a success, is refused (e.g. --shell 'make test').
    #[arg(long, hide_short_help = true, help_heading = LIMITS)]
    pub(crate) shell: bool,
}

impl LimitsArgs {
    /// `--timeout-signal`, or its default.
    pub(crate) fn timeout_signal(&self) -> Signal {
        self.timeout_signal.unwrap_or(Signal::TERM)
    }

    /// `--kill-after`, or its default.
    pub(crate) fn kill_after(&self) -> Duration {
        self.kill_after.unwrap_or(Duration::from_secs(10))
    }

    /// How an attempt (and a hook) is run: `--timeout` (0s being none), `--kill-after`,
    /// `--timeout-signal` and `--foreground`.
    pub(super) fn process(&self) -> ProcessOptions {
        ProcessOptions {
            timeout: self.timeout.filter(|limit| !limit.is_zero()),
            kill_after: self.kill_after(),
            timeout_signal: self.timeout_signal(),
            isolation: match self.foreground {
                true => Isolation::Foreground,
                false => Isolation::OwnGroup,
            },
        }
    }

    /// `--max-time`, 0s being no limit (as coreutils timeout takes it); `splay` (`--splay`)
    /// must leave room before it.
    pub(super) fn max_time(
        &self,
        splay: Option<Duration>,
    ) -> Result<Option<Duration>, ConfigError> {
        let max_time = self.max_time.filter(|limit| !limit.is_zero());
        if let (Some(splay), Some(max_time)) = (splay, max_time)
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

    /// The command to run: `words`, or with `--shell` one line of them for `sh -c`; none for a
    /// run that runs nothing (`plan`).
    pub(super) fn command(
        &self,
        words: &[OsString],
        plan: bool,
    ) -> Result<Option<CommandLine>, ConfigError> {
        if plan {
            return Ok(None);
        }
        let command = match self.shell {
            true => CommandLine::shell(words.to_vec()),
            false => CommandLine::direct(words.to_vec()),
        };
        let missing = match words.is_empty() {
            true => {
                "no COMMAND given; put the command after the options, e.g. retry -- curl -fsS \
                 https://example.com"
            }
            false => {
                "--shell: the command line is blank, which sh -c runs as nothing and calls a \
                 success; give the line, e.g. retry --shell 'make test'"
            }
        };
        command.map(Some).ok_or_else(|| ConfigError(missing.into()))
    }

    /// The HTTP request the command `words` sends, read only for a preset (the rules it adds
    /// are the preset's), and only when the command is curl's or wget's and runs directly (a
    /// `--shell` line is the shell's to read, not the tool's): a run with no preset reads
    /// nothing.
    pub(super) fn request(
        &self,
        words: &[OsString],
        preset: Option<&'static Preset>,
    ) -> Option<Request> {
        if self.shell || preset.is_none() {
            return None;
        }
        let args: Option<Vec<&str>> = words.iter().map(|arg| arg.to_str()).collect();
        Request::of(&args?)
    }
}
