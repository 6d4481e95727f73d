//! The tool's signal policy, and waiting for a signal, a child, a helper thread or a moment,
//! without polling.
//!
//! Policy:
//! - SIGINT, SIGTERM, SIGHUP and SIGQUIT *end the run*: blocked, and taken only where the tool
//!   waits, so the run loop decides what they mean (forward to the attempt, stop, re-raise).
//! - SIGUSR1, SIGUSR2, SIGALRM and SIGWINCH are *passed on*: taken the same way, sent on to the
//!   running attempt, and the run carries on, as init-style supervisors (tini, dumb-init) do.
//! - A signal that the tool's parent set to be ignored (as shells do for `cmd &` in a script)
//!   stays ignored, and the command inherits that; SIGPIPE too (see `startup`).
//! - SIGCHLD is blocked and taken the same way: it is how the end of an attempt wakes the tool,
//!   and how a helper thread rings the tool's [`Doorbell`].
//! - SIGTTOU is blocked while the tool hands the terminal to attempts, so that it can take the
//!   terminal back from the background.
//! - Every other signal keeps its default action.
//!
//! The caught signals stay blocked in every thread but while the tool waits, and blocked signals
//! are inherited by `exec`, so every child resets the handled ones to their defaults and then
//! restores the mask the tool started with (`sys::signals::ChildMask`). Waiting takes one signal at
//! a time from one of two backends, with no polling and no CPU used while nothing happens: on Linux
//! `sigtimedwait` (no handler at all); elsewhere, and on Linux with the `portable-signals` feature
//! (which CI runs the suite on), signal-hook's handler and self-pipe, with one `poll` of it while
//! the signals are unblocked (`hooked`). The doorbell sends the tool SIGCHLD, which every thread
//! has blocked, so that the waiting thread takes it with either backend. A blocking job that must
//! not make the tool deaf to signals (writing held output to a slow reader, waiting for a lock)
//! runs on a thread of its own while the tool waits here for it ([`SignalWatch::run_job`]).

use std::io;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use nix::sys::signal::{SigSet, SigmaskHow};
use nix::unistd::Pid;
pub use retry_policy::waiting::{Waited, Waiter};

use crate::signals::signal::Platform;
use crate::signals::startup::Inherited;
use retry_sys::signals::{ChildMask, is_ignored, set_disposition};

pub mod reaper;
pub mod signal;
pub mod startup;

pub use signal::Signal;

#[cfg(any(not(target_os = "linux"), feature = "portable-signals"))]
#[path = "hooked.rs"]
mod backend;
#[cfg(all(target_os = "linux", not(feature = "portable-signals")))]
#[path = "sigwait.rs"]
mod backend;

/// What each signal does to a run, one `(signal, effect)` row each, for `--help` and the man page.
pub const TABLE: [(&str, &str); 8] = [
    (
        "SIGINT SIGTERM SIGHUP SIGQUIT",
        "end the run: passed on to the running attempt (its whole process group); no further \
         attempt starts and a wait ends at once; SIGKILL follows after --kill-after; then retry \
         dies of the same signal.",
    ),
    ("SIGINT, again", "SIGKILL to the attempt at once."),
    (
        "SIGUSR1 SIGUSR2 SIGALRM SIGWINCH",
        "passed on to the running attempt's process group; the run carries on (between \
         attempts they change nothing).",
    ),
    (
        "Ctrl-C, Ctrl-\\",
        "typed at the terminal, reach the attempt that holds it; if it dies of them, retry sends \
         the same signal to its own job, so that a whole pipeline stops, and dies of it too.",
    ),
    (
        "Ctrl-Z",
        "at the terminal, stops the attempt; retry stops along with it, so the shell gets the \
         terminal back; `fg` continues both, `bg` continues both without the terminal.",
    ),
    (
        "SIGKILL",
        "cannot be caught: on Linux the command gets SIGTERM (its parent-death signal), but other \
         processes it started keep running.",
    ),
    (
        "SIGPIPE",
        "retry's own writes to a closed pipe fail quietly; the command gets SIGPIPE as retry's \
         parent left it.",
    ),
    (
        "ignored ones",
        "a signal ignored when retry starts stays ignored, for retry and for the command; but \
         SIGCHLD is reset to its default, as coreutils timeout does.",
    ),
];

/// The signals that end a run, after being passed on to the running attempt.
pub const ENDING: [Signal; 4] = [Signal::INT, Signal::TERM, Signal::HUP, Signal::QUIT];

/// The signals only passed on to the running attempt.
pub const PASSED_ON: [Signal; 4] = [signal::USR1, signal::USR2, signal::ALRM, signal::WINCH];

/// What ended a wait.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wake {
    /// A signal that ends the run arrived.
    Stop(Signal),
    /// A signal to pass on to the running attempt arrived.
    PassOn(Signal),
    /// A child changed state, or a helper thread rang the doorbell: look again.
    Changed,
    /// The moment waited for came.
    Timeout,
}

/// A job under way on a thread of its own (see [`SignalWatch::start_job`]).
pub struct Job<T>(Arc<Mutex<Option<T>>>);

/// The caught signals, the platform's way of taking them, and what to give back to children.
pub struct SignalWatch {
    backend: backend::Backend,
    child_mask: ChildMask,
}

/// Wakes the thread waiting in [`SignalWatch::wait_until`] from another thread, by sending the
/// tool SIGCHLD.
#[derive(Clone, Copy, Debug)]
pub struct Doorbell(Pid);

impl Doorbell {
    /// Wake the waiting thread; it sees [`Wake::Changed`].
    pub fn ring(self) {
        let _ = nix::sys::signal::kill(self.0, nix::sys::signal::Signal::SIGCHLD);
    }
}

impl SignalWatch {
    /// Block the caught signals (and SIGTTOU when `terminal_handoff`) in this thread, which must be
    /// the only one that spawns or waits, and start no other thread before it.
    pub fn install(terminal_handoff: bool, inherited: Inherited) -> io::Result<Self> {
        let mut waited = SigSet::empty();
        let caught = ENDING
            .into_iter()
            .chain(PASSED_ON)
            .filter(|signal| !is_ignored(signal.number()));
        for signal in caught.chain([signal::CHLD]).filter_map(Signal::known) {
            waited.add(signal);
        }
        let mut blocked = waited;
        if terminal_handoff {
            blocked.add(nix::sys::signal::Signal::SIGTTOU);
        }
        let original = blocked.thread_swap_mask(SigmaskHow::SIG_BLOCK)?;
        let backend = backend::Backend::install(waited)?;
        let child_mask = ChildMask::new(original, backend.handled(), inherited.sigpipe_ignored);
        Ok(SignalWatch {
            backend,
            child_mask,
        })
    }

    /// Wait until a caught signal arrives, a child changes state, the doorbell rings, or `until`
    /// passes (never, when `None`).
    pub fn wait_until(&self, until: Option<Instant>) -> Wake {
        match self.backend.next(until).map(Signal::from_number) {
            None => Wake::Timeout,
            Some(signal::CHLD) => Wake::Changed,
            Some(signal) if PASSED_ON.contains(&signal) => Wake::PassOn(signal),
            Some(signal) => Wake::Stop(signal),
        }
    }

    /// The doorbell that wakes this watch from another thread.
    pub fn doorbell(&self) -> Doorbell {
        Doorbell(nix::unistd::getpid())
    }

    /// What a child restores between the split and exec.
    pub fn child_mask(&self) -> ChildMask {
        self.child_mask
    }
}

/// The watch is how the budget's stores wait: awake to the signals that end a run.
impl Waiter for SignalWatch {
    type Job<T: Send + 'static> = Job<T>;

    /// Start `job` on a thread of its own; its end rings this watch's doorbell.
    fn start_job<T: Send + 'static>(
        &self,
        job: impl FnOnce() -> T + Send + 'static,
    ) -> io::Result<Job<T>> {
        let slot = Arc::new(Mutex::new(None));
        let theirs = Arc::clone(&slot);
        let doorbell = self.doorbell();
        std::thread::Builder::new().spawn(move || {
            let result = job();
            *theirs.lock().unwrap_or_else(PoisonError::into_inner) = Some(result);
            doorbell.ring();
        })?;
        Ok(Job(slot))
    }

    /// Wait for `job` to end, until `until` at the latest, while staying awake to the signals
    /// that end a run. No attempt may be running: children that end meanwhile are reaped as
    /// orphans, and signals to pass on have nobody to go to.
    fn await_job<T: Send + 'static>(&self, job: Job<T>, until: Option<Instant>) -> Waited<T> {
        loop {
            if let Some(result) = job.0.lock().unwrap_or_else(PoisonError::into_inner).take() {
                return Waited::Done(result);
            }
            match self.wait_until(until) {
                Wake::Stop(signal) => return Waited::Stopped(signal),
                Wake::Timeout => return Waited::TimedOut,
                Wake::Changed => {
                    reaper::reap_ended(None, false);
                }
                Wake::PassOn(_) => {}
            }
        }
    }
}

/// End this process by `signal`, so that its parent sees death by that signal; core dumps are
/// disabled first, so a re-raised SIGQUIT leaves no core file. Falls back to exit 128+N.
pub fn die_of(signal: Signal) -> ! {
    let _ = nix::sys::resource::setrlimit(nix::sys::resource::Resource::RLIMIT_CORE, 0, 0);
    if let Some(signal) = signal.known() {
        let _ = set_disposition(signal, false);
        let _ = nix::sys::signal::raise(signal);
        let mut only = nix::sys::signal::SigSet::empty();
        only.add(signal);
        // The signal is pending while blocked; unblocking it delivers it and ends the process.
        let _ = only.thread_unblock();
    }
    std::process::exit(i32::from(signal.status()))
}
