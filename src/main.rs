//! The `retry` binary: parse the command line, run, and turn the outcome into an exit status.

#![forbid(unsafe_code)]

use std::ffi::OsString;
use std::io;
use std::process::ExitCode;

use clap::error::ErrorKind;
use retry_exec::{Cli, Exit};

/// The static musl build (the release archive's) allocates with dlmalloc (`sys::allocator`
/// says why); the default build keeps glibc's allocator.
#[cfg(target_env = "musl")]
#[global_allocator]
static ALLOCATOR: retry_sys::allocator::Allocator = retry_sys::allocator::Allocator::new();

fn main() -> ExitCode {
    let inherited = retry_exec::prepare();
    let args: Vec<OsString> = std::env::args_os().collect();
    if args
        .get(1)
        .is_some_and(|first| first == retry_exec::KEEP_LEASE)
    {
        return retry_exec::keep_lease(&args);
    }
    let outcome = match Cli::parse_args(&args) {
        Ok(cli) => retry_exec::run(cli, inherited),
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
        Err(err) => Err(anyhow::anyhow!(retry_exec::one_line_error(&err, &args))),
    };
    match outcome {
        Ok(Exit::Stopped(signal)) => retry_exec::die_of(signal),
        Ok(exit) => ExitCode::from(exit.status()),
        // A reader that went away early (`retry --plan | head -1`) ends the tool quietly.
        Err(err) if is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            retry_exec::say_error(&format!("{err:#}"), &args);
            ExitCode::from(Exit::ToolFailed.status())
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
