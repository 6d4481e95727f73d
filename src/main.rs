//! The `retry` binary: parse the command line, run, and turn the outcome into an exit status.
//!
//! No Rust `main` runtime (`#![no_main]`, see `retry::prepare`): it costs more instructions at
//! start-up than the rest of a short run, and a wrapper's overhead is paid on every command.
#![no_main]

use std::ffi::{c_char, c_int, OsString};
use std::io::{self, Write};

use clap::error::ErrorKind;
use clap::Parser;
use retry::{Cli, Exit};

#[no_mangle]
extern "C" fn main(_argc: c_int, _argv: *const *const c_char) -> c_int {
    let inherited = retry::prepare();
    let args: Vec<OsString> = std::env::args_os().collect();
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
            Ok(Exit::Success)
        }
        Err(err) => Err(anyhow::anyhow!(retry::one_line_error(&err, &args))),
    };
    // Without std's runtime nothing flushes stdout at exit.
    let _ = io::stdout().flush();
    match outcome {
        Ok(Exit::Stopped(signal)) => retry::die_of(signal),
        Ok(exit) => c_int::from(exit.status()),
        // A reader that went away early (`retry simulate | head -1`) ends the tool quietly.
        Err(err) if is_broken_pipe(&err) => c_int::from(Exit::Success.status()),
        Err(err) => {
            retry::say_error(&format!("{err:#}"));
            c_int::from(Exit::ToolFailed.status())
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
