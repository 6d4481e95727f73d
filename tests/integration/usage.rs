//! The tool's own usage: help, version, and every kind of bad input (exit 125, one line).

use crate::support::harness::{Scratch, retry};

#[test]
fn help_and_version_exit_zero() {
    retry(["--help"])
        .run()
        .expect_code(0)
        .expect_stdout_contains("Exit status:");
    retry(["-h"])
        .run()
        .expect_code(0)
        .expect_stdout_contains("--max-attempts");
    retry(["--version"])
        .run()
        .expect_code(0)
        .expect_stdout_contains("retry ");
}

/// Each bad invocation, and words its one-line error must contain.
const BAD_INPUT: &[(&[&str], &[&str])] = &[
    (
        &["--base", "5", "true"],
        &["--base", "'5'", "unit is needed"],
    ),
    (&["--base", "-1s", "true"], &["--base", "'-1s'", "negative"]),
    (
        &["--retry-on", "output:error:\n    4", "false"],
        &["--retry-on", "output:error", "line break", "one line"],
    ),
    (
        &["--on-retry", "--", "false"],
        &["--on-retry", "'--'", "not a shell line"],
    ),
    (
        &["--on-give-up", "-v", "false"],
        &["--on-give-up", "'-v'", "not a shell line"],
    ),
    (&["--cap", "soon", "true"], &["--cap", "'soon'"]),
    (
        &["--base", "2s", "--cap", "1s", "true"],
        &["--cap (1s)", "--base (2s)"],
    ),
    (
        &["--multiplier", "0.5", "true"],
        &["--multiplier", "'0.5'", "at least 1"],
    ),
    (&["--multiplier", "NaN", "true"], &["--multiplier", "'NaN'"]),
    (&["--multiplier", "inf", "true"], &["--multiplier", "'inf'"]),
    (&["-n", "0", "true"], &["--max-attempts", "'0'"]),
    (&["-n", "-1", "true"], &["--max-attempts", "'-1'"]),
    (
        &["-n", "x", "true"],
        &["--max-attempts", "'x'", "unlimited"],
    ),
    (
        &["--retry-on", "256", "true"],
        &["--retry-on", "'256'", "above 255"],
    ),
    (
        &["--stop-on", "5-3", "true"],
        &["--stop-on", "'5-3'", "backwards"],
    ),
    (&["--success-on", "", "true"], &["--success-on", "empty"]),
    (
        &["--retry-on", "0", "true"],
        &["--retry-on 0 names status 0", "(--success-on: 0)"],
    ),
    (
        &["--jitter", "sometimes", "true"],
        &["--jitter", "'sometimes'", "decorrelated"],
    ),
    (&["--seed", "-4", "true"], &["--seed", "'-4'"]),
    (
        &["--log-format", "xml", "true"],
        &["--log-format", "'xml'", "json"],
    ),
    (&["--retry-on", "-1", "true"], &["--retry-on", "'-1'"]),
    (&["--frobnicate", "true"], &["--frobnicate"]),
    (
        &["--base", "5\nrm -rf", "true"],
        &["--base", "'5\\nrm -rf'"],
    ),
    (
        &["--stop-on", "output:a\n(", "true"],
        &["--stop-on", "output:a\\n("],
    ),
    (&["-q", "-v", "true"], &["--quiet", "--verbose"]),
    (
        &["--base", "5 10m", "true"],
        &["--base", "'5 10m'", "has no unit"],
    ),
    (
        &["--timeout", "1 30m", "true"],
        &["--timeout", "'1 30m'", "has no unit"],
    ),
    (
        &["--jitter", "fulll", "true"],
        &["--jitter", "'fulll'", "did you mean 'full'"],
    ),
    (
        &["--delay", "1s", "true"],
        &["'--delay'", "did you mean '--base'"],
    ),
    (
        &["--retries", "3", "true"],
        &["'--retries'", "did you mean '--max-attempts'"],
    ),
    (&[], &["no COMMAND"]),
    (&["-n", "3"], &["no COMMAND"]),
];

#[test]
fn bad_input_exits_125_with_one_line_naming_flag_and_value() {
    for (args, words) in BAD_INPUT {
        let run = retry(args.iter()).run();
        run.expect_code(125);
        let stderr = run.stderr();
        assert_eq!(stderr.lines().count(), 1, "not one line\n{run}");
        assert!(stderr.starts_with("retry: "), "{run}");
        for word in *words {
            assert!(stderr.contains(word), "stderr lacks {word:?}\n{run}");
        }
        assert!(!stderr.contains("panicked"), "{run}");
    }
}

#[test]
fn extreme_values_that_parse_run_without_panic() {
    let huge = [
        "--base",
        "0s",
        "--cap",
        "500000000years",
        "--multiplier",
        "1e300",
    ];
    retry(huge.iter().chain(&["-n", "100000", "--plan"]))
        .run()
        .expect_code(0);
    retry(huge.iter().chain(&["--jitter", "none", "-n", "3", "false"]))
        .run()
        .expect_code(1);
}

#[test]
fn a_limit_too_large_to_represent_is_no_limit_as_for_coreutils_timeout() {
    for huge in ["9223372036854775808d", "99999999999999999999s"] {
        retry(["--timeout", huge, "--max-time", huge, "--", "true"])
            .run()
            .expect_code(0);
    }
    let run = retry(["--timeout", "5S", "true"]).run();
    run.expect_code(125)
        .expect_stderr("'S' is not a unit of time (did you mean 's'?)")
        .expect_no_stderr("supported units");
}

#[test]
fn the_accepted_values_are_listed_once_on_one_line() {
    let run = retry(["--jitter", "fulll", "true"]).run();
    run.expect_code(125);
    let stderr = run.stderr();
    assert_eq!(stderr.matches("decorrelated").count(), 1, "{run}");
    assert!(!stderr.contains("\\n"), "{run}");
}

#[test]
fn a_value_that_is_not_utf8_names_its_flag() {
    use std::os::unix::ffi::OsStringExt;
    let bad = std::ffi::OsString::from_vec(b"5\xffs".to_vec());
    let run = retry([std::ffi::OsString::from("--cap"), bad, "true".into()]).run();
    run.expect_code(125)
        .expect_stderr("for '--cap': not valid UTF-8");
    assert_eq!(run.stderr().lines().count(), 1, "{run}");
}

#[test]
fn short_help_fits_one_screen_and_points_to_the_long_one() {
    let short = retry(["-h"]).run();
    short
        .expect_code(0)
        .expect_stdout_contains("Usage: retry [OPTIONS] [--] COMMAND [ARG]...")
        .expect_stdout_contains("retry --help");
    let lines = short.stdout().lines().count();
    assert!(lines <= 24, "-h has {lines} lines\n{short}");
    let text = short.stdout();
    let shown: Vec<&str> = text
        .lines()
        .filter_map(|line| {
            line.trim_start()
                .strip_prefix("--")
                .or_else(|| line.trim_start().split_once(", --").map(|(_, long)| long))
        })
        .map(|option| option.split([' ', '<']).next().unwrap())
        .collect();
    assert_eq!(
        shown,
        [
            "max-attempts",
            "base",
            "cap",
            "jitter",
            "retry-on",
            "stop-on",
            "success-on",
            "preset",
            "timeout",
            "max-time",
            "plan",
            "quiet",
            "verbose",
            "help",
            "version"
        ],
        "what a script needs first\n{short}"
    );
    assert!(
        short
            .stdout()
            .lines()
            .all(|line| line.chars().count() <= 80),
        "-h fits 80 columns\n{short}"
    );
    let long = retry(["--help"]).run();
    long.expect_code(0)
        .expect_stdout_contains("Exit status:")
        .expect_stdout_contains("  RETRY_ATTEMPT_SINCE_RESET its number since");
}

#[test]
fn zero_time_limits_mean_none_and_decorrelated_refuses_a_multiplier() {
    retry(["--timeout", "0s", "--max-time", "0s", "sh", "-c", "exit 0"])
        .run()
        .expect_code(0);
    retry(["--jitter", "decorrelated", "--multiplier", "1.5", "true"])
        .run()
        .expect_code(125)
        .expect_stderr("--multiplier (1.5) has no effect with --jitter decorrelated");
}

#[test]
fn text_from_outside_is_escaped_on_stdout_too() {
    let scratch = Scratch::new();
    let plan = retry(["--plan", "--budget", "api", "--budget-store"])
        .args(["redis://ho\u{1b}[2Jst\n/0"])
        .run();
    plan.expect_code(0)
        .expect_stdout_contains("redis://ho\\u{1b}[2Jst\\n/0");
    assert!(!plan.stdout().contains('\u{1b}'), "{plan}");
    let dir = scratch.path("budgets\nrm -rf ~");
    let shown = retry(["budget", "show", "api", "--budget-store"])
        .args([format!("file:{}", dir.display())])
        .run();
    shown.expect_code(0);
    assert_eq!(shown.stdout().lines().count(), 1, "{shown}");
    shown.expect_stdout_contains("budgets\\nrm -rf ~");
}

#[test]
fn with_json_logs_every_line_is_json_errors_before_the_first_attempt_included() {
    let scratch = Scratch::new();
    for args in [
        vec!["--log-format", "json", "--base", "5", "true"],
        vec!["--base", "5", "--log-format=json", "true"],
        vec![
            "--log-format",
            "json",
            "--report",
            "/nonexistent-dir/r.json",
            "true",
        ],
        vec!["--log-format", "json", "--frobnicate", "true"],
        vec!["--log-format", "json"],
        vec![
            "budget",
            "show",
            "api",
            "--log-format",
            "json",
            "--budget-store",
            "redis://127.0.0.1:1",
        ],
    ] {
        let run = retry(&args).env("HOME", scratch.path("")).run();
        run.expect_code(125);
        let stderr = run.stderr();
        let events: Vec<serde_json::Value> = stderr
            .lines()
            .map(|line| {
                serde_json::from_str(line).unwrap_or_else(|_| panic!("not JSON: {line}\n{run}"))
            })
            .collect();
        let names: Vec<&str> = events
            .iter()
            .map(|event| event["event"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["error", "done"], "{run}");
        assert_eq!(events[1]["status"], 125, "{run}");
        assert_eq!(events[1]["reason"], "error", "{run}");
        assert_eq!(events[1]["error"], events[0]["message"], "{run}");
    }
}

#[test]
fn the_help_examples_paste_as_shown_at_80_and_100_columns() {
    for columns in ["80", "100"] {
        let run = retry(["--help"]).env("COLUMNS", columns).run();
        run.expect_code(0);
        let help = run.stdout();
        let examples = help.split("Examples:\n").nth(1).expect("an Examples block");
        let examples = examples.split("\n\n").next().unwrap_or_default();
        assert!(
            examples.lines().all(|line| line.len() <= 80),
            "an example's line past 80 columns at COLUMNS={columns}\n{examples}"
        );
        // A shell joins a line that ends in a backslash with the next.
        let pasted = help.replace(" \\\n      ", " ");
        for (_, command) in retry_exec::docs::examples() {
            assert!(
                pasted.contains(&format!("    {command}\n")),
                "{command} does not paste as one command at COLUMNS={columns}\n{help}"
            );
        }
    }
}

#[test]
fn the_long_help_describes_each_option_once() {
    let short = retry(["-h"]).run();
    let long = retry(["--help"]).run();
    // "  -n, --max-attempts <N>  Make at most N attempts in total, the first included"
    let short_help = short.stdout();
    let summaries: Vec<&str> = short_help
        .lines()
        .filter(|line| line.trim_start().starts_with('-'))
        .filter_map(|line| line.split("  ").filter(|part| !part.is_empty()).nth(1))
        .map(|summary| {
            summary
                .split(" [default:")
                .next()
                .unwrap_or_default()
                .trim()
        })
        .filter(|summary| summary.len() > 20)
        .collect();
    assert!(summaries.len() > 10, "{short}");
    for summary in summaries {
        assert!(
            !long.stdout().lines().any(|line| line.trim() == summary),
            "--help says {summary:?} and then says it again in full\n{long}"
        );
    }
}

#[test]
fn a_subcommands_usage_error_says_what_to_do_next() {
    for (args, says) in [
        (
            &["job", "set", "nightly"][..],
            &[
                "--overlap <MODE>|--alert-after <N>",
                "(see 'retry job set --help')",
            ][..],
        ),
        (
            &["job", "set", "nightly", "--bogus"],
            &["(see 'retry job set --help')"],
        ),
        (
            &["budget", "set"],
            &["<NAME>", "(see 'retry budget set --help')"],
        ),
        (
            &["budget", "history", "nightly"],
            &["'retry job history JOB'", "(see 'retry budget --help')"],
        ),
        (&["--bogus", "--", "true"], &["(see 'retry --help')"]),
    ] {
        let run = retry(args).run();
        run.expect_code(125);
        for said in says {
            run.expect_stderr(said);
        }
        assert_eq!(run.stderr().lines().count(), 1, "{run}");
    }
}
