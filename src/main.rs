//! The `retry` binary: parse the command line, run, and turn the outcome into an exit status.

use std::io::Write;
use std::process::ExitCode;

use clap::error::ErrorKind;
use clap::Parser;
use retry::cli::{one_line_error, Cli};
use retry::exit::{self, Exit};
use retry::signals;

fn main() -> ExitCode {
    let outcome = match Cli::try_parse() {
        Ok(cli) => retry::run(cli),
        Err(err)
            if matches!(
                err.kind(),
                ErrorKind::DisplayHelp | ErrorKind::DisplayVersion
            ) =>
        {
            // A closed stdout (`retry --help | head -1`) is not worth a complaint.
            let _ = err.print();
            Ok(Exit::Status(exit::SUCCESS))
        }
        Err(err) => Err(anyhow::anyhow!(one_line_error(&err))),
    };
    match outcome {
        Ok(Exit::Status(status)) => ExitCode::from(status),
        Ok(Exit::KilledBy(signal)) => signals::die_of(signal),
        Err(err) => {
            let _ = writeln!(std::io::stderr(), "retry: {err:#}");
            ExitCode::from(exit::USAGE)
        }
    }
}
