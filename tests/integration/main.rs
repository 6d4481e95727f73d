//! Integration tests: the real `retry` binary against real child processes.

mod completions;
mod fleet;
mod generated;
mod harness;
mod man;
mod output;
mod package;
mod plan;
mod process;
mod pty;
mod recipes;
mod report;
mod run;
mod simulate;
mod stress;
mod usage;
