//! One run of a job at a time (`retry job set JOB --overlap skip|wait`): on this machine by a
//! lock the kernel gives back when its holder dies, and across machines by a lease on a shared
//! Redis store that a killed run's time ends. Each run's command says when it starts and waits
//! at a gate the test opens, so that "in progress" is an event the test waits for, never a
//! sleep.

use std::net::TcpListener;
use std::path::Path;

use crate::support::harness::{Invocation, Running, Scratch, at_the_gate, retry, wait_for};
use crate::support::redis_fleet::redis_cli;
use crate::support::redis_server::RedisServer;

/// The start of the one warning of a run of the job nightly whose terms cannot be read.
const TERMS_UNREAD: &str =
    "job nightly: its terms (--overlap, --alert-after, --schedule: retry job set) cannot be read";

/// An attempt: say so in `$STARTS`, wait at the gate, end.
const GATED: &str = concat!("echo \"$RETRY_RUN_ID\" >> \"$STARTS\"; ", at_the_gate!());

/// A run of the job `job` in `store`, one attempt, with JSON events; the test adds its flags.
fn job_run(job: &str, store: &str, scratch: &Scratch) -> Invocation {
    retry(["--log-format", "json", "-n", "1", "--job", job])
        .env("RETRY_BUDGET_STORE", store)
        .env("XDG_STATE_HOME", scratch.path("state"))
        .env("STARTS", scratch.path("starts"))
        .env("GATE", scratch.path("gate"))
}

/// `retry job set JOB --overlap OVERLAP` in `store`.
fn set_overlap(job: &str, overlap: &str, store: &str) {
    retry(["job", "set", job, "--overlap", overlap])
        .env("RETRY_BUDGET_STORE", store)
        .run()
        .expect_code(0);
}

/// A gated run of `job`, returned once its attempt has begun.
fn holding(job: &str, store: &str, scratch: &Scratch) -> Running {
    let before = scratch.lines("starts");
    let running = job_run(job, store, scratch)
        .args(["--", "sh", "-c", GATED])
        .spawn();
    wait_for("the holding run's attempt", || {
        scratch.lines("starts") > before
    });
    running
}

/// The file store in `dir`.
fn file_store(dir: &Path) -> String {
    format!("file:{}", dir.display())
}

#[test]
fn a_second_run_of_a_job_skips_with_75_or_waits_for_the_first() {
    let scratch = Scratch::new();
    let store = file_store(&scratch.path("store"));
    // By default runs overlap.
    let first = holding("nightly", &store, &scratch);
    job_run("nightly", &store, &scratch)
        .args(["--", "true"])
        .run()
        .expect_code(0);
    std::fs::write(scratch.path("gate"), "").unwrap();
    first.finish().expect_code(0);
    std::fs::remove_file(scratch.path("gate")).unwrap();

    set_overlap("nightly", "skip", &store);
    let first = holding("nightly", &store, &scratch);
    let skipped = job_run("nightly", &store, &scratch)
        .args(["--", "sh", "-c", "echo ran >> \"$STARTS\""])
        .run();
    skipped.expect_code(75);
    let done = skipped.event("done");
    assert_eq!(
        (done["reason"].as_str(), done["attempts"].as_u64()),
        (Some("overlap"), Some(0))
    );
    assert_eq!(
        scratch.lines("starts"),
        2,
        "the skipped run made no attempt"
    );

    // Waiting: the second run's attempt begins only after the first has ended.
    set_overlap("nightly", "wait", &store);
    let waiting = job_run("nightly", &store, &scratch)
        .args(["--", "sh", "-c", "echo second >> \"$STARTS\""])
        .spawn();
    std::fs::write(scratch.path("gate"), "").unwrap();
    let first = first.finish();
    first.expect_code(0);
    waiting.finish().expect_code(0);
    let starts = scratch.read("starts");
    assert!(starts.ends_with("second\n"), "{starts}");
    // ... and a wait ends at the run's deadline, with no attempt, as the deadline ends a run.
    std::fs::remove_file(scratch.path("gate")).unwrap();
    let holder = holding("nightly", &store, &scratch);
    let late = job_run("nightly", &store, &scratch)
        .args(["--max-time", "300ms", "--", "true"])
        .run();
    late.expect_code(124);
    assert_eq!(late.event("done")["reason"], "deadline");
    std::fs::write(scratch.path("gate"), "").unwrap();
    holder.finish().expect_code(0);
}

#[test]
fn a_run_that_waits_for_its_job_says_so_and_a_signal_ends_the_wait() {
    let scratch = Scratch::new();
    let store = file_store(&scratch.path("store"));
    set_overlap("nightly", "wait", &store);
    let holder = holding("nightly", &store, &scratch);
    let waiting = job_run("nightly", &store, &scratch)
        .args(["--", "true"])
        .spawn();
    assert_eq!(waiting.await_event("job_wait")["job"], "nightly");
    waiting.signal(libc::SIGTERM);
    let ended = waiting.finish();
    ended.expect_signal(libc::SIGTERM);
    let done = ended.event("done");
    assert_eq!(
        (done["reason"].as_str(), done["attempts"].as_u64()),
        (Some("interrupted"), Some(0))
    );
    // In words, with -v: the wait, then where the signal caught the run.
    let waiting = retry(["-v", "-n", "1", "--job", "nightly", "true"])
        .env("RETRY_BUDGET_STORE", &store)
        .env("XDG_STATE_HOME", scratch.path("state"))
        .spawn();
    waiting.await_stderr("retry: another run of job nightly is in progress; waiting for it to end");
    waiting.signal(libc::SIGTERM);
    waiting
        .finish()
        .expect_stderr("stopped by SIGTERM after 0 attempts, while waiting for its job's turn");
    std::fs::write(scratch.path("gate"), "").unwrap();
    holder.finish().expect_code(0);
}

/// A `RETRY_DEADLINE` a second in the past, as an outer run whose time ran out hands it on.
fn passed_deadline() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    (now.as_millis() - 1000).to_string()
}

#[test]
fn a_run_whose_deadline_has_passed_ends_124_whether_or_not_its_job_is_held() {
    let server = RedisServer::on_loopback();
    for store in ["file", "redis"] {
        let scratch = Scratch::new();
        let store = match store {
            "file" => file_store(&scratch.path("store")),
            _ => server.patient_url(),
        };
        for overlap in ["skip", "wait"] {
            set_overlap("nightly", overlap, &store);
            let late = || {
                job_run("nightly", &store, &scratch)
                    .env("RETRY_DEADLINE", passed_deadline())
                    .args(["--", "sh", "-c", "echo late >> \"$STARTS\""])
                    .run()
            };
            // The job free, and held by another run: the same end.
            let free = late();
            free.expect_code(124);
            assert_eq!(
                free.event("done")["reason"],
                "deadline",
                "{store} {overlap}"
            );
            let holder = holding("nightly", &store, &scratch);
            let held = late();
            held.expect_code(124);
            assert_eq!(
                held.event("done")["reason"],
                "deadline",
                "{store} {overlap}"
            );
            std::fs::write(scratch.path("gate"), "").unwrap();
            holder.finish().expect_code(0);
            std::fs::remove_file(scratch.path("gate")).unwrap();
        }
        assert!(!scratch.read("starts").contains("late"), "{store}");
    }
}

/// An attempt that, told to stop, goes on until the gate opens: cleaning up, say. (It leaves
/// the run's output, which the test reads to its end once the run is gone.)
const STUBBORN: &str = concat!(
    "exec >/dev/null 2>&1; trap 'echo told >> \"$STARTS\"' TERM; ",
    "echo \"$RETRY_RUN_ID\" >> \"$STARTS\"; ",
    at_the_gate!()
);

#[test]
fn a_killed_holders_attempt_keeps_the_machine_lock_until_it_ends() {
    let scratch = Scratch::new();
    let store = file_store(&scratch.path("store"));
    set_overlap("backup", "skip", &store);
    let holder = job_run("backup", &store, &scratch)
        .args(["--", "sh", "-c", STUBBORN])
        .spawn();
    wait_for("the holder's attempt", || scratch.lines("starts") == 1);
    holder.signal(libc::SIGKILL);
    assert_eq!(holder.finish().signal(), Some(libc::SIGKILL));
    // Its attempt lives on, told to stop: the job is still held, as flock(1) hands its lock
    // to its command.
    let kept_out = job_run("backup", &store, &scratch)
        .args(["--", "true"])
        .run();
    kept_out.expect_code(75);
    assert_eq!(kept_out.event("done")["reason"], "overlap");
    // Once the attempt has ended, the job is free: a run that waits for it starts.
    set_overlap("backup", "wait", &store);
    let waiting = job_run("backup", &store, &scratch)
        .args(["--max-time", "1m", "--", "true"])
        .spawn();
    std::fs::write(scratch.path("gate"), "").unwrap();
    waiting.finish().expect_code(0);
}

#[test]
fn a_jobs_hold_belongs_to_its_run_and_the_runs_inside_its_attempts_on_both_stores() {
    let server = RedisServer::on_loopback();
    for kind in ["file", "redis"] {
        let scratch = Scratch::new();
        let store = match kind {
            "file" => file_store(&scratch.path("store")),
            _ => server.patient_url(),
        };
        for overlap in ["skip", "wait"] {
            set_overlap("deploy", overlap, &store);
            // A run of the job inside the holder's attempt is part of that run and goes
            // ahead, directly and through a retry that names no job.
            let nested = "\"$RETRY\" -n 1 --job deploy -- sh -c 'echo inner >> \"$STARTS\"' && \
                          \"$RETRY\" -n 1 -- \"$RETRY\" -n 1 --job deploy -- \
                          sh -c 'echo innermost >> \"$STARTS\"'";
            job_run("deploy", &store, &scratch)
                .env("RETRY", crate::support::harness::binary())
                .args(["--max-time", "1m", "--", "sh", "-c", nested])
                .run()
                .expect_code(0);
            let starts = scratch.read("starts");
            assert!(
                starts.ends_with("inner\ninnermost\n"),
                "{kind} {overlap}: {starts}"
            );
        }
        // Two runs that share one RETRY_RUN_ID (siblings inside one outer run, or a copy of
        // what `retry job show` prints) are two runs: one holds the job, the other is kept
        // out, and a third may start only once the holder has given the job back.
        set_overlap("deploy", "skip", &store);
        let shared_id = "0f0e0d0c-0b0a-4908-8706-050403020100";
        let before = scratch.lines("starts");
        let first = job_run("deploy", &store, &scratch)
            .env("RETRY_RUN_ID", shared_id)
            .args(["--", "sh", "-c", GATED])
            .spawn();
        wait_for("the first run's attempt", || {
            scratch.lines("starts") > before
        });
        let second = job_run("deploy", &store, &scratch)
            .env("RETRY_RUN_ID", shared_id)
            .args(["--", "true"])
            .run();
        second.expect_code(75);
        assert_eq!(second.event("done")["reason"], "overlap", "{kind}");
        std::fs::write(scratch.path("gate"), "").unwrap();
        first.finish().expect_code(0);
        job_run("deploy", &store, &scratch)
            .args(["--", "true"])
            .run()
            .expect_code(0);
    }
}

#[test]
fn on_redis_one_host_of_three_runs_and_a_killed_holders_attempt_keeps_the_lease() {
    let server = RedisServer::on_loopback();
    let store = server.patient_url();
    let scratch = Scratch::new();
    set_overlap("sync", "skip", &store);
    // Three hosts at once: one runs, two skip.
    let runs: Vec<Running> = ["web-1", "web-2", "web-3"]
        .into_iter()
        .map(|host| {
            job_run("sync", &store, &scratch)
                .env("RETRY_HOST", host)
                .args(["--", "sh", "-c", GATED])
                .spawn()
        })
        .collect();
    // Each run either starts its attempt or ends with no attempt; only then is the gate
    // opened, so that no run could find the job free after another's end.
    let firsts: Vec<String> = runs
        .iter()
        .map(|run| run.await_any_event(&["attempt_start", "done"])["event"].to_string())
        .collect();
    let shown = retry(["job", "show", "sync", "--log-format", "json"])
        .env("RETRY_BUDGET_STORE", &store)
        .run();
    shown.expect_code(0);
    let shown: serde_json::Value = serde_json::from_str(shown.stdout().trim()).unwrap();
    assert_eq!(
        shown["running"].as_str(),
        scratch.read("starts").lines().next(),
        "the lease is held in the running run's RETRY_RUN_ID"
    );
    std::fs::write(scratch.path("gate"), "").unwrap();
    let codes: Vec<Option<i32>> = runs.into_iter().map(|run| run.finish().code()).collect();
    assert_eq!(
        codes.iter().filter(|code| **code == Some(75)).count(),
        2,
        "{codes:?} {firsts:?}"
    );
    assert_eq!(
        codes.iter().filter(|code| **code == Some(0)).count(),
        1,
        "{codes:?}"
    );
    assert_eq!(scratch.lines("starts"), 1);

    // A holder killed with SIGKILL leaves its attempt running, told to stop: its lease's
    // keeper renews the lease (its time to live grows again after the kill) while the attempt
    // runs, so a run that skips finds it held; once the attempt ends, the keeper gives the
    // lease back, and a run that waits starts.
    std::fs::remove_file(scratch.path("gate")).unwrap();
    let before = scratch.lines("starts");
    let holder = job_run("sync", &store, &scratch)
        .args(["--", "sh", "-c", STUBBORN])
        .spawn();
    wait_for("the holder's attempt", || scratch.lines("starts") > before);
    holder.signal(libc::SIGKILL);
    holder.finish();
    let time_to_live = || -> i64 {
        let reply = redis_cli(server.port(), &["PTTL", "retry:budget:job:{sync}:lease"]);
        reply.parse().unwrap()
    };
    let after_the_kill = time_to_live();
    assert!(after_the_kill > 0, "the lease is held: {after_the_kill}");
    // A renewal shows as a time to live longer than the one read just before it (a renewal
    // just before the kill can have left the first reading at the longest a lease lasts).
    let last_read = std::cell::Cell::new(after_the_kill);
    wait_for("a renewal after the holder's death", || {
        let now = time_to_live();
        now > last_read.replace(now)
    });
    job_run("sync", &store, &scratch)
        .args(["--", "true"])
        .run()
        .expect_code(75);
    set_overlap("sync", "wait", &store);
    let waiting = job_run("sync", &store, &scratch)
        .args(["--max-time", "1m", "--", "true"])
        .spawn();
    std::fs::write(scratch.path("gate"), "").unwrap();
    waiting.finish().expect_code(0);
}

#[test]
fn a_job_whose_terms_have_no_place_says_so_once_and_runs() {
    // As under cron: no HOME, no XDG_STATE_HOME, no store named.
    let run = retry(["--job", "nightly", "-n", "1", "--", "sh", "-c", "exit 3"])
        .env_remove("HOME")
        .env_remove("XDG_STATE_HOME")
        .env_remove("RETRY_BUDGET_STORE")
        .run();
    run.expect_code(3);
    assert_eq!(run.stderr().matches(TERMS_UNREAD).count(), 1, "{run}");
    run.expect_stderr("give --budget-store file:DIR, or set XDG_STATE_HOME");
}

#[test]
fn a_job_whose_store_never_answers_says_so_once_and_calls_it_once() {
    // The kernel completes each connection into the listener's queue; nobody ever answers.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let run = retry(["--job", "nightly", "-n", "1", "--", "sh", "-c", "exit 3"])
        .env(
            "RETRY_BUDGET_STORE",
            format!("redis://127.0.0.1:{port}?timeout=200ms"),
        )
        .run();
    run.expect_code(3);
    assert_eq!(run.stderr().matches(TERMS_UNREAD).count(), 1, "{run}");
    run.expect_stderr(&format!("cannot be read from redis://127.0.0.1:{port}, so"));
    assert_eq!(
        run.stderr().matches("no answer within 200ms").count(),
        1,
        "{run}"
    );
    // Its terms were read once; neither the hold nor the history called the store again.
    silent.set_nonblocking(true).unwrap();
    let calls = std::iter::from_fn(|| silent.accept().ok()).count();
    assert_eq!(calls, 1, "connections to the store\n{run}");
}

#[test]
fn a_job_and_its_budget_on_a_store_that_never_answers_wait_for_it_once() {
    let scratch = Scratch::new();
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let store = format!("redis://127.0.0.1:{port}?timeout=200ms");
    let run = retry([
        "--job", "nightly", "--budget", "api", "-n", "2", "--base", "0s",
    ])
    .args(["--", "sh", "-c", "exit 3"])
    .env("RETRY_BUDGET_STORE", &store)
    .env("XDG_STATE_HOME", scratch.path("state"))
    .run();
    run.expect_code(3);
    assert_eq!(run.stderr().matches(TERMS_UNREAD).count(), 1, "{run}");
    let given_up = format!(
        "retry budget store redis://127.0.0.1:{port}: no answer within 200ms; using the file \
         store on this machine for the rest of the run"
    );
    assert_eq!(run.stderr().matches(&given_up).count(), 1, "{run}");
    // The budget took the job's failure as its own, and never called the store.
    silent.set_nonblocking(true).unwrap();
    let calls = std::iter::from_fn(|| silent.accept().ok()).count();
    assert_eq!(calls, 1, "connections to the store\n{run}");
}

#[test]
fn the_acl_rule_of_the_docs_is_enough_for_a_jobs_lease() {
    let server = RedisServer::with_user("retry-app", "s3cret-w0rd");
    let scratch = Scratch::new();
    let store = server
        .patient_url()
        .replace("redis://", "redis://retry-app:s3cret-w0rd@");
    set_overlap("deploy", "skip", &store);
    for _ in 0..2 {
        // Taken, renewed and given back: the next run finds the job free at once.
        let run = job_run("deploy", &store, &scratch)
            .args(["--", "true"])
            .run();
        run.expect_code(0).expect_no_stderr("warning");
    }
}

#[test]
fn a_blank_job_name_is_refused_wherever_a_job_is_named() {
    // What `--job "$JOB"` and `retry job set "$JOB"` give when JOB is unset: terms kept for a
    // job no run can name would hold no run.
    let scratch = Scratch::new();
    let store = file_store(&scratch.path("store"));
    let named = [
        &["job", "set", "", "--overlap", "skip"][..],
        &["job", "set", " ", "--alert-after", "3"],
        &["job", "show", ""],
        &["job", "history", "\t"],
        &["--job", "", "true"],
    ];
    for args in named {
        retry(args)
            .env("RETRY_BUDGET_STORE", &store)
            .run()
            .expect_code(125)
            .expect_stderr("a job's name may not be empty or blank");
    }
    assert!(
        !scratch.path("store").exists(),
        "a blank job's terms were kept"
    );
    set_overlap("nightly", "skip", &store);
    assert!(
        scratch.path("store").exists(),
        "a job's terms were not kept"
    );
}
