//! Signals sent to the tool: passed on to the attempt or ending the run, during an attempt and
//! between attempts, and the statuses of a command that died of one.

use crate::support::harness::{Scratch, retry, shell, wait_for};

#[test]
fn sigterm_during_a_wait_ends_the_run_without_another_attempt() {
    let scratch = Scratch::new();
    let running = retry(["-n", "5", "--base", "60s", "--jitter", "none"])
        .args([
            "--log-format",
            "json",
            "sh",
            "-c",
            "echo x >> \"$COUNTER\"; exit 1",
        ])
        .env("COUNTER", scratch.path("count"))
        .spawn();
    running.await_event("wait");
    running.signal(libc::SIGTERM);
    let run = running.finish();
    run.expect_signal(libc::SIGTERM);
    assert_eq!(scratch.lines("count"), 1, "another attempt started\n{run}");
    let done = run.event("done");
    assert_eq!(
        (done["reason"].as_str(), done["status"].as_u64()),
        (Some("interrupted"), Some(143))
    );
    assert_eq!(done["signal"], "SIGTERM");
}

#[test]
fn a_signal_during_a_wait_is_not_said_to_reach_a_command() {
    let running = retry(["-n", "5", "--base", "60s", "false"]).spawn();
    running.await_stderr("retrying in");
    running.signal(libc::SIGTERM);
    running
        .finish()
        .expect_signal(libc::SIGTERM)
        .expect_stderr("retry: stopped by SIGTERM after 1 attempt, while waiting to retry")
        .expect_no_stderr("passed it on");
}

#[test]
fn sigterm_during_an_attempt_reaches_a_command_that_traps_it() {
    let scratch = Scratch::new();
    let trap = "trap 'echo trapped > \"$MARKER\"; exit 0' TERM; echo up > \"$UP\"; sleep 30 & wait";
    let running = retry(["-n", "5", "sh", "-c", trap])
        .env("MARKER", scratch.path("marker"))
        .env("UP", scratch.path("up"))
        .spawn();
    wait_for("the command to start", || scratch.lines("up") == 1);
    running.signal(libc::SIGTERM);
    let run = running.finish();
    assert_eq!(
        scratch.read("marker"),
        "trapped\n",
        "the command never saw SIGTERM\n{run}"
    );
    run.expect_signal(libc::SIGTERM)
        .expect_stderr("retry: stopped by SIGTERM after 1 attempt; passed it on to the command");
}

#[test]
fn user_signals_are_passed_on_and_the_run_carries_on() {
    let scratch = Scratch::new();
    // Each signal also ends the `sleep` in the loop (default action); only the shell counts.
    let trap = "n=0; trap 'n=$((n + 1)); echo got >> \"$SEEN\"' USR1 USR2 ALRM WINCH; \
                echo up > \"$UP\"; while [ $n != 4 ]; do sleep 0.01; done";
    let running = retry(["-n", "1", "sh", "-c", trap])
        .env("SEEN", scratch.path("seen"))
        .env("UP", scratch.path("up"))
        .spawn();
    wait_for("the command to start", || scratch.lines("up") == 1);
    for (count, signal) in [libc::SIGUSR1, libc::SIGUSR2, libc::SIGALRM, libc::SIGWINCH]
        .into_iter()
        .enumerate()
    {
        running.signal(signal);
        wait_for("the command to see the signal", || {
            scratch.lines("seen") == count + 1
        });
    }
    running.finish().expect_code(0);
}

#[test]
fn a_user_signal_between_attempts_changes_nothing() {
    let scratch = Scratch::new();
    let running = retry(["--log-format", "json", "-n", "2", "--base", "300ms"])
        .args([
            "--jitter",
            "none",
            "sh",
            "-c",
            "echo x >> \"$COUNTER\"; exit 1",
        ])
        .env("COUNTER", scratch.path("count"))
        .spawn();
    running.await_event("wait");
    running.signal(libc::SIGUSR1);
    let run = running.finish();
    run.expect_code(1);
    assert_eq!(scratch.lines("count"), 2, "{run}");
}

#[test]
fn an_ignored_sigpipe_stays_ignored_for_the_command() {
    // Bit 13 of SigIgn (mask 0x1000) is SIGPIPE.
    let sigpipe_ignored = |run: &crate::support::harness::Run| {
        let line = run.stdout();
        let mask = u64::from_str_radix(line.trim().trim_start_matches("SigIgn:").trim(), 16);
        mask.expect("a SigIgn line") & 0x1000 != 0
    };
    let ignoring = retry(["grep", "SigIgn", "/proc/self/status"])
        .ignoring(libc::SIGPIPE)
        .run();
    assert!(sigpipe_ignored(&ignoring), "{ignoring}");
    let defaulting = retry(["grep", "SigIgn", "/proc/self/status"]).run();
    assert!(!sigpipe_ignored(&defaulting), "{defaulting}");
}

#[test]
fn a_second_sigint_kills_at_once() {
    let scratch = Scratch::new();
    let stubborn =
        "trap 'echo int >> \"$SEEN\"' INT; echo up > \"$UP\"; while :; do sleep 0.01; done";
    let running = retry(["-n", "5", "--kill-after", "60s", "sh", "-c", stubborn])
        .env("SEEN", scratch.path("seen"))
        .env("UP", scratch.path("up"))
        .spawn();
    wait_for("the command to start", || scratch.lines("up") == 1);
    running.signal(libc::SIGINT);
    wait_for("the command to see SIGINT", || scratch.lines("seen") == 1);
    running.signal(libc::SIGINT);
    running.finish().expect_signal(libc::SIGINT);
}

#[test]
fn ctrl_c_and_sigpipe_in_the_command_are_not_retried_unless_named() {
    for (signal, status) in [("INT", 130), ("PIPE", 141)] {
        let suicide = format!("kill -{signal} $$");
        retry(["-n", "3", "--base", "0s", "sh", "-c", &suicide])
            .run()
            .expect_code(status)
            .expect_stderr("giving up after 1 attempt");
        let named = status.to_string();
        retry(["-n", "3", "--base", "0s", "--retry-on", &named])
            .args(["sh", "-c", &suicide])
            .run()
            .expect_code(status)
            .expect_stderr("giving up after 3 attempts");
    }
    retry(["-n", "3", "--base", "0s", "sh", "-c", "exit 130"])
        .run()
        .expect_code(130)
        .expect_stderr("interrupted (Ctrl-C)");
}

#[test]
fn a_closed_stdout_ends_the_command_and_the_run_at_once() {
    // The pipeline's status is head's; the tool's own is kept from inside the pipeline.
    let scratch = Scratch::new();
    shell(
        "{ \"$RETRY\" --log-format json -- yes 2>\"$EVENTS\"; echo $? >\"$STATUS\"; } | head -n 1",
    )
    .env("EVENTS", scratch.path("events"))
    .env("STATUS", scratch.path("status"))
    .run()
    .expect_code(0)
    .expect_stdout("y\n");
    assert_eq!(scratch.read("status"), "141\n", "SIGPIPE is 128 + 13");
    let done = scratch.read("events");
    assert!(
        done.lines()
            .last()
            .unwrap_or_default()
            .contains(r#""event":"done","status":141,"attempts":1,"reason":"not_retryable""#),
        "one attempt, not retried: {done}"
    );
}
