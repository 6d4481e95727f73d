//! The hooks (`--on-retry`, `--on-give-up`, ...): when they run, what they see, and that a
//! failing or hanging one changes nothing but a warning.

use crate::support::harness::{Scratch, process_exists, retry, wait_for};

#[test]
fn on_retry_runs_between_attempts_with_its_variables_and_output_on_stderr() {
    let scratch = Scratch::new();
    let hook = r#"echo "hook $RETRY_ATTEMPT $RETRY_STATUS $RETRY_NEXT_WAIT_MS ${RETRY_REASON-none}" | tee -a "$LOG""#;
    let run = retry([
        "--log-format",
        "json",
        "-n",
        "3",
        "--base",
        "0s",
        "--on-retry",
        hook,
    ])
    .args([
        "--",
        "sh",
        "-c",
        r#"echo "attempt $RETRY_ATTEMPT" >> "$LOG"; echo out; exit 3"#,
    ])
    .env("LOG", scratch.path("log"))
    .run();
    run.expect_code(3).expect_stdout("out\nout\nout\n");
    assert_eq!(
        scratch.read("log"),
        "attempt 1\nhook 1 3 0 none\nattempt 2\nhook 2 3 0 none\nattempt 3\n"
    );
    run.expect_stderr("hook 1 3 0 none\n");
    let ends = run.events_named("hook_end");
    assert_eq!(ends.len(), 2, "{run}");
    assert_eq!(
        (&ends[0]["hook"], &ends[0]["status"]),
        (&"on_retry".into(), &0.into())
    );
}

#[test]
fn a_failing_hook_changes_nothing_but_a_warning() {
    let run = retry([
        "-n",
        "2",
        "--base",
        "0s",
        "--on-retry",
        "exit 9",
        "--on-give-up",
        "exit 8",
    ])
    .args(["--", "sh", "-c", "exit 4"])
    .run();
    run.expect_code(4)
        .expect_stderr("retry: warning: --on-retry failed with exit status 9;")
        .expect_stderr("retry: warning: --on-give-up failed with exit status 8;");
}

#[test]
fn a_hanging_hook_is_ended_at_its_limit_and_leaves_nothing_behind() {
    let scratch = Scratch::new();
    let hook = r#"sleep 60 & echo $! > "$PIDS"; exec sleep 60"#;
    let run = retry([
        "--log-format",
        "json",
        "-n",
        "2",
        "--base",
        "0s",
        "--timeout",
        "300ms",
    ])
    .args(["--kill-after", "200ms", "--on-retry", hook, "--", "false"])
    .env("PIDS", scratch.path("pids"))
    .run();
    run.expect_code(1);
    let end = &run.events_named("hook_end")[0];
    assert_eq!(end["status"], 124, "{run}");
    assert_eq!(run.event("done")["attempts"], 2, "the run went on\n{run}");
    let left = scratch.pid("pids");
    assert!(
        !process_exists(left),
        "the hook's background process {left} is still running"
    );
}

#[test]
fn on_give_up_runs_once_when_the_run_gives_up_and_never_else() {
    let scratch = Scratch::new();
    let hook = r#"echo "$RETRY_REASON $RETRY_STATUS" >> "$LOG""#;
    let give_up = |args: &[&str]| {
        retry(["-n", "2", "--base", "0s", "--on-give-up", hook])
            .args(args)
            .env("LOG", scratch.path("log"))
            .run()
    };
    give_up(&["--", "sh", "-c", "exit 5"]).expect_code(5);
    assert_eq!(scratch.read("log"), "exhausted 5\n");
    give_up(&["--", "true"]).expect_code(0);
    give_up(&["--", "no-such-command-for-retry"]).expect_code(127);
    assert_eq!(
        scratch.read("log"),
        "exhausted 5\nspawn_failed 127\n",
        "not after a success"
    );

    let running = retry([
        "--on-give-up",
        hook,
        "--",
        "sh",
        "-c",
        r#"touch "$STARTED"; exec sleep 30"#,
    ])
    .env("LOG", scratch.path("log"))
    .env("STARTED", scratch.path("started"))
    .spawn();
    wait_for("the attempt to start", || scratch.path("started").exists());
    running.signal(libc::SIGTERM);
    running.finish().expect_signal(libc::SIGTERM);
    assert_eq!(scratch.lines("log"), 2, "not when a signal stops the run");
}

#[test]
fn a_signal_during_a_hook_ends_the_run_and_no_warning_says_it_goes_on() {
    let scratch = Scratch::new();
    for (hook, warning) in [
        ("touch \"$STARTED\"; exec sleep 30", None),
        (
            "trap 'exit 3' TERM; touch \"$STARTED\"; sleep 30 & wait",
            Some("retry: warning: --on-retry failed with exit status 3\n"),
        ),
    ] {
        let _ = std::fs::remove_file(scratch.path("started"));
        let running = retry(["-n", "2", "--base", "0s", "--on-retry", hook, "--", "false"])
            .env("STARTED", scratch.path("started"))
            .spawn();
        wait_for("the hook to start", || scratch.path("started").exists());
        running.signal(libc::SIGTERM);
        let run = running.finish();
        run.expect_signal(libc::SIGTERM)
            .expect_stderr("stopped by SIGTERM after 1 attempt, while running --on-retry")
            .expect_no_stderr("goes on");
        match warning {
            Some(warning) => run.expect_stderr(warning),
            None => run.expect_no_stderr("warning"),
        };
    }
}

#[test]
fn a_hook_writes_on_the_terminal_as_a_command_does() {
    let mut shell = crate::support::pty::Session::shell();
    // With tostop, a process that writes on the terminal outside its foreground is stopped.
    shell.write(b"stty tostop\n");
    shell.write(
        b"\"$RETRY\" -n 2 --base 0s --on-retry 'echo hook-$((6 * 7))' -- false; echo status-$?\n",
    );
    shell.expect("hook-42");
    shell.expect("status-1");
    shell.write(b"exit\n");
    shell.wait();
}

#[test]
fn the_wait_a_hook_is_told_is_whole_milliseconds() {
    // Shell arithmetic takes whole numbers only: 1.5 ms is told as 2.
    let run = retry([
        "-n",
        "2",
        "--jitter",
        "none",
        "--base",
        "1500us",
        "--on-retry",
    ])
    .args(["echo next=$((RETRY_NEXT_WAIT_MS + 0))", "--", "false"])
    .run();
    run.expect_code(1).expect_stderr("next=2\n");
}
