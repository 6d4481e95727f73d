//! Starting a process, an attempt's or a hook's: 126 and 127 only ever come from executing
//! COMMAND, any failure before that is the tool's (125), and a tool killed while it starts one
//! leaves nothing behind.

#[cfg(target_arch = "x86_64")]
use std::path::{Path, PathBuf};
#[cfg(target_arch = "x86_64")]
use std::process::Command;

use crate::support::harness::retry;

/// `fault/no_fork.c`, built once per test run with the system's C compiler: it runs a program
/// under a seccomp filter that refuses to make a process (threads still start).
#[cfg(target_arch = "x86_64")]
fn no_fork() -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
            let source = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/support/fault/no_fork.c");
            let program = Path::new(env!("CARGO_TARGET_TMPDIR")).join("retry-no-fork");
            let built = Command::new("cc")
                .arg("-o")
                .arg(&program)
                .arg(source)
                .status()
                .expect("a C compiler (cc) to build no_fork: apt-get install gcc");
            assert!(built.success(), "building no_fork failed");
            program
        })
        .clone()
}

#[cfg(target_arch = "x86_64")]
#[test]
fn a_filter_that_refuses_to_make_a_process_is_the_tools_failure_not_the_commands() {
    let run = crate::support::harness::program(no_fork().to_str().unwrap())
        .args([crate::support::harness::binary()])
        .args(["--log-format", "json", "-n", "3", "--", "true"])
        .run();
    run.expect_code(125);
    let done = run.event("done");
    assert_eq!(done["reason"], "spawn_failed", "{run}");
    assert_eq!(done["attempts"], 1, "{run}");
    let error = done["error"].as_str().unwrap_or_default();
    assert!(
        error.starts_with("could not start an attempt of true: cannot start a process: ")
            && error.contains("(os error 1)"),
        "{run}"
    );
}

#[test]
fn a_path_search_that_tries_no_entry_is_a_command_not_found() {
    // Every PATH entry is longer than PATH_MAX, so the C library tries none and sets no error
    // number: a stale one must not decide the status.
    let long = format!("/{}", "a".repeat(5_000));
    for args in [
        &["--log-format", "json", "-n", "3", "--base", "0s", "--"][..],
        &[
            "--log-format",
            "json",
            "-n",
            "3",
            "--base",
            "0s",
            "--on-retry",
            "true",
            "--",
        ],
    ] {
        let run = retry(args)
            .args(["no-such-command-anywhere"])
            .env("PATH", &long)
            .run();
        run.expect_code(127);
        let done = run.event("done");
        assert_eq!(done["reason"], "spawn_failed", "{run}");
        assert_eq!(
            done["attempts"], 1,
            "retried a command that was never run\n{run}"
        );
        assert_eq!(
            done["error"], "command not found: no-such-command-anywhere",
            "{run}"
        );
    }
}

#[test]
fn a_tool_killed_while_it_starts_a_hook_leaves_no_aborting_child() {
    // Hooks start as fast as they can, and the tool is killed at some moment among them, again
    // and again: a child caught between its start and exec must end quietly, never abort. The
    // pause before each kill is not a wait for anything: it spreads the kills over the loop.
    for round in 0..300 {
        let running = retry(["-n", "unlimited", "--base", "0s", "--on-retry", "true"])
            .args(["--", "false"])
            .spawn();
        let pause = std::time::Duration::from_micros(1_000 + round % 40 * 100);
        std::thread::sleep(pause);
        running.signal(libc::SIGKILL);
        let run = running.finish();
        run.expect_signal(libc::SIGKILL)
            .expect_no_stderr("fatal runtime error")
            .expect_no_stderr("aborting");
    }
}
