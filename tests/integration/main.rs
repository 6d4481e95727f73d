//! Integration tests: the real `retry` binary against real child processes.

mod completions;
mod fleet;
mod generated;
mod harness;
mod hooks;
mod layers;
mod man;
mod option_table;
mod output;
mod plan;
mod process;
mod pty;
mod recipes;
// Its TLS server is for the `tls` build's tests.
#[cfg_attr(not(feature = "tls"), allow(dead_code))]
mod redis_server;
mod report;
mod requested;
mod run;
mod shared_budget;
mod simulate;
mod stalled_readers;
mod store_password;
mod stress;
mod untrusted_store;
mod usage;
