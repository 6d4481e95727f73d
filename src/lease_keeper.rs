//! The process that keeps a run's lease on a shared store while the run's work goes on, as the
//! kernel keeps a lock on this machine while any of its holders lives: the run starts it
//! beside its first attempt (its own binary, with [`ARGUMENT`]), hands it the lease's secret
//! token on a pipe, and keeps the pipe's other end open, as every attempt does (they inherit
//! it). The keeper renews the lease until that end is closed everywhere, then gives it back.
//! So a run killed with SIGKILL leaves its job held for as long as its attempt, told to stop,
//! still runs, and no longer (within a renewal).
//!
//! It is a process of its own, in a process group of its own (no Ctrl-C of the run's reaches
//! it), started without the parent-death signal the tool's other children get (were it to
//! clear it once running, a run killed while it starts up would take it along), with the run's
//! whole environment (so the store is found, and logged in to, as the run did), and it never
//! outlives the last holder of the pipe by more than a renewal.

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::process::ExitCode;

use nix::fcntl::{FcntlArg, FdFlag, fcntl};

use crate::environment;
use retry_budget::BudgetName;
use retry_budget::store::{Location, StoreSettings};
use retry_process::signals::SignalWatch;
use retry_sys::environ::ChildEnvironment;
use retry_sys::spawn::{ChildStdio, Launcher, Setup};

/// The first argument of `retry` that makes it a lease's keeper: never a program's name.
pub const ARGUMENT: &str = "--keep-job-lease";

/// The longest token the keeper reads.
const MOST_TOKEN: usize = 128;

/// Start the keeper of the lease held in `token` on the job `job`, in the store `flag` names
/// (`--budget-store`, else the environment's), with the signal mask `watch` gives children;
/// the end of the pipe that keeps it going, left open across `exec` for the attempts.
///
/// It is started as every child of the tool is (`retry_sys::spawn`, which a run has linked
/// already: std's `Command` would add thirty symbols for the loader to bind at every start),
/// with the tool's whole environment.
pub(crate) fn start(
    token: &str,
    job: &str,
    flag: Option<&str>,
    watch: &SignalWatch,
) -> io::Result<OwnedFd> {
    let program = std::env::current_exe()?;
    let args: Vec<OsString> = [ARGUMENT, job]
        .into_iter()
        .chain(flag)
        .map(OsString::from)
        .collect();
    let mut launcher = Launcher::new(program.as_os_str(), &args)?;
    let environment = ChildEnvironment::inheriting(|_| true);
    let null = File::options().read(true).write(true).open("/dev/null")?;
    let setup = Setup {
        environ: environment.environ(),
        stdio: [
            ChildStdio::Pipe,
            ChildStdio::From(null.as_fd()),
            ChildStdio::From(null.as_fd()),
        ],
        own_group: true,
        outlives_the_tool: true,
        handover: None,
        mask: watch.child_mask(),
    };
    let started = launcher.start(&setup).map_err(|err| err.error)?;
    let run_end = started
        .stdin
        .ok_or_else(|| io::Error::other("no pipe to the keeper"))?;
    let mut run_end = File::from(run_end);
    run_end.write_all(format!("{token}\n").as_bytes())?;
    fcntl(&run_end, FcntlArg::F_SETFD(FdFlag::empty()))?;
    Ok(run_end.into())
}

/// Be the keeper (`args`: `retry --keep-job-lease JOB [STORE]`, the token on stdin): keep the
/// lease until stdin is closed everywhere.
pub fn keep(args: &[OsString]) -> ExitCode {
    let job = args
        .get(2)
        .and_then(|job| job.to_str()?.parse::<BudgetName>().ok());
    let flag = args.get(3).and_then(|flag| flag.to_str());
    let store = StoreSettings::resolve(flag, &environment::own, "the lease's keeper");
    let (Some(job), Ok(store)) = (job, store) else {
        return ExitCode::FAILURE;
    };
    let Location::Shared { address, .. } = store.location else {
        return ExitCode::FAILURE;
    };
    let stdin = io::stdin();
    let Some(token) = token(&stdin) else {
        return ExitCode::FAILURE;
    };
    retry_budget::job::keep_lease(&address, &job, &token, &stdin);
    ExitCode::SUCCESS
}

/// The token, the first line of `input`, read a byte at a time from the descriptor (no buffer
/// takes more of the pipe).
fn token(input: &impl AsFd) -> Option<String> {
    let mut token = Vec::new();
    let mut byte = [0u8];
    while token.len() <= MOST_TOKEN {
        match nix::unistd::read(input.as_fd(), &mut byte) {
            Ok(1) if byte[0] == b'\n' => return String::from_utf8(token).ok(),
            Ok(1) => token.push(byte[0]),
            _ => return None,
        }
    }
    None
}
