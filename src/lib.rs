//! `retry`: run a command again when it fails, with capped exponential backoff and jitter.
//!
//! The binary parses a [`Cli`] and hands it to [`run`], which resolves it once into a `Config`
//! and either simulates, prints the plan of waits, or runs the retry loop with the real process
//! runner, clock, budget and reporter. The modules are private; this crate's interface is the few
//! items the binary needs, plus hidden ones for the tests and the fuzz target. The pure modules
//! (`backoff`, `policy`, `codes`, `budget`'s arithmetic, `duration`, `attempts`, `config`) and the
//! loop are tested without processes or sleeping, and mutation-tested.

mod attempts;
mod backoff;
mod budget;
mod cli;
mod codes;
mod config;
mod duration;
mod environment;
mod examples;
mod exit;
mod first_and_last;
mod invocation;
mod named_files;
mod names;
mod nesting;
mod outcome;
mod output;
mod plan;
mod policy;
mod presets;
mod process;
#[cfg(test)]
mod reference;
mod report;
mod requested;
mod retry_loop;
mod seed;
mod signals;
mod simulate;
mod spill;
mod termination;

pub use cli::{Cli, full_command, one_line_error};
pub use exit::Exit;
pub use invocation::{prepare, run, say_error};
pub use signals::startup::Inherited;
pub use signals::{Signal, die_of};

/// The tables `--help` prints, for the man page the tests generate from the same source.
#[doc(hidden)]
pub mod docs {
    /// `(status, meaning)` rows of the exit-status table.
    pub fn exit_statuses() -> Vec<(&'static str, String)> {
        crate::exit::table()
    }

    /// `(signal, effect)` rows of the signal table.
    pub fn signals() -> Vec<(&'static str, &'static str)> {
        crate::signals::TABLE.to_vec()
    }

    /// `(what it does, command line)` examples of `retry`, of `retry simulate` (contention),
    /// of `retry simulate load` and of `retry simulate metastable`.
    pub fn examples() -> [&'static [(&'static str, &'static str)]; 4] {
        [
            &crate::examples::RUN,
            &crate::examples::CONTENTION,
            &crate::examples::LOAD,
            &crate::examples::METASTABLE,
        ]
    }

    /// `command` in lines of at most `width` columns, broken where a shell goes on with the
    /// next line (see `--help`'s examples).
    pub fn continued_lines(command: &str, width: usize) -> Vec<String> {
        crate::examples::continued_lines(command, width)
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
