//! A usage error as the tool says it: on one line, naming the flag and the value, saying what
//! would be accepted once and which help to read, pointing a flag of another retry tool to ours,
//! never quoting a value that may hold a password; and, for a command line that does not parse,
//! the log format it asked for, so that the error comes as JSON when asked to.

use std::ffi::OsString;

use clap::error::{ContextKind, ContextValue};
use retry_policy::printable::printable;

use super::full_command;
use crate::report::verbosity::LogFormat;

/// Flags of other retry tools (and of curl's and wget's own retries) and their spellings here,
/// with a word on the difference.
const FAMILIAR_FLAGS: [(&[&str], &str, &str); 8] = [
    (
        &[
            "--retry",
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
            "--retry-delay",
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
        &[
            "--retry-max-time",
            "--max-duration",
            "--total-timeout",
            "--deadline",
        ],
        "--max-time",
        "the whole run's time limit, its attempts and waits together",
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
    use crate::options::Cli;
    use clap::Parser;

    /// The tool's arguments: its name, then `args`.
    fn argv(args: &[&str]) -> Vec<OsString> {
        std::iter::once(&"retry")
            .chain(args)
            .map(OsString::from)
            .collect()
    }

    fn error_for(args: &[&str]) -> String {
        let args = argv(args);
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
        let line = error_for(&["--retry", "3", "true"]);
        assert!(line.contains("did you mean '--max-attempts'?"), "{line}");
        assert!(!line.contains("--on-retry"), "{line}");
        let line = error_for(&["--retry-max-time=60", "true"]);
        assert!(line.contains("did you mean '--max-time'?"), "{line}");
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
        use LogFormat::{Json, Text};
        for (args, asked) in [
            (&["--log-format", "json", "--base", "x"][..], Json),
            (&["--base", "x", "--log-format=json"], Json),
            (&["-n", "--log-format", "--log-format", "json"], Json),
            (&["-n", "3", "true", "--log-format", "json"], Text),
            (&["--", "x", "--log-format", "json"], Text),
            (&["--report", "--log-format", "true"], Text),
            (&["budget", "show", "x", "--log-format", "json"], Json),
            (&["--log-format", "json", "--log-format", "text"], Text),
        ] {
            assert_eq!(requested_log_format(&argv(args)), asked, "{args:?}");
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
