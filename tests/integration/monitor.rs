//! Heartbeat monitors (`RETRY_MONITOR`): one start and one outcome per run whatever its attempts,
//! in each monitor's dialect, against a local stand-in that keeps every request; the output's
//! end in the outcome, within the monitor's limit; a job's tolerance of failed runs in a row; a
//! monitor that is down or hangs changes neither the status nor the output; and the URL, a
//! credential, never reaches the command, a message or the command line.

use crate::support::harness::{Scratch, at_the_gate, require_installed, retry};
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
    let requests = monitor.requests();
    let rid = query_value(&requests[0], "rid").unwrap().to_string();
    assert_ne!(rid, run_id, "the check-in is the run's own");
    assert_eq!(
        requests,
        [
            format!("POST /ping/s3cret-uuid/start?rid={rid}"),
            format!("POST /ping/s3cret-uuid?rid={rid}"),
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

/// The value of `key` in the query of `target`.
fn query_value<'t>(target: &'t str, key: &str) -> Option<&'t str> {
    let query = target.split_once('?')?.1;
    query
        .split('&')
        .find_map(|pair| pair.strip_prefix(key)?.strip_prefix('='))
}

#[test]
fn each_dialect_gets_its_own_pings_posted_with_a_check_in_of_the_runs_own() {
    // Each dialect, the path of its URL, the key of its check-in, and the requests it should
    // get for the run whose check-in is the one given.
    type Expected = fn(&str, &str) -> Vec<String>;
    let cases: [(&str, &str, &str, Expected); 3] = [
        ("cronitor", "/p/key/nightly", "series", |id, host| {
            vec![
                format!("POST /p/key/nightly?state=run&series={id}&host={host}"),
                format!(
                    "POST /p/key/nightly?state=fail&status_code=1&series={id}&host={host}&message=retry%3A%202%20attempts%2C%20reason%20exhausted%2C%20flaky%20no%2C%20exit%20status%201%0Athe%20last%20line%0A"
                ),
            ]
        }),
        (
            "sentry",
            "/api/1/cron/nightly/key/",
            "check_in_id",
            |id, _| {
                vec![
                    format!("POST /api/1/cron/nightly/key/?status=in_progress&check_in_id={id}"),
                    format!("POST /api/1/cron/nightly/key/?status=error&check_in_id={id}"),
                ]
            },
        ),
        ("betterstack", "/api/v1/heartbeat/tok", "", |_, _| {
            vec!["POST /api/v1/heartbeat/tok/1".to_string()]
        }),
    ];
    let host = nix::unistd::gethostname().unwrap().into_string().unwrap();
    let scratch = Scratch::new();
    for (dialect, path, key, expected) in cases {
        let monitor = MonitorService::answering();
        let run = retry(["-n", "2", "--base", "0s", "--", "sh", "-c"])
            .args(["echo \"$RETRY_RUN_ID\" > \"$RUN_ID\"; echo 'the last line'; exit 1"])
            .env("RUN_ID", scratch.path("run_id"))
            .env("RETRY_MONITOR", format!("{dialect}:{}", monitor.url(path)))
            .run();
        run.expect_code(1);
        let requests = monitor.requests();
        let id = query_value(&requests[0], key)
            .unwrap_or_default()
            .to_string();
        assert_eq!(requests, expected(&id, &host), "{dialect}");
        // The check-in is the run's own, never the RETRY_RUN_ID a nest of runs shares.
        let run_id = scratch.read("run_id").trim().to_string();
        assert!(
            key.is_empty() || (id.len() == 36 && id != run_id),
            "{id} {run_id}"
        );
        assert!(
            monitor
                .received()
                .iter()
                .all(|request| request.method == "POST")
        );
    }
}

/// A file store in `scratch` holding the job `nightly`, which alerts from its `runs`th failed
/// run in a row; its address.
fn job_alerting_after(scratch: &Scratch, runs: &str) -> String {
    let store = format!("file:{}", scratch.path("store").display());
    std::fs::create_dir(scratch.path("store")).unwrap();
    retry([
        "job",
        "set",
        "nightly",
        "--alert-after",
        runs,
        "--budget-store",
        &store,
    ])
    .run()
    .expect_code(0);
    store
}

#[test]
fn a_job_alerts_only_from_its_nth_failed_run_in_a_row() {
    let scratch = Scratch::new();
    let store = job_alerting_after(&scratch, "2");
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
    // Every run sends its start. The first failure is tolerated: the one ping that keeps a
    // Healthchecks check from alerting (a success: its timer runs from the last success or
    // failure, not from a /log), whose body says it failed.
    let (code, last, count) = run("exit 4");
    assert_eq!((code, count), (Some(4), 2));
    assert!(last.starts_with("POST /u?rid="), "{last}");
    let body = &monitor.received()[1].body;
    assert!(
        body.starts_with("retry: FAILED, tolerated: failed run 1 in a row; this job alerts from failed run 2 in a row"),
        "{body}"
    );
    assert!(body.contains("exit status 4"), "{body}");
    let (_, last, count) = run("exit 4");
    assert_eq!(count, 4);
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
    let received = monitor.received();
    let body = &received.last().unwrap().body;
    assert!(
        last.starts_with("POST /u?rid=") && body.starts_with("retry: FAILED, tolerated"),
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
fn a_monitor_that_cannot_be_used_is_said_and_the_command_runs_its_status_unchanged() {
    let scratch = Scratch::new();
    for (variable, value, why) in [
        (
            "RETRY_MONITOR",
            "healthcheck:https://example.com/s3cret".to_string(),
            "'healthcheck' is not a monitor's dialect",
        ),
        (
            "RETRY_MONITOR",
            "healthchecks:ftp://example.com/s3cret".to_string(),
            "must start with https:// or http://",
        ),
        (
            "RETRY_MONITOR_FILE",
            scratch.path("missing").display().to_string(),
            "cannot read the monitor from RETRY_MONITOR_FILE",
        ),
    ] {
        let run = retry(["--", "sh", "-c", "echo ran; exit 3"])
            .env(variable, value)
            .run();
        run.expect_code(3)
            .expect_stdout_contains("ran")
            .expect_stderr(why)
            .expect_stderr("the heartbeat monitor cannot be used");
        assert!(!run.stderr().contains("s3cret"), "{}", run.stderr());
        assert_eq!(run.stderr().matches("cannot be used").count(), 1, "{run}");
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
    assert!(
        requests[0].starts_with("POST /u/start?rid="),
        "{requests:?}"
    );
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
    let holder = run(concat!("touch \"$STARTED\"; ", at_the_gate!(), "; exit 4")).spawn();
    crate::support::harness::wait_for("the holder's attempt", || scratch.path("started").exists());
    let kept_out = run("true").run();
    kept_out.expect_code(75);
    assert_eq!(kept_out.event("done")["reason"], "overlap");
    // The tolerated failure's start and success, the holder's start, and the note.
    let requests = monitor.requests();
    assert_eq!(requests.len(), 4, "{requests:?}");
    assert!(requests[3].starts_with("POST /u/log?rid="), "{requests:?}");
    let body = &monitor.received()[3].body;
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

#[test]
fn healthchecks_reads_every_run_as_its_server_does() {
    let scratch = Scratch::new();
    let store = job_alerting_after(&scratch, "3");
    // A check that takes only POST, and keeps the first 2,000 bytes of a body.
    let monitor = MonitorService::healthchecks("2000");
    let run = |script: &str| {
        retry(["--job", "nightly", "-n", "1", "--", "sh", "-c", script])
            .env("RETRY_BUDGET_STORE", &store)
            .env(
                "RETRY_MONITOR",
                format!("healthchecks:{}", monitor.url("/u")),
            )
            .run()
    };
    run("true").expect_code(0);
    let check = monitor.check(true, 2000);
    assert_eq!(check.status, "up", "{check:?}");
    assert_eq!(
        check.timed, 1,
        "the run has its start, and a duration: {check:?}"
    );
    assert!(
        check.pings.iter().all(|(kind, ..)| kind != "ignored"),
        "{check:?}"
    );
    // A tolerated failure with much output: the check stays up, its timer starts anew from
    // it (a /log would not restart it), and the body it keeps ends with the output's end.
    let noisy = "seq 1 5000; echo 'the disk is full' >&2; exit 3";
    run(noisy).expect_code(3);
    let check = monitor.check(true, 2000);
    assert_eq!((check.status.as_str(), check.timed), ("up", 2), "{check:?}");
    assert_eq!(check.timer_from, Some(check.pings.len() - 1), "{check:?}");
    let (kind, _, kept) = check.pings.last().unwrap();
    assert_eq!(kind, "success");
    assert!(kept.starts_with("retry: FAILED, tolerated"), "{kept}");
    assert!(kept.ends_with("5000\nthe disk is full\n"), "{kept}");
    // The third failure in a row alerts, with the output's end in what the check keeps.
    run(noisy).expect_code(3);
    run(noisy).expect_code(3);
    let check = monitor.check(true, 2000);
    assert_eq!(
        (check.status.as_str(), check.timed),
        ("down", 4),
        "{check:?}"
    );
    assert!(
        check
            .pings
            .last()
            .unwrap()
            .2
            .ends_with("the disk is full\n")
    );
}

#[test]
fn a_run_inside_another_is_its_own_check_in_on_its_own_monitor() {
    let outer = MonitorService::answering();
    let inner = MonitorService::answering();
    // The inner run, given a monitor of its own, is repeated on each of the outer's attempts.
    let script = "RETRY_MONITOR=\"$INNER\" \"$RETRY\" -n 1 -- true; exit 1";
    retry(["-n", "2", "--base", "0s", "--", "sh", "-c", script])
        .env("RETRY", crate::support::harness::binary())
        .env(
            "INNER",
            format!("sentry:{}", inner.url("/api/1/cron/inner/key/")),
        )
        .env(
            "RETRY_MONITOR",
            format!("sentry:{}", outer.url("/api/1/cron/outer/key/")),
        )
        .run()
        .expect_code(1);
    for (monitor, check_ins) in [("outer", 1), ("inner", 2)] {
        let service = if monitor == "outer" { &outer } else { &inner };
        let seen = service.check_ins();
        assert!(seen.refused.is_empty(), "{monitor}: {seen:?}");
        assert_eq!(seen.by_id.len(), check_ins, "{monitor}: {seen:?}");
    }
    let both = [outer.check_ins().by_id, inner.check_ins().by_id];
    assert!(
        both[0].keys().all(|id| !both[1].contains_key(id)),
        "{both:?}"
    );
}
