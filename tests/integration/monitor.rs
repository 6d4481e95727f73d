//! Heartbeat monitors (`RETRY_MONITOR`): one start and one outcome per run whatever its attempts,
//! in each monitor's dialect, against a local stand-in that keeps every request; the output's
//! end in the outcome, within the monitor's limit; a job's tolerance of failed runs in a row; a
//! monitor that is down or hangs changes neither the status nor the output; and the URL, a
//! credential, never reaches the command, a message or the command line.

use crate::support::harness::{Scratch, require_installed, retry};
use crate::support::monitor_service::{Answer, MonitorService};

/// A command that fails its first attempt (saying so on stderr) and succeeds after, printing
/// what it sees of the tool's variables.
const FLAKY: &str = "if [ -e \"$MARK\" ]; then echo \"fine in $RETRY_RUN_ID\"; \
                     env | grep -c '^RETRY_MONITOR' || true; exit 0; fi; : > \"$MARK\"; \
                     echo 'first try failed' >&2; exit 1";

#[test]
fn a_flaky_run_is_one_start_and_one_success_that_says_it_was_flaky() {
    let scratch = Scratch::new();
    let monitor = MonitorService::answering();
    let run = retry(["-n", "3", "--base", "0s", "--", "sh", "-c", FLAKY])
        .env("MARK", scratch.path("mark"))
        .env(
            "RETRY_MONITOR",
            format!("healthchecks:{}", monitor.url("/ping/s3cret-uuid")),
        )
        .env_remove("RETRY_RUN_ID")
        .run();
    run.expect_code(0);
    let stdout = run.stdout();
    let run_id = stdout
        .lines()
        .next()
        .unwrap()
        .strip_prefix("fine in ")
        .unwrap();
    // The command saw no RETRY_MONITOR variable.
    assert_eq!(stdout.lines().nth(1), Some("0"), "{stdout}");
    assert!(!run.stderr().contains("s3cret"), "{}", run.stderr());
    assert_eq!(
        monitor.requests(),
        [
            format!("GET /ping/s3cret-uuid/start?rid={run_id}"),
            format!("POST /ping/s3cret-uuid?rid={run_id}"),
        ]
    );
    let body = &monitor.received()[1].body;
    assert!(
        body.starts_with("retry: 2 attempts, reason success, flaky yes, exit status 0\n"),
        "{body}"
    );
    assert!(body.contains(&format!("fine in {run_id}")), "{body}");
}

#[test]
fn a_run_that_gives_up_sends_the_status_the_tool_exits_with_and_its_outputs_end() {
    let monitor = MonitorService::start(|n| match n {
        0 => Answer::With("200 OK", vec!["Ping-Body-Limit: 200"]),
        _ => Answer::With("200 OK", vec![]),
    });
    let scratch = Scratch::new();
    let script = "seq 1 500; echo 'the last line' >&2; exit 3";
    let run = retry(["-n", "2", "--base", "0s", "--", "sh", "-c", script])
        .env(
            "RETRY_MONITOR_FILE",
            monitor_file(&scratch, &monitor, "healthchecks", "/uuid"),
        )
        .run();
    run.expect_code(3);
    // The command's own output is all there still.
    assert!(run.stdout().contains("\n250\n") && run.stdout().ends_with("500\n"));
    let requests = monitor.requests();
    assert_eq!(requests.len(), 2, "{requests:?}");
    assert!(requests[1].starts_with("POST /uuid/3?rid="), "{requests:?}");
    let body = &monitor.received()[1].body;
    assert!(body.len() <= 200, "{} bytes: {body}", body.len());
    assert!(
        body.starts_with("retry: 2 attempts, reason exhausted, flaky no, exit status 3\n["),
        "{body}"
    );
    assert!(body.ends_with("500\nthe last line\n"), "{body}");
}

/// A file in `scratch` that names `monitor` at `path`, in `dialect`.
fn monitor_file(
    scratch: &Scratch,
    monitor: &MonitorService,
    dialect: &str,
    path: &str,
) -> std::path::PathBuf {
    let file = scratch.path("monitor");
    std::fs::write(&file, format!("{dialect}:{}\n", monitor.url(path))).unwrap();
    file
}

#[test]
fn each_dialect_gets_its_own_pings_with_one_identity_for_the_run() {
    // Each dialect, the path of its URL, and the requests it should get for the run named.
    type Expected = fn(&str) -> Vec<String>;
    let cases: [(&str, &str, Expected); 3] = [
        ("cronitor", "/p/key/nightly", |id| {
            vec![
                format!("GET /p/key/nightly?state=run&series={id}"),
                format!(
                    "GET /p/key/nightly?state=fail&status_code=1&series={id}&message=retry%3A%202%20attempts%2C%20reason%20exhausted%2C%20flaky%20no%2C%20exit%20status%201"
                ),
            ]
        }),
        ("sentry", "/api/1/cron/nightly/key/", |id| {
            vec![
                format!("GET /api/1/cron/nightly/key/?status=in_progress&check_in_id={id}"),
                format!("GET /api/1/cron/nightly/key/?status=error&check_in_id={id}"),
            ]
        }),
        ("betterstack", "/api/v1/heartbeat/tok", |_| {
            vec!["POST /api/v1/heartbeat/tok/1".to_string()]
        }),
    ];
    for (dialect, path, expected) in cases {
        let monitor = MonitorService::answering();
        let run = retry([
            "-n",
            "2",
            "--base",
            "0s",
            "--",
            "sh",
            "-c",
            "echo $RETRY_RUN_ID; exit 1",
        ])
        .env("RETRY_MONITOR", format!("{dialect}:{}", monitor.url(path)))
        .env_remove("RETRY_RUN_ID")
        .run();
        run.expect_code(1);
        let id = run.stdout().lines().next().unwrap().to_string();
        assert_eq!(monitor.requests(), expected(&id), "{dialect}");
    }
}

#[test]
fn a_job_alerts_only_from_its_nth_failed_run_in_a_row() {
    let scratch = Scratch::new();
    let store = format!("file:{}", scratch.path("store").display());
    std::fs::create_dir(scratch.path("store")).unwrap();
    retry([
        "job",
        "set",
        "nightly",
        "--alert-after",
        "2",
        "--budget-store",
        &store,
    ])
    .run()
    .expect_code(0);
    let shown = retry(["job", "show", "nightly", "--budget-store", &store]).run();
    shown
        .expect_code(0)
        .expect_stdout_contains("alert    from 2 failed runs in a row");
    let monitor = MonitorService::answering();
    let run = |script: &str| {
        let run = retry(["--job", "nightly", "-n", "1", "--", "sh", "-c", script])
            .env("RETRY_BUDGET_STORE", &store)
            .env(
                "RETRY_MONITOR",
                format!("healthchecks:{}", monitor.url("/u")),
            )
            .run();
        let targets = monitor.requests();
        (
            run.code(),
            targets.last().cloned().unwrap_or_default(),
            targets.len(),
        )
    };
    // The first failure is a log entry, and no start is sent: a start without an end would
    // alert.
    let (code, last, count) = run("exit 4");
    assert_eq!((code, count), (Some(4), 1));
    assert!(last.starts_with("POST /u/log?rid="), "{last}");
    let (_, last, count) = run("exit 4");
    assert_eq!(count, 2);
    assert!(
        last.starts_with("POST /u/4?rid="),
        "the second in a row alerts: {last}"
    );
    let (_, last, _) = run("exit 4");
    assert!(
        last.starts_with("POST /u/4?rid="),
        "and every one after: {last}"
    );
    let (code, last, _) = run("true");
    assert_eq!(code, Some(0));
    assert!(last.starts_with("POST /u?rid="), "{last}");
    let (_, last, _) = run("exit 4");
    assert!(
        last.starts_with("POST /u/log?rid="),
        "a success starts the count over: {last}"
    );
}

#[test]
fn a_monitor_that_is_down_or_hangs_changes_neither_the_status_nor_the_output() {
    // Down: a port nothing listens on.
    let closed = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let url = format!(
        "healthchecks:http://127.0.0.1:{}/uuid",
        closed.local_addr().unwrap().port()
    );
    drop(closed);
    let run = retry(["--", "sh", "-c", "echo done"])
        .env("RETRY_MONITOR", &url)
        .run();
    run.expect_code(0).expect_stdout("done\n");
    run.expect_stderr("the monitor (127.0.0.1) was not told the run started");
    run.expect_stderr("was not told how the run ended");
    assert!(!run.stderr().contains("/uuid"), "{}", run.stderr());
    // Hanging (Better Stack has no start): every try of the outcome times out, and the run
    // still ends with its own status.
    let monitor = MonitorService::start(|_| Answer::Hang);
    let run = retry(["-n", "1", "--", "sh", "-c", "echo failed; exit 6"])
        .env(
            "RETRY_MONITOR",
            format!("betterstack:{}", monitor.url("/tok")),
        )
        .run();
    run.expect_code(6).expect_stdout("failed\n");
    run.expect_stderr("was not told how the run ended");
    // A monitor that answers 5xx is tried three times, then said.
    let monitor = MonitorService::start(|_| Answer::With("503 Service Unavailable", vec![]));
    let run = retry(["--", "true"])
        .env(
            "RETRY_MONITOR",
            format!("betterstack:{}", monitor.url("/tok")),
        )
        .run();
    run.expect_code(0)
        .expect_stderr("it answered 503 (tried 3 times)");
    assert_eq!(monitor.requests().len(), 3);
}

#[test]
fn a_signal_ends_the_wait_for_a_hanging_monitor() {
    let monitor = MonitorService::start(|_| Answer::Hang);
    let running = retry(["--log-format", "json", "--", "true"])
        .env(
            "RETRY_MONITOR",
            format!("betterstack:{}", monitor.url("/tok")),
        )
        .spawn();
    running.await_event("attempt_end");
    crate::support::harness::wait_for("the outcome's request", || !monitor.received().is_empty());
    running.signal(libc::SIGTERM);
    running.finish().expect_signal(libc::SIGTERM);
}

#[test]
fn a_bad_monitor_is_the_tools_own_error_and_never_repeated() {
    for (value, why) in [
        (
            "nagios:https://example.com/s3cret",
            "'nagios' is not a monitor's dialect",
        ),
        (
            "healthchecks:ftp://example.com/s3cret",
            "must start with https:// or http://",
        ),
    ] {
        let run = retry(["--", "true"]).env("RETRY_MONITOR", value).run();
        run.expect_code(125)
            .expect_stderr(why)
            .expect_stderr("RETRY_MONITOR");
        assert!(!run.stderr().contains("s3cret"), "{}", run.stderr());
    }
}

#[test]
fn without_a_monitor_a_run_opens_no_network_socket() {
    require_installed("strace");
    let scratch = Scratch::new();
    let trace = scratch.path("trace");
    let run = crate::support::harness::program("strace")
        .args(["-f", "-e", "trace=socket,connect", "-o"])
        .args([
            trace.display().to_string(),
            crate::support::harness::binary(),
        ])
        .args(["--", "true"])
        .env_remove("RETRY_MONITOR")
        .run();
    run.expect_code(0);
    let traced = scratch.read("trace");
    assert!(
        !traced.contains("AF_INET"),
        "a socket of the network was opened:\n{traced}"
    );
}

#[test]
fn a_run_an_open_breaker_kept_out_alerts_with_75_and_sends_no_start() {
    let scratch = Scratch::new();
    let store = format!("file:{}", scratch.path("budgets").display());
    std::fs::create_dir(scratch.path("budgets")).unwrap();
    retry([
        "budget",
        "set",
        "svc",
        "--budget-store",
        &store,
        "--rate",
        "10/1m",
    ])
    .args(["--breaker", "1/1m", "--cool-down", "1h"])
    .run()
    .expect_code(0);
    let monitor = MonitorService::answering();
    let run = || {
        retry([
            "--budget",
            "svc",
            "--budget-store",
            &store,
            "-n",
            "1",
            "--",
            "false",
        ])
        .env(
            "RETRY_MONITOR",
            format!("healthchecks:{}", monitor.url("/u")),
        )
        .run()
    };
    run().expect_code(1);
    run().expect_code(75);
    let requests = monitor.requests();
    assert_eq!(requests.len(), 3, "{requests:?}");
    assert!(requests[0].starts_with("GET /u/start?rid="), "{requests:?}");
    assert!(requests[1].starts_with("POST /u/1?rid="), "{requests:?}");
    assert!(
        requests[2].starts_with("POST /u/75?rid="),
        "no attempt, no start: {requests:?}"
    );
    let body = &monitor.received()[2].body;
    assert!(
        body.starts_with("retry: 0 attempts, reason breaker_open"),
        "{body}"
    );
}

#[test]
fn a_run_another_run_of_its_job_kept_out_is_a_note_and_no_failure_of_the_job() {
    let scratch = Scratch::new();
    let store = format!("file:{}", scratch.path("store").display());
    std::fs::create_dir(scratch.path("store")).unwrap();
    let set = ["--overlap", "skip", "--alert-after", "2"];
    retry(["job", "set", "nightly", "--budget-store", &store])
        .args(set)
        .run()
        .expect_code(0);
    let monitor = MonitorService::answering();
    let run = |script: &str| {
        retry(["--job", "nightly", "-n", "1", "--log-format", "json"])
            .args(["--", "sh", "-c", script])
            .env("RETRY_BUDGET_STORE", &store)
            .env("GATE", scratch.path("gate"))
            .env("STARTED", scratch.path("started"))
            .env(
                "RETRY_MONITOR",
                format!("healthchecks:{}", monitor.url("/u")),
            )
    };
    // One failure, tolerated: a note.
    run("exit 4").run().expect_code(4);
    // A run in progress keeps the next out, which exits 75 and is only a note.
    let holder =
        run("touch \"$STARTED\"; while [ ! -e \"$GATE\" ]; do sleep 0.01; done; exit 4").spawn();
    crate::support::harness::wait_for("the holder's attempt", || scratch.path("started").exists());
    let kept_out = run("true").run();
    kept_out.expect_code(75);
    assert_eq!(kept_out.event("done")["reason"], "overlap");
    let requests = monitor.requests();
    assert_eq!(requests.len(), 2, "{requests:?}");
    assert!(requests[1].starts_with("POST /u/log?rid="), "{requests:?}");
    let body = &monitor.received()[1].body;
    assert!(body.contains("reason overlap"), "{body}");
    // The run kept out was not the job's second failure: the holder's failure is.
    std::fs::write(scratch.path("gate"), "").unwrap();
    holder.finish().expect_code(4);
    let requests = monitor.requests();
    assert!(
        requests.last().unwrap().starts_with("POST /u/4?rid="),
        "{requests:?}"
    );
    let history = retry(["job", "history", "nightly", "--log-format", "json"])
        .env("RETRY_BUDGET_STORE", &store)
        .run();
    history.expect_code(0);
    let history: serde_json::Value = serde_json::from_str(history.stdout().trim()).unwrap();
    assert_eq!(history["totals"]["runs"], 2, "{history}");
}
