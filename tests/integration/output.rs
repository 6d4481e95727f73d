//! Conditions on output, held output, the backoff reset, and the run report.

use std::io::Read;
use std::process::{Command, Stdio};

use crate::harness::{binary, retry, Scratch};

/// An `sh -c` command that counts its attempts in `$COUNTER`, prints `line`, and exits `code`.
fn prints(line: &str, code: u8) -> [String; 3] {
    let script = format!("echo x >> \"$COUNTER\"; echo '{line}'; exit {code}");
    ["sh".into(), "-c".into(), script]
}

#[test]
fn retry_on_output_retries_only_matching_failures() {
    for (line, attempts) in [
        ("HTTP 503 Service Unavailable", 3),
        ("HTTP 404 Not Found", 1),
    ] {
        let scratch = Scratch::new();
        let run = retry([
            "-n",
            "3",
            "--base",
            "0s",
            "--retry-on-output",
            r"\b503\b",
            "--",
        ])
        .args(prints(line, 22))
        .env("COUNTER", scratch.path("count"))
        .run();
        run.expect_code(22)
            .expect_stdout(&format!("{line}\n").repeat(attempts));
        assert_eq!(scratch.lines("count"), attempts, "{run}");
    }
}

#[test]
fn stop_on_output_wins_and_sees_stderr_too() {
    let scratch = Scratch::new();
    let command =
        "echo x >> \"$COUNTER\"; echo 'try later'; echo 'fatal: bad manifest' >&2; exit 1";
    let run = retry(["-n", "3", "--base", "0s", "--log-format", "json"])
        .args([
            "--retry-on-output",
            "later",
            "--stop-on-output",
            "^fatal:",
            "sh",
            "-c",
            command,
        ])
        .env("COUNTER", scratch.path("count"))
        .run();
    run.expect_code(1).expect_stdout("try later\n");
    assert_eq!(scratch.lines("count"), 1, "{run}");
    let end = &run.events_named("attempt_end")[0];
    assert_eq!(
        (end["matched"].as_str(), end["pattern"].as_str()),
        (Some("stop_on_output"), Some("^fatal:"))
    );
    assert!(
        run.stderr().contains("fatal: bad manifest\n"),
        "stderr was not passed on\n{run}"
    );
}

#[test]
fn output_conditions_never_turn_a_success_into_a_failure() {
    retry([
        "--stop-on-output",
        "error",
        "sh",
        "-c",
        "echo 'no error here'",
    ])
    .run()
    .expect_code(0)
    .expect_stdout("no error here\n");
}

#[test]
fn invalid_patterns_exit_125_naming_the_flag() {
    retry(["--retry-on-output", "a(b", "true"])
        .run()
        .expect_code(125)
        .expect_stderr("--retry-on-output 'a(b' is not a valid regex");
}

#[test]
fn output_reaches_the_reader_while_the_command_runs() {
    let scratch = Scratch::new();
    let go = scratch.path("go");
    let wait_for_go = format!(
        "echo first; while [ ! -e '{}' ]; do sleep 0.01; done; echo second",
        go.display()
    );
    let mut child = Command::new(binary())
        .args(["--retry-on-output", "x", "--", "sh", "-c", &wait_for_go])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut seen = [0; 6];
    // Blocks until the tool passes "first" on; the command is still waiting for `go`.
    stdout.read_exact(&mut seen).unwrap();
    assert_eq!(&seen, b"first\n");
    std::fs::write(&go, "").unwrap();
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).unwrap();
    assert_eq!(rest, "second\n");
    assert!(child.wait().unwrap().success());
}

#[test]
fn without_conditions_the_command_writes_to_the_tools_own_stdout() {
    let same = "[ \"$(readlink /proc/$PPID/fd/1)\" = \"$(readlink /proc/$$/fd/1)\" ] && echo same || echo piped";
    retry(["sh", "-c", same]).run().expect_stdout("same\n");
    retry(["--stop-on-output", "x", "sh", "-c", same])
        .run()
        .expect_stdout("piped\n");
}

#[test]
fn a_gigabyte_through_an_output_condition_costs_constant_memory() {
    let mut tool = Command::new(binary());
    tool.args(["-n", "1", "--retry-on-output", "needle", "--", "sh", "-c"])
        .arg("yes | head -c 1073741824")
        .stdout(std::fs::File::create("/dev/null").unwrap());
    let (status, peak) = crate::harness::peak_rss_kib(tool);
    assert!(
        status.success(),
        "the output conditions never fail a success"
    );
    assert!(peak < 20 * 1024, "peak RSS {peak} KiB");
}

#[test]
fn hold_output_gives_exactly_the_succeeding_attempts_stdout() {
    let command = "echo \"try $RETRY_ATTEMPT\"; [ $RETRY_ATTEMPT = 3 ]";
    let run = retry([
        "--hold-output",
        "-n",
        "5",
        "--base",
        "0s",
        "sh",
        "-c",
        command,
    ])
    .run();
    run.expect_code(0).expect_stdout("try 3\n");
    run.expect_stderr("try 1\n").expect_stderr("try 2\n");
    assert!(!run.stderr().contains("try 3"), "{run}");
}

#[test]
fn hold_output_of_a_run_that_gives_up_goes_to_stderr() {
    let run = retry([
        "--hold-output",
        "-n",
        "2",
        "--base",
        "0s",
        "sh",
        "-c",
        "echo out; exit 4",
    ])
    .run();
    run.expect_code(4).expect_stdout("");
    assert_eq!(run.stderr().matches("out\n").count(), 2, "{run}");
}

#[test]
fn reset_after_starts_the_backoff_and_the_count_over() {
    // Attempts 1-3 fail after 300ms (each resets), then quick failures exhaust -n 2.
    let command = "echo $RETRY_ATTEMPT_SINCE_RESET; [ $RETRY_ATTEMPT -le 3 ] && sleep 0.3; exit 1";
    let run = retry([
        "--log-format",
        "json",
        "-n",
        "2",
        "--reset-after",
        "200ms",
        "--base",
        "1ms",
    ])
    .args(["--jitter", "none", "sh", "-c", command])
    .run();
    run.expect_code(1).expect_stdout("1\n1\n1\n1\n2\n");
    let resets: Vec<bool> = run
        .events_named("attempt_end")
        .iter()
        .map(|end| end["reset"] == true)
        .collect();
    assert_eq!(resets, [true, true, true, false, false], "{run}");
    let waits: Vec<f64> = run
        .events_named("wait")
        .iter()
        .map(|wait| wait["wait_ms"].as_f64().unwrap())
        .collect();
    // The wait after each reset is the first wait again; after attempt 4 comes the second.
    assert_eq!(waits, [1.0, 1.0, 1.0, 2.0], "{run}");
}

#[test]
fn report_writes_a_summary_a_ci_job_can_archive() {
    let scratch = Scratch::new();
    let path = scratch.path("report.json");
    let run = retry([
        "--report",
        path.to_str().unwrap(),
        "-n",
        "3",
        "--base",
        "1ms",
        "--seed",
        "7",
    ])
    .args(["sh", "-c", "exit 3"])
    .run();
    run.expect_code(3);
    let report: serde_json::Value = serde_json::from_str(&scratch.read("report.json")).unwrap();
    assert_eq!(report["version"], 1);
    assert_eq!(report["exit_code"], 3);
    assert_eq!(report["reason"], "exhausted");
    assert_eq!(report["options"]["seed"], 7);
    assert_eq!(report["options"]["command"][2], "exit 3");
    let attempts = report["attempts"].as_array().unwrap();
    assert_eq!(attempts.len(), 3);
    for (index, attempt) in attempts.iter().enumerate() {
        assert_eq!(attempt["attempt"], index as u64 + 1);
        assert_eq!(attempt["status"], 3);
        assert_eq!(attempt["timed_out"], false);
        assert!(attempt["start_offset_ms"].is_number() && attempt["duration_ms"].is_number());
    }
    assert!(attempts[0]["wait_after_ms"].is_number());
    assert!(
        attempts[2]["wait_after_ms"].is_null(),
        "no wait after the last attempt"
    );
}

#[test]
fn an_unwritable_report_fails_before_anything_runs() {
    let scratch = Scratch::new();
    let run = retry([
        "--report",
        "/nonexistent-dir/report.json",
        "sh",
        "-c",
        "echo x >> \"$COUNTER\"",
    ])
    .env("COUNTER", scratch.path("count"))
    .run();
    run.expect_code(125)
        .expect_stderr("cannot write --report /nonexistent-dir/report.json");
    assert_eq!(scratch.lines("count"), 0);
}
