//! curl and wget against an HTTP server of the tests' own (`FaultyHttp`), a refused port, a
//! name that does not resolve, and an HTTPS server whose certificate does not verify.

use super::{
    Retried, Stopped, UntrustedTls, assert_table, needed, refusing_port, row, under_preset,
    unresolvable_url,
};
use crate::faulty_http::FaultyHttp;
use crate::support::harness::Scratch;

#[test]
fn curl_retries_what_is_transient_and_stops_at_what_is_not() {
    needed("curl");
    let http = FaultyHttp::start();
    let tls = UntrustedTls::start();
    let refused = format!("http://127.0.0.1:{}/", refusing_port());
    let url = |path: &str| http.url(path);
    let curl = |url: String| ["curl".to_string(), "-fsS".into(), url];
    let rows = [
        row("503", &curl(url("/status/503")), 22, Retried),
        row(
            "429 with Retry-After",
            &curl(url("/status/429/after/0")),
            22,
            Retried,
        ),
        row("429 without", &curl(url("/status/429")), 22, Retried),
        row("500", &curl(url("/status/500")), 22, Retried),
        row("502", &curl(url("/status/502")), 22, Retried),
        row("504", &curl(url("/status/504")), 22, Retried),
        row("404", &curl(url("/status/404")), 22, Stopped),
        row("401", &curl(url("/status/401")), 22, Stopped),
        row("403", &curl(url("/status/403")), 22, Stopped),
        row("a reset connection", &curl(url("/reset")), 56, Retried),
        row(
            "a server that never answers",
            &curl(url("/silent")),
            124,
            Retried,
        )
        .cut_at("1s"),
        row("a refused connection", &curl(refused), 7, Retried),
        row(
            "a name that does not resolve",
            &curl(unresolvable_url()),
            6,
            Retried,
        ),
        row(
            "a certificate that does not verify",
            &curl(tls.url()),
            60,
            Stopped,
        ),
    ];
    assert_table(&rows);
}

/// Run `command` (whose answer asks for a 1 s wait) under its preset, and assert the wait
/// before the second attempt was the one asked for.
fn assert_waits_as_asked(http: &FaultyHttp, path: &str, command: &[&str]) {
    let scratch = Scratch::new();
    let run = under_preset(&[])
        .args(command)
        .current_dir(scratch.path("."))
        .run();
    let wait = run.event("wait");
    assert_eq!(wait["cause"], "requested", "{run}");
    assert_eq!(wait["wait_ms"], 1000.0, "{run}");
    assert_eq!(http.requests(path), 2, "{run}");
}

#[test]
fn retry_after_sets_the_wait_where_curl_or_wget_shows_it() {
    let http = FaultyHttp::start();
    let (curl, wget) = ("/status/503/after/1", "/status/429/after/1/wget");
    let shown = http.url(curl);
    assert_waits_as_asked(
        &http,
        curl,
        &["curl", "-fsS", "-v", "-o", "/dev/null", &shown],
    );
    let shown = http.url(wget);
    assert_waits_as_asked(&http, wget, &["wget", "-q", "-S", "-t", "1", &shown]);
}

#[test]
fn wget_retries_what_is_transient_and_stops_at_what_is_not() {
    needed("wget");
    let http = FaultyHttp::start();
    let tls = UntrustedTls::start();
    let refused = format!("http://127.0.0.1:{}/", refusing_port());
    let url = |path: &str| http.url(path);
    // wget tries a reset or refused connection, and a 504, 20 times itself over minutes; one
    // try each shows what the preset makes of the failure it gives up on.
    let rows = [
        row("503", &["wget", "-q", &url("/status/503")], 8, Retried),
        row(
            "429 with Retry-After",
            &["wget", "-q", &url("/status/429/after/0")],
            8,
            Retried,
        ),
        row(
            "429 without",
            &["wget", "-q", &url("/status/429")],
            8,
            Retried,
        ),
        row("500", &["wget", "-nv", &url("/status/500")], 8, Retried),
        row("502", &["wget", "-nv", &url("/status/502")], 8, Retried),
        row(
            "504",
            &["wget", "-nv", "-t", "1", &url("/status/504")],
            4,
            Retried,
        ),
        row("404", &["wget", "-nv", &url("/status/404")], 8, Stopped),
        row("403", &["wget", "-nv", &url("/status/403")], 8, Stopped),
        row("401", &["wget", "-q", &url("/status/401")], 6, Stopped),
        row(
            "a reset connection",
            &["wget", "-q", "-t", "1", &url("/reset")],
            4,
            Retried,
        ),
        row(
            "a server that never answers",
            &["wget", "-q", &url("/silent")],
            124,
            Retried,
        )
        .cut_at("1s"),
        row(
            "a refused connection",
            &["wget", "-q", "-t", "1", &refused],
            4,
            Retried,
        ),
        row(
            "a name that does not resolve",
            &["wget", "-q", &unresolvable_url()],
            4,
            Retried,
        ),
        row(
            "a certificate that does not verify",
            &["wget", "-q", &tls.url()],
            5,
            Stopped,
        ),
        // wget -q prints nothing, and exits 8 for every error answer: a 404 cannot be told
        // from a 503, and is retried.
        row(
            "404, with -q",
            &["wget", "-q", &url("/status/404")],
            8,
            Retried,
        ),
    ];
    assert_table(&rows);
}
