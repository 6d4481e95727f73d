//! The `retry-sim` binary: parse the command line, run the experiment it names, and end quietly
//! when the reader of the table goes away (`retry-sim | head -1`).

#![forbid(unsafe_code)]

use std::io;
use std::process::ExitCode;

use clap::Parser;
use retry_sim::options::SimulateCommand;

fn main() -> ExitCode {
    let command = SimulateCommand::parse();
    let outcome = command
        .settings()
        .map_err(anyhow::Error::new)
        .and_then(|settings| retry_sim::run(&settings));
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) if is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("retry-sim: {err:#}");
            ExitCode::from(2)
        }
    }
}

/// Whether `err` comes from writing to a closed pipe.
fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<io::Error>()
            .is_some_and(|err| err.kind() == io::ErrorKind::BrokenPipe)
    })
}
