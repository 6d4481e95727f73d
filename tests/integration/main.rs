//! Integration tests: the real `retry` binary against real child processes.

mod fleet;
mod generated;
mod harness;
mod output;
mod plan;
mod process;
mod pty;
mod report;
mod run;
mod simulate;
mod stress;
mod usage;
