//! Starting a process, an attempt's or a hook's: the one place where the tool becomes two.
//!
//! Between the split and `exec` the child, in this order: gets its stdin, stdout and stderr
//! (pipes, when asked for, or closed, as the tool's parent left the tool's), a process group of its own (unless `--foreground`), SIGTERM as its
//! parent-death signal (unless it is to outlive the tool), the terminal (when the tool hands it
//! over), every signal the tool handles back at its default and SIGPIPE as the tool's parent
//! left it, and only then the signal mask the tool started with; then it executes the command, searched for in `PATH`, with the
//! environment built once for the run (`environ`). Everything it uses is made before the split,
//! so it allocates nothing.
//!
//! On Linux the split is `clone(CLONE_VM | CLONE_VFORK)`, as glibc's and musl's `posix_spawn`
//! make it: the child runs on a stack of its own in the tool's memory until `exec`, while the
//! tool waits, so nothing of the tool's memory is copied (a `fork` copies its page tables, and
//! then every page either side writes). nix's `posix_spawnp` would take every step above but two:
//! POSIX has no parent-death signal, and hands the terminal over only through glibc's
//! `posix_spawn_file_actions_addtcsetpgrp_np`, which musl (the release build) lacks. Both are
//! promises the tool makes (a command outlives no `kill -9` of the tool; Ctrl-C reaches the
//! attempt from its first instruction), so the split stays the tool's own, at the same cost
//! (BENCHMARKS.md, "Starting a process", measures the ways). (Valgrind runs such a clone as a
//! fork, so under it a command that cannot be executed shows as one that exited 127.) This is
//! `clone.rs`.
//!
//! Elsewhere (macOS, the BSDs, where there is no parent-death signal) nix's `posix_spawnp` takes
//! the same steps in the same order, the signals' defaults before the mask, and the tool hands
//! the terminal over as soon as the child exists (`posix.rs`).

#[cfg(target_os = "linux")]
use std::ffi::c_char;
use std::ffi::{CString, OsStr, OsString};
use std::fmt;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;

use nix::unistd::{Pid, tcgetpgrp, tcsetpgrp};

use crate::environ::Environ;
use crate::signals::ChildMask;

#[cfg(target_os = "linux")]
mod clone;
#[cfg(not(target_os = "linux"))]
mod posix;

/// Where a child's stdin, stdout or stderr comes from.
#[derive(Clone, Copy, Debug)]
pub enum ChildStdio<'a> {
    /// The tool's own.
    Inherit,
    /// A new pipe to the tool.
    Pipe,
    /// This open descriptor of the tool's (`/dev/null`, or the tool's stderr for a hook's
    /// stdout).
    From(BorrowedFd<'a>),
    /// None: closed, as the tool's own was when it started (`retry ... >&-`), which std's
    /// runtime then opened on `/dev/null` for the tool alone.
    Closed,
}

/// What the child does with one of its stdin, stdout and stderr before `exec`.
#[derive(Clone, Copy, Debug)]
enum ChildEnd<'a> {
    /// Keeps the tool's.
    Keep,
    /// Takes this descriptor in its place.
    Take(BorrowedFd<'a>),
    /// Closes it.
    Close,
}

/// What a child is started with, besides its command line; it borrows what the child's steps
/// point into (the environment table, the terminal), so that neither can change or go while a
/// start uses it.
pub struct Setup<'a> {
    /// The environment, installed as it stands.
    pub environ: Environ<'a>,
    /// Where stdin, stdout and stderr come from.
    pub stdio: [ChildStdio<'a>; 3],
    /// Whether it leads a process group of its own.
    pub own_group: bool,
    /// Whether it is meant to outlive the tool (a lease's keeper): then it gets no parent-death
    /// signal, so that no end of the tool, however early, can stop it before it takes charge.
    pub outlives_the_tool: bool,
    /// The terminal to take, if the tool hands it over.
    pub handover: Option<Handover<'a>>,
    /// The signal mask and SIGPIPE disposition to restore.
    pub mask: ChildMask,
}

/// A started child: its process, and the tool's ends of the pipes it was given.
#[derive(Debug)]
pub struct Started {
    /// The child's process.
    pub pid: Pid,
    /// Where the tool writes what the child reads, when stdin is a pipe.
    pub stdin: Option<OwnedFd>,
    /// Where the tool reads the child's stdout, when it is a pipe.
    pub stdout: Option<OwnedFd>,
    /// Where the tool reads the child's stderr, when it is a pipe.
    pub stderr: Option<OwnedFd>,
}

/// Why a start failed: the step, and the error of the call that failed in it.
#[derive(Debug)]
pub struct StartError {
    /// The step that failed.
    pub step: Step,
    /// The error of its call.
    pub error: io::Error,
}

/// The steps of a start. Only [`Step::Execute`] is about the command: every other failure is
/// the tool's own, whatever its error number says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Making the pipes.
    Prepare,
    /// Becoming two processes (`clone`): refused by a limit, by memory, by a seccomp filter.
    /// (`posix_spawnp` reports this as a failed exec.)
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    Split,
    /// The child's own steps before `exec`: its descriptors, group, terminal and mask.
    /// (`posix_spawnp` reports these as a failed exec too.)
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    Setup,
    /// Executing the command.
    Execute,
}

impl fmt::Display for StartError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let step = match self.step {
            Step::Prepare => "cannot make its pipes",
            Step::Split => "cannot start a process",
            Step::Setup => "cannot set up the process before executing it",
            Step::Execute => "cannot execute it",
        };
        write!(f, "{step}: {}", self.error)
    }
}

impl StartError {
    fn at(step: Step) -> impl FnOnce(io::Error) -> StartError {
        move |error| StartError { step, error }
    }
}

/// Starts the processes of one command line, with what every start shares made once.
pub struct Launcher {
    /// The program, then its arguments, as C strings.
    words: Vec<CString>,
    /// Pointers to `words`, then a null: the child's `argv`, made again for each start.
    #[cfg(target_os = "linux")]
    argv: Vec<*const c_char>,
    #[cfg(target_os = "linux")]
    stack: clone::Stack,
}

/// What a child needs to take the terminal between the split and `exec`: it borrows the tool's
/// open terminal, which must stay open until the child has exec'd.
#[derive(Clone, Copy, Debug)]
pub struct Handover<'a> {
    tty: BorrowedFd<'a>,
    from: Pid,
}

impl<'a> Handover<'a> {
    /// Hand the terminal `tty` over, if the tool's process group `from` holds it then.
    pub fn new(tty: BorrowedFd<'a>, from: Pid) -> Self {
        Handover { tty, from }
    }

    /// Make the process group `group` the terminal's foreground, if the tool's group holds it:
    /// the child's own, as it starts. Async-signal-safe (`tcgetpgrp` and `tcsetpgrp` only);
    /// SIGTTOU must be blocked.
    fn give_to(self, group: Pid) {
        if tcgetpgrp(self.tty).ok() == Some(self.from) {
            let _ = tcsetpgrp(self.tty, group);
        }
    }
}

impl Launcher {
    /// Prepare to start `program` with `args`; fails only when a word cannot be a C string (a
    /// NUL byte) or no stack can be made for the child.
    pub fn new(program: &OsStr, args: &[OsString]) -> io::Result<Self> {
        let words = std::iter::once(program)
            .chain(args.iter().map(OsString::as_os_str))
            .map(|word| CString::new(word.as_bytes()))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Launcher {
            words,
            #[cfg(target_os = "linux")]
            argv: Vec::new(),
            #[cfg(target_os = "linux")]
            stack: clone::Stack::new()?,
        })
    }
}

/// The pipes of one start: for each of stdin, stdout and stderr, the tool's end and the
/// child's, when it is piped.
struct Pipes([Option<(OwnedFd, OwnedFd)>; 3]);

impl Pipes {
    fn new(stdio: [ChildStdio<'_>; 3]) -> io::Result<Self> {
        let mut pipes = [None, None, None];
        for (slot, (pipe, wanted)) in pipes.iter_mut().zip(stdio).enumerate() {
            if !matches!(wanted, ChildStdio::Pipe) {
                continue;
            }
            let (read, write) = cloexec_pipe()?;
            // The child reads its stdin and writes the other two.
            *pipe = Some(if slot == 0 {
                (write, read)
            } else {
                (read, write)
            });
        }
        Ok(Pipes(pipes))
    }

    /// What the child does with its stdin, stdout and stderr: takes a pipe's end or a
    /// descriptor `stdio` names, closes it, or keeps the tool's own.
    fn child_ends<'a>(&'a self, stdio: [ChildStdio<'a>; 3]) -> [ChildEnd<'a>; 3] {
        let mut ends = [ChildEnd::Keep; 3];
        for ((end, pipe), given) in ends.iter_mut().zip(&self.0).zip(stdio) {
            *end = match (pipe, given) {
                (Some((_, child)), _) => ChildEnd::Take(child.as_fd()),
                (None, ChildStdio::From(fd)) => ChildEnd::Take(fd),
                (None, ChildStdio::Closed) => ChildEnd::Close,
                (None, _) => ChildEnd::Keep,
            };
        }
        ends
    }

    /// The tool's ends for the started attempt `pid`; the child's ends close.
    fn started(self, pid: Pid) -> Started {
        let [stdin, stdout, stderr] = self.0.map(|pipe| pipe.map(|(tool, _)| tool));
        Started {
            pid,
            stdin,
            stdout,
            stderr,
        }
    }
}

/// A pipe whose ends are closed on `exec`: the tool's only, and the child's only once it has
/// made a copy of its end as stdin, stdout or stderr.
#[cfg(target_os = "linux")]
fn cloexec_pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    Ok(nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)?)
}

/// A pipe whose ends are closed on `exec` (there is no `pipe2` on macOS: only the thread that
/// starts children makes pipes, so no other start sees them open between the two calls).
#[cfg(not(target_os = "linux"))]
fn cloexec_pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    use nix::fcntl::{FcntlArg, FdFlag, fcntl};
    let (read, write) = nix::unistd::pipe()?;
    for end in [&read, &write] {
        fcntl(end, FcntlArg::F_SETFD(FdFlag::FD_CLOEXEC))?;
    }
    Ok((read, write))
}
