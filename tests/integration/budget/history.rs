//! A job's history of runs (`--job`), kept in the store its budget uses: clean, flaky and failed
//! runs counted on this machine's file store and on a Redis store every host adds to, shown by
//! `retry job history` with its pass rates; a history that cannot be kept changes nothing.

use std::path::Path;

use crate::support::harness::{Invocation, Scratch, retry};
use crate::support::redis_server::RedisServer;

/// A command that fails its first attempt and succeeds on its second.
const FLAKY: &str = "test \"$RETRY_ATTEMPT\" = 2";

/// A run of the job `job` of `script`, two attempts with no wait, keeping its state in `state`.
fn job_run(job: &str, state: &Path, script: &str) -> Invocation {
    retry(["-n", "2", "--base", "0s", "--job", job])
        .env("XDG_STATE_HOME", state)
        .args(["--", "sh", "-c", script])
}

/// `retry job history JOB` with `flags`, as JSON.
fn history(job: &str, state: &Path, flags: &[&str]) -> serde_json::Value {
    let shown = retry(["job", "history", job, "--log-format", "json"])
        .args(flags)
        .env("XDG_STATE_HOME", state)
        .run();
    shown.expect_code(0);
    serde_json::from_str(shown.stdout().trim()).unwrap()
}

#[test]
fn a_named_job_keeps_its_history_and_budget_history_shows_it() {
    let scratch = Scratch::new();
    let state = scratch.path("state");
    job_run("nightly", &state, FLAKY).run().expect_code(0);
    job_run("nightly", &state, "true").run().expect_code(0);
    job_run("nightly", &state, "exit 3").run().expect_code(3);
    job_run("nightly", &state, "true").run().expect_code(0);
    // A run without --job keeps none.
    retry(["--", "true"])
        .env("XDG_STATE_HOME", &state)
        .run()
        .expect_code(0);
    let shown = history("nightly", &state, &[]);
    assert_eq!(
        shown["recent"],
        serde_json::json!({"runs": 4, "clean": 2, "flaky": 1, "failed": 1})
    );
    assert_eq!(shown["sequence"], "fcxc");
    assert_eq!(shown["pass_rate"]["rate"], 0.5);
    let (low, high) = (
        shown["pass_rate"]["low"].as_f64().unwrap(),
        shown["pass_rate"]["high"].as_f64().unwrap(),
    );
    assert!(
        (low - 0.150).abs() < 1e-3 && (high - 0.850).abs() < 1e-3,
        "{shown}"
    );
    assert_eq!(shown["eventual_pass_rate"]["rate"], 0.75);
    let text = retry(["job", "history", "nightly"])
        .env("XDG_STATE_HOME", &state)
        .run();
    text.expect_code(0);
    text.expect_stdout_contains("passed at once    50% (95% interval 15% to 85%)");
    assert_eq!(history("never-ran", &state, &[])["recent"]["runs"], 0);
}

#[test]
fn on_a_shared_store_every_host_adds_to_one_history() {
    let server = RedisServer::on_socket();
    let scratch = Scratch::new();
    let state = scratch.path("state");
    for (host, script) in [("a", "true"), ("b", FLAKY), ("b", "exit 1")] {
        job_run("deploy", &state, script)
            .env("RETRY_HOST", host)
            .env("RETRY_BUDGET_STORE", server.url())
            .run();
    }
    // --budget-store names a job's store as RETRY_BUDGET_STORE does, without a named budget.
    retry(["--job", "deploy", "--budget-store", server.url(), "true"])
        .env("XDG_STATE_HOME", &state)
        .run()
        .expect_code(0);
    let shown = history("deploy", &state, &["--budget-store", server.url()]);
    assert_eq!(shown["sequence"], "cfxc", "{shown}");
    assert_eq!(shown["location"], "retry:budget:history:{deploy}");
    // Nothing went to the machine's own file store.
    assert_eq!(history("deploy", &state, &[])["recent"]["runs"], 0);
}

#[test]
fn a_history_that_cannot_be_kept_changes_nothing_and_is_said_once() {
    let scratch = Scratch::new();
    // A state directory that is a regular file: nothing can be made under it.
    let state = scratch.path("not-a-directory");
    std::fs::write(&state, "").unwrap();
    for (script, code) in [("true", 0), ("exit 3", 3)] {
        let run = job_run("nightly", &state, script).run();
        run.expect_code(code);
        let said = run
            .stderr()
            .matches("cannot keep the history of job nightly")
            .count();
        assert_eq!(said, 1, "{run}");
    }
}

#[test]
fn a_job_with_no_runs_kept_names_the_jobs_that_have_some() {
    let scratch = Scratch::new();
    let state = scratch.path("state");
    retry(["--job", "nightly-backup", "-n", "1", "--", "true"])
        .env("XDG_STATE_HOME", &state)
        .run()
        .expect_code(0);
    let shown = retry(["job", "history", "nightly-bakup"])
        .env("XDG_STATE_HOME", &state)
        .run();
    shown
        .expect_code(0)
        .expect_stdout_contains("no runs kept yet (jobs with runs kept here: nightly-backup)");
}
