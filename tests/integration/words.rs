//! Words kept in snapshots: what the tool says, byte for byte, in every place a person reads it.
//! `--plan` (text and JSON), the `-v` lines and each give-up line, the JUnit file, `budget show`,
//! `job show` and `job history`, and each error message, reached by the input that causes it. Each
//! snapshot is a file under `snapshots/`, so a change of wording is one reviewed diff (`cargo insta
//! review`, or `INSTA_UPDATE=always` and `git diff`). What differs from run to run (the scratch
//! directory, measured times) is replaced by a placeholder before the comparison; nothing else is.

use std::path::Path;

use regex::Regex;

use crate::support::harness::{Run, Scratch, exiting_in_turn, file_store, retry};

/// One input that ends in an error or a warning: its snapshot's name, the arguments, and the
/// environment it adds.
struct Mistake {
    name: &'static str,
    args: &'static [&'static str],
    env: &'static [(&'static str, &'static str)],
}

const fn mistake(name: &'static str, args: &'static [&'static str]) -> Mistake {
    Mistake {
        name,
        args,
        env: &[],
    }
}

const fn in_environment(
    name: &'static str,
    env: &'static [(&'static str, &'static str)],
) -> Mistake {
    Mistake {
        name,
        args: &["true"],
        env,
    }
}

/// Each message the command line and the environment can earn, one input per message.
const MISTAKES: &[Mistake] = &[
    mistake("duration_without_unit", &["--base", "5", "true"]),
    mistake("duration_negative", &["--base", "-1s", "true"]),
    mistake("duration_unknown_unit", &["--timeout", "5S", "true"]),
    mistake("duration_not_a_duration", &["--max-time", "x", "true"]),
    mistake("duration_number_then_words", &["--base", "5 10m", "true"]),
    mistake("cap_below_base", &["--base", "2s", "--cap", "1s", "true"]),
    mistake("multiplier_below_one", &["--multiplier", "0.5", "true"]),
    mistake("multiplier_not_finite", &["--multiplier", "inf", "true"]),
    mistake("max_attempts_zero", &["-n", "0", "true"]),
    mistake("max_attempts_not_a_number", &["-n", "x", "true"]),
    mistake("jitter_misspelt", &["--jitter", "fulll", "true"]),
    mistake("jitter_unknown", &["--jitter", "sometimes", "true"]),
    mistake("seed_not_a_number", &["--seed", "x", "true"]),
    mistake("rule_status_above_255", &["--retry-on", "256", "true"]),
    mistake("rule_range_backwards", &["--stop-on", "5-3", "true"]),
    mistake("rule_empty", &["--success-on", "", "true"]),
    mistake("rule_retries_success", &["--retry-on", "0", "true"]),
    mistake("rule_not_a_rule", &["--retry-on", "4xx", "true"]),
    mistake("rule_limit_zero", &["--retry-on", "124:max=0", "true"]),
    mistake("rule_limit_not_retried", &["--stop-on", "3:max=1", "true"]),
    mistake(
        "rule_limit_after_pattern",
        &["--retry-on", "stderr:reset:max=2", "true"],
    ),
    mistake(
        "rule_stops_a_success",
        &["--stop-on", "2-4", "--success-on", "0,3", "true"],
    ),
    mistake("rule_regex_invalid", &["--retry-on", "output:(", "true"]),
    mistake(
        "rule_regex_line_break",
        &["--stop-on", "output:a\n(", "true"],
    ),
    mistake("flaky_exit_zero", &["--flaky-exit", "0", "true"]),
    mistake(
        "retry_after_output_invalid",
        &["--retry-after-output", "(", "true"],
    ),
    mistake("preset_unknown", &["--preset", "foo", "true"]),
    mistake(
        "timeout_signal_unknown",
        &["--timeout-signal", "FOO", "true"],
    ),
    mistake("hold_unknown", &["--hold", "x", "true"]),
    mistake("report_without_file", &["--report", "junit:", "true"]),
    mistake(
        "report_format_misspelt",
        &["--report", "juint:out.xml", "true"],
    ),
    mistake(
        "report_directory_missing",
        &["--report", "junit:/nonexistent/d/x.xml", "true"],
    ),
    mistake("log_format_unknown", &["--log-format", "xml", "true"]),
    mistake("ci_unknown", &["--ci", "x", "true"]),
    mistake("hook_is_an_option", &["--on-retry", "--", "false"]),
    mistake("quiet_and_verbose", &["-q", "-v", "true"]),
    mistake("option_unknown", &["--frobnicate", "true"]),
    mistake("option_of_another_tool", &["--delay", "1s", "true"]),
    mistake("no_command", &["-n", "3"]),
    mistake("shell_line_blank", &["--shell", " ", ""]),
    mistake("budget_name_invalid", &["--budget", "a/b", "true"]),
    mistake("job_name_empty", &["--job", "", "true"]),
    mistake(
        "job_set_name_blank",
        &["job", "set", " ", "--overlap", "skip"],
    ),
    mistake(
        "budget_store_without_budget",
        &["--budget-store", "x", "true"],
    ),
    mistake("command_not_found", &["/nonexistent/command"]),
    mistake("command_empty", &["--", ""]),
    mistake("command_not_executable", &["/etc/passwd"]),
    mistake("budget_show_without_name", &["budget", "show"]),
    mistake("budget_set_first_without_rate", &["budget", "set", "api"]),
    mistake(
        "budget_set_and_cleared",
        &["budget", "set", "api", "--ratio", "0.1", "--clear", "ratio"],
    ),
    mistake(
        "budget_rate_zero",
        &["budget", "set", "api", "--rate", "0/1m"],
    ),
    mistake(
        "budget_rate_too_large",
        &["budget", "set", "api", "--rate", "4294967296/1s"],
    ),
    mistake(
        "budget_breaker_hosts_too_many",
        &["budget", "set", "api", "--breaker-hosts", "17"],
    ),
    mistake(
        "budget_rate_period_invalid",
        &["budget", "set", "api", "--rate", "5/xs"],
    ),
    mistake(
        "budget_store_password_file_missing",
        &[
            "--budget",
            "api",
            "--budget-store",
            "redis://cache?password_file=/nonexistent/pw",
            "true",
        ],
    ),
    mistake(
        "budget_directory_unusable",
        &[
            "--budget",
            "api",
            "--budget-store",
            "file:/etc/passwd/budgets",
            "true",
        ],
    ),
    mistake(
        "budget_directory_open_to_all",
        &["--budget", "api", "--budget-store", "file:/tmp", "true"],
    ),
    Mistake {
        name: "budget_without_a_state_home",
        args: &["--budget", "api", "true"],
        env: &[("XDG_STATE_HOME", ""), ("HOME", "/nonexistent")],
    },
    Mistake {
        name: "job_store_unusable",
        args: &["--job", "nightly", "true"],
        env: &[(
            "RETRY_BUDGET_STORE",
            "redis://cache?password_file=/nonexistent/pw",
        )],
    },
    mistake("job_set_without_terms", &["job", "set", "nightly"]),
    // Nothing listens on port 1 of the loopback: each page names the store it could not read.
    mistake(
        "job_show_store_refused",
        &[
            "job",
            "show",
            "nightly",
            "--budget-store",
            "redis://127.0.0.1:1",
        ],
    ),
    mistake(
        "job_history_store_refused",
        &[
            "job",
            "history",
            "nightly",
            "--budget-store",
            "redis://127.0.0.1:1",
        ],
    ),
    mistake(
        "job_set_store_refused",
        &[
            "job",
            "set",
            "nightly",
            "--overlap",
            "skip",
            "--budget-store",
            "redis://127.0.0.1:1",
        ],
    ),
    mistake(
        "job_alert_after_too_many",
        &["job", "set", "nightly", "--alert-after", "100"],
    ),
    mistake("job_history_without_name", &["job", "history"]),
    mistake(
        "job_schedule_invalid",
        &["job", "set", "nightly", "--schedule", "*/15 * * *"],
    ),
    mistake(
        "job_schedule_field_out_of_range",
        &["job", "set", "nightly", "--schedule", "0 24 * * *"],
    ),
    mistake(
        "job_schedule_at_boot",
        &["job", "set", "nightly", "--schedule", "@reboot"],
    ),
    mistake(
        "job_schedule_zone_without_fields",
        &[
            "job",
            "set",
            "nightly",
            "--schedule",
            "CRON_TZ=Europe/Paris",
        ],
    ),
    mistake(
        "job_schedule_blank",
        &["job", "set", "nightly", "--schedule", " "],
    ),
    mistake(
        "job_schedule_control_character",
        &["job", "set", "nightly", "--schedule", "0 3\n* * *"],
    ),
    mistake(
        "job_schedule_too_long",
        &[
            "job",
            "set",
            "nightly",
            "--schedule",
            concat!(
                "0 3 * * * ",
                "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
                "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
            ),
        ],
    ),
    mistake(
        "job_schedule_zone_unknown",
        &[
            "job",
            "set",
            "nightly",
            "--schedule",
            "CRON_TZ=Nowhere/X 0 3 * * *",
        ],
    ),
    mistake(
        "job_schedule_never_comes",
        &["job", "set", "nightly", "--schedule", "0 0 30 2 *"],
    ),
    in_environment("env_budget_invalid", &[("RETRY_BUDGET", "a/b")]),
    in_environment("env_deadline_not_a_time", &[("RETRY_DEADLINE", "x")]),
    in_environment("env_monitor_without_dialect", &[("RETRY_MONITOR", "x")]),
    in_environment(
        "env_monitor_file_missing",
        &[("RETRY_MONITOR_FILE", "/nonexistent")],
    ),
    in_environment(
        "env_otlp_endpoint_without_scheme",
        &[("OTEL_EXPORTER_OTLP_ENDPOINT", "x")],
    ),
    in_environment(
        "env_otlp_protocol_unsupported",
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
        ],
    ),
    in_environment(
        "env_max_requested_wait_invalid",
        &[("RETRY_MAX_REQUESTED_WAIT", "x")],
    ),
    in_environment("env_buildkite_timeout_zero", &[("BUILDKITE_TIMEOUT", "0")]),
    in_environment(
        "env_gitlab_timeout_zero",
        &[
            ("CI_JOB_TIMEOUT", "0"),
            ("CI_JOB_STARTED_AT", "2026-11-29T18:00:00Z"),
        ],
    ),
];

#[test]
fn each_mistake_earns_its_own_words() {
    let mut names: Vec<_> = MISTAKES.iter().map(|mistake| mistake.name).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), MISTAKES.len(), "two mistakes share a name");
    for mistake in MISTAKES {
        let mut invocation = retry(mistake.args.iter());
        for (name, value) in mistake.env {
            invocation = invocation.env(name, value);
        }
        let run = invocation.run();
        let shown_env: String = mistake
            .env
            .iter()
            .map(|(name, value)| format!("{name}={value} "))
            .collect();
        let header = format!("$ {shown_env}retry {}", shell_words(mistake.args));
        insta::assert_snapshot!(
            format!("error_{}", mistake.name),
            transcript(&header, &run, &Redactions::none())
        );
    }
}

/// A program that is there but cannot start, its interpreter missing: found by its path, found
/// in `PATH` with Windows line endings, and a binary whose loader is missing.
#[test]
fn a_program_that_is_there_but_cannot_start_is_never_called_not_found() {
    use std::os::unix::fs::PermissionsExt;
    let scratch = Scratch::new();
    let programs: [(&str, &[u8]); 2] = [
        ("no-interpreter", b"#!/nonexistent/python3 -u\nprint()\n"),
        ("windows-line-endings", b"#!/bin/sh\r\necho hi\r\n"),
    ];
    // A real program whose loader (its ELF interpreter) is renamed to one that is not there.
    let mut no_loader = std::fs::read("/bin/true").unwrap();
    let at = no_loader
        .windows(8)
        .position(|bytes| bytes == b"ld-linux")
        .expect("/bin/true names its loader, ld-linux");
    no_loader[at..at + 8].copy_from_slice(b"ld-nowhr");
    for (name, text) in programs.into_iter().chain([("no-loader", &no_loader[..])]) {
        let file = scratch.path(name);
        std::fs::write(&file, text).unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let redactions = Redactions::timings(scratch.path("").as_path());
    let search = format!("/nonexistent:{}", scratch.path("").display());
    let runs = [
        (
            "spawn_interpreter_missing",
            scratch.path("no-interpreter"),
            None,
        ),
        (
            "spawn_line_endings_windows",
            "windows-line-endings".into(),
            Some(&search),
        ),
        ("spawn_loader_missing", scratch.path("no-loader"), None),
    ];
    for (name, program, path) in runs {
        let mut invocation = retry(["-n", "3"]).args([&program]);
        if let Some(path) = path {
            invocation = invocation.env("PATH", path);
        }
        let run = invocation.run();
        let header = format!(
            "$ {}retry -n 3 {}",
            path.map_or(String::new(), |_| "PATH=/nonexistent:[scratch] ".into()),
            program.display()
        );
        insta::assert_snapshot!(
            format!("error_{name}"),
            transcript(&redactions.apply(&header), &run, &redactions)
        );
    }
}

#[test]
fn plans_in_text() {
    let plans: &[(&str, &[&str])] = &[
        ("plan_jitter_none", &["-n", "4", "--jitter", "none"]),
        ("plan_seeded_full_jitter", &["-n", "4", "--seed", "7"]),
        (
            "plan_decorrelated_cut_by_max_time",
            &[
                "--jitter",
                "decorrelated",
                "--base",
                "200ms",
                "--cap",
                "30s",
                "-n",
                "6",
                "--max-time",
                "10s",
                "--seed",
                "7",
            ],
        ),
        (
            "plan_rules_and_timeout",
            &[
                "-n",
                "3",
                "--jitter",
                "none",
                "--retry-on",
                "75",
                "--stop-on",
                "2,4",
                "--success-on",
                "0,3",
                "--retry-on",
                "stderr:connection reset",
                "-t",
                "30s",
            ],
        ),
        (
            "plan_curl_preset",
            &["-n", "3", "--jitter", "none", "--preset", "curl"],
        ),
        (
            "plan_budget_off",
            &["-n", "2", "--jitter", "none", "--budget", "off"],
        ),
        (
            "plan_rule_limits",
            &[
                "-n",
                "6",
                "--jitter",
                "none",
                "--retry-on",
                "124:max=1",
                "--retry-on",
                "1-255:max=2,stderr:reset",
            ],
        ),
    ];
    for (name, args) in plans {
        let args: Vec<&str> = std::iter::once("--plan")
            .chain(args.iter().copied())
            .collect();
        let run = retry(&args).run();
        insta::assert_snapshot!(
            *name,
            transcript(
                &format!("$ retry {}", shell_words(&args)),
                &run,
                &Redactions::none()
            )
        );
    }
}

#[test]
fn plan_in_json() {
    let args = ["--plan", "--log-format", "json", "-n", "3", "--seed", "7"];
    let run = retry(args).run();
    insta::assert_snapshot!(
        "plan_json",
        transcript(
            &format!("$ retry {}", shell_words(&args)),
            &run,
            &Redactions::none()
        )
    );
}

#[test]
fn run_lines() {
    let runs: &[(&str, &[&str], &[i32])] = &[
        ("run_verbose_success_after_retries", &["-v"], &[1, 3]),
        ("run_gives_up_all_failed", &["-n", "2"], &[1, 1, 1]),
        ("run_stops_on_a_stop_rule", &["--stop-on", "3"], &[1, 3]),
        ("run_stops_on_the_tools_rule", &[], &[130]),
        (
            "run_success_on_a_status",
            &["-v", "--success-on", "0,4"],
            &[4],
        ),
        ("run_flaky_exit", &["--flaky-exit", "9"], &[1]),
        (
            "run_json_events",
            &["--log-format", "json", "-n", "2"],
            &[2, 2],
        ),
    ];
    for (name, args, statuses) in runs {
        let scratch = Scratch::new();
        let script = exiting_in_turn(&scratch, statuses);
        let mut all: Vec<&str> = vec!["--jitter", "none", "--base", "0s"];
        all.extend(args.iter());
        all.extend(["--shell", &script]);
        let run = retry(&all).run();
        let header = format!(
            "$ retry {} {}",
            shell_words(&all[..all.len() - 1]),
            statuses_shown(statuses)
        );
        insta::assert_snapshot!(
            *name,
            transcript(
                &header,
                &run,
                &Redactions::timings(scratch.path("").as_path())
            )
        );
    }
}

fn statuses_shown(statuses: &[i32]) -> String {
    let listed: Vec<String> = statuses.iter().map(i32::to_string).collect();
    format!("<exits {} in turn, then 0>", listed.join(", "))
}

#[test]
fn give_up_lines_for_each_kind_of_end() {
    let ends: &[(&str, &[&str])] = &[
        (
            "give_up_timeout",
            &["-n", "2", "-t", "100ms", "--", "sleep", "5"],
        ),
        (
            "give_up_max_time",
            &[
                "-n",
                "9",
                "--base",
                "10s",
                "--max-time",
                "5s",
                "--",
                "false",
            ],
        ),
        ("give_up_signal", &["-n", "2", "--shell", "kill -TERM $$"]),
        (
            "give_up_not_found",
            &["-n", "2", "--", "/nonexistent/command"],
        ),
        (
            "give_up_output_rule",
            &[
                "--stop-on",
                "stderr:denied",
                "--shell",
                "echo permission denied >&2; exit 1",
            ],
        ),
    ];
    for (name, args) in ends {
        let mut all: Vec<&str> = vec!["--jitter", "none", "--base", "0s"];
        all.extend(args.iter());
        let run = retry(&all).run();
        let header = format!("$ retry {}", shell_words(&all));
        insta::assert_snapshot!(
            *name,
            transcript(
                &header,
                &run,
                &Redactions::timings(Path::new("/nonexistent-scratch"))
            )
        );
    }
}

#[test]
fn give_up_line_at_an_outer_deadline() {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    let deadline = (now.as_millis() + 60_000).to_string();
    let args = [
        "--jitter", "none", "--base", "2m", "--cap", "2m", "-n", "3", "false",
    ];
    let run = retry(args).env("RETRY_DEADLINE", &deadline).run();
    let header = format!(
        "$ RETRY_DEADLINE=<a minute from now> retry {}",
        shell_words(&args)
    );
    insta::assert_snapshot!(
        "give_up_outer_deadline",
        transcript(
            &header,
            &run,
            &Redactions::timings(Path::new("/nonexistent-scratch"))
        )
    );
}

#[test]
fn junit_report() {
    let scratch = Scratch::new();
    let report = scratch.path("junit.xml");
    let script = exiting_in_turn(&scratch, &[1, 7]);
    let target = format!("junit:{}", report.display());
    let run = retry([
        "--jitter", "none", "--base", "0s", "-q", "--report", &target, "--shell", &script,
    ])
    .run();
    run.expect_code(0);
    let redactions = Redactions::timings(scratch.path("").as_path());
    insta::assert_snapshot!(
        "junit_flaky_success",
        redactions.apply(&std::fs::read_to_string(&report).unwrap())
    );
    let gave_up = retry([
        "-n", "2", "--base", "0s", "-q", "--report", &target, "false",
    ])
    .run();
    gave_up.expect_code(1);
    insta::assert_snapshot!(
        "junit_gave_up",
        redactions.apply(&std::fs::read_to_string(&report).unwrap())
    );
}

#[test]
fn budget_and_job_pages() {
    let scratch = Scratch::new();
    let store = file_store(&scratch.path("store"));
    let redactions = Redactions::timings(scratch.path("").as_path());
    let steps: &[(&str, &[&str])] = &[
        ("budget_set", &["budget", "set", "api", "--rate", "1/1h"]),
        ("budget_show", &["budget", "show", "api"]),
        (
            "job_set",
            &[
                "job",
                "set",
                "nightly",
                "--overlap",
                "skip",
                "--alert-after",
                "2",
            ],
        ),
        ("job_show", &["job", "show", "nightly"]),
    ];
    for (name, args) in steps {
        let run = retry(args.iter().copied().chain(["--budget-store", &store])).run();
        let header = format!("$ retry {} --budget-store STORE", shell_words(args));
        insta::assert_snapshot!(*name, transcript(&header, &run, &redactions));
    }
    let refused = retry(["--budget", "api", "--budget-store", &store])
        .args(["--jitter", "none", "--base", "0s", "-n", "4", "false"])
        .run();
    insta::assert_snapshot!(
        "give_up_budget_refused",
        transcript(
            "$ retry --budget api --budget-store STORE --jitter none --base 0s -n 4 false \
             (its budget's terms 1/1h)",
            &refused,
            &redactions
        )
    );
    for status in ["false", "true"] {
        retry([
            "-q", "-n", "2", "--base", "0s", "--job", "nightly", "--budget", "api",
        ])
        .args(["--budget-store", &store, status])
        .run();
    }
    let history = retry(["job", "history", "nightly", "--budget-store", &store]).run();
    insta::assert_snapshot!(
        "job_history",
        transcript(
            "$ retry job history nightly --budget-store STORE (after a failed run, then a clean one)",
            &history,
            &redactions
        )
    );
}

/// What differs from one run to the next, and its placeholder.
struct Redactions {
    patterns: Vec<(Regex, &'static str)>,
    scratch: Option<String>,
}

impl Redactions {
    /// Nothing differs: errors and plans are the same every time.
    fn none() -> Self {
        Redactions {
            patterns: Vec::new(),
            scratch: None,
        }
    }

    /// Measured times, and the test's scratch directory.
    fn timings(scratch: &Path) -> Self {
        let patterns = [
            (r#"time="[0-9.]+""#, r#"time="[seconds]""#),
            (r"\([0-9.]+ s\)", "([seconds] s)"),
            (
                r#""(elapsed|duration|offset)_ms":[0-9.]+"#,
                r#""${1}_ms":[ms]"#,
            ),
            (r"\b[0-9]+(\.[0-9]+)?(ns|µs|ms)\b", "[duration]"),
            (r"\bin [0-9.]+s\b", "in [duration]"),
            (r"\b[0-9.]+s away\b", "[duration] away"),
            (r"\bafter [0-9.]+s\b", "after [duration]"),
            (r"\b[0-9.]+s ago\b", "[duration] ago"),
            (
                r"\b[0-9][0-9.a-zµ]* (median|95th percentile)",
                "[duration] $1",
            ),
            (r"\b[0-9]{10,}\b", "[number]"),
            (r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z?", "[timestamp]"),
            (r#""(run_id|hostname|host)":"[^"]*""#, r#""$1":"[$1]""#),
            (r#"hostname="[^"]*""#, r#"hostname="[hostname]""#),
        ];
        Redactions {
            patterns: patterns
                .into_iter()
                .map(|(pattern, placeholder)| (Regex::new(pattern).unwrap(), placeholder))
                .collect(),
            scratch: Some(
                scratch
                    .display()
                    .to_string()
                    .trim_end_matches('/')
                    .to_string(),
            ),
        }
    }

    fn apply(&self, text: &str) -> String {
        let mut text = match &self.scratch {
            Some(scratch) => text.replace(scratch.as_str(), "[scratch]"),
            None => text.to_string(),
        };
        for (pattern, placeholder) in &self.patterns {
            text = pattern.replace_all(&text, *placeholder).into_owned();
        }
        text
    }
}

/// The run as a person would read it in a terminal: the command line, the exit status, then
/// what the tool and the command wrote.
fn transcript(header: &str, run: &Run, redactions: &Redactions) -> String {
    let status = match (run.code(), run.signal()) {
        (Some(code), _) => format!("exit status {code}"),
        (None, Some(signal)) => format!("killed by signal {signal}"),
        (None, None) => "no status".to_string(),
    };
    let mut shown = format!("{header}\n{status}\n");
    for (stream, text) in [("stderr", run.stderr()), ("stdout", run.stdout())] {
        if !text.is_empty() {
            shown.push_str(&format!("--- {stream}\n{}", redactions.apply(&text)));
        }
    }
    shown
}

/// Arguments as a shell would take them back: each quoted when it needs to be.
fn shell_words<S: AsRef<str>>(args: &[S]) -> String {
    let plain = |arg: &str| {
        !arg.is_empty()
            && arg
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_./:=,@%+<>".contains(c))
    };
    let words: Vec<String> = args
        .iter()
        .map(|arg| {
            let arg = arg.as_ref();
            match plain(arg) {
                true => arg.to_string(),
                false => format!("'{}'", arg.replace('\'', r"'\''").replace('\n', r"\n")),
            }
        })
        .collect();
    words.join(" ")
}
