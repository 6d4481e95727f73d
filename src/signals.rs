//! The tool's signal policy, and waiting for a signal, a child, or a moment, without polling.
//!
//! Policy:
//! - SIGINT, SIGTERM, SIGHUP and SIGQUIT are *caught*: blocked, and taken with `sigtimedwait`, so
//!   the run loop decides what they mean (forward to the attempt, stop, re-raise). One that the
//!   tool's parent set to be ignored (as shells do for `cmd &` in a script) stays ignored, and the
//!   command inherits that.
//! - SIGCHLD is blocked and taken the same way: it is how the end of an attempt wakes the tool.
//! - SIGTTOU is blocked while the tool hands the terminal to attempts, so that it can take the
//!   terminal back from the background.
//! - SIGPIPE stays ignored (Rust's default), so a closed stdout or stderr is an error to handle,
//!   never a death; commands get it back at its default, as std restores it before `exec`.
//! - Every other signal keeps its default action.
//!
//! Blocked signals are inherited by `exec`, so every child restores the mask the tool started
//! with ([`ChildMask::restore`]). Waiting is one `sigtimedwait` call: no handler, no
//! thread, no CPU used while nothing happens.

use std::io;
use std::mem::MaybeUninit;
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;

/// What each signal does to a run, one `(signal, effect)` row each, for `--help` and the man page.
pub const TABLE: [(&str, &str); 5] = [
    (
        "SIGINT SIGTERM SIGHUP SIGQUIT",
        "passed on to the running attempt (its whole process group); no further attempt starts and \
         a wait ends at once; SIGKILL follows after --kill-after; then retry dies of the same \
         signal. One ignored when retry starts stays ignored.",
    ),
    ("SIGINT, again", "SIGKILL to the attempt at once."),
    (
        "Ctrl-Z",
        "at the terminal, stops the attempt; retry stops along with it, so the shell gets the \
         terminal back, and `fg` continues both.",
    ),
    (
        "SIGKILL",
        "cannot be caught: on Linux the command gets SIGTERM (its parent-death signal), but other \
         processes it started keep running.",
    ),
    (
        "SIGPIPE",
        "retry's own writes to a closed pipe fail quietly; the command gets SIGPIPE at its default.",
    ),
];

/// The signals that stop a run and are forwarded to the running attempt.
pub const FORWARDED: [i32; 4] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT];

/// What ended a wait.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wake {
    /// A forwarded signal arrived (its number).
    Signal(i32),
    /// A child changed state.
    Child,
    /// The moment waited for came.
    Timeout,
}

/// The blocked signal set, and the mask to give back to children.
pub struct SignalWatch {
    waited: libc::sigset_t,
    original: libc::sigset_t,
}

impl SignalWatch {
    /// Block the caught signals (and SIGTTOU when `terminal_handoff`) in this thread, which must be
    /// the only one that spawns or waits.
    pub fn install(terminal_handoff: bool) -> io::Result<Self> {
        let mut waited = empty_set();
        let caught = FORWARDED.into_iter().filter(|&signal| !is_ignored(signal));
        for signal in caught.chain([libc::SIGCHLD]) {
            // SAFETY: `waited` is an initialised set and `signal` a valid signal number.
            unsafe { libc::sigaddset(&mut waited, signal) };
        }
        let mut blocked = waited;
        if terminal_handoff {
            // SAFETY: as above.
            unsafe { libc::sigaddset(&mut blocked, libc::SIGTTOU) };
        }
        let mut original = empty_set();
        // SAFETY: both sets are initialised; pthread_sigmask only reads `blocked` and writes
        // `original`.
        let result = unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &blocked, &mut original) };
        match result {
            0 => Ok(SignalWatch { waited, original }),
            errno => Err(io::Error::from_raw_os_error(errno)),
        }
    }

    /// Wait until a caught signal arrives, a child changes state, or `until` passes (never, when
    /// `None`).
    pub fn wait_until(&self, until: Option<Instant>) -> Wake {
        loop {
            let timeout = until.map(|at| timespec(at.saturating_duration_since(Instant::now())));
            let timeout_ptr = timeout.as_ref().map_or(std::ptr::null(), |t| t as *const _);
            let mut info = MaybeUninit::<libc::siginfo_t>::uninit();
            // SAFETY: `waited` is an initialised set, `info` is writable storage for one siginfo,
            // and `timeout_ptr` is null or points at a timespec that outlives the call.
            let signal =
                unsafe { libc::sigtimedwait(&self.waited, info.as_mut_ptr(), timeout_ptr) };
            match signal {
                libc::SIGCHLD => return Wake::Child,
                -1 => match io::Error::last_os_error().raw_os_error() {
                    Some(libc::EAGAIN) => return Wake::Timeout,
                    // EINTR: a stop and continue, or a handled signal; wait for the rest.
                    _ => continue,
                },
                signal => return Wake::Signal(signal),
            }
        }
    }

    /// The signal mask the tool started with, for children to restore before `exec`.
    pub fn child_mask(&self) -> ChildMask {
        ChildMask(self.original)
    }
}

/// The signal mask a child restores between fork and exec (see the module header).
#[derive(Clone, Copy)]
pub struct ChildMask(libc::sigset_t);

impl ChildMask {
    /// Make this the calling thread's signal mask. Async-signal-safe: one `pthread_sigmask`
    /// call, no allocation.
    pub fn restore(&self) -> io::Result<()> {
        // SAFETY: the set was initialised by `SignalWatch::install`.
        match unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &self.0, std::ptr::null_mut()) } {
            0 => Ok(()),
            errno => Err(io::Error::from_raw_os_error(errno)),
        }
    }
}

/// Whether `signal` is set to be ignored (inherited from the tool's parent).
fn is_ignored(signal: i32) -> bool {
    let mut current = MaybeUninit::<libc::sigaction>::uninit();
    // SAFETY: a null new action only queries; `current` is writable storage for the old one.
    let queried = unsafe { libc::sigaction(signal, std::ptr::null(), current.as_mut_ptr()) } == 0;
    // SAFETY: sigaction filled `current` when it returned 0.
    queried && unsafe { current.assume_init() }.sa_sigaction == libc::SIG_IGN
}

fn empty_set() -> libc::sigset_t {
    let mut set = MaybeUninit::<libc::sigset_t>::uninit();
    // SAFETY: sigemptyset initialises the whole set.
    unsafe {
        libc::sigemptyset(set.as_mut_ptr());
        set.assume_init()
    }
}

fn timespec(duration: Duration) -> libc::timespec {
    libc::timespec {
        tv_sec: libc::time_t::try_from(duration.as_secs()).unwrap_or(libc::time_t::MAX),
        // Below 10^9, so it fits a c_long of any width.
        tv_nsec: duration.subsec_nanos() as libc::c_long,
    }
}

/// The conventional name of `signal`, such as `SIGTERM`, or `signal N` when it has none.
pub fn name(signal: i32) -> String {
    Signal::try_from(signal).map_or_else(|_| format!("signal {signal}"), |s| s.as_str().to_string())
}

/// End this process by `signal`, so that its parent sees death by that signal; core dumps are
/// disabled first, so a re-raised SIGQUIT leaves no core file. Falls back to exit 128+N.
pub fn die_of(signal: i32) -> ! {
    let _ = nix::sys::resource::setrlimit(nix::sys::resource::Resource::RLIMIT_CORE, 0, 0);
    if let Ok(signal) = Signal::try_from(signal) {
        let default = nix::sys::signal::SigAction::new(
            nix::sys::signal::SigHandler::SigDfl,
            nix::sys::signal::SaFlags::empty(),
            nix::sys::signal::SigSet::empty(),
        );
        // SAFETY: installing the default action involves no handler code.
        let _ = unsafe { nix::sys::signal::sigaction(signal, &default) };
        let _ = nix::sys::signal::raise(signal);
        let mut only = nix::sys::signal::SigSet::empty();
        only.add(signal);
        // The signal is pending while blocked; unblocking it delivers it and ends the process.
        let _ = only.thread_unblock();
    }
    std::process::exit(i32::from(crate::exit::signal_status(signal)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_signals_conventionally() {
        assert_eq!(name(libc::SIGTERM), "SIGTERM");
        assert_eq!(name(libc::SIGKILL), "SIGKILL");
        assert_eq!(name(1000), "signal 1000");
    }

    #[test]
    fn timespecs_saturate() {
        let t = timespec(Duration::from_millis(1_500));
        assert_eq!((t.tv_sec, t.tv_nsec), (1, 500_000_000));
        assert_eq!(timespec(Duration::MAX).tv_sec, libc::time_t::MAX);
    }
}
