//! Readers that stop reading: a stalled log collector on stderr, a pipeline stage that never
//! reads stdout, a FIFO nobody drains. Nothing the tool writes may hold it past its limits or a
//! signal.

use std::fs::File;
use std::io::{PipeReader, PipeWriter, Write};
use std::os::unix::fs::OpenOptionsExt;

use crate::support::harness::{Scratch, retry, wait_for};

/// A pipe whose reader is held open and never read, as a stalled log collector holds it.
fn stalled_pipe() -> (PipeReader, PipeWriter) {
    std::io::pipe().expect("a pipe")
}

/// How many bytes wait in the pipe whose read end is `reader`.
fn waiting(reader: &PipeReader) -> usize {
    let count = rustix::io::ioctl_fionread(reader).expect("FIONREAD on a pipe");
    usize::try_from(count).unwrap_or(usize::MAX)
}

#[test]
fn a_stderr_nobody_reads_cannot_hold_the_run_past_max_time() {
    let (reader, writer) = stalled_pipe();
    // The first attempt fills the pipe; the tool's own line about it can then never be written.
    retry(["-n", "3", "--base", "1ms", "--max-time", "2s", "--"])
        .args(["sh", "-c", "head -c 65536 /dev/zero >&2; exit 1"])
        .stderr(writer)
        .run()
        .expect_code(124);
    assert!(waiting(&reader) >= 65536);
}

#[test]
fn a_stderr_nobody_reads_cannot_keep_a_signal_out() {
    let scratch = Scratch::new();
    let (reader, writer) = stalled_pipe();
    let running = retry(["-n", "3", "--base", "1ms", "--"])
        .args([
            "sh",
            "-c",
            "echo $RETRY_ATTEMPT >> \"$MARKS\"; head -c 65536 /dev/zero >&2; exit 1",
        ])
        .env("MARKS", scratch.path("marks"))
        .stderr(writer)
        .spawn();
    // The pipe is full, and the second attempt is blocked writing into it.
    wait_for("the pipe to fill and a second attempt", || {
        waiting(&reader) >= 65536 && scratch.lines("marks") == 2
    });
    running.signal(libc::SIGTERM);
    running.finish().expect_signal(libc::SIGTERM);
}

#[test]
fn output_passed_on_to_a_reader_that_stopped_ends_at_the_deadline_and_says_so() {
    let (reader, writer) = stalled_pipe();
    let run = retry(["-n", "1", "--max-time", "2s", "--log-format", "json"])
        .args(["--retry-on", "output:never seen", "--"])
        .args(["sh", "-c", "head -c 300000 /dev/zero; exit 1"])
        .stdout(writer)
        .run();
    run.expect_code(124);
    assert!(
        run.warning()
            .contains("the reader of retry's stdout stopped reading"),
        "{run}"
    );
    drop(reader);
}

#[test]
fn held_output_a_reader_never_takes_fails_loudly_at_the_deadline() {
    let (reader, writer) = stalled_pipe();
    let run = retry(["-n", "1", "--max-time", "2s", "--hold", "stdout", "--"])
        .args(["head", "-c", "300000", "/dev/zero"])
        .stdout(writer)
        .run();
    run.expect_code(125)
        .expect_stderr("the reader of stdout did not take the held output before the --max-time");
    drop(reader);
}

#[test]
fn a_report_fifo_nobody_drains_fails_the_run_at_the_deadline() {
    let scratch = Scratch::new();
    let fifo = scratch.path("report.fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    let reader = File::options()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&fifo)
        .unwrap();
    let mut filler = File::options()
        .write(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&fifo)
        .unwrap();
    // Fill the FIFO, so that the report cannot go in.
    while filler.write(&[0; 4096]).is_ok() {}
    let run = retry(["--max-time", "2s", "--report"])
        .args([&fifo])
        .args(["--", "true"])
        .run();
    run.expect_code(125)
        .expect_stderr("its reader did not take it before the --max-time deadline");
    drop(reader);
}
