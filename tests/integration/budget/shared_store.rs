//! One budget for a whole fleet: the Redis store, against real `redis-server`s that the tests
//! start (see `redis_server`), its faults, its secrets, the ratio, and `retry budget show`.

use std::net::TcpListener;
use std::path::Path;

use crate::support::harness::{
    Invocation, Run, Running, Scratch, file_store, retry, set_budget, wait_for,
};
use crate::support::redis_server::RedisServer;

/// The store `store` names: `file` is the file store in `dir`; anything else is a URL.
fn store_in(store: &str, dir: &Path) -> String {
    match store {
        "file" => file_store(dir),
        url => url.to_string(),
    }
}

/// Give the budget `name` in `store` (a file store in `dir`) the rate `rate`, as `retry budget
/// set` does, and `more` terms.
fn terms(store: &str, name: &str, rate: &str, dir: &Path, more: &[&str]) {
    let mut terms = vec!["--rate", rate];
    terms.extend_from_slice(more);
    set_budget(name, &store_in(store, dir), &terms);
}

/// A run of an always-failing command sharing the budget `name` in `store`, with JSON events and
/// the file store in `dir`; the test adds its flags.
fn failing(store: &str, name: &str, dir: &Path) -> Invocation {
    sharing(store, name, dir).args(["-n", "2", "--base", "0s", "--max-time", "20s"])
}

/// The tool sharing the budget `name` in `store`, with JSON events; `file` is the file store in
/// `dir`, and a shared store falls back to [`fallback`] in it. The test adds its flags and
/// command (after `--`).
fn sharing(store: &str, name: &str, dir: &Path) -> Invocation {
    retry(["--log-format", "json", "--budget", name, "--budget-store"])
        .args([store_in(store, dir)])
        .env("XDG_STATE_HOME", dir)
}

/// Where runs whose state lives in `dir` (their XDG_STATE_HOME) fall back to a file store.
fn fallback(dir: &Path) -> std::path::PathBuf {
    dir.join("retry/budgets")
}

/// Finish every run; returns them with the retries they made in all.
fn finish_all(runs: Vec<Running>) -> (Vec<Run>, u64) {
    let runs: Vec<Run> = runs.into_iter().map(Running::finish).collect();
    let retries = runs
        .iter()
        .map(|run| {
            let attempts = run.event("done")["attempts"].as_u64().unwrap();
            attempts
                .checked_sub(1)
                .unwrap_or_else(|| panic!("no attempt\n{run}"))
        })
        .sum();
    (runs, retries)
}

/// How many of `runs` ended for `reason`.
fn ended_for(runs: &[Run], reason: &str) -> usize {
    runs.iter()
        .filter(|run| run.event("done")["reason"] == reason)
        .count()
}

/// `retry budget show` of the budget `name` in `store`, with a file store in `dir`.
fn showing(store: &str, name: &str, dir: &Path) -> Invocation {
    retry(["budget", "show", name, "--budget-store"]).args([store_in(store, dir)])
}

/// The budget `name` as `retry budget show --log-format json` tells it.
fn show(store: &str, name: &str, dir: &Path) -> serde_json::Value {
    let run = showing(store, name, dir)
        .args(["--log-format", "json"])
        .run();
    run.expect_code(0);
    serde_json::from_str(&run.stdout()).unwrap_or_else(|err| panic!("{err}\n{run}"))
}

#[test]
fn two_hundred_runs_share_fifty_tokens_exactly() {
    let server = RedisServer::on_socket();
    let scratch = Scratch::new();
    let dir = scratch.path("budgets");
    terms(&server.patient_url(), "inventory", "50/1h", &dir, &[]);
    let runs = (0..200)
        .map(|_| {
            failing(&server.patient_url(), "inventory", &dir)
                .args(["--", "false"])
                .spawn()
        })
        .collect();
    let (runs, retries) = finish_all(runs);
    assert_eq!(retries, 50);
    // The other 150 have a token an hour away, past their --max-time: they say so, and take none.
    assert_eq!(ended_for(&runs, "deadline"), 150);
    assert_eq!(ended_for(&runs, "exhausted"), 50);
    assert!(
        runs.iter()
            .all(|run| run.events_named("warning").is_empty()),
        "{}",
        runs.iter()
            .find(|run| !run.events_named("warning").is_empty())
            .unwrap()
    );
    let state = &show(&server.patient_url(), "inventory", &scratch.path("budgets"))["state"];
    assert_eq!(
        (
            &state["first_attempts"],
            &state["retries"],
            &state["refusals"]
        ),
        (&200.into(), &50.into(), &0.into())
    );
    assert!(
        !fallback(&dir).join("inventory").exists(),
        "the file store was never used"
    );
}

#[test]
fn four_hosts_share_one_redis_budget_where_file_stores_make_four_times_the_retries() {
    let server = RedisServer::on_loopback();
    let scratch = Scratch::new();
    let fleet = |store: &str| {
        for host in 0..4 {
            terms(
                store,
                "inventory",
                "3/1h",
                &scratch.path(&format!("host{host}")),
                &[],
            );
        }
        let runs = (0..4)
            .flat_map(|host| std::iter::repeat_n(host, 8))
            .map(|host| {
                let dir = scratch.path(&format!("host{host}"));
                failing(store, "inventory", &dir)
                    .args(["--", "false"])
                    .spawn()
            })
            .collect();
        finish_all(runs).1
    };
    assert_eq!(fleet(&server.patient_url()), 3, "one budget for the fleet");
    assert_eq!(fleet("file"), 4 * 3, "one budget per host");
}

/// The store's host is named, not numbered: the binary resolves names, however it is linked
/// (the default build with glibc's resolver, the release archive's with musl's).
#[test]
fn a_store_named_by_its_host_name_is_reached() {
    let server = RedisServer::on_loopback();
    let scratch = Scratch::new();
    let named = server.patient_url().replace("127.0.0.1", "localhost");
    let closed = format!("{named}&fail=closed");
    terms(&closed, "inventory", "3/1h", &scratch.path("files"), &[]);
    let run = failing(&closed, "inventory", &scratch.path("files"))
        .args(["--", "false"])
        .run();
    run.expect_code(1);
    assert_eq!(run.event("done")["attempts"], 2, "the store gave no token");
    assert_eq!(run.event("done")["reason"], "exhausted");
}

#[test]
fn a_first_attempts_count_goes_on_while_it_runs() {
    let server = RedisServer::on_socket();
    let scratch = Scratch::new();
    // The attempt ends only once the store has counted it: were the count made after it, the
    // attempt would wait for it until its timeout (status 124).
    let until_counted = "until \"$RETRY\" budget show api --budget-store \"$STORE\" \
                         | grep -q 'first attempts  1'; do sleep 0.01; done";
    let run = sharing(&server.patient_url(), "api", &scratch.path("budgets"))
        .env("STORE", server.patient_url())
        .env("RETRY", crate::support::harness::binary())
        .args([
            "-n",
            "1",
            "--timeout",
            "10s",
            "--",
            "sh",
            "-c",
            until_counted,
        ])
        .run();
    run.expect_code(0);
    assert_eq!(run.event("done")["reason"], "success", "{run}");
}

#[test]
fn a_ratio_earns_a_tenth_of_the_first_attempts_and_they_fade_with_the_window() {
    let server = RedisServer::on_socket();
    let scratch = Scratch::new();
    let dir = scratch.path("budgets");
    let earn = |name: &str| {
        let ratio = ["--ratio", "0.1", "--window", "1h"];
        terms(&server.patient_url(), name, "1/1h", &dir, &ratio);
        let runs = (0..100)
            .map(|_| {
                sharing(&server.patient_url(), name, &dir)
                    .args(["--", "true"])
                    .spawn()
            })
            .collect();
        finish_all(runs);
        let state = show(&server.patient_url(), name, &dir)["state"].clone();
        assert_eq!(state["first_attempts"], 100);
        let earned = state["earned"].as_f64().unwrap();
        assert!((earned - 10.0).abs() < 1.0, "{state}");
        state
    };
    // Spent by failing runs: the earned tokens pay (ten, and the 0.1 each of the twenty failing
    // runs' first attempts earns), then the rate bucket's one.
    earn("steady");
    let spend = |name: &str| {
        let runs = (0..20)
            .map(|_| {
                failing(&server.patient_url(), name, &dir)
                    .args(["--", "false"])
                    .spawn()
            })
            .collect();
        finish_all(runs).1
    };
    let retries = spend("steady");
    assert!((11..=13).contains(&retries), "{retries} retries");

    // Two seconds later, on a window of half a second (set with retry budget set since they
    // were earned), ten earned tokens are down to 0.18: the
    // failing runs' own 2.0 earned, fading as they come, and the rate's one are all there is.
    earn("fading");
    let half_a_second = ["--ratio", "0.1", "--window", "500ms"];
    terms(
        &server.patient_url(),
        "fading",
        "1/1h",
        &dir,
        &half_a_second,
    );
    wait_for("two seconds to pass on the server's clock", || {
        show(&server.patient_url(), "fading", &dir)["state"]["changed_ms_ago"]
            .as_f64()
            .unwrap()
            >= 2000.0
    });
    let retries = spend("fading");
    assert!(
        (1..=3).contains(&retries),
        "{retries} retries: not the ten earned before"
    );
}

#[test]
fn the_file_store_earns_by_the_same_ratio() {
    let scratch = Scratch::new();
    let dir = scratch.path("budgets");
    terms(
        "file",
        "api",
        "1/1h",
        &dir,
        &["--ratio", "0.5", "--window", "1h"],
    );
    for _ in 0..10 {
        sharing("file", "api", &dir)
            .args(["--", "true"])
            .run()
            .expect_code(0);
    }
    let shown = show("file", "api", &dir);
    let state = &shown["state"];
    assert_eq!(state["first_attempts"], 10);
    assert!(
        (state["earned"].as_f64().unwrap() - 5.0).abs() < 0.01,
        "{state}"
    );
    assert_eq!(shown["terms"]["window_ms"], 3_600_000.0);
}

/// Runs that fail, the second attempt of each waiting for the file `killed` in `scratch` once
/// it has said it is there (with a file `second.PID`).
fn killed_mid_run(server: &mut RedisServer, on_failure: &str) -> Vec<Run> {
    let scratch = Scratch::new();
    let script = r#"
        if [ "$RETRY_ATTEMPT" = 2 ]; then
            touch "$SCRATCH/second.$$"
            while [ ! -e "$SCRATCH/killed" ]; do sleep 0.01; done
        fi
        exit 1"#;
    let store = format!("{}?fail={on_failure}", server.url());
    let runs: Vec<Running> = (0..5)
        .map(|_| {
            sharing(&store, "api", &scratch.path("budgets"))
                .args(["-n", "3", "--base", "0s"])
                .args(["--", "sh", "-c", script])
                .env("SCRATCH", scratch.path(""))
                .spawn()
        })
        .collect();
    wait_for("every run's second attempt", || {
        std::fs::read_dir(scratch.path(""))
            .unwrap()
            .filter(|entry| {
                entry
                    .as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .starts_with("second.")
            })
            .count()
            == 5
    });
    server.kill();
    std::fs::write(scratch.path("killed"), "").unwrap();
    let runs: Vec<Run> = runs.into_iter().map(Running::finish).collect();
    if on_failure == "open" {
        assert!(
            std::fs::read_to_string(fallback(&scratch.path("budgets")).join("api"))
                .unwrap()
                .starts_with("retry-budget-v4"),
            "the runs fell back to the file store"
        );
    }
    runs
}

#[test]
fn a_server_killed_mid_run_means_the_file_store_when_open() {
    let mut server = RedisServer::on_socket();
    for run in killed_mid_run(&mut server, "open") {
        let warning = run.event("warning");
        let message = warning["message"].as_str().unwrap();
        assert!(
            message.starts_with(&format!("retry budget store {}: ", server.url())),
            "{run}"
        );
        assert!(
            message.ends_with("using the file store on this machine for the rest of the run"),
            "{run}"
        );
        let done = run.event("done");
        assert_eq!(
            (done["reason"].as_str(), done["attempts"].as_u64()),
            (Some("exhausted"), Some(3)),
            "{run}"
        );
    }
}

#[test]
fn a_server_killed_mid_run_means_no_token_when_closed() {
    let mut server = RedisServer::on_socket();
    for run in killed_mid_run(&mut server, "closed") {
        run.event("warning");
        let done = run.event("done");
        assert_eq!(
            (done["reason"].as_str(), done["attempts"].as_u64()),
            (Some("budget"), Some(2)),
            "{run}"
        );
        assert_eq!(done["status"], 1, "the last attempt's status\n{run}");
    }
}

#[test]
fn a_store_that_never_answers_costs_one_bounded_call() {
    // The kernel completes the connection; nobody ever reads from it or answers.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let store = format!("redis://127.0.0.1:{}", silent.local_addr().unwrap().port());
    let scratch = Scratch::new();
    let run = failing(&store, "api", &scratch.path("budgets"))
        .args(["-n", "3", "--", "false"])
        .run();
    let warning = run.event("warning");
    assert!(
        warning["message"]
            .as_str()
            .unwrap()
            .contains(": no answer within 500ms; "),
        "{run}"
    );
    assert_eq!(
        run.event("done")["reason"],
        "exhausted",
        "the file store paid\n{run}"
    );

    // The address's own timeout replaces the default.
    let run = failing(
        &format!("{store}?timeout=150ms"),
        "api",
        &scratch.path("budgets"),
    )
    .args(["-n", "2", "--", "false"])
    .run();
    assert!(
        run.warning().contains(": no answer within 150ms; "),
        "{run}"
    );

    // Nor past --max-time: the call gets what is left of it (the first attempt's count starts
    // with the attempt, so all of it here), and the run ends at its deadline.
    let run = sharing(&store, "api", &scratch.path("budgets"))
        .args([
            "-n",
            "3",
            "--base",
            "0s",
            "--max-time",
            "300ms",
            "--",
            "false",
        ])
        .run();
    let message = run.warning();
    let bound = message
        .split("no answer within ")
        .nth(1)
        .and_then(|rest| rest.split("ms;").next())
        .and_then(|millis| millis.parse::<f64>().ok())
        .unwrap_or_else(|| panic!("no bound in the warning\n{run}"));
    assert!(bound <= 300.0, "{run}");
    assert_eq!(run.event("done")["reason"], "deadline", "{run}");
    drop(silent);
}

#[cfg(feature = "tls")]
#[test]
fn a_tls_store_verifies_the_server_and_presents_the_client_certificate_it_asks_for() {
    use crate::support::redis_server::tls_files_query;
    let server = RedisServer::with_tls();
    let certs = server.certificates();
    let scratch = Scratch::new();
    let store = format!("{}&{}", server.patient_url(), tls_files_query(certs));
    set_budget("api", &store, &["--rate", "2/1h"]);
    let runs = (0..3)
        .map(|_| {
            failing(&store, "api", &scratch.path("budgets"))
                .args(["--", "false"])
                .env("SSL_CERT_FILE", "/dev/null")
                .spawn()
        })
        .collect();
    let (runs, retries) = finish_all(runs);
    assert_eq!(retries, 2);
    assert!(
        runs.iter()
            .all(|run| run.events_named("warning").is_empty()),
        "{}",
        runs[0]
    );
    // The files are read, never shown.
    let shown = retry(["budget", "show", "api", "--budget-store", &store]).run();
    shown.expect_code(0);
    assert!(!shown.stdout().contains("client.key"), "{shown}");

    // Each thing the server wants and the address lacks is named.
    let identity = tls_files_query(certs).replacen(
        &format!("ca_file={}&", certs.join("ca.crt").display()),
        "",
        1,
    );
    let authority = format!("ca_file={}", certs.join("ca.crt").display());
    for (query, wanted) in [
        (identity, "?ca_file=PATH"),
        (authority, "?cert_file=PATH&key_file=PATH"),
    ] {
        let store = format!("{}&{query}", server.patient_url());
        let run = failing(&store, "api", &scratch.path("budgets"))
            .args(["--", "false"])
            .env("SSL_CERT_FILE", "/dev/null")
            .run();
        run.expect_code(1);
        assert!(run.warning().contains(wanted), "{run}");
    }
}

#[cfg(feature = "tls")]
#[test]
fn a_tls_stores_files_that_cannot_be_used_are_named_before_the_command_runs() {
    use crate::support::redis_server::tls_files_query;
    use std::os::unix::fs::PermissionsExt;
    let scratch = Scratch::new();
    let certs = scratch.path("certs");
    std::fs::create_dir(&certs).unwrap();
    crate::support::redis_server::make_certificates(&certs);
    let files = tls_files_query(&certs);
    let address = |query: &str| format!("rediss://127.0.0.1:1?{query}");
    let open_key = certs.join("open.key");
    std::fs::copy(certs.join("client.key"), &open_key).unwrap();
    std::fs::set_permissions(&open_key, std::fs::Permissions::from_mode(0o644)).unwrap();
    let open_key_files = files.replace("client.key", "open.key");
    let wrong_key_files = files.replace("client.key", "server.key");
    let not_pem = files.replace("ca.crt", "client.ext");
    let certificate_as_key = certs.join("certificate.key");
    std::fs::copy(certs.join("client.crt"), &certificate_as_key).unwrap();
    std::fs::set_permissions(&certificate_as_key, std::fs::Permissions::from_mode(0o600)).unwrap();
    let no_key_files = files.replace("client.key", "certificate.key");
    for (store, wanted) in [
        (address(&open_key_files), "chmod 600"),
        (
            address(&wrong_key_files),
            "not the key of the client certificate",
        ),
        (address(&not_pem), "client.ext: it holds no PEM CERTIFICATE"),
        (
            address(&no_key_files),
            "certificate.key: it holds no unencrypted PEM private key: no items found",
        ),
        (address(&files.replace("&key_file", "&unused")), "its query"),
        (
            address(files.split("&key_file").next().unwrap()),
            "cert_file and key_file go together",
        ),
        (format!("redis://127.0.0.1:1?{files}"), "use rediss://"),
    ] {
        let run = retry(["budget", "show", "api"])
            .env("RETRY_BUDGET_STORE", &store)
            .run();
        run.expect_code(125).expect_stderr(wanted);
    }
}

#[cfg(not(feature = "tls"))]
#[test]
fn a_tls_store_without_tls_built_in_says_how_to_get_it() {
    let scratch = Scratch::new();
    failing("rediss://127.0.0.1:1", "api", &scratch.path("budgets"))
        .args(["--", "false"])
        .run()
        .expect_code(125)
        .expect_stderr("built without TLS (--no-default-features)");
}

#[test]
fn the_readme_acl_rule_is_enough_and_the_password_never_shows() {
    let server = RedisServer::with_user("retry-app", "s3cret-w0rd");
    let store = server
        .patient_url()
        .replace("redis://", "redis://retry-app:s3cret-w0rd@");
    let scratch = Scratch::new();
    retry(["budget", "set", "api", "--rate", "2/1h"])
        .env("RETRY_BUDGET_STORE", &store)
        .run()
        .expect_code(0);
    let failing_with = |store: &str| {
        retry(["--log-format", "json", "--budget", "api"])
            .args(["-n", "2", "--base", "0s", "--max-time", "20s"])
            .env("XDG_STATE_HOME", scratch.path("budgets"))
            .env("RETRY_BUDGET_STORE", store)
    };
    let env_run = failing_with(&store)
        .args(["--report"])
        .args([scratch.path("report.json")])
        .args([
            "--",
            "sh",
            "-c",
            "echo \"${RETRY_BUDGET_STORE-unset}\"; exit 1",
        ])
        .run();
    // The command gets the store, for a run inside it, but not the password.
    let passed_on = format!(
        "{}\n",
        server
            .patient_url()
            .replace("redis://", "redis://retry-app@")
    );
    env_run.expect_stdout(&passed_on.repeat(2));
    assert_eq!(env_run.event("done")["reason"], "exhausted", "{env_run}");
    assert!(env_run.events_named("warning").is_empty(), "{env_run}");

    let through_variable = retry(["--log-format", "json", "--budget", "api", "-n", "2"])
        .args(["--base", "0s"])
        .env("XDG_STATE_HOME", scratch.path("budgets"))
        .args([
            "--",
            "sh",
            "-c",
            "echo \"${RETRY_BUDGET_STORE-unset}\"; exit 1",
        ])
        .env("RETRY_BUDGET_STORE", &store)
        .run();
    through_variable.expect_stdout(&passed_on.repeat(2));
    assert!(
        through_variable.events_named("warning").is_empty(),
        "{through_variable}"
    );

    let wrong = store.replace("s3cret-w0rd", "wr0ng-s3cret");
    let refused = failing_with(&wrong).args(["--", "false"]).run();
    let message = refused.warning();
    assert!(
        message.contains("redis://retry-app:***@127.0.0.1"),
        "{refused}"
    );

    let plan = retry(["--plan", "--budget", "api"])
        .env("RETRY_BUDGET_STORE", &store)
        .run();
    plan.expect_stdout_contains("in redis://retry-app:***@127.0.0.1");
    let help = retry(["--help"]).env("RETRY_BUDGET_STORE", &store).run();
    let bad = retry(["--budget", "api", "--budget-store"])
        .args([store.replace("redis://", "redis//"), "true".into()])
        .run();
    bad.expect_code(125);
    let report = std::fs::read_to_string(scratch.path("report.json")).unwrap();
    let recorded: serde_json::Value = serde_json::from_str(&report).unwrap();
    let shown = recorded["options"]["in_force"]["budget_store"]
        .as_str()
        .unwrap();
    assert!(
        shown.starts_with("redis://retry-app:***@127.0.0.1"),
        "{report}"
    );
    for (what, text) in [
        ("run", env_run.to_string()),
        ("run with the variable", through_variable.to_string()),
        ("wrong password", refused.to_string()),
        ("plan", plan.to_string()),
        ("help", help.to_string()),
        ("bad store", bad.stderr()),
        ("report", report),
    ] {
        let text = text.replace(&store, "").replace(&wrong, "");
        assert!(
            !text.contains("s3cret"),
            "the password shows in the {what}:\n{text}"
        );
        assert!(
            !text.contains("wr0ng"),
            "the password shows in the {what}:\n{text}"
        );
    }
}

#[test]
fn budget_show_tells_the_state_of_either_store() {
    let server = RedisServer::on_socket();
    let scratch = Scratch::new();
    let dir = scratch.path("budgets");
    for store in [&server.patient_url(), "file"] {
        showing(store, "api", &dir)
            .run()
            .expect_code(0)
            .expect_stdout_contains("no state, so a full bucket")
            .expect_stdout_contains("terms 10/1m (the defaults; retry budget set changes them)");
        terms(store, "api", "4/1m", &dir, &[]);
        failing(store, "api", &dir)
            .args(["--", "false"])
            .run()
            .expect_code(1);
        showing(store, "api", &dir)
            .run()
            .expect_code(0)
            .expect_stdout_contains("  terms           4/1m (kept by retry budget set)\n")
            .expect_stdout_contains("of 4; full in")
            .expect_stdout_contains("first attempts  1\n")
            .expect_stdout_contains("retries         1\n");
        let shown = show(store, "api", &dir);
        assert_eq!(
            (&shown["terms"]["capacity"], &shown["state"]["retries"]),
            (&4.into(), &1.into())
        );
    }
    std::fs::write(dir.join("Makefile"), "all:\n").unwrap();
    retry([
        "budget",
        "show",
        "Makefile",
        "--budget-store",
        &file_store(&dir),
    ])
    .run()
    .expect_code(125)
    .expect_stderr("not a retry budget state");
    retry([
        "budget",
        "show",
        "api",
        "--budget-store",
        "redis://127.0.0.1:1",
    ])
    .run()
    .expect_code(125)
    .expect_stderr("cannot read retry budget api from redis://127.0.0.1:1");
}

/// The calls of the budget's script the server at `port` has answered, by `INFO commandstats`.
fn script_calls(port: u16) -> u64 {
    let stats = crate::support::redis_fleet::redis_cli(port, &["INFO", "commandstats"]);
    stats
        .lines()
        .find_map(|line| line.strip_prefix("cmdstat_evalsha:calls="))
        .and_then(|rest| rest.split(',').next()?.parse().ok())
        .unwrap_or(0)
}

#[test]
fn a_run_on_a_standalone_store_costs_one_round_trip_before_its_first_attempt_and_one_a_retry() {
    let server = RedisServer::on_loopback();
    let scratch = Scratch::new();
    let store = server.patient_url();
    for (breaker, attempts, calls) in [(false, 1, 1), (false, 4, 4), (true, 4, 5)] {
        let name = format!("api-{breaker}-{attempts}");
        let more: &[&str] = if breaker { &["--breaker", "5/1m"] } else { &[] };
        terms(&store, &name, "50/1h", &scratch.path("dir"), more);
        let before = script_calls(server.port());
        sharing(&store, &name, &scratch.path("dir"))
            .args(["-n", &attempts.to_string(), "--base", "0s", "--", "false"])
            .run()
            .expect_code(1);
        // The first attempt's admission, one reservation a retry, and with a breaker the run's
        // end counted for it.
        assert_eq!(script_calls(server.port()) - before, calls, "{name}");
    }
}

#[cfg(feature = "tls")]
#[test]
fn a_plain_address_to_a_tls_server_is_told_to_use_rediss() {
    let server = RedisServer::with_tls();
    let plain = server.patient_url().replace("rediss://", "redis://");
    let run = retry(["budget", "show", "api", "--budget-store", &plain]).run();
    run.expect_code(125)
        .expect_stderr("the server may speak TLS: use rediss://");
}

#[test]
fn a_user_the_acl_keeps_from_a_scripts_command_is_told_the_rule() {
    let args: Vec<String> = [
        "--user",
        "retry-app",
        "on",
        ">s3cret-w0rd",
        "~retry:budget:*",
        "-@all",
        "+evalsha",
        "+script|load",
        "--user",
        "default",
        "off",
    ]
    .map(String::from)
    .to_vec();
    let server = RedisServer::on_loopback_with(&args);
    let store = server
        .patient_url()
        .replace("redis://", "redis://retry-app:s3cret-w0rd@");
    let run = retry(["budget", "show", "api"])
        .env("RETRY_BUDGET_STORE", &store)
        .run();
    run.expect_code(125)
        .expect_stderr("may not run a command the budget's script runs (TIME)")
        .expect_stderr("+hmget");
    assert!(!run.stderr().contains("s3cret"), "{run}");
}
