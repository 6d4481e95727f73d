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
//! (`record`).

use std::collections::BTreeMap;
use std::ffi::OsString;

use clap::Parser;
use clap::builder::TypedValueParser;
use clap::error::{ContextKind, ContextValue};
use retry_policy::causes::with_causes;
use retry_policy::choice::Choice;
use retry_policy::examples::examples_text;
use retry_policy::exit;
use retry_policy::printable::printable;
use retry_process::signals;

use crate::environment;
use crate::examples;
use crate::report::verbosity::LogFormat;

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

/// The text after the options in `--help`: exit statuses, signals, the command's environment and
/// the tool's, examples.
fn after_long_help() -> String {
    let mut text = String::from("Exit status:\n");
    for (status, meaning) in exit::table() {
        text += &format!("  {status:<6} {meaning}\n");
    }
    text += "\nSignals:\n";
    for (signal, effect) in signals::TABLE {
        text += &format!("  {signal}\n      {effect}\n");
    }
    for (title, variables) in [
        ("Environment of COMMAND", &environment::ALL[..]),
        (
            "Environment of a hook, besides COMMAND's",
            &environment::HOOK[..],
        ),
        ("Environment read by retry", &environment::READ[..]),
    ] {
        text += &format!("\n{title}:\n");
        for variable in variables {
            text += &format!("  {:<25} {}\n", variable.name, variable.meaning);
        }
    }
    text + "\n" + &examples_text(&examples::RUN)
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
    max_term_width = 80,
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
            command = with_defaults(described_once(command.after_long_help(after_long_help())));
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
    let command = Cli::command().after_long_help(after_long_help());
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

/// Flags of other retry tools and their spellings here, with a word on the difference.
const FAMILIAR_FLAGS: [(&[&str], &str, &str); 7] = [
    (
        &[
            "--retries",
            "--max-retries",
            "--attempts",
            "--tries",
            "--times",
            "--count",
        ],
        "--max-attempts",
        "it counts attempts, the first included: 3 retries are --max-attempts 4",
    ),
    (
        &[
            "--delay",
            "--interval",
            "--wait",
            "--sleep",
            "--initial-delay",
            "--min-delay",
        ],
        "--base",
        "the first wait; later ones grow from it, up to --cap",
    ),
    (
        &[
            "--max-delay",
            "--max-wait",
            "--max-interval",
            "--max-backoff",
        ],
        "--cap",
        "the longest single wait",
    ),
    (
        &["--until"],
        "--success-on",
        "the exit statuses that count as success",
    ),
    (
        &["--while", "--retry-on-exit", "--on-exit-code"],
        "--retry-on",
        "the exit statuses worth another attempt",
    ),
    (
        &["--fatal-exit-codes", "--abort-on"],
        "--stop-on",
        "the exit statuses never retried",
    ),
    (
        &["--stagger", "--random-delay"],
        "--splay",
        "a random wait before the first attempt",
    ),
];

/// A clap error as one line: its first paragraph without clap's own annotations (a value quoted
/// in it may hold newlines of its own, escaped here), what would be accepted, and a suggestion;
/// `args` are the arguments the tool was given, to find a value that is not UTF-8.
pub fn one_line_error(err: &clap::Error, args: &[OsString]) -> String {
    if err.kind() == clap::error::ErrorKind::InvalidUtf8 {
        return printable(&format!("{} (see 'retry --help')", invalid_utf8(args)));
    }
    let rendered = err.render().to_string();
    let first = rendered
        .trim_start()
        .split("\n\n")
        .next()
        .unwrap_or("bad usage");
    // "  [possible values: ...]" is said below, from the error's context, once.
    let first = first.split("\n  [").next().unwrap_or(first);
    // A list of missing arguments, one an indented line, becomes one line.
    let first = first.replace(":\n  ", ": ").replace("\n  ", ", ");
    let mut message = first.strip_prefix("error: ").unwrap_or(&first).to_string();
    for kind in [ContextKind::ValidValue, ContextKind::ValidSubcommand] {
        if let Some(ContextValue::Strings(values)) = err.get(kind)
            && !values.is_empty()
        {
            message += &format!("; expected one of: {}", values.join(", "));
        }
    }
    let familiar = match err.get(ContextKind::InvalidArg) {
        Some(ContextValue::String(flag)) => familiar_flag(flag),
        _ => None,
    };
    match familiar {
        Some((ours, note)) => message += &format!("; did you mean '{ours}'? ({note})"),
        None => {
            for kind in [
                ContextKind::SuggestedArg,
                ContextKind::SuggestedValue,
                ContextKind::SuggestedSubcommand,
            ] {
                let suggestion = match err.get(kind) {
                    Some(ContextValue::String(suggestion)) => Some(suggestion),
                    Some(ContextValue::Strings(suggestions)) => suggestions.first(),
                    _ => None,
                };
                if let Some(suggestion) = suggestion {
                    message += &format!("; did you mean '{suggestion}'?");
                }
            }
        }
    }
    let words: Vec<&str> = args
        .iter()
        .skip(1)
        .take(2)
        .filter_map(|arg| arg.to_str())
        .collect();
    if let ["budget", "history"] = words.as_slice() {
        message += "; a job's history is 'retry job history JOB'";
    }
    printable(&format!("{message} (see '{}')", help_for(&words)))
}

/// The log format `args` (the tool's arguments, its name first) ask for, found even when they
/// do not parse: the last `--log-format` among the tool's own options (those before COMMAND,
/// or a subcommand's), walked with the definition's knowledge of which options take a value.
pub(crate) fn requested_log_format(args: &[OsString]) -> LogFormat {
    let definition = full_command();
    let mut command = &definition;
    let mut format = LogFormat::Text;
    let mut words = args.iter().skip(1).map(|arg| arg.to_str());
    while let Some(Some(word)) = words.next() {
        if word == "--" {
            break;
        }
        if let Some(sub) = command.find_subcommand(word) {
            command = sub;
            continue;
        }
        let (takes_value, value) = match word.strip_prefix("--") {
            Some(long) => {
                let (name, value) = long
                    .split_once('=')
                    .map_or((long, None), |(n, v)| (n, Some(v)));
                let takes = command
                    .get_arguments()
                    .find(|arg| arg.get_long() == Some(name))
                    .is_some_and(|arg| arg.get_action().takes_values());
                if name == "log-format" {
                    let given = value.map(Some).unwrap_or_else(|| words.next().flatten());
                    format = match given {
                        Some("json") => LogFormat::Json,
                        _ => LogFormat::Text,
                    };
                    continue;
                }
                (takes, value)
            }
            None if word.len() == 2 && word.starts_with('-') => {
                let short = word.chars().nth(1);
                let takes = command
                    .get_arguments()
                    .find(|arg| arg.get_short() == short)
                    .is_some_and(|arg| arg.get_action().takes_values());
                (takes, None)
            }
            // COMMAND: what follows is the command's.
            None if !word.starts_with('-') && std::ptr::eq(command, &definition) => break,
            None => (false, None),
        };
        if takes_value && value.is_none() {
            words.next();
        }
    }
    format
}

/// The help that says what the command line `words` (its first two, after `retry`) can take:
/// a subcommand's own, where the words name one.
fn help_for(words: &[&str]) -> String {
    match words {
        [tool @ "budget", command @ ("show" | "set"), ..]
        | [tool @ "job", command @ ("show" | "set" | "history"), ..] => {
            format!("retry {tool} {command} --help")
        }
        [tool @ ("budget" | "job"), ..] => format!("retry {tool} --help"),
        _ => "retry --help".to_string(),
    }
}

/// This tool's flag for `flag` as other retry tools spell it, with a note.
fn familiar_flag(flag: &str) -> Option<(&'static str, &'static str)> {
    let name = flag.split('=').next().unwrap_or(flag);
    FAMILIAR_FLAGS
        .iter()
        .find(|(theirs, _, _)| theirs.contains(&name))
        .map(|&(_, ours, note)| (ours, note))
}

/// Which argument is not UTF-8, and the flag it is the value of.
fn invalid_utf8(args: &[OsString]) -> String {
    let Some(index) = args.iter().position(|arg| arg.to_str().is_none()) else {
        return "an argument is not valid UTF-8".into();
    };
    let value = args[index].to_string_lossy();
    let flag = match value.split_once('=') {
        Some((flag, _)) if flag.starts_with("--") => Some(flag.to_string()),
        _ => index
            .checked_sub(1)
            .and_then(|before| args[before].to_str())
            .filter(|before| before.starts_with('-'))
            .map(String::from),
    };
    match flag {
        Some(flag) if SECRET_FLAGS.contains(&flag.as_str()) => format!(
            "invalid value for '{flag}' (not shown: it may hold a password): not valid UTF-8; \
             the tool's own values are text"
        ),
        Some(flag) => format!(
            "invalid value '{value}' for '{flag}': not valid UTF-8; the tool's own values are text"
        ),
        None => format!("argument '{value}' is not valid UTF-8"),
    }
}

/// The flags whose values may hold a password, which no message quotes.
const SECRET_FLAGS: [&str; 1] = ["--budget-store"];

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

    fn error_for(args: &[&str]) -> String {
        let args: Vec<OsString> = std::iter::once("retry")
            .chain(args.iter().copied())
            .map(OsString::from)
            .collect();
        let err = Cli::parse_args(&args).unwrap_err();
        one_line_error(&err, &args)
    }

    #[test]
    fn errors_fit_on_one_line() {
        let line = error_for(&["--frobnicate", "true"]);
        assert!(!line.contains('\n'));
        assert!(line.contains("--frobnicate"), "{line}");
        assert_eq!(
            error_for(&["budget", "show"]),
            "the following required arguments were not provided: <NAME> (see 'retry budget show \
             --help')"
        );
        let line = error_for(&["budget"]);
        assert!(line.contains("requires a subcommand"), "{line}");
        assert!(line.contains("expected one of: show, set"), "{line}");
    }

    #[test]
    fn errors_say_what_is_accepted_once() {
        let line = error_for(&["--jitter", "fulll", "true"]);
        assert_eq!(
            line,
            "invalid value 'fulll' for '--jitter <STRATEGY>'; expected one of: none, full, \
             equal, decorrelated; did you mean 'full'? (see 'retry --help')"
        );
        assert!(error_for(&["--bsae", "1s", "true"]).contains("did you mean '--base'?"));
        assert!(!error_for(&["--base"]).contains("expected one of"));
    }

    #[test]
    fn flags_of_other_tools_point_to_ours() {
        let line = error_for(&["--delay", "1s", "true"]);
        assert!(line.contains("did you mean '--base'?"), "{line}");
        let line = error_for(&["--retries", "3", "true"]);
        assert!(line.contains("did you mean '--max-attempts'?"), "{line}");
        assert!(line.contains("--max-attempts 4"), "{line}");
    }

    #[test]
    fn a_value_that_is_not_utf8_names_its_flag() {
        use std::os::unix::ffi::OsStringExt;
        let bad = OsString::from_vec(b"5\xffs".to_vec());
        for args in [
            vec!["retry".into(), "--base".into(), bad.clone(), "true".into()],
            vec![
                "retry".into(),
                OsString::from_vec(b"--base=5\xffs".to_vec()),
                "true".into(),
            ],
        ] {
            let err = Cli::try_parse_from(&args).unwrap_err();
            let line = one_line_error(&err, &args);
            assert!(line.contains("for '--base': not valid UTF-8"), "{line}");
            assert!(!line.contains('\n'), "{line}");
        }
    }

    #[test]
    fn the_log_format_is_found_even_in_arguments_that_do_not_parse() {
        let format = |args: &[&str]| {
            let args: Vec<OsString> = std::iter::once("retry")
                .chain(args.iter().copied())
                .map(OsString::from)
                .collect();
            requested_log_format(&args)
        };
        assert_eq!(
            format(&["--log-format", "json", "--base", "x"]),
            LogFormat::Json
        );
        assert_eq!(
            format(&["--base", "x", "--log-format=json"]),
            LogFormat::Json
        );
        assert_eq!(
            format(&["-n", "--log-format", "--log-format", "json"]),
            LogFormat::Json
        );
        assert_eq!(
            format(&["-n", "3", "true", "--log-format", "json"]),
            LogFormat::Text
        );
        assert_eq!(
            format(&["--", "x", "--log-format", "json"]),
            LogFormat::Text
        );
        assert_eq!(
            format(&["--report", "--log-format", "true"]),
            LogFormat::Text
        );
        assert_eq!(
            format(&["budget", "show", "x", "--log-format", "json"]),
            LogFormat::Json
        );
        assert_eq!(
            format(&["--log-format", "json", "--log-format", "text"]),
            LogFormat::Text
        );
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
    fn a_secret_flag_is_never_quoted() {
        use std::os::unix::ffi::OsStringExt;
        let store = OsString::from_vec(b"redis://:s3cret\xff@h".to_vec());
        let joined = OsString::from_vec(b"--budget-store=redis://:s3cret\xff@h".to_vec());
        for args in [
            vec![
                "retry".into(),
                "--budget".into(),
                "b".into(),
                "--budget-store".into(),
                store,
            ],
            vec!["retry".into(), "--budget".into(), "b".into(), joined],
        ] {
            let err = Cli::try_parse_from(&args).unwrap_err();
            let line = one_line_error(&err, &args);
            assert!(line.contains("'--budget-store' (not shown"), "{line}");
            assert!(!line.contains("s3cret"), "{line}");
        }
    }
}
