//! The split on Linux: `clone(CLONE_VM | CLONE_VFORK)` onto a stack of the child's own, and the
//! child's steps before `execvpe` (see the parent module's header).

use std::ffi::{c_char, c_void};
use std::io;
use std::os::fd::{BorrowedFd, RawFd};

use nix::sys::wait::waitpid;
use nix::unistd::{Pid, getpid};

use super::{ChildEnd, Handover, Launcher, Pipes, Setup, StartError, Started, Step};
use crate::environ::Environ;
use crate::signals::ChildMask;

/// How much stack the child may use: `execvpe` keeps a path and, for a script without `#!`, a
/// copy of `argv` on it. Only the pages it touches are ever made.
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
        // SAFETY: the mapping `new` made, which no child uses any more: each start waits for its
        // child to exec or exit.
        unsafe { libc::munmap(self.base, self.size) };
    }
}

fn page_size() -> usize {
    nix::unistd::sysconf(nix::unistd::SysconfVar::PAGE_SIZE)
        .ok()
        .flatten()
        .and_then(|size| usize::try_from(size).ok())
        .unwrap_or(4096)
}

impl<'a> ChildEnd<'a> {
    /// Give the child's descriptor `number` what this end says, with `dup2` for a descriptor to
    /// take. Async-signal-safe.
    fn apply(
        self,
        number: RawFd,
        dup2: impl FnOnce(BorrowedFd<'a>) -> nix::Result<()>,
    ) -> io::Result<()> {
        match self {
            ChildEnd::Keep => Ok(()),
            ChildEnd::Take(fd) => Ok(dup2(fd)?),
            // Closing a descriptor that is not open is no failure: it ends closed either way.
            ChildEnd::Close => {
                let _ = nix::unistd::close(number);
                Ok(())
            }
        }
    }
}

/// The steps between the split and `exec`, with everything they need made before the split.
struct ChildPlan<'a> {
    argv: *const *const c_char,
    environ: Environ<'a>,
    stdio: [ChildEnd<'a>; 3],
    own_group: bool,
    outlives_the_tool: bool,
    handover: Option<Handover<'a>>,
    mask: ChildMask,
    parent: Pid,
}

impl ChildPlan<'_> {
    /// Take the plan's steps and execute the command; returns only the step that failed and
    /// its error. Async-signal-safe, allocating nothing: system calls, and `execvpe`, which
    /// searches `PATH` in buffers on the stack.
    ///
    /// # Safety
    /// Only in the child, between the split and `exec`, with the plan's pointers alive.
    unsafe fn execute(&self) -> (Step, io::Error) {
        if let Err(err) = self.set_up() {
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

    /// The child's steps, in the header's order: its descriptors, its group, SIGTERM as its
    /// parent-death signal (failing if the tool is already gone; none for a child that is to
    /// outlive the tool), the terminal, and the dispositions and mask the tool started with.
    fn set_up(&self) -> io::Result<()> {
        let [stdin, stdout, stderr] = self.stdio;
        stdin.apply(libc::STDIN_FILENO, nix::unistd::dup2_stdin)?;
        stdout.apply(libc::STDOUT_FILENO, nix::unistd::dup2_stdout)?;
        stderr.apply(libc::STDERR_FILENO, nix::unistd::dup2_stderr)?;
        if self.own_group {
            nix::unistd::setpgid(Pid::from_raw(0), Pid::from_raw(0))?;
        }
        if !self.outlives_the_tool {
            let _ = nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGTERM);
            if nix::unistd::getppid() != self.parent {
                return Err(io::Error::from_raw_os_error(libc::ESRCH));
            }
        }
        if let Some(handover) = self.handover {
            handover.give_to(getpid());
        }
        self.mask.restore()
    }
}

/// What the child reads, and the failure it leaves for the tool when it cannot exec.
struct Shared<'a> {
    plan: &'a ChildPlan<'a>,
    /// The step that failed and its errno; none when the command was executed.
    failure: Option<(Step, libc::c_int)>,
}

/// The child's first function, on its own stack: execute the plan, or leave its failure and
/// exit.
extern "C" fn child(shared: *mut c_void) -> libc::c_int {
    // SAFETY: `start` passes its `Shared`, which outlives the child's use of it: the tool waits
    // (CLONE_VFORK) until the child has exec'd or exited.
    let shared = unsafe { &mut *shared.cast::<Shared>() };
    // SAFETY: this is the child between the split and exec, and the plan's pointers are the
    // launcher's, alive while the tool waits.
    let (step, err) = unsafe { shared.plan.execute() };
    let failure = Some((step, err.raw_os_error().unwrap_or(libc::EINVAL)));
    // SAFETY: a plain write to memory the tool reads once the child has exited.
    unsafe { std::ptr::write_volatile(&mut shared.failure, failure) };
    // SAFETY: _exit ends the child at once, running nothing of the tool's.
    unsafe { libc::_exit(127) }
}

impl Launcher {
    /// Start a child, as the module header says.
    pub fn start(&mut self, setup: &Setup<'_>) -> Result<Started, StartError> {
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
            outlives_the_tool: setup.outlives_the_tool,
            handover: setup.handover,
            mask: setup.mask,
            parent: getpid(),
        };
        let mut shared = Shared {
            plan: &plan,
            failure: None,
        };
        // SAFETY: the child runs `child` on a stack of its own, sharing the tool's memory while
        // the tool is suspended (CLONE_VFORK) until it has exec'd or exited; it only reads
        // `shared.plan` and writes `shared.failure`, both alive until then.
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

#[cfg(test)]
mod tests {
    //! Linux sends a child its parent-death signal when the thread that started it ends, so a
    //! start from a thread of its own shows whether the child was given one. The signal is sent
    //! before the thread leaves `/proc/self/task`; the tests wait for that, then close the
    //! child's stdin: a child without the signal reads the end and exits 7, one with it was
    //! ended by it already.

    use std::ffi::OsString;
    use std::path::Path;
    use std::time::{Duration, Instant};

    use nix::sys::signal::{SigSet, Signal};
    use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
    use nix::unistd::Pid;

    use crate::environ::ChildEnvironment;
    use crate::signals::ChildMask;
    use crate::spawn::{ChildStdio, Launcher, Setup};

    /// How `sh -c 'read line; exit 7'` ends when the thread that started it ends at once.
    fn end_of_a_child_whose_starter_ended(outlives_the_tool: bool) -> WaitStatus {
        let args: Vec<OsString> = ["-c", "read line; exit 7"].map(OsString::from).to_vec();
        let (pid, stdin, thread) = std::thread::spawn(move || {
            let mut launcher = Launcher::new("sh".as_ref(), &args).unwrap();
            let environment = ChildEnvironment::inheriting(|_| true);
            let setup = Setup {
                environ: environment.environ(),
                stdio: [ChildStdio::Pipe, ChildStdio::Inherit, ChildStdio::Inherit],
                own_group: true,
                outlives_the_tool,
                handover: None,
                mask: ChildMask::new(SigSet::empty(), SigSet::empty(), false),
            };
            let started = launcher.start(&setup).unwrap();
            (started.pid, started.stdin, nix::unistd::gettid())
        })
        .join()
        .unwrap();
        let task = format!("/proc/self/task/{thread}");
        let start = Instant::now();
        while Path::new(&task).exists() {
            assert!(start.elapsed() < Duration::from_secs(10), "{task} stays");
            std::thread::sleep(Duration::from_millis(1));
        }
        drop(stdin);
        waitpid(pid, None).unwrap()
    }

    /// How `pid` ended; it is killed, and the test fails, if it runs longer than `limit`.
    fn ended_within(pid: Pid, limit: Duration) -> WaitStatus {
        let start = Instant::now();
        loop {
            match waitpid(pid, Some(WaitPidFlag::WNOHANG)).unwrap() {
                WaitStatus::StillAlive if start.elapsed() < limit => {
                    std::thread::sleep(Duration::from_millis(1));
                }
                WaitStatus::StillAlive => {
                    let _ = nix::sys::signal::kill(pid, Signal::SIGKILL);
                    panic!("{pid} ran longer than {limit:?}");
                }
                ended => return ended,
            }
        }
    }

    #[test]
    fn a_child_given_a_closed_descriptor_has_it_closed() {
        let status = |stdout| {
            let args: Vec<OsString> = ["-c", "[ ! -e /proc/$$/fd/1 ]"]
                .map(OsString::from)
                .to_vec();
            let mut launcher = Launcher::new("sh".as_ref(), &args).unwrap();
            let environment = ChildEnvironment::inheriting(|_| true);
            let setup = Setup {
                environ: environment.environ(),
                stdio: [ChildStdio::Inherit, stdout, ChildStdio::Inherit],
                own_group: false,
                outlives_the_tool: false,
                handover: None,
                mask: ChildMask::new(SigSet::empty(), SigSet::empty(), false),
            };
            let started = launcher.start(&setup).unwrap();
            ended_within(started.pid, Duration::from_secs(10))
        };
        assert!(matches!(
            status(ChildStdio::Closed),
            WaitStatus::Exited(_, 0)
        ));
        assert!(matches!(
            status(ChildStdio::Inherit),
            WaitStatus::Exited(_, 1)
        ));
    }

    #[test]
    fn a_child_ends_with_the_thread_that_started_it() {
        let ended = end_of_a_child_whose_starter_ended(false);
        assert!(
            matches!(ended, WaitStatus::Signaled(_, Signal::SIGTERM, _)),
            "{ended:?}"
        );
    }

    #[test]
    fn a_child_that_is_to_outlive_the_tool_is_sent_nothing_when_it_ends() {
        let ended = end_of_a_child_whose_starter_ended(true);
        assert!(matches!(ended, WaitStatus::Exited(_, 7)), "{ended:?}");
    }
}
