//! The capabilities around a run together, with the real binary on both stores: a deadline
//! that has passed or not, a job free or held by another run, a breaker closed or open, and a
//! monitor that hears each run. Each run's status, reason and what its monitor hears come from
//! the precedence table (docs/reference.md), whatever the store.

use crate::support::harness::{Running, Scratch, at_the_gate, retry, wait_for};
use crate::support::monitor_service::MonitorService;
use crate::support::redis_server::RedisServer;

/// An attempt that says it began and waits at a gate the test opens.
const GATED: &str = concat!("echo started >> \"$STARTS\"; ", at_the_gate!());

/// A `RETRY_DEADLINE` a second in the past.
fn passed_deadline() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    (now.as_millis() - 1000).to_string()
}

/// The status, the reason and the start of the monitor's outcome request of a run that found
/// what it found, as the precedence table orders it.
fn expected(passed: bool, held: bool, open: bool) -> (i32, &'static str, &'static str) {
    match (passed, held, open) {
        (true, _, _) => (124, "deadline", "POST /u/124?"),
        (false, true, _) => (75, "overlap", "POST /u/log?"),
        (false, false, true) => (75, "breaker_open", "POST /u/75?"),
        (false, false, false) => (0, "success", "POST /u?"),
    }
}

#[test]
fn deadline_job_and_breaker_end_a_run_by_one_order_on_both_stores() {
    let server = RedisServer::on_loopback();
    for kind in ["file", "redis"] {
        let scratch = Scratch::new();
        let store = match kind {
            "file" => format!("file:{}", scratch.path("store").display()),
            _ => server.patient_url(),
        };
        let with_store = |args: &[&str]| retry(args).env("RETRY_BUDGET_STORE", &store);
        with_store(&["job", "set", "nightly", "--overlap", "skip"])
            .run()
            .expect_code(0);
        // A breaker that one run's give-up opens, on either store (one host is enough).
        for budget in ["closed", "open"] {
            with_store(&["budget", "set", budget, "--rate", "10/1m"])
                .args([
                    "--breaker",
                    "1/1m",
                    "--breaker-hosts",
                    "1",
                    "--cool-down",
                    "1h",
                ])
                .run()
                .expect_code(0);
        }
        // One run that gives up opens the breaker of the budget `open`.
        with_store(&["--budget", "open", "-n", "1", "--", "false"])
            .run()
            .expect_code(1);
        let monitor = MonitorService::answering();
        let run = |passed: bool, budget: &str| {
            let mut run = with_store(&["--log-format", "json", "--job", "nightly", "-n", "1"])
                .args(["--budget", budget, "--", "true"])
                .env(
                    "RETRY_MONITOR",
                    format!("healthchecks:{}", monitor.url("/u")),
                );
            if passed {
                run = run.env("RETRY_DEADLINE", passed_deadline());
            }
            run.run()
        };
        for held in [false, true] {
            let holder: Option<Running> = held.then(|| {
                let before = scratch.lines("starts");
                let holder = with_store(&["--job", "nightly", "-n", "1", "--budget", "off"])
                    .env("STARTS", scratch.path("starts"))
                    .env("GATE", scratch.path("gate"))
                    .args(["--", "sh", "-c", GATED])
                    .spawn();
                wait_for("the holder's attempt", || scratch.lines("starts") > before);
                holder
            });
            for passed in [false, true] {
                for open in [false, true] {
                    let budget = if open { "open" } else { "closed" };
                    let ran = run(passed, budget);
                    let (status, reason, heard) = expected(passed, held, open);
                    let cell = format!("{kind}: passed {passed}, held {held}, open {open}");
                    ran.expect_code(status);
                    assert_eq!(ran.event("done")["reason"], reason, "{cell}\n{ran}");
                    let last = monitor.requests().last().cloned().unwrap_or_default();
                    assert!(last.starts_with(heard), "{cell}: {last}");
                }
            }
            if let Some(holder) = holder {
                std::fs::write(scratch.path("gate"), "").unwrap();
                holder.finish().expect_code(0);
                std::fs::remove_file(scratch.path("gate")).unwrap();
            }
        }
    }
}
