//! A budget's breaker across runs: it opens after enough runs gave up, keeps every run from the
//! service while open, lets exactly one probe through after its cool-down, and on a shared store
//! opens only for failures from enough hosts; a store that cannot be reached has none.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::support::harness::{
    Scratch, file_store, retry, set_budget, shell, shown_budget, wait_for,
};
use crate::support::http_service::HttpService;
use crate::support::redis_server::RedisServer;

/// An HTTP service that answers 503 until `healthy`, then 200.
fn service(healthy: &Arc<AtomicBool>) -> HttpService {
    let healthy = Arc::clone(healthy);
    HttpService::start(move |_| match healthy.load(Ordering::SeqCst) {
        true => "200 OK".into(),
        false => "503 Service Unavailable".into(),
    })
}

/// The breaker's state as `retry budget show` gives it.
fn breaker_state(store: &str) -> serde_json::Value {
    shown_budget("svc", store)["breaker"].clone()
}

/// One run against `service` sharing the budget `svc` in `store`, as `host`.
fn request(service: &HttpService, store: &str, host: &str) -> crate::support::harness::Run {
    retry([
        "-n",
        "2",
        "--base",
        "0s",
        "--budget",
        "svc",
        "--budget-store",
        store,
    ])
    .env("RETRY_HOST", host)
    .args(["--", "curl", "-fsS", "-o", "/dev/null", &service.url()])
    .run()
}

#[test]
fn twenty_failing_runs_open_it_and_the_service_sees_none_while_it_is_open() {
    let scratch = Scratch::new();
    let store = file_store(&scratch.path("budgets"));
    set_budget(
        "svc",
        &store,
        &["--rate", "100/1m", "--breaker", "5/1m", "--cool-down", "1h"],
    );
    let service = service(&Arc::default());
    let statuses: Vec<i32> = (0..20)
        .map(|_| request(&service, &store, "a").code().unwrap())
        .collect();
    assert_eq!(
        statuses[..5],
        [22; 5],
        "the first five give up (curl -f: 22)"
    );
    assert_eq!(
        statuses[5..],
        [75; 15],
        "then no attempt, exit 75 (EX_TEMPFAIL)"
    );
    assert_eq!(
        service.requests(),
        10,
        "two attempts each of the five, then none"
    );
    request(&service, &store, "a")
        .expect_code(75)
        .expect_stderr(
            "retry: no attempt: the breaker of the retry budget svc is open for another",
        );
    let open = retry([
        "--log-format",
        "json",
        "--budget",
        "svc",
        "--budget-store",
        &store,
    ])
    .args(["--", "curl", "-fsS", &service.url()])
    .run();
    open.expect_code(75);
    let done = open.event("done");
    assert_eq!(
        (done["reason"].as_str(), done["attempts"].as_u64()),
        (Some("breaker_open"), Some(0))
    );
    assert!(
        done["open_for_ms"].as_f64().unwrap() > 3_000_000.0,
        "{open}"
    );
    assert_eq!(breaker_state(&store)["state"], "open");
    assert_eq!(service.requests(), 10);
}

#[test]
fn after_the_cool_down_fifty_runs_started_together_make_exactly_one_request() {
    let scratch = Scratch::new();
    let store = file_store(&scratch.path("budgets"));
    set_budget(
        "svc",
        &store,
        &["--rate", "100/1m", "--breaker", "3/1m", "--cool-down", "1s"],
    );
    let healthy = Arc::new(AtomicBool::new(false));
    let service = service(&healthy);
    for _ in 0..3 {
        request(&service, &store, "a").expect_code(22);
    }
    assert_eq!(breaker_state(&store)["state"], "open");
    // The cool-down is the case under test: wait for the store to say it is over.
    wait_for("the cool-down's end", || {
        breaker_state(&store)["state"] == "half_open"
    });
    let fifty = shell(
        "for run in $(seq 50); do \
           (\"$RETRY\" -q -n 2 --base 0s --budget svc --budget-store \"$STORE\" \
              -- curl -fsS -o /dev/null \"$URL\"; echo $? > \"$OUT/$run\") & \
         done; wait",
    )
    .env("STORE", &store)
    .env("URL", service.url())
    .env("OUT", scratch.path(""))
    .run();
    fifty.expect_code(0);
    let mut statuses: Vec<String> = (1..=50).map(|run| scratch.read(&run.to_string())).collect();
    statuses.sort();
    assert_eq!(
        service.requests(),
        3 * 2 + 1,
        "exactly one probe, of one attempt"
    );
    assert_eq!(
        statuses
            .iter()
            .filter(|status| status.trim() == "22")
            .count(),
        1,
        "{statuses:?}"
    );
    assert_eq!(
        statuses
            .iter()
            .filter(|status| status.trim() == "75")
            .count(),
        49,
        "{statuses:?}"
    );
    // The probe failed: open again, for twice as long.
    let reopened = breaker_state(&store);
    assert_eq!(reopened["state"], "open");
    assert!(
        reopened["open_for_ms"].as_f64().unwrap() > 1_000.0,
        "{reopened}"
    );

    // A probe that succeeds closes it, and runs go through again.
    healthy.store(true, Ordering::SeqCst);
    wait_for("the cool-down's end", || {
        breaker_state(&store)["state"] == "half_open"
    });
    request(&service, &store, "a").expect_code(0);
    assert_eq!(breaker_state(&store)["state"], "closed");
    request(&service, &store, "a").expect_code(0);
    assert_eq!(service.requests(), 3 * 2 + 3);
}

#[test]
fn on_a_shared_store_one_hosts_failures_never_open_it() {
    let server = RedisServer::on_socket();
    let store = server.url().to_string();
    set_budget(
        "svc",
        &store,
        &[
            "--rate",
            "100/1m",
            "--breaker",
            "3/1m",
            "--breaker-hosts",
            "2",
            "--cool-down",
            "1h",
        ],
    );
    let service = service(&Arc::default());
    for _ in 0..10 {
        request(&service, &store, "host-a").expect_code(22);
    }
    assert_eq!(
        breaker_state(&store)["state"],
        "closed",
        "one broken host stops no one"
    );
    assert_eq!(service.requests(), 20);
    request(&service, &store, "host-b").expect_code(22);
    assert_eq!(
        breaker_state(&store)["state"],
        "open",
        "failures from two hosts"
    );
    request(&service, &store, "host-c").expect_code(75);
    assert_eq!(service.requests(), 22);
}

#[test]
fn a_store_that_cannot_be_reached_has_no_breaker() {
    let scratch = Scratch::new();
    let nowhere = format!(
        "redis://127.0.0.1:{}",
        crate::support::harness::server_port()
    );
    let service = service(&Arc::default());
    let run = retry([
        "-n",
        "2",
        "--base",
        "0s",
        "--log-format",
        "json",
        "--budget",
        "svc",
    ])
    .args(["--budget-store", &nowhere])
    .env("XDG_STATE_HOME", scratch.path("state"))
    .args(["--", "curl", "-fsS", "-o", "/dev/null", &service.url()])
    .run();
    run.expect_code(22);
    assert_eq!(run.event("done")["attempts"], 2, "{run}");
    assert_eq!(run.events_named("warning").len(), 1, "{run}");
}

#[test]
fn a_probe_gives_its_lease_back_on_every_end_it_lives_to_see() {
    let scratch = Scratch::new();
    let server = RedisServer::on_socket();
    let service = service(&Arc::default());
    for store in [
        file_store(&scratch.path("budgets")),
        server.url().to_string(),
    ] {
        set_budget(
            "svc",
            &store,
            &[
                "--rate",
                "100/1m",
                "--breaker",
                "1/1m",
                "--breaker-hosts",
                "1",
                "--cool-down",
                "1s",
            ],
        );
        request(&service, &store, "a").expect_code(22);
        let half_open = || {
            wait_for("the cool-down's end", || {
                breaker_state(&store)["state"] == "half_open"
            });
        };
        half_open();
        // A probe whose command cannot be found learns nothing of the service.
        retry(["--budget", "svc", "--budget-store", &store])
            .args(["--", "no-such-command-anywhere"])
            .run()
            .expect_code(127);
        assert_eq!(breaker_state(&store)["state"], "half_open", "{store}");
        // A probe stopped by SIGTERM (a cancelled CI job) gives its lease back too.
        let running = retry(["--log-format", "json", "--budget", "svc"])
            .args(["--budget-store", &store, "--", "sleep", "30"])
            .spawn();
        running.await_event("attempt_start");
        assert_eq!(breaker_state(&store)["state"], "probing", "{store}");
        running.signal(libc::SIGTERM);
        running.finish().expect_signal(libc::SIGTERM);
        assert_eq!(breaker_state(&store)["state"], "half_open", "{store}");
        // So the next run probes at once, rather than every run exiting 75 for ten minutes.
        let before = service.requests();
        request(&service, &store, "a").expect_code(22);
        assert_eq!(
            service.requests(),
            before + 1,
            "{store}: the probe's one attempt"
        );
    }
}

#[test]
fn a_run_kept_out_by_another_runs_probe_says_so() {
    let scratch = Scratch::new();
    let store = file_store(&scratch.path("budgets"));
    set_budget(
        "svc",
        &store,
        &["--rate", "100/1m", "--breaker", "1/1m", "--cool-down", "1s"],
    );
    let service = service(&Arc::default());
    request(&service, &store, "a").expect_code(22);
    wait_for("the cool-down's end", || {
        breaker_state(&store)["state"] == "half_open"
    });
    let probe = retry(["--log-format", "json", "--budget", "svc"])
        .args(["--budget-store", &store, "--", "sleep", "30"])
        .spawn();
    probe.await_event("attempt_start");
    request(&service, &store, "a")
        .expect_code(75)
        .expect_stderr(
            "retry: no attempt: the breaker of the retry budget svc is half open, and another run \
         is its probe (its lease ends in ",
        );
    probe.signal(libc::SIGTERM);
    probe.finish().expect_signal(libc::SIGTERM);
}
