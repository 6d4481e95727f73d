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
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;

use nix::unistd::Pid;

use crate::process::command_line::CommandLine;
use crate::process::environ::Environ;
use crate::process::terminal::Handover;
use crate::signals::ChildMask;

/// What an attempt's process is started with, besides its command line.
#[derive(Clone, Copy)]
pub(crate) struct Setup {
    /// The environment, installed as it stands when `start` is called.
    pub(crate) environ: Environ,
    /// Whether stdin, stdout and stderr are pipes to the tool (otherwise the tool's own).
    pub(crate) piped: [bool; 3],
    /// Whether it leads a process group of its own.
    pub(crate) own_group: bool,
    /// The terminal to take, if the tool hands it over.
    pub(crate) handover: Option<Handover>,
    /// The signal mask and SIGPIPE disposition to restore.
    pub(crate) mask: ChildMask,
}

/// A started attempt: its process, and the tool's ends of the pipes it was given.
#[derive(Debug)]
pub(crate) struct Started {
    pub(crate) pid: Pid,
    /// Where the tool writes what the attempt reads, when stdin is a pipe.
    pub(crate) stdin: Option<OwnedFd>,
    /// Where the tool reads the attempt's stdout and stderr, when they are pipes.
    pub(crate) stdout: Option<OwnedFd>,
    pub(crate) stderr: Option<OwnedFd>,
}

/// Starts the attempts of one command line, with what every start shares made once.
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
    fn new(piped: [bool; 3]) -> io::Result<Self> {
        let mut pipes = [None, None, None];
        for (slot, (pipe, wanted)) in pipes.iter_mut().zip(piped).enumerate() {
            if !wanted {
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

    /// The descriptor the child takes as stdin, stdout and stderr, or -1 for the tool's own.
    fn child_ends(&self) -> [libc::c_int; 3] {
        self.0.each_ref().map(|pipe| {
            pipe.as_ref()
                .map_or(-1, |(_, child)| std::os::fd::AsRawFd::as_raw_fd(child))
        })
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
struct ChildPlan {
    argv: *const *const c_char,
    envp: *const *const c_char,
    stdio: [libc::c_int; 3],
    own_group: bool,
    handover: Option<Handover>,
    mask: ChildMask,
    parent: Pid,
}

#[cfg(target_os = "linux")]
impl ChildPlan {
    /// Take the plan's steps and execute the command; returns only the error that stopped it.
    /// Async-signal-safe, allocating nothing: system calls, and `execvpe`, which searches
    /// `PATH` in buffers on the stack.
    ///
    /// # Safety
    /// Only in the child, between the split and `exec`, with the plan's pointers alive.
    unsafe fn execute(&self) -> io::Error {
        // SAFETY: setting a signal to its default installs no handler.
        unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
        for (target, fd) in self.stdio.into_iter().enumerate() {
            // SAFETY: dup2 on descriptors the tool made for this child; the copy has no
            // close-on-exec flag.
            if fd >= 0 && unsafe { libc::dup2(fd, target as libc::c_int) } < 0 {
                return io::Error::last_os_error();
            }
        }
        // SAFETY: setpgid has no memory-safety preconditions.
        if self.own_group && unsafe { libc::setpgid(0, 0) } < 0 {
            return io::Error::last_os_error();
        }
        if let Err(err) = tie_to_the_tool(self.parent, self.handover, &self.mask) {
            return err;
        }
        // SAFETY: `argv` and `envp` are null-terminated arrays of C strings the caller keeps
        // alive; on success this does not return.
        unsafe { libc::execvpe(*self.argv, self.argv, self.envp) };
        io::Error::last_os_error()
    }
}

/// The steps every child of the tool (an attempt's or a hook's) takes last before `exec`: SIGTERM
/// as its parent-death signal, the terminal if `handover` says so, and the signal mask the tool
/// started with. Async-signal-safe: system calls only, and no allocation.
pub(crate) fn tie_to_the_tool(
    parent: Pid,
    handover: Option<Handover>,
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

    use super::{ChildPlan, Launcher, Pipes, Setup, Started};

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

    /// What the child reads, and the error it leaves for the tool when it cannot exec.
    struct Shared<'a> {
        plan: &'a ChildPlan,
        /// The errno of the step that failed; 0 when the command was executed.
        error: libc::c_int,
    }

    /// The child's first function, on its own stack: execute the plan, or leave its error and
    /// exit.
    extern "C" fn child(shared: *mut c_void) -> libc::c_int {
        // SAFETY: `start` passes its `Shared`, which outlives the child's use of it: the tool
        // waits (CLONE_VFORK) until the child has exec'd or exited.
        let shared = unsafe { &mut *shared.cast::<Shared>() };
        // SAFETY: this is the child between the split and exec, and the plan's pointers are
        // the launcher's, alive while the tool waits.
        let err = unsafe { shared.plan.execute() };
        let errno = err.raw_os_error().unwrap_or(libc::EINVAL);
        // SAFETY: a plain write to memory the tool reads once the child has exited.
        unsafe { std::ptr::write_volatile(&mut shared.error, errno) };
        // SAFETY: _exit ends the child at once, running nothing of the tool's.
        unsafe { libc::_exit(127) }
    }

    impl Launcher {
        /// Start an attempt, as the module header says.
        pub(crate) fn start(&mut self, setup: &Setup) -> io::Result<Started> {
            let pipes = Pipes::new(setup.piped)?;
            self.argv.clear();
            self.argv
                .extend(self.words.iter().map(|word| word.as_ptr()));
            self.argv.push(std::ptr::null());
            let plan = ChildPlan {
                argv: self.argv.as_ptr(),
                envp: setup.environ.pointer(),
                stdio: pipes.child_ends(),
                own_group: setup.own_group,
                handover: setup.handover,
                mask: setup.mask,
                parent: getpid(),
            };
            let mut shared = Shared {
                plan: &plan,
                error: 0,
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
                return Err(io::Error::last_os_error());
            }
            let pid = Pid::from_raw(pid);
            // SAFETY: the child has exec'd or exited; nothing else writes `shared` now.
            match unsafe { std::ptr::read_volatile(&shared.error) } {
                0 => Ok(pipes.started(pid)),
                errno => {
                    // It has exited: reap it here, so that nothing takes it for an attempt.
                    let _ = waitpid(pid, None);
                    Err(io::Error::from_raw_os_error(errno))
                }
            }
        }
    }
}

#[cfg(not(target_os = "linux"))]
impl Launcher {
    /// Start an attempt, as the module header says, by std's `Command`.
    pub(crate) fn start(&mut self, setup: &Setup) -> io::Result<Started> {
        use std::os::unix::process::CommandExt;
        use std::process::{Command, Stdio};

        let word = |word: &CString| std::ffi::OsStr::from_bytes(word.as_bytes()).to_owned();
        let mut command = Command::new(word(&self.words[0]));
        command.args(self.words[1..].iter().map(word));
        let pipe = |wanted: bool| {
            if wanted {
                Stdio::piped()
            } else {
                Stdio::inherit()
            }
        };
        command
            .stdin(pipe(setup.piped[0]))
            .stdout(pipe(setup.piped[1]))
            .stderr(pipe(setup.piped[2]));
        if setup.own_group {
            command.process_group(0);
        }
        let environ = setup.environ;
        // SAFETY: the closure runs in the child between fork and exec, and only writes one
        // pointer; the table it installs is the runner's, alive while it spawns.
        unsafe {
            command.pre_exec(move || {
                environ.install();
                Ok(())
            });
        }
        // The rest of the steps, as a hook's child takes them.
        super::prepare_child(&mut command, setup.mask, setup.handover);
        let mut child = command.spawn()?;
        Ok(Started {
            pid: Pid::from_raw(i32::try_from(child.id()).unwrap_or(i32::MAX)),
            stdin: child.stdin.take().map(OwnedFd::from),
            stdout: child.stdout.take().map(OwnedFd::from),
            stderr: child.stderr.take().map(OwnedFd::from),
        })
    }
}
