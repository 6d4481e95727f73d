//! The command line and the run it resolves to, by group of options, as watchexec keeps its
//! `args/`: each group's module holds its flags' definitions (their names, values, defaults,
//! the summary `-h` shows and the text `--help`, the man page, the completions and the
//! reference's option table give) beside the function that resolves them: `waits` (attempts
//! and the backoff), `rules` (what an attempt's end means), `limits` (time limits and
//! processes), `output` (the tool's messages, the output held), `reports`, `job`, `hooks` and
//! `fleet` (the budget, and `--budget-store`, declared once for the run and for `tools`, the
//! subcommands). This file holds the interface they make up, parsed ([`Cli`]); `config` puts
//! the groups' resolutions together into one run, each cross-group check made, with the
//! environment read once (`from_environment`) and the report's record of the options
//! (`record`); `usage_error` says a command line that does not parse.

use std::collections::BTreeMap;
use std::ffi::OsString;

use clap::Parser;
use clap::builder::TypedValueParser;
use retry_policy::causes::with_causes;
use retry_policy::choice::Choice;
use retry_policy::examples::examples_text;
use retry_policy::exit;
use retry_process::signals;

use crate::environment;
use crate::examples;

mod config;
mod fleet;
mod from_environment;
mod hooks;
mod job;
mod limits;
mod output;
mod record;
mod reports;
mod rules;
mod tools;
mod usage_error;
mod waits;

pub(crate) use config::Config;
use fleet::FleetArgs;
pub(crate) use fleet::store_passed_on;
pub(crate) use from_environment::new_id;
use hooks::HooksArgs;
pub(crate) use job::HistoryPlace;
use job::JobNameArgs;
use limits::LimitsArgs;
use output::OutputArgs;
use reports::ReportsArgs;
use rules::RulesArgs;
pub(crate) use tools::{
    BudgetCommand, BudgetSetArgs, BudgetShowArgs, JobCommand, JobSetArgs, JobShowArgs, ToolCommand,
};
pub use usage_error::one_line_error;
pub(crate) use usage_error::requested_log_format;
use waits::WaitsArgs;

/// Refuse a run when `contradiction` holds, saying `why`.
fn refuse(contradiction: bool, why: &str) -> Result<(), ConfigError> {
    match contradiction {
        true => Err(ConfigError(why.to_string())),
        false => Ok(()),
    }
}

/// A combination of flags that cannot make a run; the message says which and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct ConfigError(String);

impl From<retry_budget::Error> for ConfigError {
    fn from(why: retry_budget::Error) -> Self {
        ConfigError(with_causes(&why))
    }
}

impl From<retry_policy::Error> for ConfigError {
    fn from(why: retry_policy::Error) -> Self {
        ConfigError(with_causes(&why))
    }
}

const ABOUT: &str = "Run COMMAND again when it fails, waiting longer each time.";

const LONG_ABOUT: &str = "\
Run COMMAND; when it fails, wait and run it again, until it succeeds, a rule says not to \
retry, or the attempts run out. The waits grow exponentially from --base up to --cap and are \
spread by --jitter, so that many clients retrying at once do not retry in step.

COMMAND runs directly, never through a shell (unless --shell), and everything after it is \
passed to it untouched: in `retry -n 3 curl -n`, curl gets -n. Put -- before a COMMAND that \
starts with a dash.

What an attempt's end means is decided by one ordered list of rules, the first that holds \
deciding: the user's --success-on, --stop-on and --retry-on rules, then 130 (Ctrl-C) and 141 \
(SIGPIPE) are not retried, then the --preset's rules, then the defaults: status 0 succeeds and \
any other end is retried (or stopped, when --retry-on names what is retried). A RULE is CODES \
(exit statuses and ranges, e.g. 6,7,75-78), STREAM:REGEX (a line of stdout, stderr or output, \
both streams, matches REGEX, e.g. stderr:'HTTP 5\\d\\d'), or both (22,stderr:'error: 4\\d\\d'). \
--plan prints the list.";

/// The text after the options in `--help`, `columns` wide: exit statuses, signals, the command's
/// environment and the tool's, examples.
fn after_long_help(columns: usize) -> String {
    let statuses = exit::table();
    let statuses: Vec<_> = statuses
        .iter()
        .map(|(status, meaning)| (*status, &meaning[..]))
        .collect();
    let mut text = format!("Exit status:\n{}", help_table(&statuses, columns));
    text += "\nSignals:\n";
    for (signal, effect) in signals::TABLE {
        text += &format!("  {signal}\n");
        text += &wrapped(" ".repeat(6), effect, 6, columns);
    }
    for (title, variables) in [
        ("Environment of COMMAND", &environment::ALL[..]),
        (
            "Environment of a hook, besides COMMAND's",
            &environment::HOOK[..],
        ),
        ("Environment read by retry", &environment::READ[..]),
    ] {
        let rows: Vec<_> = variables
            .iter()
            .map(|variable| (variable.name, variable.meaning))
            .collect();
        text += &format!("\n{title}:\n{}", help_table(&rows, columns));
    }
    text + "\n" + &examples_text(&examples::RUN)
}

/// How wide `--help` is at the most (clap's `max_term_width`).
const HELP_COLUMNS: usize = 80;

/// How wide `--help` is laid out: as clap finds it (`COLUMNS`, else the terminal's width, else
/// 100), at most [`HELP_COLUMNS`]; a `COLUMNS` of 0 counts as none.
fn help_columns() -> usize {
    let columns = environment::own("COLUMNS")
        .and_then(|columns| columns.to_str()?.parse().ok())
        .filter(|&columns| columns > 0);
    let terminal = || terminal_size::terminal_size().map(|(width, _)| usize::from(width.0));
    columns.or_else(terminal).unwrap_or(100).min(HELP_COLUMNS)
}

/// `rows` as a table of `--help`: each name indented by two, each meaning in a column just wider
/// than the longest name, its later lines in that column, within `columns`.
fn help_table(rows: &[(&str, &str)], columns: usize) -> String {
    let names = rows.iter().map(|(name, _)| name.len()).max().unwrap_or(0);
    let row = |(name, meaning): &(&str, &str)| {
        wrapped(format!("  {name:<names$} "), meaning, 3 + names, columns)
    };
    rows.iter().map(row).collect()
}

/// `text` after `start`, in lines within `columns`, each later one indented by `indent`. clap
/// wraps a line it finds too long with its later lines under the line's own indent, which for a
/// table's row is the name's, not the meaning's: wrapped here, to the width clap is given, no
/// line is left for clap to wrap.
fn wrapped(start: String, text: &str, indent: usize, columns: usize) -> String {
    let (mut lines, mut line, mut empty) = (String::new(), start, true);
    for word in text.split(' ') {
        if !empty && line.chars().count() + 1 + word.chars().count() > columns {
            lines += &format!("{line}\n");
            (line, empty) = (" ".repeat(indent), true);
        }
        if !empty {
            line.push(' ');
        }
        (line, empty) = (line + word, false);
    }
    lines + &line + "\n"
}

/// The usage lines: COMMAND is the user's, after the options; `budget` is the tool's own.
const USAGE: &str = "retry [OPTIONS] [--] COMMAND [ARG]...
       retry budget show|set NAME [OPTIONS]
       retry job show|set|history JOB [OPTIONS]";

/// What `-h` ends with.
const SHORT_HELP_END: &str =
    "Every option, exit statuses, signals, environment, examples: retry --help";

/// The headings `--help` groups the options under (`-h` shows its few in one list).
const WAITS: &str = "Attempts and waits";
const DECIDING: &str = "Deciding what an attempt's end means";
const LIMITS: &str = "Time limits and processes";
const OUTPUT: &str = "Output and reports";
const HOOKS: &str = "Hooks";
const FLEET: &str = "Fleets";

/// The parsed command line, before any cross-flag check: the run's options by group, each
/// group's module holding its definitions and their resolution, in the order `--help` shows
/// their headings; `-h` shows the few that are not `hide_short_help`, in this order too.
#[derive(Parser, Debug)]
#[command(
    name = "retry",
    version,
    about = ABOUT,
    long_about = LONG_ABOUT,
    override_usage = USAGE,
    after_help = SHORT_HELP_END,
    args_override_self = true,
    args_conflicts_with_subcommands = true,
    // `retry help` runs a program called help.
    disable_help_subcommand = true,
    max_term_width = HELP_COLUMNS,
    // Where budgets live is for fleets, not for the few options -h shows.
    mut_arg("budget_store", |arg| arg.hide_short_help(true))
)]
pub struct Cli {
    #[command(flatten)]
    pub(crate) waits: WaitsArgs,

    #[command(flatten)]
    pub(crate) rules: RulesArgs,

    #[command(flatten)]
    pub(crate) limits: LimitsArgs,

    // The run's mode, not a group's option: it runs nothing, and -h shows it after the limits.
    /// Print the waits and the rules; run nothing
    ///
    /// Print the waits these options give, how long the whole run can take at the worst (each
    /// attempt at its --timeout, the waits at their longest, cut at the deadline) and, with
    /// --job, how long the job's past runs took, and the rules that decide what each attempt's
    /// end means; then exit without running COMMAND.
    #[arg(long, help_heading = WAITS)]
    pub(crate) plan: bool,

    #[command(flatten)]
    pub(crate) output: OutputArgs,

    #[command(flatten)]
    pub(crate) reports: ReportsArgs,

    #[command(flatten)]
    pub(crate) job: JobNameArgs,

    #[command(flatten)]
    pub(crate) hooks: HooksArgs,

    #[command(flatten)]
    pub(crate) fleet: FleetArgs,

    /// Every option as given or by its default, for the report (see [`given_options`]); empty
    /// when no report is asked for.
    #[arg(skip)]
    pub(crate) given: BTreeMap<String, serde_json::Value>,

    /// Instead of running a command, look at a budget or set its terms.
    #[command(subcommand)]
    pub(crate) tool: Option<ToolCommand>,

    /// The command to run, then its arguments, passed on untouched (the usage line shows it).
    #[arg(value_name = "COMMAND", trailing_var_arg = true, hide = true)]
    pub(crate) command: Vec<OsString>,
}

impl Cli {
    /// Parse the tool's arguments, the program's name first. The long help's tables are built
    /// only when `--help` may ask for them, a subcommand's options only when it is used, and
    /// `-h` shows its few options in one list, without the headings: building the interface is
    /// much of what a short run costs.
    // Out of line, so that the benchmark's callgrind phases (bench/measure.py) can find it.
    #[inline(never)]
    pub fn parse_args(args: &[OsString]) -> Result<Cli, clap::Error> {
        use clap::{CommandFactory, FromArgMatches};
        let mut command = Cli::command();
        if args.iter().any(|arg| arg == "--help") {
            let columns = help_columns();
            let command_with_tables = command
                .term_width(columns)
                .after_long_help(after_long_help(columns));
            command = with_defaults(described_once(command_with_tables));
        } else if args.iter().any(|arg| arg == "-h") {
            command = with_defaults(command.mut_args(|arg| arg.help_heading(None)));
        } else if args
            .iter()
            .any(|arg| arg.as_encoded_bytes().starts_with(b"--report"))
        {
            // The report records each option as given or by its default.
            command = with_defaults(command);
        }
        let mut matches = command.try_get_matches_from_mut(args)?;
        let given = match matches.contains_id("report") {
            true => given_options(&command, &matches),
            false => BTreeMap::new(),
        };
        let mut cli =
            Cli::from_arg_matches_mut(&mut matches).map_err(|err| err.format(&mut command))?;
        cli.given = given;
        Ok(cli)
    }
}

/// Every option of `command` as `matches` holds it, given or by its default, keyed by its long
/// name in snake case: a flag as true or false, an option as its value as written, one that may
/// be repeated as the list of its values, and one neither given nor defaulted as null. Derived
/// from the definition, so that the report records every option, a new one included.
fn given_options(
    command: &clap::Command,
    matches: &clap::ArgMatches,
) -> BTreeMap<String, serde_json::Value> {
    use clap::ArgAction;
    use serde_json::Value;
    let text = |value: &std::ffi::OsStr| Value::String(value.to_string_lossy().into_owned());
    command
        .get_arguments()
        .filter(|arg| !arg.is_positional())
        .filter(|arg| {
            !matches!(
                arg.get_action(),
                ArgAction::Help | ArgAction::HelpShort | ArgAction::HelpLong | ArgAction::Version
            )
        })
        .map(|arg| {
            let id = arg.get_id().as_str();
            let value = match arg.get_action() {
                ArgAction::SetTrue => Value::Bool(matches.get_flag(id)),
                ArgAction::Append => Value::Array(
                    matches
                        .get_raw(id)
                        .into_iter()
                        .flatten()
                        .map(text)
                        .collect(),
                ),
                _ => matches
                    .get_raw(id)
                    .and_then(|mut values| values.next_back())
                    .map_or(Value::Null, text),
            };
            (id.to_string(), value)
        })
        .collect()
}

/// The defaults of the run's options that have one, as `--help`, the man page, the README and a
/// report show them. A run's parse leaves them out (clap would parse each, at every start: a
/// tenth of a run's instructions), and the accessors of [`Cli`] give the same values, as a test
/// holds them to.
const DEFAULTS: [(&str, &str); 9] = [
    ("max_attempts", "5"),
    ("base", "1s"),
    ("cap", "60s"),
    ("jitter", "full"),
    ("multiplier", "2"),
    ("timeout_signal", "TERM"),
    ("kill_after", "10s"),
    ("log_format", "text"),
    ("ci", "auto"),
];

/// `command` with the defaults its options are shown with.
fn with_defaults(command: clap::Command) -> clap::Command {
    command.mut_args(
        |arg| match DEFAULTS.iter().find(|(id, _)| arg.get_id() == *id) {
            Some((_, default)) => arg.default_value(default),
            None => arg,
        },
    )
}

/// The whole interface, the tool's own words included, as the man pages and the completions
/// describe it.
#[doc(hidden)]
pub fn full_command() -> clap::Command {
    use clap::CommandFactory;
    let command = Cli::command().after_long_help(after_long_help(HELP_COLUMNS));
    let mut command = described_once(with_defaults(command));
    command.build();
    command
}

/// `command` with each option described once in the long help: without the summary that `-h`
/// shows (the long help's first paragraph), which the rest says again in full.
fn described_once(command: clap::Command) -> clap::Command {
    command.mut_args(|arg| {
        let (Some(summary), Some(long)) = (arg.get_help(), arg.get_long_help()) else {
            return arg;
        };
        let long = long.to_string();
        match long.strip_prefix(&summary.to_string()).map(str::trim_start) {
            Some(rest) if !rest.is_empty() => {
                let rest = rest.to_string();
                arg.long_help(rest)
            }
            _ => arg,
        }
    })
}

/// A subcommand's options, added to its definition only when it is used (or the whole
/// interface is built): a run of a command never pays for them.
#[derive(Debug)]
pub(crate) struct Deferred<T>(pub(crate) T);

impl<T: clap::FromArgMatches> clap::FromArgMatches for Deferred<T> {
    fn from_arg_matches(matches: &clap::ArgMatches) -> Result<Self, clap::Error> {
        T::from_arg_matches(matches).map(Deferred)
    }

    fn update_from_arg_matches(&mut self, matches: &clap::ArgMatches) -> Result<(), clap::Error> {
        self.0.update_from_arg_matches(matches)
    }
}

impl<T: clap::Args> clap::Args for Deferred<T> {
    fn augment_args(command: clap::Command) -> clap::Command {
        command.defer(|command| each_described_once(T::augment_args(command)))
    }

    fn augment_args_for_update(command: clap::Command) -> clap::Command {
        command.defer(|command| each_described_once(T::augment_args_for_update(command)))
    }
}

/// `command` and its subcommands (`budget show`, `job set`...), each option described once.
fn each_described_once(command: clap::Command) -> clap::Command {
    described_once(command).mut_subcommands(described_once)
}

/// A parser of a [`Choice`]'s names, which the help and the completions offer.
fn choice<T: Choice + Send + Sync>() -> impl clap::builder::TypedValueParser<Value = T> {
    let values = T::ALL
        .iter()
        .map(|value| clap::builder::PossibleValue::new(value.name()).help(value.about()));
    clap::builder::PossibleValuesParser::new(values)
        .map(|name| T::named(&name).expect("clap offers only the names there are"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;
    use retry_policy::backoff::parse_multiplier;
    use std::time::Duration;

    #[test]
    fn definition_is_consistent() {
        full_command().debug_assert();
        Cli::command().debug_assert();
    }

    #[test]
    fn command_words_after_the_first_are_untouched() {
        let cli = Cli::try_parse_from(["retry", "-n", "3", "curl", "-n", "--base", "x"]).unwrap();
        assert_eq!(cli.command, ["curl", "-n", "--base", "x"]);
        assert_eq!(cli.waits.max_attempts().count(), Some(3));
    }

    #[test]
    fn last_value_of_a_repeated_flag_wins() {
        let cli = Cli::try_parse_from(["retry", "--base", "1s", "--base", "2s", "true"]).unwrap();
        assert_eq!(cli.waits.base(), Duration::from_secs(2));
    }

    #[test]
    fn the_usage_names_every_subcommand() {
        let command = full_command();
        let budget = command
            .find_subcommand("budget")
            .expect("the budget subcommand");
        for subcommand in budget.get_subcommands() {
            let name = subcommand.get_name();
            assert!(
                USAGE.contains(&format!("retry budget {name}"))
                    || USAGE.contains(&format!("|{name} "))
                    || USAGE.contains(&format!(" {name}|")),
                "the usage leaves out budget {name}: {USAGE}"
            );
        }
    }

    #[test]
    fn every_hook_is_an_option() {
        let command = full_command();
        for hook in retry_policy::outcome::Hook::ALL {
            let long = hook.flag().trim_start_matches("--");
            assert!(
                command
                    .get_arguments()
                    .any(|arg| arg.get_long() == Some(long)),
                "{}",
                hook.flag()
            );
        }
    }

    /// `retry EXTRA... true`, as argv.
    fn args(extra: &[&str]) -> Vec<OsString> {
        ["retry"]
            .iter()
            .chain(extra)
            .chain(&["true"])
            .map(OsString::from)
            .collect()
    }

    #[test]
    fn the_defaults_shown_are_the_defaults_taken() {
        let resolved = |cli: &Cli| {
            format!(
                "{:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?}",
                cli.waits.max_attempts(),
                cli.waits.base(),
                cli.waits.cap(),
                cli.waits.jitter(),
                cli.waits.multiplier(),
                cli.limits.timeout_signal(),
                cli.limits.kill_after(),
                cli.output.log_format(),
                cli.output.ci()
            )
        };
        let taken = Cli::parse_args(&args(&[])).unwrap();
        // Every default given, as the help shows it, on the command line.
        let shown: Vec<String> = DEFAULTS
            .iter()
            .flat_map(|(id, default)| [format!("--{}", id.replace('_', "-")), default.to_string()])
            .collect();
        let shown: Vec<&str> = shown.iter().map(String::as_str).collect();
        let given = Cli::parse_args(&args(&shown)).unwrap();
        assert_eq!(resolved(&taken), resolved(&given));
        // And the docs' command shows each one.
        let command = full_command();
        for (id, default) in DEFAULTS {
            let arg = command
                .get_arguments()
                .find(|arg| arg.get_id() == id)
                .unwrap();
            assert_eq!(arg.get_default_values(), [default], "{id}");
        }
    }

    #[test]
    fn a_default_is_not_a_given_multiplier() {
        assert!(
            Cli::parse_args(&args(&[]))
                .unwrap()
                .waits
                .multiplier
                .is_none()
        );
        let given = Cli::parse_args(&args(&["--multiplier", "2"])).unwrap();
        assert_eq!(given.waits.multiplier, Some(2.0));
    }

    #[test]
    fn the_tools_own_words_are_only_the_first() {
        let parse = |args: &[&str]| Cli::try_parse_from(args).unwrap();
        assert!(parse(&["retry", "budget", "show", "api"]).tool.is_some());
        for args in [
            &["retry", "--", "budget"][..],
            &["retry", "-n", "3", "budget"],
            &["retry", "help"],
        ] {
            let cli = parse(args);
            assert!(cli.tool.is_none(), "{args:?}");
            assert_eq!(cli.command.len(), 1, "{args:?}");
        }
    }

    #[test]
    fn multiplier_must_be_finite_and_at_least_one() {
        assert_eq!(parse_multiplier("1.5"), Ok(1.5));
        for text in ["0.5", "NaN", "inf", "-2", "two", ""] {
            assert!(parse_multiplier(text).is_err(), "{text}");
        }
    }

    #[test]
    fn the_help_of_preset_names_every_preset() {
        let command = Cli::command();
        let preset = command
            .get_arguments()
            .find(|arg| arg.get_long() == Some("preset"))
            .unwrap();
        let help = preset.get_long_help().unwrap().to_string();
        for known in &retry_policy::presets::PRESETS {
            assert!(
                help.contains(&format!(" {},", known.name)),
                "{}: {help}",
                known.name
            );
        }
    }

    #[test]
    fn a_help_table_wraps_each_meaning_in_its_own_column() {
        let meaning =
            "a meaning long enough to need a second line within the eighty columns of help";
        let table = help_table(&[("A", "short"), ("LONGER", meaning)], HELP_COLUMNS);
        assert_eq!(
            table,
            "  A      short\n  LONGER a meaning long enough to need a second line within \
             the eighty columns\n         of help\n"
        );
    }

    #[test]
    fn clap_leaves_the_help_tables_as_they_are_laid_out() {
        // The examples are laid out to paste as they are at 80 columns, wherever shown.
        for columns in [60, HELP_COLUMNS] {
            let text = after_long_help(columns);
            let tables = &text[..text.find("Examples:").unwrap()];
            let help = Cli::command()
                .after_long_help(text.clone())
                .term_width(columns)
                .render_long_help()
                .to_string();
            assert!(help.contains(tables), "{help}");
        }
    }
}
