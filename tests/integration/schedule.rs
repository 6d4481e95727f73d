//! A job's schedule (`retry job set --schedule`): a run of the job ends before the next slot, and
//! says so; `retry job show` and `--plan` show the slot.

use std::time::{SystemTime, UNIX_EPOCH};

use crate::support::harness::{Scratch, file_store, retry};

/// The Unix time now, in milliseconds.
fn now_ms() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis()
}

/// Set the schedule of the job `job` in `store`.
fn schedule(job: &str, store: &str, schedule: &str) {
    retry([
        "job",
        "set",
        job,
        "--schedule",
        schedule,
        "--budget-store",
        store,
    ])
    .run()
    .expect_code(0);
}

#[test]
fn a_schedule_is_kept_shown_with_its_next_slot_and_cleared() {
    let scratch = Scratch::new();
    let store = file_store(&scratch.path("store"));
    schedule("nightly", &store, "CRON_TZ=Asia/Tokyo 0 3 * * *");
    let shown = retry(["job", "show", "nightly", "--budget-store", &store])
        .args(["--log-format", "json"])
        .run();
    let shown: serde_json::Value = serde_json::from_str(&shown.stdout()).unwrap();
    assert_eq!(shown["schedule"], "CRON_TZ=Asia/Tokyo 0 3 * * *");
    let next = shown["next_slot"].as_str().unwrap();
    assert!(next.ends_with("T03:00:00+09:00[Asia/Tokyo]"), "{next}");
    schedule("nightly", &store, "none");
    let text = retry(["job", "show", "nightly", "--budget-store", &store]).run();
    assert!(!text.stdout().contains("schedule"), "{text}");
    let refused = retry(["job", "set", "nightly", "--schedule", "*/15 * * *"])
        .args(["--budget-store", &store])
        .run();
    refused
        .expect_code(125)
        .expect_stderr("--schedule '*/15 * * *' has 4 fields; cron has five");
}

#[test]
fn the_attempts_are_told_the_next_slot_as_their_deadline_and_the_plan_shows_it() {
    let scratch = Scratch::new();
    let store = file_store(&scratch.path("store"));
    schedule("minutely", &store, "* * * * *");
    let run = retry([
        "--job",
        "minutely",
        "--budget-store",
        &store,
        "--budget",
        "api",
    ])
    .args(["sh", "-c", "echo \"$RETRY_DEADLINE $(date +%s%3N)\""])
    .run();
    run.expect_code(0);
    let told: Vec<u128> = run
        .stdout()
        .split_whitespace()
        .map(|word| word.parse().unwrap())
        .collect();
    let (deadline, then) = (told[0], told[1]);
    // The next minute's boundary, to the millisecond the deadline is exported at.
    let boundary = (deadline + 5) / 60_000 * 60_000;
    assert!(deadline.abs_diff(boundary) <= 5, "{run}");
    assert!(then < deadline && deadline - then <= 60_000, "{run}");
    let plan = retry([
        "--plan",
        "--job",
        "minutely",
        "--budget-store",
        &store,
        "--budget",
    ])
    .args(["api", "-n", "3"])
    .run();
    plan.expect_code(0)
        .expect_stdout_contains(", from the next slot of the job's schedule at ");
}

#[test]
fn a_failing_run_is_retried_until_its_next_slot_and_never_past_it() {
    let scratch = Scratch::new();
    let store = file_store(&scratch.path("store"));
    schedule("minutely", &store, "* * * * *");
    // Cron's slots are whole minutes: start the run when the next is near enough for the
    // harness's time limit on a run (and never right at it).
    let mut started = now_ms();
    if !(2_000..=20_000).contains(&(60_000 - started % 60_000)) {
        let wait = (60_000 - started % 60_000 + 60_000 - 20_000) % 60_000;
        std::thread::sleep(std::time::Duration::from_millis(wait as u64));
        started = now_ms();
    }
    let next_slot = (started / 60_000 + 1) * 60_000;
    let report = scratch.path("report.json");
    let run = retry(["--job", "minutely", "--budget", "off"])
        .env("RETRY_BUDGET_STORE", &store)
        .args([
            "-n",
            "unlimited",
            "--base",
            "1s",
            "--cap",
            "1s",
            "--jitter",
            "none",
        ])
        .args(["--report", &format!("json:{}", report.display())])
        .args(["--log-format", "json", "false"])
        .run();
    let ended = now_ms();
    run.expect_code(1);
    assert!(
        ended <= next_slot + 1_000,
        "the run went past its slot\n{run}"
    );
    let done = run.event("done");
    assert_eq!(done["reason"], "deadline", "{run}");
    let deadline = run.event("deadline");
    assert_eq!(deadline["source"], "schedule", "{run}");
    assert_eq!(done["deadline"], "schedule", "{run}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(
        (&report["reason"], &report["deadline"]),
        (&"deadline".into(), &"schedule".into())
    );
}

#[test]
fn a_schedule_that_never_comes_is_said_and_the_run_goes_on_without_it() {
    let scratch = Scratch::new();
    let store = file_store(&scratch.path("store"));
    schedule("leap", &store, "0 3 * * *");
    // As a store another tool wrote could hold it: `retry job set` refuses it.
    let path = scratch.path("store/.jobs/leap");
    let mut written = std::fs::read(&path).unwrap();
    let at = written.len() - 256;
    let record = format!("{:<255}\n", "retry-job-schedule-v1 0 0 30 2 *");
    written.splice(at.., record.into_bytes());
    std::fs::write(&path, written).unwrap();
    let run = retry(["--job", "leap", "--budget", "off", "-n", "1", "true"])
        .env("RETRY_BUDGET_STORE", &store)
        .run();
    run.expect_code(0).expect_stderr(
        "job leap: its schedule cannot be used: '0 0 30 2 *' names no time that comes in the \
         next years; going on without it",
    );
}
