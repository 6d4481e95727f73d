//! A budget store's replies are untrusted input: a server that streams an endless reply or
//! answers values no run could store makes the store count as failing, with its warning, in
//! bounded memory; and a healthy server that closes idle connections is reconnected to.

use std::io::{Read, Write};
use std::net::TcpListener;

use crate::support::harness::{Scratch, retry};
use crate::support::redis_server::RedisServer;

/// A server on a loopback port that answers every connection with `answer`, given the stream;
/// returns its `redis://` address.
fn hostile_server(answer: fn(&mut std::net::TcpStream)) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    let address = listener.local_addr().expect("its address");
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut stream = stream;
            std::thread::spawn(move || answer(&mut stream));
        }
    });
    format!("redis://{address}")
}

/// The tool with a budget in `scratch` on the store at `url`, JSON events, and `rest`.
fn run_with_store(
    scratch: &Scratch,
    url: &str,
    rest: &[&str],
) -> (crate::support::harness::Run, u64) {
    retry([
        "--log-format",
        "json",
        "--budget",
        "api",
        "--budget-store",
        url,
    ])
    .env("XDG_STATE_HOME", scratch.path("budgets"))
    .args(rest)
    .run_measuring_peak_rss()
}

#[test]
fn an_endless_reply_makes_the_store_fail_in_bounded_memory() {
    let url = hostile_server(|stream| {
        let mut request = [0; 4096];
        let _ = stream.read(&mut request);
        let _ = stream.write_all(b"$2000000000\r\n");
        let chunk = vec![b'x'; 64 * 1024];
        while stream.write_all(&chunk).is_ok() {}
    });
    let scratch = Scratch::new();
    // The wait gives a reader that does not stop at a bound the time to show it.
    let waits = ["--jitter", "none", "--base", "1s"];
    let (run, peak_kib) = run_with_store(
        &scratch,
        &url,
        &[&waits[..], &["-n", "2", "false"]].concat(),
    );
    assert!(
        (1..64 * 1024).contains(&peak_kib),
        "the tool grew to {peak_kib} KiB\n{run}"
    );
    run.expect_code(1);
    let warning = run.warning();
    assert!(warning.contains("its reply cannot be used"), "{run}");
    assert!(warning.contains("using the file store"), "{run}");
}

#[test]
fn values_no_run_could_store_make_the_store_fail() {
    let url = hostile_server(|stream| {
        let mut request = [0; 65536];
        while matches!(stream.read(&mut request), Ok(1..)) {
            let nonsense = b"*3\r\n$7\r\ngranted\r\n$3\r\nnan\r\n$1\r\n0\r\n";
            let _ = stream.write_all(nonsense);
        }
    });
    let scratch = Scratch::new();
    let (run, _) = run_with_store(
        &scratch,
        &format!("{url}?fail=closed"),
        &["-n", "2", "--base", "1ms", "false"],
    );
    run.expect_code(1);
    assert!(
        run.warning()
            .contains("is not one the budget's script gives"),
        "{run}"
    );
    assert_eq!(run.event("done")["reason"], "budget", "{run}");
}

#[test]
fn a_connection_the_server_closed_while_idle_is_opened_again() {
    let server = RedisServer::on_socket();
    let socket = server.url().trim_start_matches("redis+unix://").to_string();
    let scratch = Scratch::new();
    // Between the attempts, every client connection but the hook's own is closed, as a server's
    // idle timeout, a proxy or a NAT closes it.
    let kill = format!("redis-cli -s '{socket}' CLIENT KILL TYPE normal SKIPME yes >/dev/null");
    let (run, _) = run_with_store(
        &scratch,
        &format!("{}&fail=closed", server.patient_url()),
        &["-n", "3", "--base", "1ms", "--on-retry", &kill, "false"],
    );
    run.expect_code(1);
    assert_eq!(run.event("done")["reason"], "exhausted", "{run}");
    assert!(run.events_named("warning").is_empty(), "{run}");
    assert_eq!(run.events_named("hook_end").len(), 2, "{run}");
}
