//! Stress: many concurrent runs sharing a budget, some stopped by SIGTERM at random moments.

use std::time::Duration;

use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};

use crate::support::harness::{Scratch, file_store, process_exists, set_budget, sharing_budget};

const RUNS: usize = 100;
const TOKENS: f64 = 1000.0;

#[test]
fn concurrent_runs_leave_nothing_behind_and_lose_no_budget_update() {
    let scratch = Scratch::new();
    let budgets = scratch.path("budgets");
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(2026);
    // A period of 100000 hours: the bucket regains nothing measurable meanwhile.
    set_budget("stress", &file_store(&budgets), &["--rate", "1000/100000h"]);
    let tools: Vec<_> = (0..RUNS)
        .map(|_| {
            sharing_budget("stress", None, &budgets)
                .args(["-n", "5", "--base", "1ms", "--jitter", "none"])
                .args(["--", "sh", "-c", "echo $$ >> \"$PIDS\"; sleep 0.02; exit 1"])
                .env("PIDS", scratch.path("pids"))
                .spawn()
        })
        .collect();
    // SIGTERM every third run, one after another at random intervals of a few milliseconds.
    // The random pauses set the moments of the signals; nothing waits on them.
    for tool in tools.iter().step_by(3) {
        std::thread::sleep(Duration::from_millis(rng.random_range(0..5)));
        tool.signal(libc::SIGTERM);
    }
    let (mut reservations, mut stopped) = (0, 0);
    for tool in tools {
        let run = tool.finish();
        stopped += usize::from(run.signal() == Some(libc::SIGTERM));
        // A token is reserved exactly when a retry's wait is announced, and it is announced
        // before any signal is acted on.
        reservations += run.events_named("wait").len();
    }
    for pid in scratch.read("pids").lines() {
        let pid: i32 = pid.parse().unwrap();
        assert!(!process_exists(pid), "attempt {pid} outlived its run");
    }
    let state = std::fs::read_to_string(budgets.join("stress")).unwrap();
    let tokens: f64 = state.split_whitespace().nth(1).unwrap().parse().unwrap();
    assert!(reservations > 0, "no retry took a token");
    assert!(stopped > 0, "no run was stopped by SIGTERM mid-way");
    assert!(
        (tokens - (TOKENS - reservations as f64)).abs() < 0.01,
        "{reservations} tokens taken, but the bucket holds {tokens} of {TOKENS}"
    );
}
