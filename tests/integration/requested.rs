//! The service sets the pace: waits and stops a command asks for in `RETRY_AFTER_FILE` or its
//! output, and runs nested inside other runs' attempts.

use std::path::Path;

use crate::support::harness::{Run, Scratch, retry};

/// The command of [`asking`]: on its first attempt it writes `$REQUEST` (as the shell expands
/// it) to `RETRY_AFTER_FILE` and exits `$STATUS` (1 unless given); later attempts succeed.
const ASKING: &str = r#"[ "$RETRY_ATTEMPT" = 1 ] || exit 0
eval "printf '%s' \"$REQUEST\"" > "$RETRY_AFTER_FILE"
exit "${STATUS:-1}""#;

/// A run with JSON events, `--base 1ms -n 3` and `options`, of a command that asks for
/// `request` after its first attempt.
fn asking(request: &str, options: &[&str]) -> crate::support::harness::Invocation {
    retry(["--log-format", "json", "--base", "1ms", "-n", "3"])
        .args(options)
        .args(["--", "sh", "-c", ASKING])
        .env("REQUEST", request)
}

/// The wait after the first attempt, in milliseconds, and what set it.
fn first_wait(run: &Run) -> (f64, String) {
    let wait = &run.events_named("wait")[0];
    (
        wait["wait_ms"].as_f64().unwrap(),
        wait["cause"].as_str().unwrap().to_string(),
    )
}

/// The `done` event's reason and attempt count.
fn ended(run: &Run) -> (String, u64) {
    let done = run.event("done");
    (
        done["reason"].as_str().unwrap().to_string(),
        done["attempts"].as_u64().unwrap(),
    )
}

#[test]
fn a_wait_written_to_the_file_is_the_next_wait() {
    // The date is made by the attempt itself, two seconds ahead of it.
    let date = "$(date -u -d '+2 seconds' '+%a, %d %b %Y %H:%M:%S GMT')";
    let runs: Vec<_> = ["2s", "2", date]
        .into_iter()
        .map(|request| (request, asking(request, &[]).spawn()))
        .collect();
    for (request, running) in runs {
        let run = running.finish();
        run.expect_code(0);
        let (wait, cause) = first_wait(&run);
        assert_eq!(cause, "requested", "{run}");
        // An HTTP date has whole seconds: two seconds ahead may be a little over one away.
        let least = if request == date { 500.0 } else { 2000.0 };
        assert!((least..=2000.0).contains(&wait), "{request}: {wait}\n{run}");
        let asked = run.events_named("attempt_end")[0]["requested_wait_ms"].as_f64();
        assert_eq!(asked, Some(wait), "{run}");
    }
}

#[test]
fn stop_ends_the_run_with_the_attempts_status() {
    let run = asking("stop", &[]).env("STATUS", "3").run();
    run.expect_code(3);
    assert_eq!(ended(&run), ("stop_requested".into(), 1), "{run}");
    assert_eq!(
        run.events_named("attempt_end")[0]["requested_stop"],
        true,
        "{run}"
    );
    let text = asking("stop", &["--log-format", "text"]).run();
    text.expect_stderr("giving up after 1 attempt: the command asked not to be retried");
}

#[test]
fn a_wait_past_the_deadline_gives_up_at_once() {
    let run = asking("1h", &["--max-time", "20s"]).run();
    run.expect_code(1);
    assert_eq!(ended(&run), ("deadline".into(), 1), "{run}");
}

#[test]
fn a_wait_past_the_most_is_cut_to_it_with_a_warning() {
    let run = asking("1h", &[])
        .env("RETRY_MAX_REQUESTED_WAIT", "50ms")
        .run();
    run.expect_code(0);
    assert_eq!(first_wait(&run), (50.0, "requested".into()), "{run}");
    let warning = run.warning();
    assert!(
        warning.contains("asked to wait 1h, longer than RETRY_MAX_REQUESTED_WAIT; waiting 50ms"),
        "{run}"
    );
}

#[test]
fn a_request_never_shortens_the_backoff_nor_retries_what_would_not_be() {
    let run = asking("0", &["--base", "300ms", "--jitter", "none"]).run();
    assert_eq!(first_wait(&run), (300.0, "backoff".into()), "{run}");

    for (options, status, reason) in [
        (&["--stop-on", "1"][..], "1", "not_retryable"),
        (&["-n", "1"][..], "1", "exhausted"),
        (&[][..], "0", "success"),
    ] {
        let run = asking("2s", options).env("STATUS", status).run();
        assert_eq!(ended(&run), (reason.into(), 1), "{run}");
        assert!(run.events_named("wait").is_empty(), "{run}");
    }
}

#[test]
fn an_unreadable_request_is_ignored_with_one_warning() {
    let run = asking(
        "soon, I hope\nreally",
        &["--base", "100ms", "--jitter", "none"],
    )
    .run();
    run.expect_code(0);
    assert_eq!(first_wait(&run), (100.0, "backoff".into()), "{run}");
    let warning = run.warning();
    assert!(
        warning.contains("attempt 1 wrote 'soon, I hope' to RETRY_AFTER_FILE"),
        "{run}"
    );

    let run = retry(["--log-format", "json", "--base", "1ms", "-n", "2"])
        .args(["--retry-after-output", r"^after: (.*)$"])
        .args([
            "--",
            "sh",
            "-c",
            r#"echo "after: tomorrow"; [ "$RETRY_ATTEMPT" = 2 ]"#,
        ])
        .run();
    run.expect_code(0);
    let warning = run.warning();
    assert!(
        warning.contains("--retry-after-output read 'tomorrow'"),
        "{run}"
    );
}

#[test]
fn a_wait_in_the_output_counts_from_its_last_match_on_either_stream() {
    // The last line is written only once the tool has read the stderr line from the pipe (the
    // kernel shows it empty), so that it is the last read whatever the load.
    let script = r#"[ "$RETRY_ATTEMPT" = 2 ] && exit 0
        echo "retry-after: 9"; echo "Retry-After: 1" >&2
        python3 -c 'import fcntl, termios, struct, time
while struct.unpack("i", fcntl.ioctl(2, termios.FIONREAD, b"    "))[0]: time.sleep(0.01)'
        echo "RETRY-AFTER: 0.3"
        exit 1"#;
    let run = retry(["--log-format", "json", "--base", "1ms", "-n", "2"])
        .args(["--retry-after-output", r"(?i)^retry-after:\s*(.+)$"])
        .args(["--", "sh", "-c", script])
        .run();
    run.expect_code(0);
    assert_eq!(first_wait(&run), (300.0, "requested".into()), "{run}");
}

/// The paths a run's attempts were given, from the file they were listed in.
fn listed(scratch: &Scratch) -> Vec<String> {
    scratch.read("paths").lines().map(String::from).collect()
}

#[test]
fn each_attempt_gets_a_fresh_private_file_and_none_is_left() {
    let scratch = Scratch::new();
    std::fs::create_dir(scratch.path("tmp")).unwrap();
    let list = r#"echo "$RETRY_AFTER_FILE" >> "$PATHS"; stat -L -c %a "$RETRY_AFTER_FILE" >> "$PATHS.modes"; exit 1"#;
    retry(["-n", "3", "--base", "0s", "--", "sh", "-c", list])
        .env("PATHS", scratch.path("paths"))
        .env("TMPDIR", scratch.path("tmp"))
        .env("RETRY_AFTER_FILE", "/an/outer/runs/file")
        .run()
        .expect_code(1);
    let paths = listed(&scratch);
    assert_eq!(paths.len(), 3);
    assert!(paths[0] != paths[1] && paths[1] != paths[2], "{paths:?}");
    // On Linux an unnamed file in TMPDIR, reached through the tool's descriptor; elsewhere a
    // file in TMPDIR.
    assert!(
        paths.iter().all(|path| match cfg!(target_os = "linux") {
            true => path.starts_with("/proc/") && path.contains("/fd/"),
            false => Path::new(path).parent() == Some(&scratch.path("tmp")),
        }),
        "{paths:?}"
    );
    let modes = scratch.read("paths.modes");
    assert!(modes.lines().all(|mode| mode == "600"), "{modes}");
    let left: Vec<_> = std::fs::read_dir(scratch.path("tmp")).unwrap().collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn a_signal_leaves_no_request_file_behind() {
    let scratch = Scratch::new();
    let wait =
        r#"echo "$RETRY_AFTER_FILE" > "$PATHS"; echo 5s > "$RETRY_AFTER_FILE"; exec sleep 30"#;
    let running = retry(["--log-format", "json", "--", "sh", "-c", wait])
        .env("PATHS", scratch.path("paths"))
        .spawn();
    crate::support::harness::wait_for("the attempt to name its file", || {
        scratch.path("paths").exists() && !scratch.read("paths").is_empty()
    });
    running.signal(libc::SIGTERM);
    running.finish().expect_signal(libc::SIGTERM);
    let path = listed(&scratch).remove(0);
    assert!(!Path::new(&path).exists(), "{path} is left");
}

#[test]
fn a_missing_temporary_directory_is_said_once_and_the_run_goes_on() {
    let run = retry(["--log-format", "json", "-n", "2", "--base", "0s", "--"])
        .args([
            "sh",
            "-c",
            r#"[ -z "$RETRY_AFTER_FILE" ] && [ "$RETRY_ATTEMPT" = 2 ]"#,
        ])
        .env("TMPDIR", "/nonexistent/tmp")
        .run();
    run.expect_code(0);
    let warning = run.warning();
    assert!(
        warning.contains("cannot make RETRY_AFTER_FILE in /nonexistent/tmp"),
        "{run}"
    );
}

/// `retry -n 3 -- retry -n 4 OPTIONS -- COMMAND`, counting COMMAND's attempts in `count`.
/// A retry of 3 attempts around a retry of 4, the inner one told `RETRY_NESTED=mode` if given.
fn nested(scratch: &Scratch, mode: Option<&str>) -> Run {
    let count = r#"echo "$RETRY_DEPTH" >> "$COUNT"; exit 1"#;
    retry([
        "-n",
        "3",
        "--base",
        "0s",
        "--",
        &crate::support::harness::binary(),
        "-n",
        "4",
        "--base",
        "0s",
    ])
    .args(["--", "sh", "-c", count])
    .env("COUNT", scratch.path("count"))
    .env("RETRY_NESTED", mode.unwrap_or_default())
    .run()
}

#[test]
fn a_retry_inside_a_retry_says_how_the_attempts_multiply() {
    let scratch = Scratch::new();
    let run = nested(&scratch, None);
    run.expect_code(1);
    assert_eq!(scratch.lines("count"), 12, "{run}");
    assert!(
        scratch.read("count").lines().all(|depth| depth == "2"),
        "{run}"
    );
    let warnings = run
        .stderr()
        .matches("up to 3 × 4 = 12 attempts of this command")
        .count();
    assert_eq!(warnings, 3, "once for each inner run\n{run}");
}

#[test]
fn the_warning_counts_every_layer_around_a_run() {
    let scratch = Scratch::new();
    let binary = crate::support::harness::binary();
    let count = r#"echo "$RETRY_TOTAL_ATTEMPTS" >> "$COUNT"; exit 1"#;
    let run = retry([
        "-n", "2", "--base", "0s", "--", &binary, "-n", "3", "--base", "0s",
    ])
    .args([
        "--", &binary, "-n", "4", "--base", "0s", "--", "sh", "-c", count,
    ])
    .env("COUNT", scratch.path("count"))
    .run();
    run.expect_code(1);
    assert_eq!(scratch.lines("count"), 24, "{run}");
    assert!(
        scratch.read("count").lines().all(|total| total == "24"),
        "{run}"
    );
    let innermost = run
        .stderr()
        .matches("up to 6 × 4 = 24 attempts of this command")
        .count();
    assert_eq!(innermost, 6, "once for each innermost run\n{run}");
}

#[test]
fn nested_once_leaves_the_retrying_to_the_outer_run() {
    let scratch = Scratch::new();
    let run = nested(&scratch, Some("once"));
    run.expect_code(1);
    assert_eq!(scratch.lines("count"), 3, "{run}");
    run.expect_no_stderr("running inside another retry");

    let quiet = Scratch::new();
    let run = nested(&quiet, Some("quiet"));
    assert_eq!(quiet.lines("count"), 12, "{run}");
    run.expect_no_stderr("running inside another retry");

    let alone = retry(["--log-format", "json", "-n", "2", "--base", "0s"])
        .args(["--", "false"])
        .env("RETRY_NESTED", "once")
        .run();
    assert_eq!(
        ended(&alone),
        ("exhausted".into(), 2),
        "not nested: it retries\n{alone}"
    );
    assert_eq!(
        alone.events_named("attempt_start")[1]["depth"],
        1,
        "{alone}"
    );
}
