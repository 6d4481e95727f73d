//! An attempt's whole process group ends with it: its timeout, its leftovers, a group kept
//! alive by a zombie, a parent that ignores SIGCHLD, and a tool killed outright.

use crate::support::harness::{Scratch, kill_leftover, process_exists, retry, shell, wait_for};

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
        crate::support::harness::process_state(leader).is_none()
    });
    running.signal(libc::SIGTERM);
    let run = running.finish();
    kill_leftover(scratch.pid("pid"));
    run.expect_signal(libc::SIGTERM);
}

#[test]
fn a_tool_killed_tells_its_command_and_leaves_nothing_behind() {
    let scratch = Scratch::new();
    let tmp = scratch.path("tmp");
    std::fs::create_dir(&tmp).unwrap();
    // The command lets go of the test's pipes, so that the test ends even if it is never told.
    let trap = "exec >/dev/null 2>&1; trap 'echo told > \"$MARKER\"; exit 0' TERM; \
                echo up > \"$UP\"; while :; do sleep 0.05; done";
    let running = retry(["-n", "2", "--replay-stdin", "--hold", "stdout", "--report"])
        .args([scratch.path("report.json")])
        .args(["--retry-on", "output:x", "--", "sh", "-c", trap])
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
