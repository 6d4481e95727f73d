//! Starting an attempt's process: the one place where the tool becomes two.
//!
//! Between the split and `exec` the child, in this order: gets SIGPIPE back at its default (std's
//! runtime ignores it in the tool), its stdin, stdout and stderr (pipes, when asked for), a
//! process group of its own (unless `--foreground`), SIGTERM as its parent-death signal, the
//! terminal (when the tool hands it over), and the signal mask the tool started with; then it
//! executes the command, searched for in `PATH`, with the environment built once for the run
//! (`environ`). Everything it uses is made before the split, so it allocates nothing.
//!
//! On Linux the split is `clone(CLONE_VM | CLONE_VFORK)`, as `posix_spawn` makes it: the child
//! runs on a stack of its own in the tool's memory until `exec`, while the tool waits, so
//! nothing of the tool's memory is copied (a `fork` copies its page tables, and then every page
//! either side writes: most of an attempt's system time, when this was measured). `posix_spawn`
//! itself cannot set a parent-death signal. (Valgrind runs such a clone as a fork, so under it a
//! command that cannot be executed shows as one that exited 127.) Elsewhere std's `Command`
//! forks, and the same steps run in its `pre_exec`.

use std::ffi::CString;
#[cfg(target_os = "linux")]
use std::ffi::c_char;
use std::fmt;
use std::io;
use std::os::fd::{BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;

use nix::unistd::Pid;

use crate::process::command_line::CommandLine;
use crate::process::environ::Environ;
use crate::process::terminal::Handover;
use crate::signals::ChildMask;

/// Where a child's stdin, stdout or stderr comes from.
#[derive(Clone, Copy, Debug)]
pub(crate) enum ChildStdio<'a> {
    /// The tool's own.
    Inherit,
    /// A new pipe to the tool.
    Pipe,
    /// This open descriptor of the tool's (`/dev/null`, or the tool's stderr for a hook's
    /// stdout).
    From(BorrowedFd<'a>),
}

/// What a child is started with, besides its command line; it borrows what the child's steps
/// point into (the environment table, the terminal), so that neither can change or go while a
/// start uses it.
pub(crate) struct Setup<'a> {
    /// The environment, installed as it stands.
    pub(crate) environ: Environ<'a>,
    /// Where stdin, stdout and stderr come from.
    pub(crate) stdio: [ChildStdio<'a>; 3],
    /// Whether it leads a process group of its own.
    pub(crate) own_group: bool,
    /// The terminal to take, if the tool hands it over.
    pub(crate) handover: Option<Handover<'a>>,
    /// The signal mask and SIGPIPE disposition to restore.
    pub(crate) mask: ChildMask,
}

/// A started child: its process, and the tool's ends of the pipes it was given.
#[derive(Debug)]
pub(crate) struct Started {
    pub(crate) pid: Pid,
    /// Where the tool writes what the child reads, when stdin is a pipe.
    pub(crate) stdin: Option<OwnedFd>,
    /// Where the tool reads the child's stdout and stderr, when they are pipes.
    pub(crate) stdout: Option<OwnedFd>,
    pub(crate) stderr: Option<OwnedFd>,
}

/// Why a start failed: the step, and the error of the call that failed in it.
#[derive(Debug)]
pub(crate) struct StartError {
    pub(crate) step: Step,
    pub(crate) error: io::Error,
}

/// The steps of a start. Only [`Step::Execute`] is about the command: every other failure is
/// the tool's own, whatever its error number says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// Making the pipes.
    Prepare,
    /// Becoming two processes (`clone`, `fork`): refused by a limit, by memory, by a seccomp
    /// filter. (Where std's `Command` starts children, it reports this as a failed exec.)
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    Split,
    /// The child's own steps before `exec`: its descriptors, group, terminal and mask.
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
pub(crate) struct Launcher {
    /// The program, then its arguments, as C strings.
    words: Vec<CString>,
    /// Pointers to `words`, then a null: the child's `argv`, made again for each start.
    #[cfg(target_os = "linux")]
    argv: Vec<*const c_char>,
    #[cfg(target_os = "linux")]
    stack: linux::Stack,
}

impl Launcher {
    /// Prepare to start `command`; fails only when its words cannot be C strings (a NUL byte)
    /// or no stack can be made for the child.
    pub(crate) fn new(command: &CommandLine) -> io::Result<Self> {
        let words = std::iter::once(command.program())
            .chain(command.args().iter().map(|arg| arg.as_os_str()))
            .map(|word| CString::new(word.as_bytes()))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Launcher {
            words,
            #[cfg(target_os = "linux")]
            argv: Vec::new(),
            #[cfg(target_os = "linux")]
            stack: linux::Stack::new()?,
        })
    }
}

/// The pipes of one start: for each of stdin, stdout and stderr, the tool's end and the
/// child's, when it is piped.
#[cfg(target_os = "linux")]
struct Pipes([Option<(OwnedFd, OwnedFd)>; 3]);

#[cfg(target_os = "linux")]
impl Pipes {
    fn new(stdio: [ChildStdio<'_>; 3]) -> io::Result<Self> {
        let mut pipes = [None, None, None];
        for (slot, (pipe, wanted)) in pipes.iter_mut().zip(stdio).enumerate() {
            if !matches!(wanted, ChildStdio::Pipe) {
                continue;
            }
            let (read, write) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)?;
            // The child reads its stdin and writes the other two.
            *pipe = Some(if slot == 0 {
                (write, read)
            } else {
                (read, write)
            });
        }
        Ok(Pipes(pipes))
    }

    /// The descriptor the child takes as stdin, stdout and stderr (a pipe's end, or one `stdio`
    /// names), or -1 for the tool's own.
    fn child_ends(&self, stdio: [ChildStdio<'_>; 3]) -> [libc::c_int; 3] {
        use std::os::fd::AsRawFd;
        let mut ends = [-1; 3];
        for ((end, pipe), given) in ends.iter_mut().zip(&self.0).zip(stdio) {
            *end = match (pipe, given) {
                (Some((_, child)), _) => child.as_raw_fd(),
                (None, ChildStdio::From(fd)) => fd.as_raw_fd(),
                (None, _) => -1,
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

/// The steps between the split and `exec`, with everything they need made before the split.
#[cfg(target_os = "linux")]
struct ChildPlan<'a> {
    argv: *const *const c_char,
    environ: Environ<'a>,
    stdio: [libc::c_int; 3],
    own_group: bool,
    handover: Option<Handover<'a>>,
    mask: ChildMask,
    parent: Pid,
}

#[cfg(target_os = "linux")]
impl ChildPlan<'_> {
    /// Take the plan's steps and execute the command; returns only the step that failed and
    /// its error. Async-signal-safe, allocating nothing: system calls, and `execvpe`, which
    /// searches `PATH` in buffers on the stack.
    ///
    /// # Safety
    /// Only in the child, between the split and `exec`, with the plan's pointers alive.
    unsafe fn execute(&self) -> (Step, io::Error) {
        // SAFETY: setting a signal to its default installs no handler.
        unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
        for (target, fd) in self.stdio.into_iter().enumerate() {
            // SAFETY: dup2 on descriptors the tool keeps open for this child; the copy has no
            // close-on-exec flag.
            if fd >= 0 && unsafe { libc::dup2(fd, target as libc::c_int) } < 0 {
                return (Step::Setup, io::Error::last_os_error());
            }
        }
        // SAFETY: setpgid has no memory-safety preconditions.
        if self.own_group && unsafe { libc::setpgid(0, 0) } < 0 {
            return (Step::Setup, io::Error::last_os_error());
        }
        if let Err(err) = tie_to_the_tool(self.parent, self.handover, &self.mask) {
            return (Step::Setup, err);
        }
        // execvpe sets no error number when it tries no PATH entry at all (every one is longer
        // than PATH_MAX): a stale one must not be taken for its own.
        nix::errno::Errno::clear();
        // SAFETY: `argv` and the environment are null-terminated arrays of C strings the caller
        // keeps alive; on success this does not return.
        unsafe { libc::execvpe(*self.argv, self.argv, self.environ.pointer()) };
        let error = match nix::errno::Errno::last_raw() {
            0 => io::Error::from_raw_os_error(libc::ENOENT),
            errno => io::Error::from_raw_os_error(errno),
        };
        (Step::Execute, error)
    }
}

/// The steps every child of the tool (an attempt's or a hook's) takes last before `exec`: SIGTERM
/// as its parent-death signal, the terminal if `handover` says so, and the signal mask the tool
/// started with. Async-signal-safe: system calls only, and no allocation.
pub(crate) fn tie_to_the_tool(
    parent: Pid,
    handover: Option<Handover<'_>>,
    mask: &ChildMask,
) -> io::Result<()> {
    set_parent_death_signal(parent)?;
    if let Some(handover) = handover {
        handover.take_in_child();
    }
    mask.restore()
}

/// On Linux, have the kernel send the child SIGTERM when the tool dies; if the tool is already
/// gone, fail the start. Async-signal-safe.
fn set_parent_death_signal(parent: Pid) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        let _ = nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGTERM);
        if nix::unistd::getppid() != parent {
            return Err(io::Error::from_raw_os_error(libc::ESRCH));
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = parent;
    Ok(())
}

#[cfg(target_os = "linux")]
mod linux {
    //! The split by `clone(CLONE_VM | CLONE_VFORK)`, and the stack the child runs on.

    use std::ffi::c_void;
    use std::io;

    use nix::sys::wait::waitpid;
    use nix::unistd::{Pid, getpid};

    use super::{ChildPlan, Launcher, Pipes, Setup, StartError, Started, Step};

    /// How much stack the child may use: `execvpe` keeps a path and, for a script without
    /// `#!`, a copy of `argv` on it. Only the pages it touches are ever made.
    const STACK_SIZE: usize = 8 << 20;

    /// A stack for the child, with a page below it that faults if it ever overflows.
    pub(super) struct Stack {
        base: *mut c_void,
        size: usize,
    }

    impl Stack {
        pub(super) fn new() -> io::Result<Self> {
            // SAFETY: a fresh anonymous private mapping, which nothing else refers to.
            let base = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    STACK_SIZE,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK,
                    -1,
                    0,
                )
            };
            if base == libc::MAP_FAILED {
                return Err(io::Error::last_os_error());
            }
            let stack = Stack {
                base,
                size: STACK_SIZE,
            };
            // SAFETY: the first page of the mapping just made.
            if unsafe { libc::mprotect(base, page_size(), libc::PROT_NONE) } < 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(stack)
        }

        /// The stack's top, where a stack that grows down starts, 16-byte aligned.
        fn top(&self) -> *mut c_void {
            // SAFETY: one past the end of the mapping, which is page-aligned.
            unsafe { self.base.cast::<u8>().add(self.size).cast() }
        }
    }

    impl Drop for Stack {
        fn drop(&mut self) {
            // SAFETY: the mapping `new` made, which no child uses any more: each start waits
            // for its child to exec or exit.
            unsafe { libc::munmap(self.base, self.size) };
        }
    }

    fn page_size() -> usize {
        // SAFETY: sysconf has no preconditions.
        usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096)
    }

    /// What the child reads, and the failure it leaves for the tool when it cannot exec.
    struct Shared<'a> {
        plan: &'a ChildPlan<'a>,
        /// The step that failed and its errno; none when the command was executed.
        failure: Option<(Step, libc::c_int)>,
    }

    /// The child's first function, on its own stack: execute the plan, or leave its failure
    /// and exit.
    extern "C" fn child(shared: *mut c_void) -> libc::c_int {
        // SAFETY: `start` passes its `Shared`, which outlives the child's use of it: the tool
        // waits (CLONE_VFORK) until the child has exec'd or exited.
        let shared = unsafe { &mut *shared.cast::<Shared>() };
        // SAFETY: this is the child between the split and exec, and the plan's pointers are
        // the launcher's, alive while the tool waits.
        let (step, err) = unsafe { shared.plan.execute() };
        let failure = Some((step, err.raw_os_error().unwrap_or(libc::EINVAL)));
        // SAFETY: a plain write to memory the tool reads once the child has exited.
        unsafe { std::ptr::write_volatile(&mut shared.failure, failure) };
        // SAFETY: _exit ends the child at once, running nothing of the tool's.
        unsafe { libc::_exit(127) }
    }

    impl Launcher {
        /// Start a child, as the module header says.
        pub(crate) fn start(&mut self, setup: &Setup<'_>) -> Result<Started, StartError> {
            let pipes = Pipes::new(setup.stdio).map_err(StartError::at(Step::Prepare))?;
            self.argv.clear();
            self.argv
                .extend(self.words.iter().map(|word| word.as_ptr()));
            self.argv.push(std::ptr::null());
            let plan = ChildPlan {
                argv: self.argv.as_ptr(),
                environ: setup.environ,
                stdio: pipes.child_ends(setup.stdio),
                own_group: setup.own_group,
                handover: setup.handover,
                mask: setup.mask,
                parent: getpid(),
            };
            let mut shared = Shared {
                plan: &plan,
                failure: None,
            };
            // SAFETY: the child runs `child` on a stack of its own, sharing the tool's memory
            // while the tool is suspended (CLONE_VFORK) until it has exec'd or exited; it
            // only reads `shared.plan` and writes `shared.error`, both alive until then.
            let pid = unsafe {
                libc::clone(
                    child,
                    self.stack.top(),
                    libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
                    (&raw mut shared).cast(),
                )
            };
            if pid < 0 {
                return Err(StartError::at(Step::Split)(io::Error::last_os_error()));
            }
            let pid = Pid::from_raw(pid);
            // SAFETY: the child has exec'd or exited; nothing else writes `shared` now.
            match unsafe { std::ptr::read_volatile(&shared.failure) } {
                None => Ok(pipes.started(pid)),
                Some((step, errno)) => {
                    // It has exited: reap it here, so that nothing takes it for an attempt.
                    let _ = waitpid(pid, None);
                    Err(StartError::at(step)(io::Error::from_raw_os_error(errno)))
                }
            }
        }
    }
}

/// The child's steps, detached from the borrows of the `Setup` they came from: std's `pre_exec`
/// takes only a `'static` closure, though it runs it in the child before `spawn` returns.
#[cfg(not(target_os = "linux"))]
#[derive(Clone, Copy)]
struct Detached {
    environ: *const *const std::ffi::c_char,
    handover: Option<(std::os::fd::RawFd, Pid)>,
    mask: ChildMask,
    parent: Pid,
}

// SAFETY: only the forked child reads it, between fork and exec, while the `Setup` it was made
// from still borrows the environment table and the terminal it points to (`spawn` has not
// returned).
#[cfg(not(target_os = "linux"))]
unsafe impl Send for Detached {}
// SAFETY: as for Send.
#[cfg(not(target_os = "linux"))]
unsafe impl Sync for Detached {}

#[cfg(not(target_os = "linux"))]
impl Launcher {
    /// Start a child, as the module header says, by std's `Command`, which reports a failed
    /// split and a failed exec alike: both are taken for the command's.
    pub(crate) fn start(&mut self, setup: &Setup<'_>) -> Result<Started, StartError> {
        use std::os::unix::process::CommandExt;
        use std::process::{Command, Stdio};

        let word = |word: &CString| std::ffi::OsStr::from_bytes(word.as_bytes()).to_owned();
        let mut command = Command::new(word(&self.words[0]));
        command.args(self.words[1..].iter().map(word));
        let stdio = |given: ChildStdio<'_>| match given {
            ChildStdio::Inherit => Ok(Stdio::inherit()),
            ChildStdio::Pipe => Ok(Stdio::piped()),
            ChildStdio::From(fd) => fd.try_clone_to_owned().map(Stdio::from),
        };
        let [stdin, stdout, stderr] = setup.stdio.map(stdio);
        let prepared = StartError::at(Step::Prepare);
        command
            .stdin(stdin.map_err(prepared)?)
            .stdout(stdout.map_err(StartError::at(Step::Prepare))?)
            .stderr(stderr.map_err(StartError::at(Step::Prepare))?);
        if setup.own_group {
            command.process_group(0);
        }
        let detached = Detached {
            environ: setup.environ.pointer(),
            handover: setup.handover.map(Handover::raw),
            mask: setup.mask,
            parent: nix::unistd::getpid(),
        };
        let steps = move || {
            // The whole of it, which is Send, not its fields one by one, which are not.
            let detached = &detached;
            // SAFETY: this is the child, before `spawn` returns, while `setup` still borrows the
            // table and the terminal (see `Detached`).
            let handover = detached
                .handover
                .map(|(tty, from)| unsafe { Handover::from_raw(tty, from) });
            // SAFETY: as above.
            unsafe { crate::process::environ::install(detached.environ) };
            tie_to_the_tool(detached.parent, handover, &detached.mask)
        };
        // SAFETY: the closure runs in the child between fork and exec, and calls only
        // async-signal-safe functions: it writes one pointer, then takes the steps of
        // `tie_to_the_tool`; it allocates nothing, and the error it may return is built from a
        // raw errno.
        unsafe { command.pre_exec(steps) };
        let mut child = command.spawn().map_err(StartError::at(Step::Execute))?;
        Ok(Started {
            pid: Pid::from_raw(i32::try_from(child.id()).unwrap_or(i32::MAX)),
            stdin: child.stdin.take().map(OwnedFd::from),
            stdout: child.stdout.take().map(OwnedFd::from),
            stderr: child.stderr.take().map(OwnedFd::from),
        })
    }
}
