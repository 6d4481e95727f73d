//! Process control with real processes: timeouts, the deadline, process groups, signals, stdin.

use std::time::{Duration, Instant};

use crate::harness::{process_exists, retry, wait_for, Scratch};

/// `sh -c` words that record the shell's background child's pid in `$PIDFILE`, then run `rest`.
fn with_background_sleep(rest: &str) -> Vec<String> {
    // The sleep's output goes nowhere, so that a surviving sleep cannot hold the test's pipes.
    let script = format!("sleep 30 >/dev/null 2>&1 & echo $! > \"$PIDFILE\"; {rest}");
    vec!["sh".into(), "-c".into(), script]
}

fn pid_in(scratch: &Scratch, name: &str) -> i32 {
    scratch
        .read(name)
        .trim()
        .parse()
        .expect("a pid in the file")
}

#[test]
fn a_timeout_ends_the_whole_process_tree() {
    let scratch = Scratch::new();
    let command = with_background_sleep("wait");
    let run = retry(
        ["-n", "1", "-t", "100ms", "--"]
            .iter()
            .map(|s| s.to_string())
            .chain(command),
    )
    .env("PIDFILE", scratch.path("pid"))
    .run();
    run.expect_code(124)
        .expect_stderr("giving up after 1 attempt, all failed; last exit status 124");
    assert!(
        !process_exists(pid_in(&scratch, "pid")),
        "the grandchild outlived its attempt\n{run}"
    );
}

#[test]
fn what_an_attempt_leaves_running_in_its_group_is_ended() {
    let scratch = Scratch::new();
    let command = with_background_sleep("exit 0");
    let run = retry(
        ["-n", "1", "--"]
            .iter()
            .map(|s| s.to_string())
            .chain(command),
    )
    .env("PIDFILE", scratch.path("pid"))
    .run();
    run.expect_code(0);
    assert!(
        !process_exists(pid_in(&scratch, "pid")),
        "a leftover outlived its attempt\n{run}"
    );
}

#[test]
fn foreground_times_out_only_the_direct_child() {
    let scratch = Scratch::new();
    let command = with_background_sleep("wait");
    let run = retry(
        ["--foreground", "-n", "1", "-t", "100ms", "--"]
            .iter()
            .map(|s| s.to_string())
            .chain(command),
    )
    .env("PIDFILE", scratch.path("pid"))
    .run();
    run.expect_code(124);
    let grandchild = pid_in(&scratch, "pid");
    let survived = process_exists(grandchild);
    // SAFETY: kill has no memory-safety preconditions.
    unsafe { libc::kill(grandchild, libc::SIGKILL) };
    let stat = std::fs::read_to_string(format!("/proc/{grandchild}/stat")).unwrap_or_default();
    assert!(
        survived,
        "--foreground should reach only the direct child: {stat}\n{run}"
    );
}

#[test]
fn a_pipeline_does_not_wait_for_a_timed_out_grandchild() {
    let script = format!(
        "{} -q -n 1 -t 100ms -- sh -c 'sleep 30 & wait' | cat",
        crate::harness::binary()
    );
    let start = Instant::now();
    let status = std::process::Command::new("sh")
        .args(["-c", &script])
        .status()
        .unwrap();
    assert!(status.success());
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "the pipeline waited for the grandchild"
    );
}

#[test]
fn sigterm_during_a_wait_ends_the_run_without_another_attempt() {
    let scratch = Scratch::new();
    let running = retry([
        "-n",
        "5",
        "--base",
        "60s",
        "--jitter",
        "none",
        "--log-format",
        "json",
    ])
    .env("COUNTER", scratch.path("count"))
    .args(["sh", "-c", "echo x >> \"$COUNTER\"; exit 1"])
    .spawn();
    wait_for("the first attempt", || scratch.lines("count") == 1);
    std::thread::sleep(Duration::from_millis(50));
    let sent = Instant::now();
    running.signal(libc::SIGTERM);
    let run = running.finish();
    assert!(
        sent.elapsed() < Duration::from_secs(5),
        "the 60s wait was not cut short\n{run}"
    );
    assert_eq!(
        run.signal(),
        Some(libc::SIGTERM),
        "should die of the signal it got\n{run}"
    );
    assert_eq!(scratch.lines("count"), 1, "another attempt started\n{run}");
    let done = &run.events_named("done")[0];
    assert_eq!(
        (done["reason"].as_str(), done["status"].as_u64()),
        (Some("interrupted"), Some(143))
    );
    assert_eq!(done["signal"], "SIGTERM");
}

#[test]
fn sigterm_during_an_attempt_reaches_a_command_that_traps_it() {
    let scratch = Scratch::new();
    let trap = "trap 'echo trapped > \"$MARKER\"; exit 0' TERM; echo up > \"$UP\"; sleep 30 & wait";
    let running = retry(["-n", "5"])
        .env("MARKER", scratch.path("marker"))
        .env("UP", scratch.path("up"))
        .args(["sh", "-c", trap])
        .spawn();
    wait_for("the command to start", || scratch.lines("up") == 1);
    running.signal(libc::SIGTERM);
    let run = running.finish();
    assert_eq!(
        scratch.read("marker"),
        "trapped\n",
        "the command never saw SIGTERM\n{run}"
    );
    assert_eq!(run.signal(), Some(libc::SIGTERM), "{run}");
    run.expect_stderr("retry: stopped by SIGTERM after 1 attempt");
}

#[test]
fn a_second_sigint_kills_at_once() {
    let scratch = Scratch::new();
    let stubborn =
        "trap 'echo int >> \"$SEEN\"' INT; echo up > \"$UP\"; while :; do sleep 0.01; done";
    let running = retry(["-n", "5", "--kill-after", "60s"])
        .env("SEEN", scratch.path("seen"))
        .env("UP", scratch.path("up"))
        .args(["sh", "-c", stubborn])
        .spawn();
    wait_for("the command to start", || scratch.lines("up") == 1);
    running.signal(libc::SIGINT);
    wait_for("the command to see SIGINT", || scratch.lines("seen") == 1);
    running.signal(libc::SIGINT);
    let run = running.finish();
    assert_eq!(run.signal(), Some(libc::SIGINT), "{run}");
}

#[test]
fn a_command_ignoring_sigterm_is_killed_after_kill_after() {
    let run = retry([
        "--log-format",
        "json",
        "-n",
        "1",
        "-t",
        "50ms",
        "--kill-after",
        "100ms",
    ])
    .args(["sh", "-c", "trap '' TERM; sleep 30"])
    .run();
    run.expect_code(124);
    let end = &run.events_named("attempt_end")[0];
    assert_eq!(end["timed_out"], true, "{run}");
    assert_eq!(end["signal"], "SIGKILL", "{run}");
    assert!(
        end["duration_ms"].as_f64().unwrap() >= 150.0,
        "killed before --kill-after\n{run}"
    );
}

#[test]
fn max_time_bounds_the_whole_run() {
    let run = retry([
        "--log-format",
        "json",
        "-n",
        "unlimited",
        "--base",
        "20ms",
        "--jitter",
        "none",
    ])
    .args(["--max-time", "300ms", "sh", "-c", "exit 3"])
    .run();
    run.expect_code(3);
    let done = &run.events_named("done")[0];
    assert_eq!(done["reason"], "deadline", "{run}");
    assert!(
        done["elapsed_ms"].as_f64().unwrap() < 300.0,
        "a wait ran past the deadline\n{run}"
    );

    let run = retry([
        "--log-format",
        "json",
        "-n",
        "5",
        "--max-time",
        "100ms",
        "sleep",
        "30",
    ])
    .run();
    run.expect_code(124);
    assert_eq!(
        run.events_named("attempt_end")[0]["timed_out"],
        true,
        "{run}"
    );
    assert_eq!(run.events_named("done")[0]["reason"], "deadline", "{run}");
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
        retry([
            "-n",
            "3",
            "--base",
            "0s",
            "--retry-on",
            &named,
            "sh",
            "-c",
            &suicide,
        ])
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
    let script = format!("{} -- yes | head -n 1", crate::harness::binary());
    let output = std::process::Command::new("sh")
        .args(["-c", &script])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&output.stdout), "y\n");
}

#[test]
fn stdin_is_left_for_the_next_reader_without_replay() {
    let script = format!(
        "printf 'a\\nb\\n' | {{ {} -- true; cat; }}",
        crate::harness::binary()
    );
    let output = std::process::Command::new("sh")
        .args(["-c", &script])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&output.stdout), "a\nb\n");
}

#[test]
fn replay_stdin_gives_every_attempt_the_same_input() {
    let run = retry([
        "--replay-stdin",
        "-n",
        "3",
        "--base",
        "0s",
        "sh",
        "-c",
        "cat; echo; exit 1",
    ])
    .stdin("line one\nline two")
    .run();
    run.expect_code(1)
        .expect_stdout("line one\nline two\n".repeat(3).as_str());
}

#[test]
fn replay_stdin_spills_long_input_and_keeps_memory_bounded() {
    let scratch = Scratch::new();
    let input = scratch.path("input");
    let size = 64 << 20;
    std::fs::File::create(&input)
        .unwrap()
        .set_len(size)
        .unwrap();
    let mut tool = std::process::Command::new(crate::harness::binary());
    tool.args([
        "--replay-stdin",
        "-n",
        "3",
        "--base",
        "0s",
        "--",
        "sh",
        "-c",
    ])
    .arg(format!(
        "wc -c >> {}; exit 1",
        scratch.path("counts").display()
    ))
    .stdin(std::fs::File::open(&input).unwrap())
    .stderr(std::process::Stdio::null());
    let (status, peak) = crate::harness::peak_rss_kib(tool);
    assert_eq!(status.code(), Some(1));
    let counts: Vec<u64> = scratch
        .read("counts")
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect();
    assert_eq!(counts, [size; 3]);
    assert!(peak < 20 * 1024, "peak RSS {peak} KiB for 64 MiB of input");
}

#[test]
fn an_attempt_gets_the_terminal_and_ctrl_c_typed_there() {
    // One process with SIGINT at its default that answers a line and waits for more: a shell
    // would catch a Ctrl-C typed between two of its commands and carry on.
    let mut terminal =
        crate::pty::Session::start(&["-n", "3", "--base", "0s", "--", "sed", "-u", "s/^/got /"]);
    terminal.write(b"hello\n");
    terminal.expect("got hello");
    terminal.write(b"\x03");
    let status = terminal.wait();
    assert_eq!(
        status.code(),
        Some(130),
        "Ctrl-C should end the run, not be retried"
    );
    assert!(
        !terminal.output().contains("attempt 2/3"),
        "{}",
        terminal.output()
    );
}

#[test]
fn ctrl_z_stops_the_tool_with_the_attempt_and_fg_resumes_both() {
    let mut terminal = crate::pty::Session::start(&["-n", "3", "--", "sed", "-u", "s/^/got /"]);
    terminal.write(b"one\n");
    terminal.expect("got one");
    terminal.write(b"\x1a");
    let tool = terminal.pid();
    wait_for("the tool to stop along", || {
        crate::harness::process_state(tool) == Some('T')
    });
    // What a shell's `fg` does: continue the job.
    // SAFETY: kill has no memory-safety preconditions.
    unsafe { libc::kill(tool, libc::SIGCONT) };
    terminal.write(b"two\n");
    terminal.expect("got two");
    terminal.write(b"\x03");
    assert_eq!(terminal.wait().code(), Some(130), "{}", terminal.output());
}

#[test]
fn a_closed_stderr_never_ends_the_run() {
    let scratch = Scratch::new();
    let script = format!(
        "{{ {} -n 3 --base 0s -- false; echo $? > {}; }} 2>&1 | true",
        crate::harness::binary(),
        scratch.path("status").display()
    );
    let output = std::process::Command::new("sh")
        .args(["-c", &script])
        .output()
        .unwrap();
    assert!(output.status.success());
    assert_eq!(
        scratch.read("status"),
        "1\n",
        "the tool did not finish its run"
    );
}

#[test]
fn a_command_whose_tool_is_killed_is_told_by_sigterm() {
    let scratch = Scratch::new();
    // The command lets go of the test's pipes, so that the test ends even if it is never told.
    let trap = "exec >/dev/null 2>&1; trap 'echo told > \"$MARKER\"; exit 0' TERM; \
                echo up > \"$UP\"; while :; do sleep 0.05; done";
    let running = retry(["-n", "1", "--", "sh", "-c", trap])
        .env("MARKER", scratch.path("marker"))
        .env("UP", scratch.path("up"))
        .spawn();
    wait_for("the command to start", || scratch.lines("up") == 1);
    running.signal(libc::SIGKILL);
    let run = running.finish();
    assert_eq!(run.signal(), Some(libc::SIGKILL));
    wait_for("the parent-death signal", || {
        scratch.read("marker") == "told\n"
    });
}

#[test]
fn a_signal_while_stdin_is_read_for_replay_ends_the_run_before_any_attempt() {
    let scratch = Scratch::new();
    let mut tool = std::process::Command::new(crate::harness::binary())
        .args(["--replay-stdin", "--", "sh", "-c", "echo ran > \"$MARKER\""])
        .env("MARKER", scratch.path("marker"))
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The input never ends: the tool is still reading it when the signal comes.
    let _input = tool.stdin.take();
    std::thread::sleep(Duration::from_millis(200));
    // SAFETY: kill has no memory-safety preconditions; the tool is not reaped yet.
    unsafe { libc::kill(tool.id() as i32, libc::SIGTERM) };
    let status = crate::harness::wait_at_most(&mut tool, Duration::from_secs(5))
        .expect("SIGTERM did not end the read");
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(libc::SIGTERM)
    );
    assert!(
        !scratch.path("marker").exists(),
        "an attempt ran after the signal"
    );
}
