//! The network people's machines have: a monitor's pings and a trace's export go through the
//! proxy the environment names, as curl's would (a real tinyproxy on loopback): plain HTTP sent
//! to the proxy whole, HTTPS through its tunnel, its credentials sent and never said; `NO_PROXY`
//! goes direct; a proxy that is down is a warning, and the run's status never changes.

use crate::support::harness::retry;
use crate::support::monitor_service::MonitorService;
use crate::support::otlp_receiver::OtlpReceiver;
use crate::support::proxy_server::ProxyServer;
use crate::support::redis_server::free_port;

/// A proxy's credentials, a secret.
const CREDENTIALS: &str = "retry:s3cret-proxy";

#[test]
fn pings_and_spans_go_through_the_proxy_and_its_credentials_are_never_said() {
    let proxy = ProxyServer::start(Some(CREDENTIALS));
    let monitor = MonitorService::answering();
    let receiver = OtlpReceiver::start(false);
    let run = retry(["-n", "1", "--", "true"])
        .env("http_proxy", proxy.url(Some(CREDENTIALS)))
        .env(
            "RETRY_MONITOR",
            format!("healthchecks:{}", monitor.url("/u")),
        )
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint())
        .run();
    run.expect_code(0).expect_no_stderr("warning");
    assert!(!run.stderr().contains("s3cret"), "{run}");
    assert_eq!(monitor.requests().len(), 2, "{:?}", monitor.requests());
    assert_eq!(receiver.requests().len(), 1);
    let log = proxy.log();
    let port = monitor.url("").rsplit(':').next().unwrap().to_string();
    assert!(log.contains(&format!("127.0.0.1:{port}/u/start")), "{log}");
    // Without its credentials, the proxy refuses: said, and the status is the command's.
    let refused = retry(["-n", "1", "--", "true"])
        .env("http_proxy", proxy.url(None))
        .env(
            "RETRY_MONITOR",
            format!("healthchecks:{}", monitor.url("/u")),
        )
        .run();
    refused.expect_code(0).expect_stderr("it answered 407");
}

#[cfg(feature = "tls")]
#[test]
fn https_goes_through_the_proxys_tunnel() {
    use crate::support::proxy_server::sink::TlsSink;
    let proxy = ProxyServer::start(None);
    let sink = TlsSink::start();
    let run = retry(["-n", "1", "--", "sh", "-c", "exit 3"])
        .env("HTTPS_PROXY", proxy.url(None))
        .env("SSL_CERT_FILE", sink.authority())
        .env("RETRY_MONITOR", format!("healthchecks:{}", sink.url("/u")))
        .run();
    run.expect_code(3).expect_no_stderr("warning");
    let requests = sink.requests();
    assert!(
        requests[0].starts_with("POST /u/start?rid="),
        "{requests:?}"
    );
    assert!(requests[1].starts_with("POST /u/3?rid="), "{requests:?}");
    assert!(proxy.log().contains("CONNECT"), "{}", proxy.log());
}

#[test]
fn no_proxy_goes_direct_and_a_proxy_that_is_down_changes_no_status() {
    let down = format!("http://127.0.0.1:{}", free_port());
    let monitor = MonitorService::answering();
    let through = |no_proxy: &str| {
        retry(["-n", "1", "--", "sh", "-c", "exit 4"])
            .env("http_proxy", &down)
            .env("NO_PROXY", no_proxy)
            .env(
                "RETRY_MONITOR",
                format!("healthchecks:{}", monitor.url("/u")),
            )
            .run()
    };
    for no_proxy in ["127.0.0.1", "*", "localhost, 127.0.0.1:1, 127.0.0.1"] {
        let before = monitor.requests().len();
        through(no_proxy).expect_code(4).expect_no_stderr("warning");
        assert_eq!(monitor.requests().len(), before + 2, "{no_proxy}");
    }
    let before = monitor.requests().len();
    let run = through("example.com");
    run.expect_code(4)
        .expect_stderr("through the proxy 127.0.0.1");
    assert_eq!(monitor.requests().len(), before, "nothing went direct");
}
