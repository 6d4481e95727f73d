//! Time limits: `--timeout` with its signal, `--kill-after` for a command that ignores it, and
//! `--max-time` for the whole run.

use crate::support::harness::retry;

#[test]
fn a_command_ignoring_sigterm_is_killed_after_kill_after() {
    let run = retry(["--log-format", "json", "-n", "1", "-t", "50ms"])
        .args([
            "--kill-after",
            "100ms",
            "sh",
            "-c",
            "trap '' TERM; sleep 30",
        ])
        .run();
    run.expect_code(124);
    let end = run.event("attempt_end");
    assert_eq!(end["timed_out"], true, "{run}");
    assert_eq!(end["signal"], "SIGKILL", "{run}");
    assert!(
        end["duration_ms"].as_f64().unwrap() >= 150.0,
        "killed before --kill-after\n{run}"
    );
}

#[test]
fn an_endless_kill_after_means_never() {
    retry(["--kill-after", "300000000000y", "--", "true"])
        .run()
        .expect_code(0);
    retry([
        "--kill-after",
        "300000000000y",
        "-n",
        "1",
        "-t",
        "100ms",
        "sleep",
        "30",
    ])
    .run()
    .expect_code(124);
}

#[test]
fn max_time_bounds_the_whole_run() {
    let run = retry(["--log-format", "json", "-n", "unlimited", "--base", "20ms"])
        .args([
            "--jitter",
            "none",
            "--max-time",
            "300ms",
            "sh",
            "-c",
            "exit 3",
        ])
        .run();
    run.expect_code(3);
    let done = run.event("done");
    assert_eq!(done["reason"], "deadline", "{run}");
    assert!(
        done["elapsed_ms"].as_f64().unwrap() < 300.0,
        "a wait ran past the deadline\n{run}"
    );

    let run = retry(["--log-format", "json", "-n", "5", "--max-time", "100ms"])
        .args(["sleep", "30"])
        .run();
    run.expect_code(124);
    assert_eq!(run.event("attempt_end")["timed_out"], true, "{run}");
    assert_eq!(run.event("done")["reason"], "deadline", "{run}");
}

#[test]
fn the_timeout_signal_reaches_a_command_that_traps_it() {
    // The shell's background sleep ignores SIGINT, as a non-interactive shell's jobs do: the trap
    // ends it, so that the group is clear at once rather than at --kill-after.
    let trap = r#"trap 'echo "got INT"; kill $!; exit 7' INT; sleep 30 & wait"#;
    let run = retry(["-n", "1", "--timeout", "300ms", "--timeout-signal", "INT"])
        .args(["--", "sh", "-c", trap])
        .run();
    run.expect_code(124).expect_stdout("got INT\n");
    retry(["--timeout-signal", "TERMINATE", "true"])
        .run()
        .expect_code(125)
        .expect_stderr("invalid value 'TERMINATE' for '--timeout-signal <SIGNAL>'");
}

#[test]
fn giving_up_early_for_max_time_says_the_wait_and_the_time_left() {
    retry([
        "-n",
        "2",
        "--jitter",
        "none",
        "--base",
        "10s",
        "--max-time",
        "5s",
        "false",
    ])
    .run()
    .expect_code(1)
    .expect_stderr(
        "giving up after 1 attempt: the next wait, 10s, would end past the --max-time deadline, ",
    )
    .expect_stderr(" away; the last failed with exit status 1");
    let asking = "echo 30s > \"$RETRY_AFTER_FILE\"; exit 1";
    retry([
        "-n",
        "2",
        "--base",
        "0s",
        "--max-time",
        "5s",
        "sh",
        "-c",
        asking,
    ])
    .run()
    .expect_code(1)
    .expect_stderr("the wait the command asked for, 30s, would end past the --max-time deadline");
}

#[test]
fn no_attempt_starts_after_a_wait_that_ended_past_max_time() {
    // The tool is stopped (as by Ctrl-Z, or a frozen cgroup) during its first wait, and
    // continued only after the deadline: the wait ends late, and no attempt starts after it.
    let running = retry(["--log-format", "json", "-n", "5", "--base", "500ms"])
        .args([
            "--jitter",
            "none",
            "--max-time",
            "1s",
            "--",
            "sh",
            "-c",
            "exit 3",
        ])
        .spawn();
    running.await_event("attempt_end");
    running.signal(libc::SIGSTOP);
    let started = std::time::Instant::now();
    // Not a wait for an event: the time the tool spends stopped is the case under test.
    std::thread::sleep(std::time::Duration::from_millis(1_200).saturating_sub(started.elapsed()));
    running.signal(libc::SIGCONT);
    let run = running.finish();
    run.expect_code(3);
    let done = run.event("done");
    assert_eq!(done["reason"], "deadline", "{run}");
    assert_eq!(
        done["attempts"], 1,
        "an attempt started past the deadline\n{run}"
    );
}
