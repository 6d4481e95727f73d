//! A `--retry-on` rule's limit (`124:max=1`): the retries it gives in a run, and the rules below
//! it deciding once it is spent.

use crate::support::harness::{Scratch, exiting_in_turn, retry};

/// Run `--retry-on 124:max=1 --retry-on 7` over `statuses`, reporting in JSON.
fn limited_run(statuses: &[i32]) -> crate::support::harness::Run {
    let scratch = Scratch::new();
    let line = exiting_in_turn(&scratch, statuses);
    let args = [
        "--log-format",
        "json",
        "--base",
        "0s",
        "--retry-on",
        "124:max=1",
    ];
    retry(args)
        .args(["--retry-on", "7", "--shell", &line])
        .run()
}

#[test]
fn a_spent_limit_stops_the_run_and_names_the_rule() {
    let run = limited_run(&[124, 124, 7, 0]);
    run.expect_code(124);
    let ends = run.events_named("attempt_end");
    assert_eq!(ends.len(), 2, "{run}");
    assert_eq!(ends[0]["rule"], "--retry-on 124:max=1", "{run}");
    assert_eq!(ends[1]["verdict"], "stop", "{run}");
    assert_eq!(ends[1]["rule_spent"], "--retry-on 124:max=1", "{run}");
    assert_eq!(run.event("done")["reason"], "not_retryable", "{run}");
}

#[test]
fn a_limit_counts_only_its_own_rules_retries() {
    let run = limited_run(&[7, 124, 124, 0]);
    run.expect_code(124);
    assert_eq!(run.events_named("attempt_end").len(), 3, "{run}");
}

#[test]
fn the_give_up_line_and_the_report_name_the_spent_rule() {
    let scratch = Scratch::new();
    let line = exiting_in_turn(&scratch, &[124, 124]);
    let report = scratch.path("report.json");
    let target = format!("json:{}", report.display());
    let run = retry([
        "--base",
        "0s",
        "--retry-on",
        "124:max=1",
        "--report",
        &target,
    ])
    .args(["--shell", &line])
    .run();
    run.expect_code(124).expect_stderr(
        "giving up after 2 attempts: exit status 124 is not retried: --retry-on 124:max=1 has \
         given all its retries; below it, --retry-on names what is retried, and not this",
    );
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let attempts = report["attempts"].as_array().unwrap();
    assert_eq!(attempts[0]["rule_spent"], serde_json::Value::Null);
    assert_eq!(attempts[1]["rule_spent"], "--retry-on 124:max=1");
}
