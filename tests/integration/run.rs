//! Runs of real commands: attempts, statuses, the exit-status options, `--reset-after`,
//! environment, messages.

use crate::support::harness::{Scratch, retry};

/// A shell script that appends a line to `$COUNTER` and exits with `$1`... as `sh -c` words.
fn counting(exit: &str) -> Vec<String> {
    let script = format!("echo attempt >> \"$COUNTER\"; {exit}");
    vec!["sh".into(), "-c".into(), script]
}

fn args<'a>(flags: &[&'a str], command: &'a [String]) -> Vec<&'a str> {
    flags
        .iter()
        .copied()
        .chain(command.iter().map(String::as_str))
        .collect()
}

#[test]
fn gives_up_after_max_attempts_with_the_last_status() {
    let scratch = Scratch::new();
    let command = counting("exit $RETRY_ATTEMPT");
    retry(args(&["-n", "3", "--base", "1ms", "--"], &command))
        .env("COUNTER", scratch.path("count"))
        .run()
        .expect_code(3)
        .expect_stderr("retry: attempt 1/3 failed with exit status 1; retrying in ")
        .expect_stderr(
            "retry: giving up after 3 attempts, all failed; the last failed with exit status 3",
        );
    assert_eq!(scratch.lines("count"), 3);
}

#[test]
fn stops_at_the_first_success() {
    let scratch = Scratch::new();
    let command = counting("[ \"$RETRY_ATTEMPT\" -ge 2 ]");
    let run = retry(args(&["-n", "5", "--base", "1ms"], &command))
        .env("COUNTER", scratch.path("count"))
        .run();
    run.expect_code(0);
    assert_eq!(scratch.lines("count"), 2);
    assert_eq!(
        run.stderr().lines().count(),
        1,
        "one line for the one retry\n{run}"
    );
}

#[test]
fn unlimited_attempts_continue_until_success() {
    let scratch = Scratch::new();
    let command = counting("[ \"$RETRY_ATTEMPT\" -ge 12 ]");
    retry(args(&["-n", "unlimited", "--base", "0s"], &command))
        .env("COUNTER", scratch.path("count"))
        .run()
        .expect_code(0);
    assert_eq!(scratch.lines("count"), 12);
}

#[test]
fn retry_on_limits_what_is_retried() {
    let scratch = Scratch::new();
    let command = counting("exit 4");
    retry(args(&["--retry-on", "1-3,75", "--base", "1ms"], &command))
        .env("COUNTER", scratch.path("count"))
        .run()
        .expect_code(4)
        .expect_stderr("giving up after 1 attempt: exit status 4 is not retried: --retry-on names what is retried");
    assert_eq!(scratch.lines("count"), 1);
}

#[test]
fn stop_on_wins_over_any_failure() {
    let scratch = Scratch::new();
    let command = counting("exit $((RETRY_ATTEMPT + 1))");
    retry(args(&["--stop-on", "3", "--base", "1ms"], &command))
        .env("COUNTER", scratch.path("count"))
        .run()
        .expect_code(3)
        .expect_stderr("exit status 3 is not retried: --stop-on 3");
    assert_eq!(scratch.lines("count"), 2);
}

#[test]
fn success_on_turns_a_status_into_success() {
    let scratch = Scratch::new();
    retry(args(
        &["--success-on", "0,3", "--base", "1ms"],
        &counting("exit 3"),
    ))
    .env("COUNTER", scratch.path("count"))
    .run()
    .expect_code(0);
    assert_eq!(scratch.lines("count"), 1);
}

#[test]
fn death_by_signal_counts_as_128_plus_n() {
    let scratch = Scratch::new();
    let command = counting("kill -9 $$");
    retry(args(
        &["-n", "2", "--base", "1ms", "--retry-on", "137"],
        &command,
    ))
    .env("COUNTER", scratch.path("count"))
    .run()
    .expect_code(137)
    .expect_stderr("attempt 1/2 died of SIGKILL (status 137); retrying in ");
    assert_eq!(scratch.lines("count"), 2);
}

#[test]
fn a_missing_command_exits_127_without_retrying() {
    retry(["-n", "5", "--", "retry-test-no-such-command", "x"])
        .run()
        .expect_code(127)
        .expect_stderr("retry: command not found: retry-test-no-such-command");
}

#[test]
fn a_command_that_cannot_execute_exits_126_without_retrying() {
    let scratch = Scratch::new();
    let script = scratch.path("not-executable");
    std::fs::write(&script, "#!/bin/sh\nexit 0\n").unwrap();
    let run = retry([script.as_os_str()]).run();
    run.expect_code(126).expect_stderr("retry: cannot execute");
    assert_eq!(run.stderr().lines().count(), 1, "{run}");
    retry(["/"]).run().expect_code(126);
}

#[test]
fn a_missing_command_is_reported_even_when_quiet() {
    retry(["-q", "retry-test-no-such-command"])
        .run()
        .expect_code(127)
        .expect_stderr("command not found");
}

#[test]
fn arguments_reach_the_command_untouched() {
    retry([
        "-n", "1", "printf", "%s|", "-n", "it's", "a  b", "--base", "$HOME", "*",
    ])
    .run()
    .expect_code(0)
    .expect_stdout("-n|it's|a  b|--base|$HOME|*|");
}

#[test]
fn a_double_dash_lets_the_command_start_with_a_dash() {
    retry(["-n", "1", "--", "-no-such-command"])
        .run()
        .expect_code(127);
}

#[test]
fn shell_runs_the_joined_line_with_sh() {
    retry([
        "--shell",
        "-n",
        "2",
        "--base",
        "0s",
        "--",
        "echo",
        "$RETRY_ATTEMPT;",
        "exit",
        "3",
    ])
    .run()
    .expect_code(3)
    .expect_stdout("1\n2\n");
}

#[test]
fn every_attempt_sees_its_number_and_the_limit() {
    let command = [
        "sh",
        "-c",
        "echo $RETRY_ATTEMPT/$RETRY_MAX_ATTEMPTS; exit 1",
    ];
    retry(["-n", "3", "--base", "0s"].iter().chain(&command))
        .run()
        .expect_stdout("1/3\n2/3\n3/3\n");
    let command = ["sh", "-c", "echo $RETRY_MAX_ATTEMPTS"];
    retry(["-n", "unlimited"].iter().chain(&command))
        .run()
        .expect_stdout("unlimited\n");
}

#[test]
fn stdout_belongs_to_the_command() {
    let run = retry([
        "-n",
        "2",
        "--base",
        "0s",
        "-v",
        "sh",
        "-c",
        "echo out; exit 1",
    ])
    .run();
    run.expect_code(1).expect_stdout("out\nout\n");
    assert!(
        run.stderr().lines().all(|line| line.starts_with("retry: ")),
        "{run}"
    );
}

#[test]
fn quiet_prints_nothing_of_its_own() {
    let run = retry(["-q", "-n", "2", "--base", "0s", "false"]).run();
    run.expect_code(1);
    assert_eq!(run.stderr(), "", "{run}");
}

#[test]
fn verbose_reports_starts_and_the_success() {
    retry([
        "-v",
        "-n",
        "2",
        "--base",
        "0s",
        "sh",
        "-c",
        "[ $RETRY_ATTEMPT = 2 ]",
    ])
    .run()
    .expect_code(0)
    .expect_stderr("retry: attempt 1/2 starting\n")
    .expect_stderr("retry: attempt 2/2 succeeded after ");
}

#[test]
fn json_events_follow_the_schema() {
    let run = retry([
        "--log-format",
        "json",
        "-n",
        "3",
        "--base",
        "1ms",
        "--",
        "sh",
        "-c",
        "exit 2",
    ])
    .run();
    run.expect_code(2);
    let ends = run.events_named("attempt_end");
    assert_eq!(ends.len(), 3, "{run}");
    for (index, end) in ends.iter().enumerate() {
        assert_eq!(end["attempt"], index as u64 + 1);
        assert_eq!(end["status"], 2);
        assert!(end["duration_ms"].as_f64().unwrap() >= 0.0);
        assert_eq!(end["verdict"], if index < 2 { "retry" } else { "stop" });
    }
    let waits = run.events_named("wait");
    assert_eq!(waits.len(), 2, "no wait after the last attempt\n{run}");
    assert_eq!(waits[0]["before_attempt"], 2);
    assert!(waits[1]["wait_ms"].as_f64().unwrap() <= 2.0);
    let done = run.events_named("done");
    assert_eq!(done.len(), 1);
    assert_eq!(done[0]["status"], 2);
    assert_eq!(done[0]["attempts"], 3);
    assert_eq!(done[0]["reason"], "exhausted");
    assert!(done[0]["elapsed_ms"].as_f64().is_some());
}

#[test]
fn json_done_reasons() {
    let reason = |args: &[&str]| {
        let run = retry(["--log-format", "json", "--base", "0s"].iter().chain(args)).run();
        run.events_named("done")[0]["reason"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(reason(&["true"]), "success");
    assert_eq!(reason(&["--stop-on", "1", "false"]), "not_retryable");
    assert_eq!(reason(&["-n", "2", "false"]), "exhausted");
    assert_eq!(reason(&["retry-test-no-such-command"]), "spawn_failed");
}

#[test]
fn a_seed_repeats_the_waits() {
    let waits = |seed: &str| {
        let run = retry([
            "--log-format",
            "json",
            "-n",
            "4",
            "--base",
            "1ms",
            "--seed",
            seed,
            "false",
        ])
        .run();
        run.events_named("wait")
            .iter()
            .map(|w| w["wait_ms"].to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(waits("42"), waits("42"));
    assert_ne!(waits("42"), waits("43"));
}

#[test]
fn giving_up_after_a_zero_that_counted_as_failure_never_exits_zero() {
    let run = retry([
        "--log-format",
        "json",
        "--success-on",
        "3",
        "-n",
        "2",
        "--base",
        "0s",
    ])
    .args(["true"])
    .run();
    run.expect_code(1);
    let done = run.event("done");
    assert_eq!(
        (done["status"].as_u64(), done["reason"].as_str()),
        (Some(1), Some("exhausted"))
    );
    retry(["--success-on", "3", "-n", "2", "--base", "0s", "true"])
        .run()
        .expect_code(1)
        .expect_stderr("the last failed with exit status 0, so retry exits 1");
}

#[test]
fn a_whole_command_line_given_as_one_word_gets_a_hint() {
    retry(["-n", "1", "curl -fsS http://localhost/health"])
        .run()
        .expect_code(127)
        .expect_stderr("give COMMAND and its arguments as separate words, or use --shell");
}

#[test]
fn a_command_that_cannot_start_is_said_in_json_even_when_quiet() {
    let run = retry(["-q", "--log-format", "json", "retry-test-no-such-command"]).run();
    run.expect_code(127);
    assert_eq!(run.event("done")["reason"], "spawn_failed", "{run}");
}

#[test]
fn a_run_that_can_spin_for_ever_is_warned_about_once_at_the_start() {
    let run = retry(["--log-format", "json", "-n", "unlimited", "--base", "0s"])
        .args(["sh", "-c", "[ $RETRY_ATTEMPT = 3 ]"])
        .run();
    run.expect_code(0);
    let warning = run.event("warning");
    assert!(
        warning["message"].as_str().unwrap().contains("without end"),
        "{run}"
    );
    assert_eq!(run.events()[0]["event"], "warning", "{run}");
}

#[test]
fn a_tool_out_of_descriptors_says_it_failed_itself() {
    // Descriptors 0 to 5 only: the tool starts, but cannot make the pipes an attempt whose
    // output is matched needs.
    let run = crate::support::harness::shell(
        "ulimit -n 6 && exec \"$RETRY\" --retry-on output:needle -- true",
    )
    .run();
    // The system's own words for EMFILE differ by C library; the tool's hint does not.
    run.expect_code(125)
        .expect_stderr("retry itself is out of file descriptors (see ulimit -n)")
        .expect_no_stderr("cannot execute");
}

#[test]
fn reset_after_starts_the_backoff_and_the_count_over() {
    // Attempt 1 fails after 2s, well past --reset-after, and resets; then quick failures, which
    // even a busy machine runs well within it, exhaust -n 2. (The loop's own tests cover the
    // arithmetic with a fake clock; this one shows that the real clock is read.)
    let command = "echo $RETRY_ATTEMPT_SINCE_RESET; [ $RETRY_ATTEMPT = 1 ] && sleep 2; exit 1";
    let run = retry([
        "--log-format",
        "json",
        "-n",
        "2",
        "--reset-after",
        "1s",
        "--base",
        "1ms",
    ])
    .args(["--jitter", "none", "sh", "-c", command])
    .run();
    run.expect_code(1).expect_stdout("1\n1\n2\n");
    let resets: Vec<bool> = run
        .events_named("attempt_end")
        .iter()
        .map(|end| end["reset"] == true)
        .collect();
    assert_eq!(resets, [true, false, false], "{run}");
    let waits: Vec<f64> = run
        .events_named("wait")
        .iter()
        .map(|wait| wait["wait_ms"].as_f64().unwrap())
        .collect();
    // The wait after the reset is the first wait again; after attempt 2 comes the second.
    assert_eq!(waits, [1.0, 2.0], "{run}");
}

#[test]
fn a_count_taken_for_the_command_gets_a_hint() {
    retry(["3", "true"])
        .run()
        .expect_code(127)
        .expect_stderr("command not found: 3 (to make 3 attempts, give -n 3 before the command)");
}
