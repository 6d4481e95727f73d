//! The `retry` binary: parse the command line, run, and turn the outcome into an exit status.
//!
//! No Rust `main` runtime (`#![no_main]`, see `retry::startup`): it costs more instructions at
//! start-up than the rest of a short run, and a wrapper's overhead is paid on every command.
#![no_main]

use std::ffi::{c_char, c_int};
use std::io::Write;

use clap::error::ErrorKind;
use clap::Parser;
use retry::cli::{one_line_error, Cli};
use retry::exit::{self, Exit};
use retry::process::{signals, startup};
use retry::report::message::printable;

#[no_mangle]
extern "C" fn main(_argc: c_int, _argv: *const *const c_char) -> c_int {
    let inherited = startup::prepare();
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let outcome = match Cli::try_parse_from(&args) {
        Ok(cli) => retry::run(cli, inherited),
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
        Err(err) => Err(anyhow::anyhow!(one_line_error(&err, &args))),
    };
    // Without std's runtime nothing flushes stdout at exit.
    let _ = std::io::stdout().flush();
    match outcome {
        Ok(Exit::Status(status)) => c_int::from(status),
        Ok(Exit::KilledBy(signal)) => signals::die_of(signal),
        Err(err) => {
            let _ = writeln!(
                std::io::stderr(),
                "retry: {}",
                printable(&format!("{err:#}"))
            );
            c_int::from(exit::USAGE)
        }
    }
}
