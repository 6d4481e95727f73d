//! One run's "slow down" reaches the others: a wait a command asked for (here a real server's
//! `Retry-After`, as curl shows it) holds every run that shares the budget, on this machine's
//! default budget and on a Redis store a fleet shares.

use std::path::Path;
use std::time::Duration;

use crate::support::harness::{Invocation, Scratch, retry};
use crate::support::http_service::HttpService;
use crate::support::redis_server::RedisServer;

/// A service that answers its first request 429 with `Retry-After: 5`, and every later one 503.
fn slowing_service() -> HttpService {
    HttpService::start(|number| match number {
        0 => "429 Too Many Requests\r\nRetry-After: 5".into(),
        _ => "503 Service Unavailable".into(),
    })
}

/// A run of two attempts of `curl -v` (which shows the headers the preset reads) against
/// `service`, with JSON events and `budget` options, keeping its default budgets in `state`.
fn request(service: &HttpService, state: &Path, budget: &[&str]) -> Invocation {
    retry([
        "--log-format",
        "json",
        "--preset",
        "auto",
        "-n",
        "2",
        "--base",
        "0s",
    ])
    .args(budget)
    .env("XDG_STATE_HOME", state)
    .args([
        "--",
        "curl",
        "-fsS",
        "-v",
        "-o",
        "/dev/null",
        &service.url(),
    ])
}

/// The first run is told to wait 5 s; a second run sharing its budget, whose own answer asked
/// for nothing, waits out the rest of it before its retry, and its retry reaches the service no
/// sooner than 5 s after the 429. `retry budget show` with `shown` (when given) says meanwhile
/// for how long the budget holds retries.
fn a_second_run_waits_out_the_first_runs_retry_after(budget: &[&str], shown: &[&str]) {
    let scratch = Scratch::new();
    let service = slowing_service();
    let first = request(&service, &scratch.path("state"), budget).spawn();
    let wait = first.await_event("wait");
    assert_eq!(wait["cause"], "requested", "{wait}");
    if !shown.is_empty() {
        let show = retry(["budget", "show", "--log-format", "json"])
            .args(shown)
            .run();
        show.expect_code(0);
        let show: serde_json::Value = serde_json::from_str(show.stdout().trim()).unwrap();
        let held = show["state"]["held_for_ms"].as_f64().unwrap();
        assert!(held > 0.0 && held <= 5000.0, "{show}");
    }
    let second = request(&service, &scratch.path("state"), budget).run();
    second.expect_code(22);
    let wait = &second.events_named("wait")[0];
    assert_eq!(wait["cause"], "shared", "{second}");
    assert!(wait["wait_ms"].as_f64().unwrap() > 0.0, "{second}");
    first.finish().expect_code(22);
    let arrivals = service.arrivals();
    assert_eq!(arrivals.len(), 4, "two runs of two attempts each");
    // Arrivals in order: the 429, the second run's first attempt, then both retries.
    let told = arrivals[0];
    for retried in &arrivals[2..] {
        assert!(
            retried.duration_since(told) >= Duration::from_secs(5) - Duration::from_millis(50),
            "a retry came {:?} after the 429",
            retried.duration_since(told)
        );
    }
}

#[test]
fn on_the_default_budget_a_second_run_waits_out_the_first_runs_retry_after() {
    a_second_run_waits_out_the_first_runs_retry_after(&[], &[]);
}

#[test]
fn on_a_shared_store_a_second_run_waits_out_the_first_runs_retry_after() {
    let server = RedisServer::on_socket();
    let store = ["--budget-store", server.url()];
    a_second_run_waits_out_the_first_runs_retry_after(
        &["--budget", "api", store[0], store[1]],
        &["api", store[0], store[1]],
    );
}

#[test]
fn with_the_budget_off_a_second_run_does_not_wait() {
    let scratch = Scratch::new();
    let service = slowing_service();
    let off = ["--budget", "off"];
    let first = request(&service, &scratch.path("state"), &off).spawn();
    first.await_event("wait");
    let second = request(&service, &scratch.path("state"), &off).run();
    second.expect_code(22);
    let wait = &second.events_named("wait")[0];
    assert_eq!(
        (wait["cause"].as_str(), wait["wait_ms"].as_f64()),
        (Some("backoff"), Some(0.0)),
        "{second}"
    );
    first.finish().expect_code(22);
}
