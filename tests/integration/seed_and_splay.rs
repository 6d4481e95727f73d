//! Kind to the service without a budget: `--seed host` repeats a job's waits and differs
//! between jobs, and `--splay` spreads the first attempts.

use crate::support::harness::retry;

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
