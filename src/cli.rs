//! The command-line interface: the run's flags, their value types and their help text, and the
//! tool's own subcommands, whose options belong to the capability they drive (`budget show`,
//! `budget set`). Each flag's definition is its one source: its names, its value, its default,
//! the summary `-h` shows and the text `--help`, the man page, the completions and the README's
//! option table give (the last three are generated from it, or held to it by a test). No I/O
//! happens here and nothing is cross-checked; `config` resolves what is parsed into a run.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::num::NonZeroU64;
use std::time::Duration;

use clap::Parser;
use clap::builder::TypedValueParser;
use clap::error::{ContextKind, ContextValue};
use retry_budget::breaker::GiveUps;
use retry_budget::job::Overlap;
use retry_budget::model::Rate;
use retry_budget::show::ShowRequest;
use retry_budget::store::StoreSettings;
use retry_budget::terms_change::Clearable;
use retry_budget::{BudgetChoice, BudgetName, Ratio};
use retry_policy::attempts::AttemptLimit;
use retry_policy::backoff::{Jitter, parse_multiplier};
use retry_policy::choice::Choice;
use retry_policy::duration::parse_duration;
use retry_policy::examples::examples_text;
use retry_policy::exit;
use retry_policy::presets::PresetChoice;
use retry_policy::printable::printable;
use retry_policy::rules::RuleSpec;
use retry_policy::seed::Seed;

use crate::environment;
use crate::examples;
use crate::output::Hold;
use crate::process::hooks::parse_shell_line;
use crate::report::ci::CiChoice;
use crate::report::formats::ReportSpec;
use crate::report::verbosity::LogFormat;
use retry_process::signals::signal::parse_signal;
use retry_process::signals::{self, Signal};

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

/// The parsed command line, before any cross-flag check. The options `-h` shows come first, in
/// the order it shows them; the others are `hide_short_help`.
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
    /// Most attempts, the first included
    ///
    /// Make at most N attempts in total, the first included: a whole number, or 'unlimited'.
    #[arg(short = 'n', long, value_name = "N", allow_hyphen_values = true, help_heading = WAITS)]
    pub(crate) max_attempts: Option<AttemptLimit>,

    /// The first wait; later waits grow
    ///
    /// Wait this long after the first failure; every later wait grows from it (e.g. 250ms, 2s;
    /// 0s: never wait).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, allow_hyphen_values = true, help_heading = WAITS)]
    pub(crate) base: Option<Duration>,

    /// The longest backoff wait
    ///
    /// Never let the backoff wait longer than this between two attempts (e.g. 30s, 5m); it may
    /// not be below --base. A wait the command asks for (RETRY_AFTER_FILE,
    /// --retry-after-output), or the default budget's for its token, may be longer; a named
    /// budget refuses a retry whose token is not there within it.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, allow_hyphen_values = true, help_heading = WAITS)]
    pub(crate) cap: Option<Duration>,

    /// none, full, equal or decorrelated
    ///
    /// Spread the waits with this strategy, so that clients failing together retry apart: none
    /// (exactly the exponential ceiling), full (uniform between 0 and the ceiling), equal (half
    /// the ceiling plus a uniform half), decorrelated (uniform between --base and three times the
    /// previous wait).
    #[arg(long, value_name = "STRATEGY", value_parser = choice::<Jitter>(), hide_possible_values = true, help_heading = WAITS)]
    pub(crate) jitter: Option<Jitter>,

    /// Retry what RULE names; may be repeated
    ///
    /// Retry an attempt whose end RULE names: CODES, STREAM:REGEX or both, e.g. 6,7,28 or
    /// stderr:'\b503\b'. May be repeated. Once given, it names what is retried: any other
    /// failure stops (a --preset's rules still decide the ends they name). Default: any failure
    /// but 130 (Ctrl-C) and 141 (SIGPIPE) is retried. CODES:max=N retries them at most N times
    /// in the run (e.g. 124:max=1, or 1-255:max=2,stderr:reset); once spent, the rules below it
    /// decide, and --plan shows the bound on attempts the limits give.
    #[arg(long, value_name = "RULE", allow_hyphen_values = true, help_heading = DECIDING)]
    pub(crate) retry_on: Vec<RuleSpec>,

    /// Never retry what RULE names; may be repeated
    ///
    /// Never retry an attempt whose end RULE names: CODES, STREAM:REGEX or both, e.g. 2,64-78 or
    /// stderr:'HTTP 4\d\d'. May be repeated. A rule without CODES concerns failures only.
    #[arg(long, value_name = "RULE", allow_hyphen_values = true, help_heading = DECIDING)]
    pub(crate) stop_on: Vec<RuleSpec>,

    /// Count what RULE names as success [default: 0]
    ///
    /// Count an attempt whose end RULE names as a success: CODES (the success statuses, e.g.
    /// 0,3), STREAM:REGEX (a success status and a matching line, e.g. stdout:'rolled out'; the
    /// status alone then no longer succeeds), or both. May be repeated. Default: 0.
    #[arg(long, value_name = "RULE", allow_hyphen_values = true, help_heading = DECIDING)]
    pub(crate) success_on: Vec<RuleSpec>,

    /// Exit STATUS after a success that needed retries
    ///
    /// Exit with STATUS (1-255) when COMMAND succeeded only after failed attempts, a flaky
    /// success, as nextest's --flaky-result=fail: a pipeline keeps its retries and still refuses
    /// flaky merges, e.g. --flaky-exit 3. Default: the success's own 0. The report and the done
    /// event record a flaky success either way.
    #[arg(long, value_name = "STATUS", value_parser = clap::value_parser!(u8).range(1..), hide_short_help = true, help_heading = DECIDING)]
    pub(crate) flaky_exit: Option<u8>,

    /// As a program's manual says: curl, git, ... or auto
    ///
    /// Retry what the program's manual calls transient and stop at once at what it calls
    /// permanent, from its exit status and, where the status cannot tell, its message (e.g.
    /// curl's '(22) The requested URL returned error: 503'). NAME is curl, wget, git, rsync,
    /// ssh, psql, pg_isready, apt-get, pip, npm, or auto (the preset of COMMAND's program, if it
    /// has one). Its rules come after --success-on, --stop-on and --retry-on; --plan shows them.
    /// For curl and wget run directly, a POST or PATCH without an Idempotency-Key header is not
    /// repeated after a failure that may have come once the server had it (a time-out once
    /// sent, a cut reply, a 500, 502 or 504).
    #[arg(long, value_name = "NAME", value_parser = choice::<PresetChoice>(), hide_possible_values = true, help_heading = DECIDING)]
    pub(crate) preset: Option<PresetChoice>,

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

    /// Print the waits and the rules; run nothing
    ///
    /// Print the waits these options give, how long the whole run can take at the worst (each
    /// attempt at its --timeout, the waits at their longest, cut at the deadline) and, with
    /// --job, how long the job's past runs took, and the rules that decide what each attempt's
    /// end means; then exit without running COMMAND.
    #[arg(long, help_heading = WAITS)]
    pub(crate) plan: bool,

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

    /// Growth of the longest wait per retry
    ///
    /// Multiply the longest possible wait by FACTOR after each retry: a number of at least 1
    /// (e.g. 1.5). Decorrelated jitter grows its waits from the previous wait instead, so it
    /// refuses --multiplier.
    #[arg(long, value_name = "FACTOR", value_parser = parse_multiplier, allow_hyphen_values = true, hide_short_help = true, help_heading = WAITS)]
    pub(crate) multiplier: Option<f64>,

    /// Every option as given or by its default, for the report (see [`given_options`]); empty
    /// when no report is asked for.
    #[arg(skip)]
    pub(crate) given: BTreeMap<String, serde_json::Value>,

    /// Start over after a failure this long
    ///
    /// Start the backoff and the attempt count over after a failed attempt that ran at least
    /// this long (e.g. 10m), as a supervisor does for a server that ran well for a while.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, allow_hyphen_values = true, hide_short_help = true, help_heading = WAITS)]
    pub(crate) reset_after: Option<Duration>,

    /// Seed the jitter: a number, or 'host'
    ///
    /// Seed the jitter's random numbers with N (0 to 2^64-1) to make the waits reproducible, or
    /// with 'host' to derive it from the host name and the command. Default: random.
    #[arg(long, value_name = "N|host", allow_hyphen_values = true, hide_short_help = true, help_heading = WAITS)]
    pub(crate) seed: Option<Seed>,

    /// Wait as long as a line of output asks
    ///
    /// Read a requested wait from the last line of stdout or stderr matching REGEX, from its
    /// first group or the group named 'after' (e.g. '(?i)^retry-after:\s*(.+)$'): seconds, a
    /// DURATION, an HTTP date, or 'stop'. It can only lengthen a wait, and is cut to
    /// RETRY_MAX_REQUESTED_WAIT (15m). May be repeated.
    #[arg(long, value_name = "REGEX", allow_hyphen_values = true, hide_short_help = true, help_heading = DECIDING)]
    pub(crate) retry_after_output: Vec<String>,

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
    /// Join COMMAND and its ARGs with spaces and run the line with `sh -c`.
    #[arg(long, hide_short_help = true, help_heading = LIMITS)]
    pub(crate) shell: bool,

    /// Run SHELL_LINE before each retry's wait
    ///
    /// After a failed attempt that will be retried, before the wait, run SHELL_LINE with sh -c,
    /// its output on stderr (e.g. 'rm -f /tmp/app.lock'); it gets RETRY_STATUS and
    /// RETRY_NEXT_WAIT_MS. Its failure changes nothing but a warning.
    #[arg(long, value_name = "SHELL_LINE", value_parser = parse_shell_line, allow_hyphen_values = true, hide_short_help = true, help_heading = HOOKS)]
    pub(crate) on_retry: Option<String>,

    /// Run SHELL_LINE once when the run gives up
    ///
    /// When the run gives up (not after a success, not when a signal stops it), run SHELL_LINE
    /// with sh -c, its output on stderr; it gets RETRY_STATUS and RETRY_REASON.
    #[arg(long, value_name = "SHELL_LINE", value_parser = parse_shell_line, allow_hyphen_values = true, hide_short_help = true, help_heading = HOOKS)]
    pub(crate) on_give_up: Option<String>,

    /// Hold output until its attempt is judged: stdout or all
    ///
    /// stdout: hold each attempt's stdout, and write it to stdout only for the attempt that
    /// succeeds, to stderr for the others. all: hold stdout, stderr and the tool's own messages;
    /// write nothing if the run succeeds, else each attempt's output in order under a header
    /// saying how it ended, so that cron's mail holds the whole story. Held output beyond 1 MiB
    /// goes to a temporary file in TMPDIR.
    #[arg(long, value_name = "WHAT", value_parser = choice::<Hold>(), hide_possible_values = true, hide_short_help = true, help_heading = OUTPUT)]
    pub(crate) hold: Option<Hold>,

    /// Write a report to FILE when the run ends; may be repeated
    ///
    /// When the run ends, write a report of it to FILE, in the format its prefix names or else
    /// its name's ending: json: (or *.json, and any other name) a JSON summary; dotenv: (or
    /// *.env) RETRY_RUN_... NAME=value lines, as GitLab's dotenv report reads them; prom: (or
    /// *.prom) the run's gauges for node_exporter's textfile collector, each labelled with --job;
    /// junit: (or *.xml) one JUnit test case, failed attempts before a success as Surefire's
    /// flakyFailure, with the end of each attempt's output (e.g. retry-report.json,
    /// dotenv:build.env, /var/lib/node-exporter/backup.prom, TEST-retry.xml). May be repeated.
    #[arg(long, value_name = "[FORMAT:]FILE", hide_short_help = true, help_heading = OUTPUT)]
    pub(crate) report: Vec<ReportSpec>,

    /// The job's name, for its history, metrics and CI groups
    ///
    /// Name the job: each run so named adds to the job's history in the budget's store (clean,
    /// flaky or failed; retry job history NAME shows it), and it is the job label of the
    /// prom: report's gauges and the title of the CI system's groups (default: no history, and
    /// the --budget name, else the command's program name, for the rest; e.g. nightly-backup).
    #[arg(long, value_name = "NAME", hide_short_help = true, help_heading = OUTPUT)]
    pub(crate) job: Option<String>,

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

    /// A random wait below DURATION before the first attempt
    ///
    /// Wait a random time below DURATION before the first attempt, drawn from the seed, so that
    /// a fleet's cron jobs spread out (e.g. 5m).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, allow_hyphen_values = true, hide_short_help = true, help_heading = FLEET)]
    pub(crate) splay: Option<Duration>,

    /// Share the retry budget NAME, or 'off'
    ///
    /// Take a token from the retry budget NAME for each retry, shared with every other run that
    /// names it (e.g. the API host they call), on the terms its store keeps (retry budget set
    /// NAME --rate 10/1m; 10/1m unless set). Without one, each retry takes a token from this
    /// machine's default budget for the command's target (the host a preset finds in its
    /// arguments, else the command line): 20 in 5m, a retry waiting for its token as long as
    /// the run's own limits allow (a named budget refuses one not there within --cap), and
    /// nothing spent while nothing fails. 'off': no budget at all [default: $RETRY_BUDGET].
    #[arg(long, value_name = "NAME", allow_hyphen_values = true, hide_short_help = true, help_heading = FLEET)]
    pub(crate) budget: Option<BudgetChoice>,

    #[command(flatten, next_help_heading = FLEET)]
    pub(crate) store: StoreOption,

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

    /// `-n`, or its default.
    pub(crate) fn max_attempts(&self) -> AttemptLimit {
        self.max_attempts
            .unwrap_or(AttemptLimit::AtMost(NonZeroU64::new(5).unwrap()))
    }

    /// `--base`, or its default.
    pub(crate) fn base(&self) -> Duration {
        self.base.unwrap_or(Duration::from_secs(1))
    }

    /// `--cap`, or its default.
    pub(crate) fn cap(&self) -> Duration {
        self.cap.unwrap_or(Duration::from_secs(60))
    }

    /// `--jitter`, or its default.
    pub(crate) fn jitter(&self) -> Jitter {
        self.jitter.unwrap_or(Jitter::Full)
    }

    /// `--multiplier`, or its default.
    pub(crate) fn multiplier(&self) -> f64 {
        self.multiplier.unwrap_or(2.0)
    }

    /// `--timeout-signal`, or its default.
    pub(crate) fn timeout_signal(&self) -> Signal {
        self.timeout_signal.unwrap_or(Signal::TERM)
    }

    /// `--kill-after`, or its default.
    pub(crate) fn kill_after(&self) -> Duration {
        self.kill_after.unwrap_or(Duration::from_secs(10))
    }

    /// `--log-format`, or its default.
    pub(crate) fn log_format(&self) -> LogFormat {
        self.log_format.unwrap_or(LogFormat::Text)
    }

    /// `--ci`, or its default.
    pub(crate) fn ci(&self) -> CiChoice {
        self.ci.unwrap_or(CiChoice::Auto)
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

/// What `retry` can do besides running a command: only the first argument can name one
/// (`retry -- budget` and `retry -n 3 budget` run a program called budget).
#[derive(clap::Subcommand, Debug)]
pub(crate) enum ToolCommand {
    /// Look at a retry budget, or set its terms.
    #[command(
        about = "Look at a retry budget, or set its terms.",
        hide = true,
        subcommand_required = true,
        arg_required_else_help = false,
        disable_help_subcommand = true
    )]
    Budget(Deferred<BudgetArgs>),
    /// Look at a job's terms or history, or set its terms.
    #[command(
        about = "Look at a job's terms or history, or set its terms.",
        hide = true,
        subcommand_required = true,
        arg_required_else_help = false,
        disable_help_subcommand = true
    )]
    Job(Deferred<JobArgs>),
}

/// `retry job`'s subcommand; without one, a usage error rather than the help.
#[derive(clap::Args, Debug)]
#[command(about = None, arg_required_else_help = false)]
pub(crate) struct JobArgs {
    #[command(subcommand)]
    pub(crate) command: JobCommand,
}

/// What `retry job` can do.
#[derive(clap::Subcommand, Debug)]
pub(crate) enum JobCommand {
    /// Print a job's terms: whether its runs may overlap, and the run in progress.
    #[command(long_about = JOB_SHOW_ABOUT)]
    Show(JobShowArgs),
    /// Set a job's terms, which every run of the job obeys.
    #[command(long_about = JOB_SET_ABOUT)]
    Set(JobSetArgs),
    /// Print a job's history of runs: clean, flaky and failed, and its pass rate.
    #[command(long_about = JOB_HISTORY_ABOUT)]
    History(JobShowArgs),
}

/// What `retry job show --help` says it does.
const JOB_SHOW_ABOUT: &str = "\
Print the terms of the job JOB (a run's --job) from the store its budget uses, changing \
nothing: whether its runs may overlap, and on a shared store the run in progress (its \
RETRY_RUN_ID) that holds the job.";

/// What `retry job set --help` says it does.
const JOB_SET_ABOUT: &str = "\
Keep the terms of the job JOB (a run's --job) in the store its budget uses, where every run \
of the job reads them before its first attempt: so that runs on every machine obey the same \
terms, they are stated here once, never by a run.";

/// The `retry job show` and `retry job history` options.
#[derive(clap::Args, Debug)]
pub(crate) struct JobShowArgs {
    /// The job's name, as runs give it to --job.
    #[arg(value_name = "JOB")]
    pub(crate) job: String,

    #[command(flatten)]
    pub(crate) reading: Reading,
}

/// The `retry job set` options: at least one term.
#[derive(clap::Args, Debug)]
#[command(group(clap::ArgGroup::new("terms").required(true).multiple(true).args(["overlap", "alert_after", "schedule"])))]
pub(crate) struct JobSetArgs {
    /// The job's name, as runs give it to --job.
    #[arg(value_name = "JOB")]
    pub(crate) job: String,

    /// Whether a run of the job may start while another is in progress, on any machine that
    /// shares the store: allow, skip (it makes no attempt and exits 75) or wait (for the other
    /// to end, within its --max-time), e.g. skip (kept when not given; allow the first time).
    #[arg(long, value_name = "MODE", value_parser = choice::<Overlap>())]
    pub(crate) overlap: Option<Overlap>,

    /// From which failed run in a row the job's monitor (RETRY_MONITOR) is told of a failure,
    /// 1 to 99, e.g. 3 (kept when not given; 1 the first time).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=i64::from(retry_budget::job::MOST_ALERT_AFTER)))]
    pub(crate) alert_after: Option<u32>,

    /// When the job is due, in cron's five fields (or an @ name), optionally after CRON_TZ=ZONE:
    /// a run of the job ends before the next slot, its last status its own, and a failed run is
    /// retried until then and never past it; none to keep none, e.g. '*/15 * * * *' (kept when
    /// not given; none the first time).
    #[arg(long, value_name = "CRON")]
    pub(crate) schedule: Option<String>,

    #[command(flatten)]
    pub(crate) store: StoreOption,
}

/// `retry budget`'s subcommand; without one, a usage error rather than the help.
#[derive(clap::Args, Debug)]
#[command(about = None, arg_required_else_help = false)]
pub(crate) struct BudgetArgs {
    #[command(subcommand)]
    pub(crate) command: BudgetCommand,
}

/// What `retry budget` can do.
#[derive(clap::Subcommand, Debug)]
pub(crate) enum BudgetCommand {
    /// Print a budget's state now: its terms, its tokens, its counters, and when it will be full.
    #[command(long_about = BUDGET_SHOW_ABOUT)]
    Show(BudgetShowArgs),
    /// Set a budget's terms, which every run that shares the budget uses.
    #[command(long_about = BUDGET_SET_ABOUT)]
    Set(BudgetSetArgs),
}

/// What `retry job history --help` says it does.
const JOB_HISTORY_ABOUT: &str = "\
Print the history of the job JOB (a run's --job) from the store its budget uses, changing \
nothing: how its last 100 runs ended (clean at the first attempt, flaky after failed ones, or \
failed), in order; the share that passed at the first attempt and in the end, each with its \
95% Wilson interval; and the runs counted in all. A run named with --job adds to it.";

/// `--budget-store`, declared once: where a run's budget lives, and where `retry budget` and
/// `retry job` look, so that each reads the store the runs use; a run hides it from `-h`.
#[derive(clap::Args, Debug, Default)]
pub(crate) struct StoreOption {
    /// Where budgets live: file, file:DIR, or redis://HOST
    ///
    /// Keep budgets, and jobs' terms and histories, in STORE: 'file' (a file on this machine, in $XDG_STATE_HOME/retry/budgets
    /// or ~/.local/state/retry/budgets), file:DIR, or a Redis or Valkey server a fleet shares:
    /// redis://[USER@]HOST[:PORT][/DB] (any node of a Cluster), rediss://... (TLS),
    /// redis+sentinel://HOST:PORT,HOST:PORT/PRIMARY (sentinels, then the primary's name), or
    /// redis+unix:///PATH/TO/SOCKET. Query keys: ?fail=closed counts a store that cannot be used as no token (default open:
    /// warn once and go on, a shared store falling back to the file store); ?timeout=2s bounds
    /// each call (default 500ms); ?password_file=FILE logs in with FILE's first line; after
    /// rediss://, ?ca_file=FILE trusts that authority instead of the system's, and
    /// ?cert_file=FILE&key_file=FILE (the key its owner's alone) is the client certificate a TLS
    /// server asks for. An address with a password is refused here, where every user can read it (ps): give it in
    /// RETRY_BUDGET_STORE [default: $RETRY_BUDGET_STORE, or file].
    #[arg(long, value_name = "STORE")]
    pub(crate) budget_store: Option<String>,
}

impl StoreOption {
    /// The store it names, else the one `RETRY_BUDGET_STORE` names, else the file store, for
    /// `who` (what needs the file store's directory, when there is none); `env` reads the
    /// environment.
    pub(crate) fn settings(
        &self,
        env: &impl Fn(&str) -> Option<OsString>,
        who: &str,
    ) -> Result<StoreSettings, retry_budget::Error> {
        StoreSettings::resolve(self.budget_store.as_deref(), env, who)
    }
}

/// Where `retry budget show`, `retry job show` and `retry job history` read, and how they
/// print.
#[derive(clap::Args, Debug)]
pub(crate) struct Reading {
    #[command(flatten)]
    pub(crate) store: StoreOption,

    /// Print it as text, or as one JSON object (json).
    #[arg(
        long,
        value_name = "FORMAT",
        default_value = "text",
        hide_possible_values = true
    )]
    pub(crate) log_format: LogFormat,
}

/// A parser of a [`Choice`]'s names, which the help and the completions offer.
fn choice<T: Choice + Send + Sync>() -> impl clap::builder::TypedValueParser<Value = T> {
    let values = T::ALL
        .iter()
        .map(|value| clap::builder::PossibleValue::new(value.name()).help(value.about()));
    clap::builder::PossibleValuesParser::new(values)
        .map(|name| T::named(&name).expect("clap offers only the names there are"))
}

/// What `retry budget show --help` says it does.
const BUDGET_SHOW_ABOUT: &str = "\
Print the state of the retry budget NAME now, changing nothing: its terms, the rate bucket's \
tokens and when it will be full, the earned tokens, and the first attempts, retries and \
refusals counted by every run that shared it.

(`budget` is the tool's own word only as the first word: `retry -- budget` runs a program \
called budget.)";

/// What `retry budget set --help` says it does.
const BUDGET_SET_ABOUT: &str = "\
Keep the terms of the retry budget NAME in its store, where every run that shares the budget \
reads them: so that all its runs spend on the same terms, they are stated here once, never by \
a run. A budget nobody set terms for has 10/1m, and earns nothing. The state is carried over \
to the new terms (its counters kept, its tokens within the new capacity).";

/// The `retry budget show` options.
#[derive(clap::Args, Debug)]
pub(crate) struct BudgetShowArgs {
    /// The budget's name, as runs give it to --budget.
    #[arg(value_name = "NAME")]
    pub(crate) name: BudgetName,

    #[command(flatten)]
    pub(crate) reading: Reading,
}

impl BudgetShowArgs {
    /// The budget these options name, and where it lives; `env` reads the environment.
    pub(crate) fn request(
        &self,
        env: &impl Fn(&str) -> Option<OsString>,
    ) -> Result<ShowRequest, retry_budget::Error> {
        let store = self.reading.store.settings(env, "retry budget show")?;
        Ok(ShowRequest {
            name: self.name.clone(),
            location: store.location,
        })
    }
}

/// The `retry budget set` options: each term given replaces the one kept, each left out is
/// kept, and `--clear` removes one.
#[derive(clap::Args, Debug)]
pub(crate) struct BudgetSetArgs {
    /// The budget's name, as runs give it to --budget.
    #[arg(value_name = "NAME")]
    pub(crate) name: BudgetName,

    /// At most N tokens, regaining N every DURATION; each retry takes one (e.g. 10/1m); needed
    /// the first time, kept when not given.
    #[arg(long, value_name = "N/DURATION", allow_hyphen_values = true)]
    pub(crate) rate: Option<Rate>,

    /// Also earn R tokens (more than 0, at most 1, e.g. 0.1) for every first attempt of any run
    /// sharing the budget, spent before the rate's, at once or not at all (kept when not
    /// given; none the first time).
    #[arg(long, value_name = "R", allow_hyphen_values = true)]
    pub(crate) ratio: Option<Ratio>,

    /// Let earned tokens fade exponentially with this time constant (e.g. 30s, 5m; kept when
    /// not given; 1m the first time).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, allow_hyphen_values = true)]
    pub(crate) window: Option<Duration>,

    /// A breaker: once N runs sharing the budget gave up within DURATION, runs make no attempt
    /// (they exit 75) until a cool-down is over, when one run's attempt decides (e.g. 5/1m;
    /// kept when not given; none the first time).
    #[arg(long, value_name = "N/DURATION", allow_hyphen_values = true)]
    pub(crate) breaker: Option<GiveUps>,

    /// The breaker opens only when the runs that gave up are at least this share of the runs
    /// that ended in its window (more than 0, at most 1; kept when not given; 0.5 the first
    /// time).
    #[arg(long, value_name = "R", allow_hyphen_values = true)]
    pub(crate) breaker_share: Option<Ratio>,

    /// On a shared store, the breaker opens only when the runs that gave up came from at least
    /// this many hosts (1 to 16; kept when not given; 2 the first time), so that one broken
    /// host cannot stop a fleet.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=16))]
    pub(crate) breaker_hosts: Option<u32>,

    /// How long the breaker stays open the first time; each re-opening doubles it, up to 32
    /// times (e.g. 30s, 5m; kept when not given; 30s the first time).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, allow_hyphen_values = true)]
    pub(crate) cool_down: Option<Duration>,

    /// Remove a term: ratio (no tokens earned) or breaker. May be repeated.
    #[arg(long, value_name = "TERM", value_parser = choice::<Clearable>())]
    pub(crate) clear: Vec<Clearable>,

    #[command(flatten)]
    pub(crate) store: StoreOption,
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

    #[test]
    fn definition_is_consistent() {
        full_command().debug_assert();
        Cli::command().debug_assert();
    }

    #[test]
    fn command_words_after_the_first_are_untouched() {
        let cli = Cli::try_parse_from(["retry", "-n", "3", "curl", "-n", "--base", "x"]).unwrap();
        assert_eq!(cli.command, ["curl", "-n", "--base", "x"]);
        assert_eq!(cli.max_attempts().count(), Some(3));
    }

    #[test]
    fn last_value_of_a_repeated_flag_wins() {
        let cli = Cli::try_parse_from(["retry", "--base", "1s", "--base", "2s", "true"]).unwrap();
        assert_eq!(cli.base(), Duration::from_secs(2));
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
                cli.max_attempts(),
                cli.base(),
                cli.cap(),
                cli.jitter(),
                cli.multiplier(),
                cli.timeout_signal(),
                cli.kill_after(),
                cli.log_format(),
                cli.ci()
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
        assert!(Cli::parse_args(&args(&[])).unwrap().multiplier.is_none());
        let given = Cli::parse_args(&args(&["--multiplier", "2"])).unwrap();
        assert_eq!(given.multiplier, Some(2.0));
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
