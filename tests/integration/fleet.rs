//! Kind to the service: `--seed host`, `--splay`, and the shared retry budget.

use crate::harness::{retry, sharing_budget, Scratch};

#[test]
fn seed_host_repeats_for_a_job_and_differs_between_jobs() {
    let plan = |command: &str| {
        retry([
            "--plan", "--seed", "host", "-n", "6", "--splay", "10m", "--", "curl", command,
        ])
        .run()
        .stdout()
    };
    assert_eq!(plan("https://a.example"), plan("https://a.example"));
    assert_ne!(plan("https://a.example"), plan("https://b.example"));
}

#[test]
fn splay_delays_the_first_attempt_within_its_bound() {
    // The same options, run and planned.
    let splayed = [
        "--log-format",
        "json",
        "-n",
        "1",
        "--splay",
        "300ms",
        "--seed",
        "3",
    ];
    let run = retry(splayed).args(["true"]).run();
    run.expect_code(0);
    let wait = &run.events_named("wait")[0];
    assert_eq!(
        (wait["before_attempt"].as_u64(), wait["cause"].as_str()),
        (Some(1), Some("splay"))
    );
    let splay = wait["wait_ms"].as_f64().unwrap();
    assert!(splay < 300.0, "{run}");
    let start = run.events_named("attempt_start")[0]["offset_ms"]
        .as_f64()
        .unwrap();
    assert!(
        start >= splay,
        "the first attempt started before its splay ended\n{run}"
    );
    let plan = retry(["--plan"]).args(splayed).run();
    assert!(
        plan.stdout().contains(&format!("\"wait_ms\":{splay}")),
        "the plan shows the same splay\n{plan}"
    );
}

#[test]
fn a_shared_budget_caps_the_retries_of_concurrent_runs() {
    let scratch = Scratch::new();
    let budgets = scratch.path("budgets");
    let runs: Vec<_> = (0..20)
        .map(|_| {
            sharing_budget("api.example.com", "5/1h", &budgets)
                .args(["-n", "3", "--base", "10ms", "--max-time", "3s"])
                .args(["--", "sh", "-c", "echo x >> \"$COUNTER\"; exit 1"])
                .env("COUNTER", scratch.path("count"))
                .spawn()
                .unwrap()
        })
        .collect();
    let mut reasons = Vec::new();
    for run in runs {
        let output = run.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        let done = stderr
            .lines()
            .find(|line| line.contains("\"event\":\"done\""))
            .unwrap_or_default();
        let done: serde_json::Value = serde_json::from_str(done).unwrap();
        assert!(
            done["elapsed_ms"].as_f64().unwrap() < 3000.0,
            "a run waited for a token: {done}"
        );
        let attempts = done["attempts"].as_u64().unwrap();
        reasons.push((attempts, done["reason"].as_str().unwrap().to_string()));
    }
    assert_eq!(
        scratch.lines("count"),
        20 + 5,
        "20 first attempts and 5 retries"
    );
    let retries: u64 = reasons.iter().map(|(attempts, _)| attempts - 1).sum();
    assert_eq!(retries, 5, "{reasons:?}");
    // A run refused a token gives up at once; one that got tokens may use up its -n 3 instead.
    for (attempts, reason) in &reasons {
        let expected = if *attempts < 3 { "budget" } else { "exhausted" };
        assert_eq!(reason, expected, "{reasons:?}");
    }
}

#[test]
fn a_corrupt_budget_file_is_recovered_with_one_warning() {
    let scratch = Scratch::new();
    let dir = scratch.path("budgets");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("api"), "not a budget\n").unwrap();
    let run = retry([
        "--budget",
        "api",
        "--budget-dir",
        dir.to_str().unwrap(),
        "-n",
        "2",
        "--base",
        "0s",
    ])
    .args(["sh", "-c", "[ $RETRY_ATTEMPT = 2 ]"])
    .run();
    run.expect_code(0)
        .expect_stderr("starting again from a full bucket");
    assert_eq!(run.stderr().matches("warning").count(), 1, "{run}");
    let state = std::fs::read_to_string(dir.join("api")).unwrap();
    assert!(
        state.starts_with("retry-budget-v1 9 "),
        "one token of 10 spent: {state}"
    );
}

#[test]
fn budget_names_that_could_leave_the_directory_are_refused() {
    for name in ["../escape", "a/b", "..", ".hidden"] {
        retry(["--budget", name, "true"])
            .run()
            .expect_code(125)
            .expect_stderr("--budget");
    }
}
