//! `--report`: the run's summary, written where a shell redirection would write it, checked
//! before anything runs, and never a silent failure.

use std::os::unix::fs::{FileTypeExt, OpenOptionsExt, PermissionsExt};

use crate::support::harness::{Scratch, fault_injector, retry, shell};

/// Every key an attempt record carries, in the README's order.
const ATTEMPT_KEYS: [&str; 17] = [
    "attempt",
    "attempt_since_reset",
    "start_offset_ms",
    "duration_ms",
    "status",
    "signal",
    "timed_out",
    "verdict",
    "rule",
    "pattern",
    "rule_spent",
    "reset",
    "requested_wait_ms",
    "requested_stop",
    "wait_after_ms",
    "wait_cause",
    "error",
];

fn keys_of(object: &serde_json::Value) -> Vec<String> {
    let mut keys: Vec<String> = object.as_object().unwrap().keys().cloned().collect();
    keys.sort();
    keys
}

fn sorted(keys: &[&str]) -> Vec<String> {
    let mut keys: Vec<String> = keys.iter().map(|key| key.to_string()).collect();
    keys.sort();
    keys
}

fn report_in(scratch: &Scratch, name: &str) -> serde_json::Value {
    let text = scratch.read(name);
    serde_json::from_str(&text).unwrap_or_else(|err| panic!("{name} is not JSON: {err}: {text}"))
}

#[test]
fn report_writes_a_summary_a_ci_job_can_archive() {
    let scratch = Scratch::new();
    let path = scratch.path("report.json");
    let run = retry([
        "--report",
        path.to_str().unwrap(),
        "-n",
        "3",
        "--base",
        "1ms",
    ])
    .args(["--seed", "7", "sh", "-c", "exit 3"])
    .run();
    run.expect_code(3);
    let report = report_in(&scratch, "report.json");
    assert_eq!(report["version"], 1);
    assert_eq!(report["exit_code"], 3);
    assert_eq!(report["reason"], "exhausted");
    assert_eq!(report["options"]["seed"], "7");
    assert_eq!(report["options"]["in_force"]["seed"], 7);
    assert_eq!(report["options"]["command"][2], "exit 3");
    let attempts = report["attempts"].as_array().unwrap();
    assert_eq!(attempts.len(), 3);
    for (index, attempt) in attempts.iter().enumerate() {
        assert_eq!(keys_of(attempt), sorted(&ATTEMPT_KEYS), "{attempt}");
        assert_eq!(attempt["attempt"], index as u64 + 1);
        assert_eq!(attempt["status"], 3);
        assert_eq!(attempt["timed_out"], false);
        assert!(attempt["start_offset_ms"].is_number() && attempt["duration_ms"].is_number());
    }
    assert!(attempts[0]["wait_after_ms"].is_number());
    assert!(
        attempts[2]["wait_after_ms"].is_null(),
        "no wait after the last attempt"
    );
}

#[test]
fn the_report_of_a_command_that_cannot_start_has_every_key_and_the_error() {
    let scratch = Scratch::new();
    let path = scratch.path("report.json");
    retry([
        "--report",
        path.to_str().unwrap(),
        "retry-test-no-such-command",
    ])
    .run()
    .expect_code(127);
    let report = report_in(&scratch, "report.json");
    let attempt = &report["attempts"][0];
    assert_eq!(keys_of(attempt), sorted(&ATTEMPT_KEYS), "{attempt}");
    assert_eq!(attempt["status"], 127);
    assert_eq!(
        attempt["error"],
        "command not found: retry-test-no-such-command"
    );
    assert_eq!(report["error"], attempt["error"]);
}

#[test]
fn paths_that_cannot_take_a_report_fail_before_anything_runs() {
    let scratch = Scratch::new();
    std::fs::create_dir(scratch.path("dir")).unwrap();
    let cases = [
        ("/nonexistent-dir/report.json".to_string(), "does not exist"),
        (scratch.path("dir").display().to_string(), "is a directory"),
        (format!("{}/", scratch.path("new").display()), "ends in '/'"),
    ];
    for (path, why) in cases {
        let run = retry(["--report", &path, "sh", "-c", "echo x >> \"$COUNTER\""])
            .env("COUNTER", scratch.path("count"))
            .run();
        run.expect_code(125)
            .expect_stderr(&format!("cannot write --report {path}"))
            .expect_stderr(why);
        assert_eq!(scratch.lines("count"), 0, "the command ran\n{run}");
    }
}

#[test]
fn a_file_another_user_owns_in_a_sticky_directory_fails_before_anything_runs() {
    if !crate::support::harness::is_root() {
        eprintln!("skipped: running the tool as another user needs root (CI runs as root)");
        return;
    }
    let scratch = Scratch::new();
    std::fs::set_permissions(scratch.path(""), std::fs::Permissions::from_mode(0o755)).unwrap();
    let shared = scratch.path("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
    std::fs::write(shared.join("report.json"), "theirs").unwrap();
    // The test's own user owns the file; run the tool as another one, as /tmp is shared.
    let nobody = ["--reuid=65534", "--regid=65534", "--clear-groups"];
    let run = crate::support::harness::program("setpriv")
        .args(nobody)
        .args([crate::support::harness::binary().as_str(), "--report"])
        .args([shared.join("report.json")])
        .args(["sh", "-c", "echo ran"])
        .run();
    run.expect_code(125)
        .expect_stderr("belongs to another user")
        .expect_stdout("");
    assert_eq!(scratch.read("shared/report.json"), "theirs");
}

#[test]
fn what_another_user_planted_in_a_sticky_directory_is_not_used_not_even_by_root() {
    if !crate::support::harness::is_root() {
        eprintln!("skipped: making files of another user needs root (CI runs as root)");
        return;
    }
    let scratch = Scratch::new();
    std::fs::set_permissions(scratch.path(""), std::fs::Permissions::from_mode(0o755)).unwrap();
    let shared = scratch.path("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
    std::fs::write(scratch.path("victim"), "precious").unwrap();
    let link = shared.join("report.json");
    std::os::unix::fs::symlink(scratch.path("victim"), &link).unwrap();
    std::os::unix::fs::lchown(&link, Some(65534), Some(65534)).unwrap();
    let fifo = shared.join("report.fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o666)).unwrap();
    std::os::unix::fs::chown(&fifo, Some(65534), Some(65534)).unwrap();
    let file = shared.join("theirs.json");
    std::fs::write(&file, "theirs").unwrap();
    std::os::unix::fs::chown(&file, Some(65534), Some(65534)).unwrap();
    for (path, what) in [
        (&link, "a symbolic link"),
        (&fifo, "a file"),
        (&file, "a file"),
    ] {
        let run = retry(["--report"])
            .args([path])
            .args(["sh", "-c", "echo ran"])
            .run();
        run.expect_code(125)
            .expect_stderr(&format!("it is {what} of another user (uid 65534)"))
            .expect_stdout("");
    }
    assert_eq!(scratch.read("victim"), "precious");
    assert_eq!(scratch.read("shared/theirs.json"), "theirs");
}

#[test]
fn the_tools_own_streams_take_the_report_where_they_stand() {
    for stream in ["/dev/stdout", "/dev/stderr", "/dev/fd/1", "/proc/self/fd/2"] {
        let run = retry(["--report", stream, "--", "echo", "done"]).run();
        run.expect_code(0);
        let taken = run.stdout() + &run.stderr();
        assert!(taken.contains("\"reason\": \"success\""), "{stream}\n{run}");
    }
    // A stream that is a file is written to where it stands, after what is there, as a shell
    // writes to it: never replaced.
    let scratch = Scratch::new();
    crate::support::harness::shell("\"$RETRY\" --report /dev/stdout -- echo done > \"$OUT\"")
        .env("OUT", scratch.path("out"))
        .run()
        .expect_code(0);
    let out = scratch.read("out");
    assert!(out.starts_with("done\n{"), "{out}");
    assert!(out.contains("\"reason\": \"success\""), "{out}");
}

#[test]
fn a_link_is_followed_and_stays_a_link() {
    let scratch = Scratch::new();
    std::os::unix::fs::symlink("target.json", scratch.path("link.json")).unwrap();
    retry([
        "--report",
        scratch.path("link.json").to_str().unwrap(),
        "true",
    ])
    .run()
    .expect_code(0);
    let link = std::fs::symlink_metadata(scratch.path("link.json")).unwrap();
    assert!(link.file_type().is_symlink(), "the link was replaced");
    assert_eq!(report_in(&scratch, "target.json")["reason"], "success");
}

#[test]
fn a_fifo_is_written_in_place() {
    let scratch = Scratch::new();
    let fifo = scratch.path("report.fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    // The test is the FIFO's reader (and, opening it both ways, never blocks on it).
    let mut pipe = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&fifo)
        .unwrap();
    retry(["--report", fifo.to_str().unwrap(), "true"])
        .run()
        .expect_code(0);
    let mut text = Vec::new();
    let mut chunk = [0; 4096];
    while let Ok(count @ 1..) = std::io::Read::read(&mut pipe, &mut chunk) {
        text.extend_from_slice(&chunk[..count]);
    }
    let report: serde_json::Value =
        serde_json::from_slice(&text).unwrap_or_else(|err| panic!("the FIFO got no report: {err}"));
    assert_eq!(report["reason"], "success");
    let kind = std::fs::symlink_metadata(&fifo).unwrap().file_type();
    assert!(kind.is_fifo(), "the FIFO was replaced");
}

#[test]
fn a_fifo_with_no_reader_yet_holds_up_neither_the_command_nor_the_deadline() {
    let scratch = Scratch::new();
    let fifo = scratch.path("report.fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    let fifo_arg = fifo.to_str().unwrap();
    // Nobody ever reads: the command still runs, and the run ends at its deadline, loudly.
    let unread = retry([
        "--log-format",
        "json",
        "--max-time",
        "1s",
        "--report",
        fifo_arg,
    ])
    .args(["sh", "-c", "echo ran"])
    .run();
    unread.expect_code(125).expect_stdout("ran\n");
    let done = unread.event("done");
    assert!(
        done["report_error"]
            .as_str()
            .is_some_and(|error| error.contains("did not take it before the --max-time deadline")),
        "{unread}"
    );
    // A reader that comes once the command ran gets the whole report.
    let running = retry(["--log-format", "json", "--report", fifo_arg, "true"]).spawn();
    running.await_event("attempt_end");
    let text = std::fs::read(&fifo).unwrap();
    let report: serde_json::Value =
        serde_json::from_slice(&text).unwrap_or_else(|err| panic!("no report: {err}"));
    assert_eq!(report["reason"], "success");
    running.finish().expect_code(0);
}

/// Linux device numbers: `makedev` and the numbers of /dev/null and /dev/full are Linux's.
#[cfg(target_os = "linux")]
#[test]
fn a_device_is_written_in_place_and_a_full_one_fails_the_run() {
    if !crate::support::harness::is_root() {
        eprintln!("skipped: making device nodes needs root (CI runs as root)");
        return;
    }
    // Nodes of the test's own for /dev/null and /dev/full (char 1:3 and 1:7), so that a tool
    // that replaced them could not harm the machine's.
    let scratch = Scratch::new();
    let device = |name: &str, minor| {
        let path = scratch.path(name);
        let kind = nix::sys::stat::SFlag::S_IFCHR;
        let mode = nix::sys::stat::Mode::from_bits_truncate(0o666);
        nix::sys::stat::mknod(&path, kind, mode, nix::sys::stat::makedev(1, minor)).unwrap();
        path
    };
    let (null, full) = (device("null", 3), device("full", 7));
    retry(["--report"])
        .args([&null])
        .args(["true"])
        .run()
        .expect_code(0);
    let kind = std::fs::symlink_metadata(&null).unwrap().file_type();
    assert!(kind.is_char_device(), "the device node was replaced");
    retry(["--report"])
        .args([&full])
        .args(["true"])
        .run()
        .expect_code(125)
        .expect_stderr("No space left on device");
    let kind = std::fs::symlink_metadata(&full).unwrap().file_type();
    assert!(kind.is_char_device(), "the device node was replaced");
}

#[test]
fn a_report_that_cannot_be_written_at_the_end_changes_the_exit_status() {
    let scratch = Scratch::new();
    let path = scratch.path("report.json");
    let run = retry([
        "--log-format",
        "json",
        "--report",
        path.to_str().unwrap(),
        "true",
    ])
    .env("LD_PRELOAD", fault_injector())
    .env("FAULT_PATH", scratch.path(""))
    .run();
    run.expect_code(125);
    let done = run.event("done");
    assert_eq!(done["status"], 125, "{run}");
    assert!(
        done["report_error"]
            .as_str()
            .unwrap()
            .contains("No space left on device"),
        "{run}"
    );
    assert!(
        !run.stderr().contains(".retry-"),
        "the temporary name shows\n{run}"
    );
    let left: Vec<_> = std::fs::read_dir(scratch.path("")).unwrap().collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn the_report_follows_the_umask() {
    let scratch = Scratch::new();
    shell("umask 027; \"$RETRY\" --report \"$REPORT\" true")
        .env("REPORT", scratch.path("report.json"))
        .run()
        .expect_code(0);
    let mode = std::fs::metadata(scratch.path("report.json"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o640);
}

#[test]
fn a_signal_leaves_a_whole_report_and_no_temporary_file() {
    let scratch = Scratch::new();
    let path = scratch.path("report.json");
    let running = retry(["--log-format", "json", "--report", path.to_str().unwrap()])
        .args(["-n", "3", "--base", "60s", "false"])
        .spawn();
    running.await_event("wait");
    running.signal(libc::SIGTERM);
    running.finish().expect_signal(libc::SIGTERM);
    assert_eq!(report_in(&scratch, "report.json")["signal"], "SIGTERM");
    let names: Vec<_> = std::fs::read_dir(scratch.path(""))
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    assert_eq!(names, ["report.json"]);
}

/// A signal before the run starts (while stdin is read for --replay-stdin) leaves nothing.
#[cfg(target_os = "linux")]
#[test]
fn a_signal_before_the_first_attempt_leaves_no_report() {
    let scratch = Scratch::new();
    let (input, _writer) = std::io::pipe().unwrap();
    let running = retry(["--replay-stdin", "--report"])
        .args([scratch.path("report.json")])
        .args(["true"])
        .stdin_from(input)
        .spawn();
    crate::support::harness::wait_until_reading_stdin(running.pid());
    running.signal(libc::SIGTERM);
    running.finish().expect_signal(libc::SIGTERM);
    let left: Vec<_> = std::fs::read_dir(scratch.path("")).unwrap().collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn a_closed_stdout_stays_closed_for_the_command_and_never_becomes_the_tools_files() {
    // A tool started with descriptor 1 closed must not open its report (or any file of its own)
    // as descriptor 1, where the command would inherit it as stdout (the command writes 42
    // there, spelt so that the report's copy of its command line does not hold it); and it gets its
    // stdout closed, as without the tool, never the /dev/null std's runtime put there for the
    // tool alone: a write to it fails as it would, never vanishes.
    let scratch = Scratch::new();
    let seen = "import os, sys\n\
                try:\n    os.write(1, str(6 * 7).encode() + b'-from-the-command'); state = os.readlink('/proc/self/fd/1')\n\
                except OSError as err:\n    state = os.strerror(err.errno)\n\
                open(sys.argv[1], 'w').write(state)";
    shell("\"$RETRY\" --report \"$REPORT\" -- python3 -c \"$SEEN\" \"$STDOUT_NAME\" >&-")
        .env("REPORT", scratch.path("report.json"))
        .env("SEEN", seen)
        .env("STDOUT_NAME", scratch.path("stdout-name"))
        .run()
        .expect_code(0);
    assert_eq!(scratch.read("stdout-name"), "Bad file descriptor");
    let text = scratch.read("report.json");
    assert!(
        !text.contains("42-from-the-command"),
        "the command wrote into the report: {text}"
    );
    report_in(&scratch, "report.json");
    // So a command that writes there fails as it would without the tool, and output the tool
    // holds for a stdout that is closed is said to be lost.
    shell("\"$RETRY\" -n 1 -- env echo hi >&-")
        .run()
        .expect_code(1)
        .expect_stderr("Bad file descriptor");
    shell("\"$RETRY\" -n 1 --hold stdout -- echo hi >&-")
        .run()
        .expect_code(125)
        .expect_stderr("cannot write the held output to stdout: Bad file descriptor");
}

#[test]
fn memory_and_the_report_stay_bounded_however_many_attempts() {
    let scratch = Scratch::new();
    let peak_after = |attempts: u32| {
        let report = scratch.path(&format!("report-{attempts}.json"));
        let count = attempts.to_string();
        // Thousands of retries in a second are what the default budget is there to stop.
        let (run, peak) = retry(["-q", "--base", "0s", "--budget", "off", "-n", &count])
            .args(["--report", report.to_str().unwrap(), "--", "false"])
            .run_measuring_peak_rss();
        run.expect_code(1);
        assert!(peak > 0, "the tool's memory was never sampled\n{run}");
        peak
    };
    let (few, many) = (peak_after(100), peak_after(4000));
    assert!(
        many < few + 512,
        "the peak grew from {few} KiB after 100 attempts to {many} KiB after 4000"
    );
    let report = report_in(&scratch, "report-4000.json");
    assert_eq!(report["attempts"].as_array().map(Vec::len), Some(100));
    assert_eq!(report["attempts"][99]["attempt"], 4000);
    assert_eq!(report["attempts_total"], 4000);
    assert_eq!(report["attempts_omitted"], 3900);
    assert_eq!(report["statuses"], serde_json::json!({"1": 4000}));
}
