//! A request that is not idempotent is not repeated after it may have been carried out: curl
//! and wget against a server that counts the requests it carried out, for each method and each
//! way of failing.

use super::{needed, refusing_port, under_preset};
use crate::faulty_http::FaultyHttp;
use crate::support::harness::{Run, Scratch, retry};

/// Run `command` as `under_preset` does: two attempts at most, its events in JSON.
fn run_under_preset(command: &[&str]) -> Run {
    under_preset(&["--"]).args(command).run()
}

/// How many attempts the run made.
fn attempts(run: &Run) -> usize {
    run.events_named("attempt_end").len()
}

/// For each way of failing (a path of the server), a command line with its method, and how many
/// requests the server carries out: 1 when the run stops at once, 2 when it retries.
fn assert_carried_out(http: &FaultyHttp, cases: &[(&str, &[&str], usize)]) {
    for (path, command, expected) in cases {
        let url = http.url(path);
        let command: Vec<&str> = command.iter().copied().chain([url.as_str()]).collect();
        let before = http.requests(path);
        let run = run_under_preset(&command);
        let carried_out = http.requests(path) - before;
        assert_eq!(carried_out, *expected, "{command:?}\n{run}");
        assert_eq!(attempts(&run), *expected, "{run}");
        if *expected == 1 {
            let end = &run.events_named("attempt_end")[0];
            let rule = end["rule"].as_str().unwrap();
            assert!(rule.contains("Idempotency-Key: $RETRY_RUN_ID"), "{run}");
        }
    }
}

#[test]
fn curl_repeats_a_post_only_when_the_server_did_not_act_or_a_key_makes_it_safe() {
    needed("curl");
    let http = FaultyHttp::start();
    let post: &[&str] = &["curl", "-fsS", "-d", "amount=10"];
    let patch: &[&str] = &["curl", "-fsS", "-X", "PATCH", "--data-raw", "x"];
    let json: &[&str] = &["curl", "-fsS", "--json", "{}"];
    let keyed: &[&str] = &["curl", "-fsS", "-d", "a", "-H", "Idempotency-Key: run-7"];
    let get: &[&str] = &["curl", "-fsS"];
    let put: &[&str] = &["curl", "-fsS", "-X", "PUT", "-d", "a"];
    let delete: &[&str] = &["curl", "-fsS", "-X", "DELETE"];
    let hidden: &[&str] = &["curl", "-fs", "-d", "a"];
    assert_carried_out(
        &http,
        &[
            ("/status/500", post, 1),
            ("/status/502", patch, 1),
            ("/status/504", json, 1),
            ("/reset", post, 1),
            ("/status/503", post, 2),
            ("/status/429", post, 2),
            ("/status/500", keyed, 2),
            ("/status/500", get, 2),
            ("/status/500", put, 2),
            ("/status/502", delete, 2),
            ("/reset", get, 2),
            // Told to hide its errors, curl cannot tell a 503 from a 500: the run stops.
            ("/status/503", hidden, 1),
        ],
    );
}

#[test]
fn curl_stops_a_post_whose_answer_timed_out_but_retries_one_that_never_connected() {
    needed("curl");
    let http = FaultyHttp::start();
    let url = http.url("/silent");
    let run = run_under_preset(&["curl", "-fsS", "-m", "1", "-d", "a", &url]);
    run.expect_code(28);
    assert_eq!((http.requests("/silent"), attempts(&run)), (1, 1), "{run}");
    let refused = format!("http://127.0.0.1:{}/", refusing_port());
    let run = run_under_preset(&["curl", "-fsS", "-d", "a", &refused]);
    run.expect_code(7);
    assert_eq!(
        attempts(&run),
        2,
        "nothing was sent, so nothing could be carried out\n{run}"
    );
    let run = run_under_preset(&["curl", "-fsS", "-m", "1", "-d", "a", &url]);
    let done = run.event("done");
    assert_eq!(done["reason"], "not_retryable", "{run}");
}

#[test]
fn wget_repeats_a_post_only_when_the_server_did_not_act_or_a_key_makes_it_safe() {
    needed("wget");
    let http = FaultyHttp::start();
    let post: &[&str] = &["wget", "-nv", "-t", "1", "-O", "-", "--post-data=amount=10"];
    let keyed: &[&str] = &[
        "wget",
        "-nv",
        "-t",
        "1",
        "-O",
        "-",
        "--post-data=a",
        "--header=Idempotency-Key: run-7",
    ];
    let get: &[&str] = &["wget", "-nv", "-t", "1", "-O", "-"];
    assert_carried_out(
        &http,
        &[
            ("/status/500", post, 1),
            ("/status/504", post, 1),
            ("/reset", post, 1),
            ("/status/503", post, 2),
            ("/status/500", keyed, 2),
            ("/status/500", get, 2),
        ],
    );
    let refused = format!("http://127.0.0.1:{}/", refusing_port());
    let run = run_under_preset(&["wget", "-nv", "-t", "1", "--post-data=a", &refused]);
    assert_eq!(
        attempts(&run),
        2,
        "nothing was sent, so nothing could be carried out\n{run}"
    );
}

#[test]
fn the_plan_shows_the_rules_of_an_unsafe_request_and_a_shell_line_is_not_read() {
    let scratch = Scratch::new();
    let url = "http://127.0.0.1:9/pay";
    let plan = retry([
        "--plan", "--preset", "auto", "--", "curl", "-fsS", "-d", "a", url,
    ])
    .current_dir(scratch.path(""))
    .run();
    plan.expect_code(0)
        .expect_stdout_contains("status 16,18,52,55-56,92,95: stop: --preset curl: a request")
        .expect_stdout_contains("a request that is not idempotent (POST, PATCH)");
    let line = format!("curl -fsS -d a {url}");
    let shell = retry(["--plan", "--preset", "curl", "--shell", &line]).run();
    assert!(!shell.stdout().contains("not idempotent"), "{shell}");
}
