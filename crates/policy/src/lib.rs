//! What `retry` decides, with no I/O: the waits (durations, backoff and jitter, the seed), the
//! rules an attempt is judged by (exit statuses, output patterns, the presets' rules), what a
//! run makes of each attempt and how it ends (outcomes, exit statuses), and the retry loop
//! itself, with its ports: the clock, the attempts, the budget, the hooks and the reporter come
//! in through traits, and the tests drive it with fakes that never sleep.
//!
//! Nothing here reads a file, starts a process or takes a signal: the `retry` binary does, and
//! hands the results in. So this crate builds and tests with nothing but the Rust toolchain.

#![forbid(unsafe_code)]

pub use error::Error;

pub mod attempts;
pub mod backoff;
pub mod causes;
pub mod choice;
pub mod codes;
pub mod deadline;
pub mod duration;
pub mod encoding;
pub mod error;
pub mod events;
pub mod examples;
pub mod exit;
pub mod job_end;
pub mod matching;
pub mod nesting;
pub mod numbers;
pub mod outcome;
pub mod precedence;
pub mod presets;
pub mod printable;
pub mod requested;
pub mod requests;
pub mod rules;
pub mod run;
pub mod run_id;
pub mod seed;
pub mod signal;
pub mod target;
pub mod termination;
pub mod timestamp;
pub mod trace_context;
pub mod verdict;
pub mod waiting;
