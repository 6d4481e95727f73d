//! Rules on output (`--retry-on`, `--stop-on` and `--success-on` with a STREAM:REGEX, one stream
//! or both), and `--hold`: whole, in bounded memory, never in part.

use std::io::Read;

use crate::support::harness::{Invocation, Scratch, fault_injector, kill_leftover, retry, shell};

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
            "--retry-on",
            r"output:\b503\b",
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
            "--retry-on",
            "output:later",
            "--stop-on",
            "output:^fatal:",
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
        (end["rule"].as_str(), end["pattern"].as_str()),
        (Some("--stop-on output:^fatal:"), Some("^fatal:"))
    );
    assert!(
        run.stderr().contains("fatal: bad manifest\n"),
        "stderr was not passed on\n{run}"
    );
}

#[test]
fn output_conditions_never_turn_a_success_into_a_failure() {
    retry([
        "--stop-on",
        "output:error",
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
    retry(["--retry-on", "output:a(b", "true"])
        .run()
        .expect_code(125)
        .expect_stderr("--retry-on 'output:a(b' is not a valid regex");
}

#[test]
fn output_reaches_the_reader_while_the_command_runs() {
    let scratch = Scratch::new();
    let go = scratch.path("go");
    let wait_for_go = format!(
        "echo first; while [ ! -e '{}' ]; do sleep 0.01; done; echo second",
        go.display()
    );
    let (mut stdout, writer) = std::io::pipe().unwrap();
    let running = retry(["--retry-on", "output:x", "--", "sh", "-c", &wait_for_go])
        .stdout(writer)
        .spawn();
    let mut seen = [0; 6];
    // Blocks until the tool passes "first" on; the command is still waiting for `go`.
    stdout.read_exact(&mut seen).unwrap();
    assert_eq!(&seen, b"first\n");
    std::fs::write(&go, "").unwrap();
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).unwrap();
    assert_eq!(rest, "second\n");
    running.finish().expect_code(0);
}

#[test]
fn without_conditions_the_command_writes_to_the_tools_own_stdout() {
    let same = "[ \"$(readlink /proc/$PPID/fd/1)\" = \"$(readlink /proc/$$/fd/1)\" ] && echo same || echo piped";
    retry(["sh", "-c", same]).run().expect_stdout("same\n");
    retry(["--stop-on", "output:x", "sh", "-c", same])
        .run()
        .expect_stdout("piped\n");
}

#[test]
fn a_gigabyte_through_an_output_condition_costs_constant_memory() {
    let (run, peak) = retry(["-n", "1", "--retry-on", "output:needle", "--", "sh", "-c"])
        .args(["yes | head -c 1073741824"])
        .stdout(std::fs::File::create("/dev/null").unwrap())
        .run_measuring_peak_rss();
    run.expect_code(0);
    assert!((1..20 * 1024).contains(&peak), "peak RSS {peak} KiB");
}

#[test]
fn hold_output_gives_exactly_the_succeeding_attempts_stdout() {
    let command = "echo \"try $RETRY_ATTEMPT\"; [ $RETRY_ATTEMPT = 3 ]";
    let run = retry([
        "--hold", "stdout", "-n", "5", "--base", "0s", "sh", "-c", command,
    ])
    .run();
    run.expect_code(0).expect_stdout("try 3\n");
    run.expect_stderr("try 1\n").expect_stderr("try 2\n");
    assert!(!run.stderr().contains("try 3"), "{run}");
}

#[test]
fn hold_output_of_a_run_that_gives_up_goes_to_stderr() {
    let run = retry([
        "--hold",
        "stdout",
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
fn held_output_that_cannot_be_kept_fails_loudly_and_never_in_part() {
    let scratch = Scratch::new();
    std::fs::write(scratch.path("a-file"), "").unwrap();
    let two_mib = "head -c 2097152 /dev/zero; exit 0";
    for tmpdir in [scratch.path("missing"), scratch.path("a-file")] {
        let run = retry(["--hold", "stdout", "-n", "1", "--", "sh", "-c", two_mib])
            .env("TMPDIR", &tmpdir)
            .run();
        run.expect_code(125)
            .expect_stdout("")
            .expect_stderr("cannot hold the command's stdout: a temporary file in ")
            .expect_stderr(&format!("{} (TMPDIR)", tmpdir.display()))
            .expect_no_stderr("SIGPIPE");
    }
    // A full disk: every write to the temporary file fails.
    let run = retry(["--hold", "stdout", "-n", "1", "--", "sh", "-c", two_mib])
        .env("TMPDIR", scratch.path(""))
        .env("LD_PRELOAD", fault_injector())
        .env("FAULT_PATH", scratch.path(""))
        .run();
    run.expect_code(125)
        .expect_stdout("")
        .expect_stderr("No space left on device");
    // With --hold all, the attempt's header says its output was lost, never that it had none.
    let run = retry(["--hold", "all", "-n", "1", "--", "sh", "-c"])
        .args(["echo kept >&2; head -c 2097152 /dev/zero; exit 3"])
        .env("TMPDIR", scratch.path("missing"))
        .run();
    run.expect_code(125)
        .expect_stdout("")
        .expect_stderr(
            "retry: attempt 1/1 failed with exit status 3; the part of its output that could \
             be held:\nkept\n",
        )
        .expect_stderr("cannot hold the command's stdout")
        .expect_no_stderr("no output");
}

#[test]
fn held_output_goes_out_whole_through_the_temporary_file() {
    let run = retry(["--hold", "stdout", "-n", "1", "--", "sh", "-c"])
        .args(["head -c 3000000 /dev/zero | tr '\\0' x"])
        .run();
    run.expect_code(0);
    assert_eq!(run.stdout(), "x".repeat(3_000_000));
}

/// An attempt that prints `important`, then leaves behind a process of another session holding
/// its stdout, and exits with `$STATUS` once that process has left; the process writes its pid
/// to a file in `$PIDS`.
const DETACHED_HOLDER: &str = "echo important; pid=\"$PIDS/$RETRY_ATTEMPT\"; \
     setsid sh -c 'echo $$ > \"$0\"; exec sleep 30' \"$pid\" 2>/dev/null & \
     while [ ! -s \"$pid\" ]; do sleep 0.01; done; exit $STATUS";

/// Kill what [`DETACHED_HOLDER`] left behind.
fn kill_detached(scratch: &Scratch) {
    for entry in std::fs::read_dir(scratch.path("")).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap_or_default();
        if let Ok(pid) = text.trim().parse() {
            kill_leftover(pid);
        }
    }
}

#[test]
fn held_output_is_kept_when_a_detached_process_holds_the_pipe() {
    let scratch = Scratch::new();
    let run = shell(
        "x=$(\"$RETRY\" --hold stdout -n 1 --kill-after 200ms -- sh -c \"$SCRIPT\"); \
                     echo \"x=$x\"",
    )
    .env("SCRIPT", DETACHED_HOLDER)
    .env("STATUS", "0")
    .env("PIDS", scratch.path(""))
    .run();
    kill_detached(&scratch);
    run.expect_code(0)
        .expect_stdout("x=important\n")
        .expect_stderr("a process that left its process group still holds its output");
}

#[test]
fn output_written_before_the_attempt_ended_is_never_cut_by_kill_after() {
    // With no time at all to wait for the streams, what the attempt wrote before it ended is
    // still read to its end: --kill-after bounds only what a leftover process keeps open.
    for stream in ["--hold", "--log-format"] {
        for _ in 0..20 {
            let run = match stream {
                "--hold" => retry([
                    "--hold",
                    "stdout",
                    "--kill-after",
                    "0s",
                    "--",
                    "echo",
                    "hello",
                ]),
                _ => retry([
                    "--kill-after",
                    "0s",
                    "--retry-on",
                    "stdout:nothing",
                    "--",
                    "echo",
                    "hello",
                ]),
            }
            .run();
            run.expect_code(0)
                .expect_stdout("hello\n")
                .expect_no_stderr("still holds its output");
        }
    }
}

#[test]
fn a_match_seen_before_a_detached_process_is_left_still_counts() {
    let scratch = Scratch::new();
    let run = retry(["--log-format", "json", "--retry-on", "output:important"])
        .args(["-n", "2", "--base", "0s", "--kill-after", "200ms"])
        .args(["sh", "-c", DETACHED_HOLDER])
        .env("STATUS", "1")
        .env("PIDS", scratch.path(""))
        .stdout(std::fs::File::create("/dev/null").unwrap())
        .run();
    kill_detached(&scratch);
    run.expect_code(1);
    let matched: Vec<_> = run
        .events_named("attempt_end")
        .iter()
        .map(|end| end["rule"].clone())
        .collect();
    let rule = "--retry-on output:important";
    assert_eq!(matched, [rule, rule], "{run}");
    assert_eq!(run.events_named("warning").len(), 2, "{run}");
}

#[test]
fn sigterm_ends_a_run_whose_held_output_waits_for_a_slow_reader() {
    let scratch = Scratch::new();
    // Nobody reads this pipe: the held output can go no further than its buffer.
    let (_reader, writer) = std::io::pipe().unwrap();
    let running = retry(["--hold", "stdout", "-n", "1", "--", "sh", "-c"])
        .args(["head -c 2000000 /dev/zero; echo > \"$MARKER\""])
        .env("MARKER", scratch.path("marker"))
        .stdout(writer)
        .spawn();
    crate::support::harness::wait_for("the command to end", || scratch.path("marker").exists());
    running.signal(libc::SIGTERM);
    running.finish().expect_signal(libc::SIGTERM);
}

#[test]
fn a_reader_that_goes_away_is_not_a_process_that_left_its_group() {
    let run =
        crate::support::harness::shell("\"$RETRY\" --retry-on output:X -- seq 1000000 | head -1")
            .run();
    run.expect_code(0)
        .expect_stdout("1\n")
        .expect_stderr("the command's reader went away")
        .expect_no_stderr("left its process group");
}

#[test]
fn a_signal_that_ends_the_run_is_not_a_process_that_left_its_group() {
    for _ in 0..20 {
        let running = retry(["--retry-on", "output:X", "--", "sh", "-c"])
            .args(["sleep 30 & echo ready >&2; wait"])
            .spawn();
        running.await_stderr("ready");
        running.signal(libc::SIGTERM);
        running
            .finish()
            .expect_signal(libc::SIGTERM)
            .expect_no_stderr("left its process group");
    }
}

#[test]
fn success_on_output_waits_until_the_command_says_it_is_ready() {
    let scratch = Scratch::new();
    let until_third = r#"[ "$RETRY_ATTEMPT" -ge 3 ] && echo "service is ready" || echo pending"#;
    let run = retry(["--log-format", "json", "-n", "5", "--base", "0s"])
        .args([
            "--success-on",
            "output:ready$",
            "--",
            "sh",
            "-c",
            until_third,
        ])
        .run();
    run.expect_code(0);
    let done = run.event("done");
    assert_eq!(
        (&done["reason"], &done["attempts"]),
        (&"success".into(), &3.into()),
        "{run}"
    );
    let ends = run.events_named("attempt_end");
    assert_eq!(
        (&ends[0]["verdict"], &ends[0]["status"]),
        (&"retry".into(), &0.into())
    );
    assert_eq!(ends[2]["rule"], "--success-on output:ready$", "{run}");

    let never = retry([
        "-n",
        "3",
        "--base",
        "0s",
        "--success-on",
        "output:ready$",
        "--",
    ])
    .args(["sh", "-c", r#"echo pending >> "$LOG""#])
    .env("LOG", scratch.path("log"))
    .run();
    never.expect_code(1);
    assert_eq!(scratch.lines("log"), 3, "{never}");
}

#[test]
fn one_stream_leaves_the_other_attached() {
    let scratch = Scratch::new();
    let out = std::fs::File::create(scratch.path("out")).unwrap();
    let run = reading("stderr")
        .args([r#"echo "try again"; readlink /proc/$$/fd/1; exit 1"#])
        .stdout(out)
        .run();
    run.expect_code(1);
    assert_eq!(
        run.event("done")["reason"],
        "not_retryable",
        "a match on stdout is not read\n{run}"
    );
    let written = scratch.read("out");
    assert!(
        written.ends_with(&format!("{}\n", scratch.path("out").display())),
        "stdout was not the command's own: {written}"
    );
    let run = reading("stdout")
        .args([r#"echo "try again"; exit 1"#])
        .run();
    assert_eq!(run.event("done")["reason"], "exhausted", "{run}");
}

/// A run whose `--retry-on STREAM:'try again'` reads only `stream`, three attempts at most.
fn reading(stream: &str) -> Invocation {
    retry([
        "--log-format",
        "json",
        "-n",
        "3",
        "--base",
        "0s",
        "--retry-on",
    ])
    .args([format!("{stream}:try again")])
    .args(["--", "sh", "-c"])
}

#[test]
fn a_success_status_without_the_ready_match_is_said_as_such() {
    retry([
        "--success-on",
        "output:ready",
        "-n",
        "2",
        "--base",
        "0s",
        "true",
    ])
    .run()
    .expect_code(1)
    .expect_stderr("attempt 1/2 exited 0 without the --success-on match it needs; retrying")
    .expect_stderr("the last exited 0 without the --success-on match it needs, so retry exits 1")
    .expect_no_stderr("failed with exit status 0");
}
