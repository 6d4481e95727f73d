//! Process control with real processes: timeouts, the deadline, process groups, signals, stdin,
//! the terminal, and parents that leave the tool in odd states.

use crate::harness::{Scratch, kill_leftover, process_exists, retry, shell, wait_for};
use crate::pty::Session;

/// `sh -c` words that record the shell's background child's pid in `$PIDFILE`, then run `rest`.
fn with_background_sleep(rest: &str) -> Vec<String> {
    // The sleep's output goes nowhere, so that a surviving sleep cannot hold the test's pipes.
    let script = format!("sleep 30 >/dev/null 2>&1 & echo $! > \"$PIDFILE\"; {rest}");
    vec!["sh".into(), "-c".into(), script]
}

#[test]
fn a_timeout_ends_the_whole_process_tree() {
    let scratch = Scratch::new();
    let run = retry(["-n", "1", "-t", "100ms", "--"])
        .args(with_background_sleep("wait"))
        .env("PIDFILE", scratch.path("pid"))
        .run();
    run.expect_code(124)
        .expect_stderr("retry: giving up: the only attempt allowed timed out (status 124)");
    assert!(
        !process_exists(scratch.pid("pid")),
        "the grandchild outlived its attempt\n{run}"
    );
}

#[test]
fn what_an_attempt_leaves_running_in_its_group_is_ended() {
    let scratch = Scratch::new();
    let run = retry(["-n", "1", "--"])
        .args(with_background_sleep("exit 0"))
        .env("PIDFILE", scratch.path("pid"))
        .run();
    run.expect_code(0);
    assert!(
        !process_exists(scratch.pid("pid")),
        "a leftover outlived its attempt\n{run}"
    );
}

#[test]
fn foreground_times_out_only_the_direct_child() {
    let scratch = Scratch::new();
    let run = retry(["--foreground", "-n", "1", "-t", "100ms", "--"])
        .args(with_background_sleep("wait"))
        .env("PIDFILE", scratch.path("pid"))
        .run();
    run.expect_code(124);
    let grandchild = scratch.pid("pid");
    let survived = process_exists(grandchild);
    kill_leftover(grandchild);
    assert!(
        survived,
        "--foreground should reach only the direct child\n{run}"
    );
}

#[test]
fn a_pipeline_does_not_wait_for_a_timed_out_grandchild() {
    shell("\"$RETRY\" -q -n 1 -t 100ms -- sh -c 'sleep 30 & wait' | cat")
        .run()
        .expect_code(0);
}

#[test]
fn a_parent_that_ignores_sigchld_cannot_hide_the_end_of_an_attempt() {
    retry(["-n", "1", "-t", "200ms", "--max-time", "5s", "sleep", "30"])
        .ignoring(libc::SIGCHLD)
        .run()
        .expect_code(124);
    retry(["-n", "2", "--base", "0s", "sh", "-c", "exit 3"])
        .ignoring(libc::SIGCHLD)
        .run()
        .expect_code(3)
        .expect_stderr("giving up after 2 attempts");
}

/// An attempt that leaves a zombie in its group, whose parent has left the group and never
/// reaps it: a subshell starts a short sleep, then becomes a `setsid sleep 30`. `$PIDFILE` gets
/// the long sleep's pid, and `$LEADER` the attempt's main process's, which ends once the kernel
/// shows the zombie and its parent leading a session of its own.
const ZOMBIE_KEEPER: &str = "echo $$ > \"$LEADER\"; \
    (sleep 0 & echo $! > \"$PIDFILE.zombie\"; exec setsid sleep 30) >/dev/null 2>&1 & \
    keeper=$!; echo $keeper > \"$PIDFILE\"; \
    state() { sed 's/.*) //' \"/proc/$1/stat\" 2>/dev/null | cut -d' ' -f\"$2\"; }; \
    until [ -s \"$PIDFILE.zombie\" ] && [ \"$(state \"$(cat \"$PIDFILE.zombie\")\" 1)\" = Z ] \
        && [ \"$(state $keeper 4)\" = $keeper ]; do sleep 0.01; done";

#[test]
fn clearing_a_group_kept_alive_by_a_zombie_ends_after_kill_after() {
    let scratch = Scratch::new();
    let run = retry(["--log-format", "json", "-n", "1", "--kill-after", "100ms"])
        .args(["sh", "-c", ZOMBIE_KEEPER])
        .env("PIDFILE", scratch.path("pid"))
        .env("LEADER", scratch.path("leader"))
        .run();
    kill_leftover(scratch.pid("pid"));
    run.expect_code(0);
    let warning = run.event("warning");
    assert!(
        warning["message"]
            .as_str()
            .unwrap()
            .contains("still had members --kill-after after SIGKILL"),
        "{run}"
    );
}

#[test]
fn a_signal_ends_the_clearing_of_a_group_at_once() {
    let scratch = Scratch::new();
    let running = retry(["-n", "1", "--kill-after", "60s", "sh", "-c", ZOMBIE_KEEPER])
        .env("PIDFILE", scratch.path("pid"))
        .env("LEADER", scratch.path("leader"))
        .spawn();
    // Once the tool has reaped the attempt's main process, it is clearing the group.
    wait_for("the attempt's main process to start", || {
        scratch.lines("leader") == 1
    });
    let leader = scratch.pid("leader");
    wait_for("the attempt's main process to be reaped", || {
        crate::harness::process_state(leader).is_none()
    });
    running.signal(libc::SIGTERM);
    let run = running.finish();
    kill_leftover(scratch.pid("pid"));
    run.expect_signal(libc::SIGTERM);
}

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
    let sigpipe_ignored = |run: &crate::harness::Run| {
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
    shell("\"$RETRY\" -- yes | head -n 1")
        .run()
        .expect_code(0)
        .expect_stdout("y\n");
}

#[test]
fn stdin_is_left_for_the_next_reader_without_replay() {
    shell("printf 'a\\nb\\n' | { \"$RETRY\" -- true; cat; }")
        .run()
        .expect_stdout("a\nb\n");
}

#[test]
fn replay_stdin_gives_every_attempt_the_same_input() {
    retry(["--replay-stdin", "-n", "3", "--base", "0s"])
        .args(["sh", "-c", "cat; echo; exit 1"])
        .stdin("line one\nline two")
        .run()
        .expect_code(1)
        .expect_stdout("line one\nline two\n".repeat(3).as_str());
}

#[test]
fn replay_stdin_spills_long_input_and_keeps_memory_bounded() {
    let scratch = Scratch::new();
    let size = 64 << 20;
    let (run, peak) = retry([
        "--replay-stdin",
        "-n",
        "3",
        "--base",
        "0s",
        "--",
        "sh",
        "-c",
    ])
    .args([format!(
        "wc -c >> '{}'; exit 1",
        scratch.path("counts").display()
    )])
    .stdin(vec![0; size])
    .run_measuring_peak_rss();
    run.expect_code(1);
    let counts: Vec<usize> = scratch
        .read("counts")
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect();
    assert_eq!(counts, [size; 3], "{run}");
    assert!(peak < 20 * 1024, "peak RSS {peak} KiB for 64 MiB of input");
}

#[test]
fn replayed_stdin_is_each_attempts_own_and_cannot_be_written() {
    let scratch = Scratch::new();
    let input: Vec<u8> = (0..2_688_895u32).map(|i| (i % 251) as u8).collect();
    // The first attempt writes into its stdin, and leaves behind, outside its process group, a
    // process that reads it; the second keeps what it gets.
    let script = r#"if [ "$RETRY_ATTEMPT" = 1 ]; then
            printf XXXX >&0 2>/dev/null
            setsid sh -c 'cat >/dev/null' <&0 &
            exit 1
        fi
        cat > "$COPY""#;
    retry([
        "--replay-stdin",
        "-n",
        "2",
        "--base",
        "0s",
        "--",
        "sh",
        "-c",
        script,
    ])
    .env("COPY", scratch.path("copy"))
    .stdin(input.clone())
    .run()
    .expect_code(0);
    let copy = std::fs::read(scratch.path("copy")).unwrap();
    assert_eq!(copy.len(), input.len());
    assert!(
        copy == input,
        "the second attempt's stdin differs from the input"
    );
}

#[test]
fn replay_stdin_names_the_temporary_directory_it_could_not_use() {
    retry(["--replay-stdin", "--", "wc", "-c"])
        .env("TMPDIR", "/nonexistent-retry-tmp")
        .stdin(vec![b'x'; 3 << 20])
        .run()
        .expect_code(125)
        .expect_stderr("cannot keep stdin for --replay-stdin beyond 1 MiB")
        .expect_stderr("/nonexistent-retry-tmp (TMPDIR)");
}

#[test]
fn an_attempt_gets_the_terminal_and_ctrl_c_typed_there() {
    // One process with SIGINT at its default that answers a line and waits for more: a shell
    // would catch a Ctrl-C typed between two of its commands and carry on.
    let mut terminal = Session::start(&["-n", "3", "--base", "0s", "--", "sed", "-u", "s/^/got /"]);
    terminal.write(b"hello\n");
    terminal.expect("got hello");
    terminal.write(b"\x03");
    let status = terminal.wait();
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(libc::SIGINT),
        "Ctrl-C should end the run as it ends a shell's job, not be retried"
    );
    assert!(
        !terminal.output().contains("attempt 2/3"),
        "{}",
        terminal.output()
    );
}

#[test]
fn ctrl_z_stops_the_tool_with_the_attempt_and_fg_resumes_both() {
    let mut terminal = Session::start(&["-n", "3", "--", "sed", "-u", "s/^/got /"]);
    terminal.write(b"one\n");
    terminal.expect("got one");
    terminal.write(b"\x1a");
    let tool = terminal.pid();
    wait_for("the tool to stop along", || {
        crate::harness::process_state(tool) == Some('T')
    });
    // What a shell's `fg` does for a session it leads: continue the job.
    // SAFETY: kill has no memory-safety preconditions.
    unsafe { libc::kill(tool, libc::SIGCONT) };
    terminal.write(b"two\n");
    terminal.expect("got two");
    terminal.write(b"\x03");
    let status = terminal.wait();
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(libc::SIGINT),
        "{}",
        terminal.output()
    );
}

#[test]
fn a_run_sent_to_the_background_leaves_the_terminal_to_the_shell() {
    let mut shell = Session::shell();
    shell.write(b"\"$RETRY\" -n 3 -- sed -u 's/^/got /'\n");
    shell.write(b"one\n");
    shell.expect("got one");
    shell.write(b"\x1a");
    shell.expect("Stopped");
    shell.write(b"bg\n");
    // The shell reads this line, not the attempt: it prints the sum, not "got echo ...".
    shell.write(b"echo shell-$((6 * 7))\n");
    shell.expect("shell-42");
    assert!(!shell.output().contains("got echo"), "{}", shell.output());
    shell.write(b"fg\n");
    shell.write(b"two\n");
    shell.expect("got two");
    shell.write(b"\x03");
    shell.expect("whole job stops too");
    shell.write(b"exit\n");
    shell.wait();
}

#[test]
fn ctrl_c_stops_a_whole_interactive_pipeline_at_once() {
    let mut shell = Session::shell();
    shell.write(b"\"$RETRY\" -- sleep 31.25 | sleep 20\n");
    // Once the attempt runs, it holds the terminal: it took it before it became `sleep`.
    wait_for("the attempt to start", || {
        std::process::Command::new("pgrep")
            .args(["-x", "-f", "sleep 31.25"])
            .output()
            .is_ok_and(|out| out.status.success())
    });
    shell.write(b"\x03");
    // The second sleep would hold the shell for 20 seconds if only the attempt stopped.
    shell.write(b"echo after-$((6 * 7))\n");
    shell.expect_within("after-42", std::time::Duration::from_secs(10));
    shell.expect("$ ");
    shell.write(b"exit\n");
    shell.wait();
}

#[test]
fn a_tool_killed_tells_its_command_and_leaves_nothing_behind() {
    let scratch = Scratch::new();
    let tmp = scratch.path("tmp");
    std::fs::create_dir(&tmp).unwrap();
    // The command lets go of the test's pipes, so that the test ends even if it is never told.
    let trap = "exec >/dev/null 2>&1; trap 'echo told > \"$MARKER\"; exit 0' TERM; \
                echo up > \"$UP\"; while :; do sleep 0.05; done";
    let running = retry(["-n", "2", "--replay-stdin", "--hold-output", "--report"])
        .args([scratch.path("report.json")])
        .args(["--retry-on-output", "x", "--", "sh", "-c", trap])
        .env("MARKER", scratch.path("marker"))
        .env("UP", scratch.path("up"))
        .env("TMPDIR", &tmp)
        .stdin(vec![b'i'; 2 << 20])
        .spawn();
    wait_for("the command to start", || scratch.lines("up") == 1);
    running.signal(libc::SIGKILL);
    let run = running.finish();
    run.expect_signal(libc::SIGKILL);
    assert_eq!(run.stderr(), "", "nothing is said when the tool is killed");
    wait_for("the parent-death signal", || {
        scratch.read("marker") == "told\n"
    });
    let left: Vec<_> = std::fs::read_dir(&tmp).unwrap().collect();
    assert!(left.is_empty(), "left in TMPDIR: {left:?}");
    let mut files: Vec<String> = std::fs::read_dir(scratch.path(""))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(
        files,
        ["marker", "tmp", "up"],
        "no report, and nothing half-made"
    );
}

#[cfg(target_os = "linux")]
#[test]
fn a_signal_while_stdin_is_read_for_replay_ends_the_run_before_any_attempt() {
    let scratch = Scratch::new();
    // The input never ends: this process is its stdin's writer and never closes it.
    let (input, _writer) = std::io::pipe().unwrap();
    let running = retry(["--replay-stdin", "--", "sh", "-c", "echo ran > \"$MARKER\""])
        .env("MARKER", scratch.path("marker"))
        .stdin_from(input)
        .spawn();
    crate::harness::wait_until_reading_stdin(running.pid());
    running.signal(libc::SIGTERM);
    running.finish().expect_signal(libc::SIGTERM);
    assert!(
        !scratch.path("marker").exists(),
        "an attempt ran after the signal"
    );
}
