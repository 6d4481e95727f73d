//! The `retry` binary: parse the command line, run, and turn the outcome into an exit status.
//!
//! No Rust `main` runtime (`#![no_main]`, see `retry_exec::prepare`): it costs more instructions at
//! start-up than the rest of a short run, and a wrapper's overhead is paid on every command.
#![no_main]

use std::ffi::{c_char, c_int, CStr, OsString};
use std::io::{self, Write};
use std::os::unix::ffi::OsStrExt;

use clap::error::ErrorKind;
use retry_exec::{Cli, Exit};

#[no_mangle]
extern "C" fn main(argc: c_int, argv: *const *const c_char) -> c_int {
    let inherited = retry_exec::prepare();
    // SAFETY: the C runtime passes `argc` valid C strings in `argv`.
    let args = unsafe { arguments(argc, argv) };
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
    // Without std's runtime nothing flushes stdout at exit.
    let _ = io::stdout().flush();
    match outcome {
        Ok(Exit::Stopped(signal)) => retry_exec::die_of(signal),
        Ok(exit) => c_int::from(exit.status()),
        // A reader that went away early (`retry simulate | head -1`) ends the tool quietly.
        Err(err) if is_broken_pipe(&err) => c_int::from(Exit::Success.status()),
        Err(err) => {
            retry_exec::say_error(&format!("{err:#}"), &args);
            c_int::from(Exit::ToolFailed.status())
        }
    }
}

/// The arguments, from C's `main`: std's `args_os` would be empty without its runtime on every
/// libc but glibc (musl, macOS, the BSDs), which std reads them from differently.
///
/// # Safety
/// `argv` must hold `argc` pointers to valid C strings.
unsafe fn arguments(argc: c_int, argv: *const *const c_char) -> Vec<OsString> {
    let count = usize::try_from(argc).unwrap_or(0);
    (0..count)
        .map(|index| {
            // SAFETY: the caller promises `argc` valid C strings in `argv`.
            let arg = unsafe { CStr::from_ptr(*argv.add(index)) };
            OsString::from(std::ffi::OsStr::from_bytes(arg.to_bytes()))
        })
        .collect()
}

/// Whether `err` comes from writing to a closed pipe.
fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<io::Error>()
            .is_some_and(|err| err.kind() == io::ErrorKind::BrokenPipe)
    })
}
