//! Flakiness as data: a success that needed retries is recorded as flaky (the done event, the
//! report, the CI step outputs), and `--flaky-exit` turns it into a status of the user's choosing,
//! so that a pipeline keeps its retries and still refuses a flaky merge.

use crate::support::harness::{Invocation, Scratch, program, retry};

/// A command that fails its first two attempts and succeeds on its third.
const FLAKY: &str = "test \"$RETRY_ATTEMPT\" = 3";

/// A run of `script` with JSON events, five attempts, no wait, and `flags`.
fn run_of(script: &str, flags: &[&str]) -> Invocation {
    retry(["--log-format", "json", "-n", "5", "--base", "0s"])
        .args(flags)
        .args(["--", "sh", "-c", script])
}

#[test]
fn a_success_after_failures_is_recorded_as_flaky_and_a_first_success_is_not() {
    let scratch = Scratch::new();
    let report = scratch.path("report.json");
    let report_flag = ["--report", report.to_str().unwrap()];
    let flaky = run_of(FLAKY, &report_flag).run();
    flaky.expect_code(0);
    let done = flaky.event("done");
    assert_eq!(
        (&done["reason"], &done["flaky"]),
        (&"success".into(), &true.into()),
        "{flaky}"
    );
    let kept: serde_json::Value = serde_json::from_str(&scratch.read("report.json")).unwrap();
    assert_eq!(
        (&kept["flaky"], &kept["exit_code"]),
        (&true.into(), &0.into())
    );
    let clean = run_of("true", &report_flag).run();
    clean.expect_code(0);
    assert_eq!(clean.event("done").get("flaky"), None, "{clean}");
    let kept: serde_json::Value = serde_json::from_str(&scratch.read("report.json")).unwrap();
    assert_eq!(kept["flaky"], false);
}

#[test]
fn flaky_exit_fails_a_flaky_success_and_nothing_else() {
    let flaky = retry(["-n", "5", "--base", "0s", "--flaky-exit", "3"])
        .args(["--", "sh", "-c", FLAKY])
        .run();
    flaky.expect_code(3);
    flaky.expect_stderr(
        "retry: succeeded only after 3 attempts, a flaky success; retry exits 3 (--flaky-exit)",
    );
    run_of("true", &["--flaky-exit", "3"]).run().expect_code(0);
    let failing = run_of("exit 7", &["--flaky-exit", "3"]).run();
    failing.expect_code(7);
    assert_eq!(failing.event("done")["reason"], "exhausted", "{failing}");
}

#[test]
fn in_github_a_refused_flaky_success_is_an_error_and_its_outcome_flaky() {
    let scratch = Scratch::new();
    std::fs::write(scratch.path("output"), "").unwrap();
    let run = run_of(FLAKY, &["--flaky-exit", "3"])
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_OUTPUT", scratch.path("output"))
        .run();
    run.expect_code(3);
    let output = scratch.read("output");
    for value in [
        "attempts=3",
        "exit_code=3",
        "outcome=flaky",
        "reason=success",
    ] {
        assert!(
            output.lines().any(|line| line == value),
            "{value}:\n{output}"
        );
    }
}

#[test]
fn flaky_exit_takes_a_status_from_1_to_255() {
    for bad in ["0", "256", "three"] {
        let run = retry(["--flaky-exit", bad, "--", "true"]).run();
        run.expect_code(125);
        run.expect_stderr("--flaky-exit");
    }
}

/// The JUnit report at `path` as a CI system's reader sees it, held to Surefire's schema: the
/// reader's summary (tests/support/junit_reader.py, with Debian's python3-junitparser).
fn junit_read(path: &std::path::Path) -> serde_json::Value {
    let reader = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/support/junit_reader.py");
    let read = program("/usr/bin/python3")
        .args([reader])
        .args([path])
        .run();
    read.expect_code(0);
    serde_json::from_str(read.stdout().trim()).unwrap()
}

/// A command whose every attempt writes text that XML must escape, and fails until the third.
const FLAKY_NOISY: &str = "printf 'out <%s> & \\033[31m]]>\\n' \"$RETRY_ATTEMPT\"; \
                           echo \"err $RETRY_ATTEMPT\" >&2; test \"$RETRY_ATTEMPT\" = 3";

#[test]
fn a_junit_report_shows_the_attempts_before_a_success_as_flaky_failures() {
    let scratch = Scratch::new();
    let report = scratch.path("TEST-retry.xml");
    let run = run_of(FLAKY_NOISY, &["--report", report.to_str().unwrap()]).run();
    run.expect_code(0);
    // The command's own output still reaches stdout, whole.
    assert_eq!(run.stdout().lines().count(), 3, "{run}");
    let read = junit_read(&report);
    assert_eq!((&read["tests"], &read["failures"]), (&1.into(), &0.into()));
    let case = &read["cases"][0];
    let name = case["name"].as_str().unwrap();
    assert!(
        name.starts_with("sh -c 'printf ") && name.ends_with("= 3'"),
        "{name}"
    );
    assert_eq!(case["results"], serde_json::json!([]));
    assert_eq!(
        case["flaky"],
        serde_json::json!([
            "attempt 1/5 failed with exit status 1",
            "attempt 2/5 failed with exit status 1"
        ])
    );
    assert_eq!(case["flaky_output"][0], "out <1> & \u{fffd}[31m]]>\n");
    assert_eq!(case["system_out"], "out <3> & \u{fffd}[31m]]>\n");
    assert_eq!(case["system_err"], "err 3\n");
}

#[test]
fn a_junit_report_of_a_run_that_gave_up_has_its_failure_and_the_reruns_before() {
    let scratch = Scratch::new();
    let report = scratch.path("report.xml");
    let run = retry(["-n", "3", "--base", "0s", "--job", "nightly-backup"])
        .args(["--report", &format!("junit:{}", report.display())])
        .args(["--", "sh", "-c", "echo \"try $RETRY_ATTEMPT\"; exit 4"])
        .run();
    run.expect_code(4);
    let read = junit_read(&report);
    assert_eq!((&read["tests"], &read["failures"]), (&1.into(), &1.into()));
    let case = &read["cases"][0];
    assert_eq!(case["name"], "nightly-backup");
    assert_eq!(case["results"], serde_json::json!(["failure"]));
    assert_eq!(case["message"], "attempt 3/3 failed with exit status 4");
    assert_eq!(
        case["reruns"],
        serde_json::json!([
            "attempt 1/3 failed with exit status 4",
            "attempt 2/3 failed with exit status 4"
        ])
    );
    assert_eq!(
        case["rerun_output"],
        serde_json::json!(["try 1\n", "try 2\n"])
    );
    assert_eq!(case["system_out"], "try 3\n");
}

#[test]
fn a_junit_report_keeps_the_end_of_each_attempts_output_and_a_bounded_size() {
    let scratch = Scratch::new();
    let report = scratch.path("report.xml");
    // Each attempt writes 1 MB on each stream, its last line saying which attempt it was.
    let noisy = "head -c 1000000 /dev/zero | tr '\\0' x; echo; echo \"end $RETRY_ATTEMPT\"; \
                 head -c 1000000 /dev/zero | tr '\\0' y >&2; exit 1";
    let run = retry(["-n", "30", "--base", "0s", "--budget", "off"])
        .args(["--report", report.to_str().unwrap()])
        .args(["--", "sh", "-c", noisy])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .run();
    run.expect_code(1);
    let size = std::fs::metadata(&report).unwrap().len();
    assert!(size < 250_000, "the report is {size} bytes");
    let read = junit_read(&report);
    let case = &read["cases"][0];
    let last = case["system_out"].as_str().unwrap();
    assert!(last.starts_with("[995912 bytes"), "{:.80}", last);
    assert!(
        last.ends_with("xx\nend 30\n"),
        "{}",
        &last[last.len() - 20..]
    );
    assert_eq!(
        case["reruns"].as_array().unwrap().len(),
        19,
        "the first 10 and the last 10"
    );
}
