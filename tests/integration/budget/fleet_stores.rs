//! A fleet's runs on the Redis deployments fleets run: a Redis Cluster whose budget's slot
//! moves, or whose primary fails over, and a primary behind sentinels that fails over, each in
//! the middle of the runs. The budget's bound holds exactly, and no run fails for the store's
//! sake.
//!
//! Each run's first attempt waits at a gate (a file the test makes), so that every run has
//! counted its first attempt and holds its connection when the store changes under it; then the
//! gate opens and every run asks for its retry at once.

use crate::support::harness::{Running, Scratch, at_the_gate, retry, set_budget, wait_for};
use crate::support::redis_fleet::{RedisCluster, Sentinels};

/// An attempt: say so, wait at the gate, fail.
const GATED_ATTEMPT: &str = concat!("echo >> \"$ATTEMPTS\"; ", at_the_gate!(), "; exit 1");

/// `runs` runs sharing the budget `name` in `store`, two attempts each, their first held at the
/// gate; returns them once every first attempt has begun.
fn gated_runs(scratch: &Scratch, store: &str, name: &str, runs: usize) -> Vec<Running> {
    let started: Vec<Running> = (0..runs)
        .map(|_| {
            retry([
                "--log-format",
                "json",
                "--budget",
                name,
                "--budget-store",
                store,
            ])
            .args(["-n", "2", "--base", "0s", "--max-time", "2m"])
            .args(["--", "sh", "-c", GATED_ATTEMPT])
            .env("ATTEMPTS", scratch.path("attempts"))
            .env("GATE", scratch.path("gate"))
            .spawn()
        })
        .collect();
    wait_for("every run's first attempt", || {
        scratch.lines("attempts") >= runs
    });
    started
}

/// Open the gate, wait for every run, and check that none met trouble with the store; the
/// number of retries made.
fn finish(scratch: &Scratch, runs: Vec<Running>) -> usize {
    std::fs::write(scratch.path("gate"), "").unwrap();
    let count = runs.len();
    for running in runs {
        let run = running.finish();
        run.expect_code(1);
        assert!(run.events_named("warning").is_empty(), "{run}");
    }
    scratch.lines("attempts") - count
}

#[test]
fn two_hundred_runs_on_a_cluster_make_exactly_the_budgets_retries_while_its_slot_moves() {
    let cluster = RedisCluster::start(0);
    let scratch = Scratch::new();
    let store = format!("{}?timeout=20s", cluster.url(0));
    // Fifty retries, and nothing regained over the test.
    set_budget("api", &store, &["--rate", "50/30d"]);
    let slot = cluster.slot_of("retry:budget:{api}");
    let from = cluster.owner_of(slot, 0);
    let to = (from + 1) % cluster.len();
    let runs = gated_runs(&scratch, &store, "api", 200);
    // The budget's keys move; the runs' retries meet ASK, then MOVED as the slot is given.
    cluster.begin_migration(slot, from, to);
    cluster.move_keys(slot, from, to);
    let assigned = std::thread::scope(|scope| {
        let assigning = scope.spawn(|| cluster.assign(slot, to));
        let retries = finish(&scratch, runs);
        assigning.join().expect("the slot is given");
        retries
    });
    assert_eq!(assigned, 50);
    assert_eq!(cluster.owner_of(slot, from), to);
}

#[test]
fn runs_on_a_cluster_keep_the_budgets_bound_through_a_primarys_failover() {
    let cluster = RedisCluster::start(1);
    let scratch = Scratch::new();
    let store = format!("{}?timeout=20s", cluster.url(0));
    set_budget("api", &store, &["--rate", "30/30d"]);
    let slot = cluster.slot_of("retry:budget:{api}");
    let primary = cluster.owner_of(slot, 0);
    let runs = gated_runs(&scratch, &store, "api", 80);
    // An operator's failover (CLUSTER FAILOVER): the primary holds its clients until the
    // replica has every write, so none is lost; the runs' retries meet MOVED.
    let retries = std::thread::scope(|scope| {
        let failing_over = scope.spawn(|| cluster.fail_over(primary));
        let retries = finish(&scratch, runs);
        failing_over.join().expect("the failover ends");
        retries
    });
    assert_eq!(retries, 30);
}

#[test]
fn runs_behind_sentinels_keep_the_budgets_bound_through_a_failover() {
    let fleet = Sentinels::start();
    let scratch = Scratch::new();
    let sentinels: Vec<String> = fleet
        .ports()
        .iter()
        .map(|port| format!("127.0.0.1:{port}"))
        .collect();
    let store = format!("redis+sentinel://{}/main?timeout=20s", sentinels.join(","));
    set_budget("api", &store, &["--rate", "20/30d"]);
    let runs = gated_runs(&scratch, &store, "api", 60);
    // Every run holds a connection to the primary, which the failover makes a replica: its
    // retry meets READONLY, and asks the sentinels again.
    fleet.fail_over();
    assert_eq!(finish(&scratch, runs), 20);
}

#[cfg(feature = "tls")]
#[test]
fn over_tls_each_nodes_certificate_is_checked_against_the_host_its_redirect_names() {
    use crate::support::redis_server::{
        make_authority, make_client_certificate, make_server_certificate, tls_files_query,
    };
    let scratch = Scratch::new();
    let certs = scratch.path("certs");
    std::fs::create_dir(&certs).unwrap();
    make_authority(&certs);
    make_server_certificate(&certs, "node", "IP:127.0.0.1");
    make_server_certificate(&certs, "stranger", "DNS:elsewhere.test");
    make_client_certificate(&certs);
    let cluster = RedisCluster::start_tls(&certs, ["node", "node", "stranger"]);
    let store = format!(
        "rediss://127.0.0.1:{}?timeout=10s&{}",
        cluster.port(0),
        tls_files_query(&certs)
    );
    // A budget each of the other two nodes serves, so that every call is a redirect.
    let served_by = |node: usize| {
        (0..)
            .map(|index| format!("api-{index}"))
            .find(|name| {
                let slot = cluster.slot_of(&format!("retry:budget:{{{name}}}"));
                cluster.owner_of(slot, 0) == node
            })
            .expect("a name of the node's slots")
    };
    let run = |name: &str| {
        retry([
            "--log-format",
            "json",
            "--budget",
            name,
            "--budget-store",
            &store,
        ])
        .args(["-n", "2", "--base", "0s", "--", "false"])
        .env("XDG_STATE_HOME", scratch.path("state"))
        .run()
    };
    let trusted = run(&served_by(1));
    trusted.expect_code(1);
    assert!(trusted.events_named("warning").is_empty(), "{trusted}");
    // The node the redirect names has no certificate for 127.0.0.1: the store is not used.
    let refused = run(&served_by(2));
    refused.expect_code(1);
    let warning = refused.warning().to_lowercase();
    assert!(
        warning.contains("certificate") && warning.contains("127.0.0.1"),
        "{refused}"
    );
}

#[cfg(feature = "tls")]
#[test]
fn over_tls_a_sentinel_and_its_primary_are_each_shown_the_client_certificate() {
    use crate::support::redis_fleet::TlsSentinel;
    use crate::support::redis_server::{RedisServer, tls_files_query};
    let primary = RedisServer::with_tls();
    let sentinel = TlsSentinel::start(&primary);
    let certs = primary.certificates();
    let at = format!(
        "rediss+sentinel://127.0.0.1:{}/main?timeout=10s",
        sentinel.port()
    );
    let store = format!("{at}&{}", tls_files_query(certs));
    set_budget("api", &store, &["--rate", "2/1h"]);
    let shown = retry(["budget", "show", "api", "--budget-store", &store]).run();
    shown.expect_code(0).expect_stdout_contains("2/1h");
    // Without the client certificate, the sentinel turns the run away, and the error says
    // what to give.
    let authority = format!("{at}&ca_file={}", certs.join("ca.crt").display());
    retry(["budget", "show", "api", "--budget-store", &authority])
        .run()
        .expect_code(125)
        .expect_stderr("?cert_file=PATH&key_file=PATH");
}
