//! What each attempt reads: stdin left for the next reader, or `--replay-stdin`'s copy, the same
//! for every attempt, spilled to disk when long, and never writable.

use crate::support::harness::{Scratch, retry, shell};

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
    assert!(
        (1..20 * 1024).contains(&peak),
        "peak RSS {peak} KiB for 64 MiB of input"
    );
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
fn a_closed_stdin_stays_closed_and_cannot_be_replayed() {
    // The command reads it as it would without the tool: closed, never an empty /dev/null.
    shell("\"$RETRY\" -n 1 -- cat <&-")
        .run()
        .expect_code(1)
        .expect_stderr("cat: -: Bad file descriptor");
    shell("\"$RETRY\" --replay-stdin -n 1 -- cat <&-")
        .run()
        .expect_code(125)
        .expect_stderr("cannot read stdin for --replay-stdin: Bad file descriptor");
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
    crate::support::harness::wait_until_reading_stdin(running.pid());
    running.signal(libc::SIGTERM);
    running.finish().expect_signal(libc::SIGTERM);
    assert!(
        !scratch.path("marker").exists(),
        "an attempt ran after the signal"
    );
}
