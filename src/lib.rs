//! `retry`: run a command again when it fails, with capped exponential backoff and jitter.
//!
//! The binary parses a [`Cli`] and hands it to [`run`], which resolves it once into a `Config`
//! and either prints the plan of waits, shows a budget, or runs the retry loop (`retry-policy`)
//! with the real process runner, clock, budget (`retry-budget`) and reporter. The modules are
//! private; this crate's interface is the few items the binary needs, plus hidden ones for the
//! tests and the fuzz target. What the tool decides lives in `retry-policy`, tested there
//! without processes or sleeping.

#![forbid(unsafe_code)]

mod end_files;
mod environment;
mod examples;
mod first_and_last;
mod git_remote;
mod held_job;
mod http;
mod invocation;
mod job_history;
mod lease_keeper;
mod lifecycle;
mod monitor;
mod options;
mod output;
mod overlap;
mod plan;
mod process;
#[cfg(test)]
mod reference;
mod report;
mod spill;
mod trace;

pub use invocation::{Started, prepare, run, say_error};
pub use lease_keeper::{ARGUMENT as KEEP_LEASE, keep as keep_lease};
pub use options::{Cli, full_command, one_line_error};
pub use retry_policy::exit::Exit;
pub use retry_process::signals::die_of;

/// The tables `--help` prints, for the man page the tests generate from the same source.
#[doc(hidden)]
pub mod docs {
    /// `(status, meaning)` rows of the exit-status table.
    pub fn exit_statuses() -> Vec<(&'static str, String)> {
        retry_policy::exit::table()
    }

    /// `(signal, effect)` rows of the signal table.
    pub fn signals() -> Vec<(&'static str, &'static str)> {
        retry_process::signals::TABLE.to_vec()
    }

    /// `(what it does, command line)` examples of `retry`.
    pub fn examples() -> &'static [(&'static str, &'static str)] {
        &crate::examples::RUN
    }

    /// `command` in lines of at most `width` columns, broken where a shell goes on with the
    /// next line (see `--help`'s examples).
    pub fn continued_lines(command: &str, width: usize) -> Vec<String> {
        retry_policy::examples::continued_lines(command, width)
    }

    /// The rows of the precedence of a run's ends, in their order.
    pub fn precedence() -> Vec<retry_policy::precedence::Row> {
        retry_policy::precedence::PRECEDENCE
            .iter()
            .map(|obstacle| obstacle.row())
            .collect()
    }

    /// `(event, keys)` rows of the JSON events, as the reference's table gives them.
    pub fn events() -> &'static [(&'static str, &'static str)] {
        &crate::report::json::EVENTS
    }

    /// `(name, meaning)` rows of the attempt's environment, of a hook's, and of the variables
    /// the tool reads.
    pub fn environment() -> [Vec<(&'static str, &'static str)>; 3] {
        let rows = |variables: &[crate::environment::Variable]| {
            variables
                .iter()
                .map(|variable| (variable.name, variable.meaning))
                .collect()
        };
        [
            rows(&crate::environment::ALL),
            rows(&crate::environment::HOOK),
            rows(&crate::environment::READ),
        ]
    }
}

/// What the fuzz target (`fuzz/`) drives; built only by `cargo fuzz` (`--cfg fuzzing`).
#[cfg(fuzzing)]
#[doc(hidden)]
pub mod fuzzing;
