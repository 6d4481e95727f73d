//! Deadlines that flow: out, to every attempt (`RETRY_DEADLINE`, `RETRY_ATTEMPT_TIMEOUT_MS`),
//! and in, from an outer run's attempt and from a CI job's time limit, which the run ends a
//! margin before, its report written.

use std::time::{SystemTime, UNIX_EPOCH};

use crate::support::harness::{Scratch, binary, retry};

/// Now, in Unix milliseconds.
fn unix_ms() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis()
}

/// A command that prints the two variables an attempt gets about its time.
const SHOW_LIMITS: &str = r#"echo "${RETRY_DEADLINE:-none} ${RETRY_ATTEMPT_TIMEOUT_MS:-none}""#;

/// The two variables the attempt of a run with `limits` saw.
fn limits_seen(limits: &[&str]) -> (String, String) {
    let run = retry(["-n", "1"])
        .args(limits)
        .args(["--", "sh", "-c", SHOW_LIMITS])
        .run();
    run.expect_code(0);
    let stdout = run.stdout();
    let (deadline, timeout) = stdout.trim().split_once(' ').unwrap();
    (deadline.to_string(), timeout.to_string())
}

#[test]
fn every_attempt_gets_the_runs_deadline_and_the_time_it_has() {
    let before = unix_ms();
    let (deadline, timeout) = limits_seen(&["--max-time", "30s", "--timeout", "5s"]);
    let after = unix_ms();
    let deadline: u128 = deadline.parse().unwrap();
    assert!(
        (before + 29_000..=after + 30_000).contains(&deadline),
        "{before} {deadline} {after}"
    );
    let timeout: u64 = timeout.parse().unwrap();
    assert!((4_000..=5_000).contains(&timeout), "{timeout}");
    // The deadline sooner than the attempt's own limit: the attempt has what is left.
    let (_, timeout) = limits_seen(&["--max-time", "3s", "--timeout", "10s"]);
    let timeout: u64 = timeout.parse().unwrap();
    assert!((2_000..=3_000).contains(&timeout), "{timeout}");
    let (deadline, timeout) = limits_seen(&["--timeout", "2s"]);
    assert_eq!(deadline, "none");
    let timeout: u64 = timeout.parse().unwrap();
    assert!((1_000..=2_000).contains(&timeout), "{timeout}");
    assert_eq!(limits_seen(&[]), ("none".into(), "none".into()));
}

#[test]
fn a_run_inside_an_attempt_ends_by_the_outer_runs_deadline() {
    // The inner run would retry for ever; the outer run's 3 s are its limit too, and it ends
    // on its own, by its deadline, before the outer run would cut it.
    let inner = r#""$RETRY" --log-format json -n unlimited --base 100ms -- false"#;
    let run = retry(["--log-format", "json", "--max-time", "3s", "-n", "1"])
        .env("RETRY", binary())
        .args(["--", "sh", "-c", inner])
        .run();
    let events = run.events();
    let inner_deadline = events
        .iter()
        .find(|event| event["event"] == "deadline")
        .unwrap_or_else(|| panic!("the inner run said no deadline\n{run}"));
    assert_eq!(inner_deadline["source"], "outer_run", "{run}");
    assert!(
        inner_deadline["deadline_ms"].as_f64().unwrap() <= 3000.0,
        "{run}"
    );
    let done: Vec<_> = run.events_named("done");
    assert_eq!(done.len(), 2, "{run}");
    assert_eq!(done[0]["reason"], "deadline", "the inner run's end\n{run}");
    assert_eq!(done[0]["status"], 1, "{run}");
    assert_eq!(
        run.events_named("attempt_end")
            .last()
            .map(|end| end["timed_out"].clone()),
        Some(serde_json::Value::Bool(false)),
        "the outer run did not have to cut its attempt\n{run}"
    );
}

/// An RFC 3339 time `seconds` ago, as GitLab's `CI_JOB_STARTED_AT` gives it on an instance on
/// UTC.
fn started_ago(seconds: u64) -> String {
    started_ago_in("UTC", "Z", seconds)
}

/// An RFC 3339 time `seconds` ago in the time zone `zone`, its offset written as `offset` (a
/// `date` format, e.g. `%:z`), as GitLab writes it on an instance in that zone.
fn started_ago_in(zone: &str, offset: &str, seconds: u64) -> String {
    let run = crate::support::harness::program("date")
        .env("TZ", zone)
        .args([
            "-d",
            &format!("-{seconds} seconds"),
            &format!("+%Y-%m-%dT%H:%M:%S{offset}"),
        ])
        .run();
    run.expect_code(0);
    run.stdout().trim().to_string()
}

#[test]
fn in_a_gitlab_job_the_run_ends_a_margin_before_its_time_limit_with_its_report() {
    let scratch = Scratch::new();
    let report = scratch.path("report.json");
    let state = scratch.path("state");
    let run = retry(["--log-format", "json", "-n", "unlimited", "--base", "200ms"])
        .args(["--job", "integration"])
        .env("XDG_STATE_HOME", &state)
        .args(["--report", report.to_str().unwrap()])
        .env("GITLAB_CI", "true")
        .env("CI_JOB_TIMEOUT", "60")
        .env("CI_JOB_STARTED_AT", started_ago(50))
        .args(["--", "false"])
        .run();
    run.expect_code(1);
    let deadline = run.event("deadline");
    assert_eq!(deadline["source"], "gitlab_job", "{run}");
    let done = run.event("done");
    assert_eq!(done["reason"], "deadline", "{run}");
    // Ten seconds of the job were left: the run keeps five of them.
    assert!(done["elapsed_ms"].as_f64().unwrap() < 10_000.0, "{run}");
    let report: serde_json::Value = serde_json::from_str(&scratch.read("report.json")).unwrap();
    assert_eq!(report["reason"], "deadline");
    // Ended by its deadline, the run still counts in the job's history.
    let history = retry(["job", "history", "integration", "--log-format", "json"])
        .env("XDG_STATE_HOME", &state)
        .run();
    history.expect_code(0);
    assert!(history.stdout().contains("\"sequence\":\"x\""), "{history}");
}

#[test]
fn plan_and_verbose_say_which_deadline_applies_and_where_it_came_from() {
    let plan = retry(["--plan", "-n", "3"])
        .env("BUILDKITE", "true")
        .env("BUILDKITE_TIMEOUT", "10")
        .run();
    plan.expect_code(0);
    plan.expect_stdout_contains(
        "deadline: 9m30s, from the Buildkite job's time limit (BUILDKITE_TIMEOUT, from this \
         run's start) (10m with 0s gone), less a margin of 30s",
    );
    let started = started_ago(50);
    let verbose = retry(["-v", "-n", "1", "--", "true"])
        .env("CI_JOB_TIMEOUT", "3600")
        .env("CI_JOB_STARTED_AT", &started)
        .run();
    verbose.expect_code(0);
    verbose
        .expect_stderr("from the GitLab job's time limit (CI_JOB_TIMEOUT from CI_JOB_STARTED_AT)");
    // --max-time sooner than the job's: it applies, and nothing is said of the job.
    let own = retry(["-v", "-n", "1", "--max-time", "1m", "--", "true"])
        .env("CI_JOB_TIMEOUT", "3600")
        .env("CI_JOB_STARTED_AT", &started)
        .run();
    own.expect_code(0);
    own.expect_no_stderr("deadline");
}

#[test]
fn a_job_start_is_read_in_every_form_rfc_3339_allows() {
    // Etc/GMT-1 is an hour ahead of UTC (the POSIX sign is reversed); Etc/GMT+5 five behind.
    // Seconds are truncated and a fraction added, so 55 seconds ago reads as 54.75 to 56
    // seconds gone, and "with 5" holds however busy the machine.
    for started in [
        started_ago_in("Etc/GMT-1", "%:z", 55),
        started_ago_in("Etc/GMT+5", "%:z", 55),
        started_ago_in("Etc/GMT-1", ".250%z", 55),
    ] {
        let plan = retry(["--plan", "-n", "3"])
            .env("CI_JOB_TIMEOUT", "3600")
            .env("CI_JOB_STARTED_AT", &started)
            .run();
        plan.expect_code(0);
        plan.expect_no_stderr("warning");
        plan.expect_stdout_contains(
            "from the GitLab job's time limit (CI_JOB_TIMEOUT from CI_JOB_STARTED_AT) (1h with 5",
        );
    }
}

#[test]
fn a_deadline_from_outside_that_is_not_a_time_is_said_and_left_out() {
    let run = retry(["-n", "1", "--", "sh", "-c", SHOW_LIMITS])
        .env("RETRY_DEADLINE", "soon")
        .run();
    run.expect_code(0);
    run.expect_stderr(
        "retry: warning: RETRY_DEADLINE: 'soon' is not a time; expected the Unix time in whole \
         milliseconds, as an outer retry sets it; going on without it",
    );
    run.expect_stdout("none none\n");
}

#[test]
fn a_deadline_already_past_starts_no_attempt_and_says_where_it_came_from() {
    let scratch = Scratch::new();
    let report = scratch.path("report.json");
    let marker = scratch.path("started");
    let touch = ["--", "sh", "-c", "touch \"$MARKER\""];
    let past = (unix_ms() - 1_000).to_string();
    let outer = retry(["--report", report.to_str().unwrap()])
        .env("RETRY_DEADLINE", &past)
        .env("MARKER", &marker)
        .args(touch)
        .run();
    outer.expect_code(124).expect_stderr(
        "retry: giving up before any attempt: the outer retry's deadline (RETRY_DEADLINE) had \
         passed before the run started (status 124)",
    );
    outer.expect_no_stderr("--max-time");
    assert!(!marker.exists(), "the command was started\n{outer}");
    let recorded: serde_json::Value = serde_json::from_str(&scratch.read("report.json")).unwrap();
    assert_eq!(
        (&recorded["reason"], &recorded["attempts_total"]),
        (&serde_json::json!("deadline"), &serde_json::json!(0)),
        "{recorded}"
    );

    let job = retry(["--log-format", "json"])
        .env("CI_JOB_TIMEOUT", "60")
        .env("CI_JOB_STARTED_AT", started_ago(120))
        .env("MARKER", &marker)
        .args(touch)
        .run();
    job.expect_code(124);
    assert!(!marker.exists(), "the command was started\n{job}");
    let done = job.event("done");
    assert_eq!(
        (&done["reason"], &done["attempts"]),
        (&serde_json::json!("deadline"), &serde_json::json!(0)),
        "{job}"
    );
}
