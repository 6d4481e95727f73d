//! What the test targets share: running the binary with a time limit (`harness`), a terminal of
//! their own (`pty`), a real redis-server on a private address (`redis_server`, whose
//! certificates serve the presets' TLS servers too) and the clusters and sentinels made of them
//! (`redis_fleet`), a small HTTP service (`http_service`), a stand-in for a heartbeat
//! monitor (`monitor_service`), a trace collector (`otlp_receiver`), and a real proxy with an
//! HTTPS server behind it (`proxy_server`).

pub(crate) mod harness;
// Only the integration tests serve HTTP this way; the presets' tests have a faultier server.
#[allow(dead_code)]
pub(crate) mod http_service;
// Only the integration tests tell a monitor.
#[allow(dead_code)]
pub(crate) mod monitor_service;
// Only the integration tests collect traces.
#[allow(dead_code)]
pub(crate) mod otlp_receiver;
// Only the integration tests go through a proxy.
#[allow(dead_code)]
pub(crate) mod proxy_server;
pub(crate) mod pty;
// Only the integration tests run clusters and sentinels; the presets' tests use none.
#[allow(dead_code)]
pub(crate) mod redis_fleet;
// Its TLS server is for the `tls` build's tests.
#[cfg_attr(not(feature = "tls"), allow(dead_code))]
pub(crate) mod redis_server;
