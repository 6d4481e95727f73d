//! Output: how much the tool says (`-q`, `-v`) and in what form (`--log-format`, `--ci`), and
//! what of the command's output is held (`--hold`): their definitions, and the log settings and
//! the output options they resolve to.

use retry_policy::rules::RuleList;
use retry_policy::run_id::RunId;

use super::{ConfigError, OUTPUT, choice, refuse};
use crate::output::{Hold, OutputOptions};
use crate::report::ci::CiChoice;
use crate::report::verbosity::{LogFormat, LogSettings, Verbosity};

/// The tool's own messages, and the command's output held.
#[derive(clap::Args, Debug)]
#[group(skip)]
pub(crate) struct OutputArgs {
    /// Say nothing of the tool's own
    ///
    /// Print none of the tool's own messages (errors in its own usage, a command that cannot
    /// start, and output that could not be kept still print).
    #[arg(short, long, conflicts_with = "verbose", help_heading = OUTPUT)]
    pub(crate) quiet: bool,

    /// Also say each attempt's start and a success
    ///
    /// Also report each attempt's start and a success.
    #[arg(short, long, help_heading = OUTPUT)]
    pub(crate) verbose: bool,

    /// Hold output until its attempt is judged: stdout or all
    ///
    /// stdout: hold each attempt's stdout, and write it to stdout only for the attempt that
    /// succeeds, to stderr for the others. all: hold stdout, stderr and the tool's own messages;
    /// write nothing if the run succeeds, else each attempt's output in order under a header
    /// saying how it ended, so that cron's mail holds the whole story. Held output beyond 1 MiB
    /// goes to a temporary file in TMPDIR.
    #[arg(long, value_name = "WHAT", value_parser = choice::<Hold>(), hide_possible_values = true, hide_short_help = true, help_heading = OUTPUT)]
    pub(crate) hold: Option<Hold>,

    /// text, or json: one object a line
    ///
    /// Write the tool's own messages on stderr in this form: text, or json (one object per
    /// line).
    #[arg(long, value_name = "FORMAT", hide_possible_values = true, hide_short_help = true, help_heading = OUTPUT)]
    pub(crate) log_format: Option<LogFormat>,

    /// auto, none, github, gitlab, buildkite or azure
    ///
    /// Speak to the CI system the run is in by its own conventions: each attempt's output in a
    /// collapsible group, a warning when the run needed retries and an error when it gave up, and
    /// the outcome for later steps (GitHub's GITHUB_OUTPUT and GITHUB_STEP_SUMMARY, Azure's
    /// variables). auto (the default) picks the system whose variable is set (GITHUB_ACTIONS,
    /// GITLAB_CI, BUILDKITE, TF_BUILD); none speaks as to a terminal. With --log-format json the
    /// log lines are left out, so that stderr stays JSON.
    #[arg(long, value_name = "SYSTEM", hide_possible_values = true, hide_short_help = true, help_heading = OUTPUT)]
    pub(crate) ci: Option<CiChoice>,
}

impl OutputArgs {
    /// `--log-format`, or its default.
    pub(crate) fn log_format(&self) -> LogFormat {
        self.log_format.unwrap_or(LogFormat::Text)
    }

    /// `--ci`, or its default.
    pub(crate) fn ci(&self) -> CiChoice {
        self.ci.unwrap_or(CiChoice::Auto)
    }

    /// The form and amount of the tool's own messages, which name the run `run_id`.
    pub(super) fn log(&self, run_id: RunId) -> LogSettings {
        LogSettings {
            format: self.log_format(),
            run_id: Some(run_id),
            verbosity: match (self.quiet, self.verbose) {
                (true, _) => Verbosity::Quiet,
                (false, true) => Verbosity::Verbose,
                (false, false) => Verbosity::Normal,
            },
        }
    }

    /// What the command's output is read for: the patterns of `rules` and `waits_asked` (the
    /// lines that ask for a wait), `--hold`, and, for a report that shows them (`tails`), the
    /// ends of each attempt's output.
    pub(super) fn options(
        &self,
        rules: &RuleList,
        waits_asked: &[String],
        tails: bool,
    ) -> Result<OutputOptions, ConfigError> {
        let hold = self.hold.unwrap_or_default();
        refuse(
            hold == Hold::Everything && self.log_format() == LogFormat::Json,
            "--hold all writes the held output under headers for a person to read (cron's \
             mail), and cannot keep stderr JSON; leave out --log-format json or --hold all",
        )?;
        let mut output =
            OutputOptions::new(rules.patterns(), waits_asked, hold).map_err(ConfigError::from)?;
        output.keep_tails = tails;
        Ok(output)
    }
}
