//! Signal dispositions, the mask a child restores, and Linux's `sigtimedwait`: the calls on
//! signals that nix gives no safe form of (a query of a disposition, a disposition set in a
//! child before exec, a wait with a timeout), and SIGPIPE's disposition as the process started
//! with it, read before std's runtime changes it.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
#[cfg(all(target_os = "linux", not(feature = "portable-signals")))]
use std::time::Duration;

use nix::sys::signal::{SaFlags, SigAction, SigHandler, SigSet, Signal};

/// Whether SIGPIPE was ignored when the process started.
static SIGPIPE_IGNORED: AtomicBool = AtomicBool::new(false);

/// Read SIGPIPE's disposition, before std's runtime sets it to be ignored (`before_main`).
pub(crate) fn remember_sigpipe() {
    let ignored = is_ignored(libc::SIGPIPE);
    SIGPIPE_IGNORED.store(ignored, Ordering::Relaxed);
}

/// Whether SIGPIPE was set to be ignored when the process started (by its parent).
pub fn sigpipe_ignored_at_start() -> bool {
    SIGPIPE_IGNORED.load(Ordering::Relaxed)
}

/// Whether `signal` is set to be ignored (inherited from the tool's parent).
pub fn is_ignored(signal: i32) -> bool {
    let mut current = std::mem::MaybeUninit::<libc::sigaction>::uninit();
    // SAFETY: a null new action only queries; `current` is writable storage for the old one.
    let queried = unsafe { libc::sigaction(signal, std::ptr::null(), current.as_mut_ptr()) } == 0;
    // SAFETY: sigaction filled `current` when it returned 0.
    queried && unsafe { current.assume_init() }.sa_sigaction == libc::SIG_IGN
}

/// Set `signal` to its default action (`ignore` false) or to be ignored. Async-signal-safe.
pub fn set_disposition(signal: Signal, ignore: bool) -> io::Result<()> {
    let handler = match ignore {
        true => SigHandler::SigIgn,
        false => SigHandler::SigDfl,
    };
    let action = SigAction::new(handler, SaFlags::empty(), SigSet::empty());
    // SAFETY: the default action and ignoring install no handler code.
    unsafe { nix::sys::signal::sigaction(signal, &action) }
        .map(drop)
        .map_err(io::Error::from)
}

/// The signal mask and the dispositions the tool started with, which a child restores between
/// the split and `exec`.
#[derive(Clone, Copy, Debug)]
pub struct ChildMask {
    mask: SigSet,
    handled: SigSet,
    sigpipe_ignored: bool,
}

impl ChildMask {
    /// The mask `mask` to restore, the signals `handled` by a handler of the tool's to reset to
    /// their defaults first, and whether SIGPIPE was ignored when the tool started.
    pub fn new(mask: SigSet, handled: SigSet, sigpipe_ignored: bool) -> Self {
        ChildMask {
            mask,
            handled,
            sigpipe_ignored,
        }
    }

    /// In a child before `exec`: reset every handled signal to its default, give SIGPIPE the
    /// disposition the tool started with (std's runtime ignores it in the tool), and only then
    /// restore the mask, so that no signal unblocked here can run a handler of the tool's in
    /// the child. Async-signal-safe: system calls only, no allocation.
    #[cfg(target_os = "linux")]
    pub fn restore(&self) -> io::Result<()> {
        for signal in self.handled.iter() {
            set_disposition(signal, false)?;
        }
        set_disposition(Signal::SIGPIPE, self.sigpipe_ignored)?;
        self.mask.thread_set_mask().map_err(io::Error::from)
    }

    /// The signals a child sets to their defaults: the handled ones, and SIGPIPE unless the
    /// tool's parent left it ignored (for `posix_spawnp`'s attributes).
    #[cfg(not(target_os = "linux"))]
    pub fn defaults(&self) -> SigSet {
        let mut defaults = self.handled;
        if !self.sigpipe_ignored {
            defaults.add(Signal::SIGPIPE);
        }
        defaults
    }

    /// The mask a child restores (for `posix_spawnp`'s attributes).
    #[cfg(not(target_os = "linux"))]
    pub fn mask(&self) -> SigSet {
        self.mask
    }
}

/// What one `sigtimedwait` gave.
#[cfg(all(target_os = "linux", not(feature = "portable-signals")))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Taken {
    /// This signal.
    Signal(i32),
    /// The time passed first.
    TimedOut,
    /// Something else woke it (a stop and continue): wait again for what is left.
    Interrupted,
}

/// Take one of the signals of `set`, which the calling thread has blocked, waiting for
/// `timeout` at most (for ever, when `None`).
#[cfg(all(target_os = "linux", not(feature = "portable-signals")))]
pub fn take_one(set: &SigSet, timeout: Option<Duration>) -> Taken {
    let timeout = timeout.map(timespec);
    let timeout_ptr = timeout.as_ref().map_or(std::ptr::null(), |t| t as *const _);
    let mut info = std::mem::MaybeUninit::<libc::siginfo_t>::uninit();
    // SAFETY: `set` is an initialised set, `info` is writable storage for one siginfo, and
    // `timeout_ptr` is null or points at a timespec that outlives the call.
    match unsafe { libc::sigtimedwait(set.as_ref(), info.as_mut_ptr(), timeout_ptr) } {
        -1 if nix::errno::Errno::last() == nix::errno::Errno::EAGAIN => Taken::TimedOut,
        -1 => Taken::Interrupted,
        signal => Taken::Signal(signal),
    }
}

// libc marks musl's `time_t` deprecated because its width changes with musl 1.2; this code holds
// for either width.
#[cfg(all(target_os = "linux", not(feature = "portable-signals")))]
#[allow(deprecated)]
fn timespec(duration: Duration) -> libc::timespec {
    libc::timespec {
        tv_sec: libc::time_t::try_from(duration.as_secs()).unwrap_or(libc::time_t::MAX),
        // Below 10^9, so it fits a c_long of any width.
        tv_nsec: duration.subsec_nanos() as libc::c_long,
    }
}

#[cfg(all(test, target_os = "linux"))]
mod order_tests {
    use super::*;

    /// The variable that makes the test binary, run again, the child of the test below.
    const CHILD: &str = "RETRY_TEST_CHILD_MASK";

    /// A child restoring its mask with a handled signal pending: reset first, the signal then
    /// takes its default action and ends the child; unblocked first, the tool's handler would
    /// run in the child and the child would go on.
    #[test]
    fn a_child_resets_handled_signals_before_it_unblocks_them() {
        let name = "signals::order_tests::a_child_resets_handled_signals_before_it_unblocks_them";
        if std::env::var_os(CHILD).is_some() {
            return restore_with_a_handled_signal_pending();
        }
        let status = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", name, "--test-threads", "1"])
            .env(CHILD, "1")
            .output()
            .unwrap()
            .status;
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(libc::SIGUSR2), "{status:?}");
    }

    fn restore_with_a_handled_signal_pending() {
        let mut handled = SigSet::empty();
        handled.add(Signal::SIGUSR2);
        handled.thread_block().unwrap();
        let ran = std::sync::Arc::new(AtomicBool::new(false));
        signal_hook::flag::register(libc::SIGUSR2, ran.clone()).unwrap();
        nix::sys::signal::raise(Signal::SIGUSR2).unwrap();
        let unblocked = SigSet::thread_get_mask().unwrap();
        let mut mask = unblocked;
        mask.remove(Signal::SIGUSR2);
        ChildMask::new(mask, handled, false).restore().unwrap();
        // Reached only if the handler took the signal.
        assert!(
            !ran.load(Ordering::SeqCst),
            "the tool's handler ran in the child"
        );
        std::process::exit(0);
    }
}

#[cfg(all(test, target_os = "linux", not(feature = "portable-signals")))]
mod tests {
    use super::*;

    #[test]
    #[allow(deprecated)]
    fn timespecs_saturate() {
        let t = timespec(Duration::from_millis(1_500));
        assert_eq!((t.tv_sec, t.tv_nsec), (1, 500_000_000));
        assert_eq!(timespec(Duration::MAX).tv_sec, libc::time_t::MAX);
    }
}
