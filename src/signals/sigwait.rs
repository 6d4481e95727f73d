//! Taking signals on Linux: they stay blocked, and `sigtimedwait` takes them one at a time, with
//! no handler at all. The doorbell sends the tool SIGCHLD, which every thread has blocked, so the
//! waiting thread takes it.

use std::io;
use std::mem::MaybeUninit;
use std::time::{Duration, Instant};

/// The blocked signals to take.
pub(super) struct Backend {
    waited: libc::sigset_t,
}

/// Rings by sending the tool SIGCHLD.
#[derive(Clone, Copy, Debug)]
pub(super) struct Bell(libc::pid_t);

impl Backend {
    /// Take the signals of `waited`, which the calling thread has blocked.
    pub(super) fn install(waited: libc::sigset_t) -> io::Result<Backend> {
        Ok(Backend { waited })
    }

    /// The next signal, or none when `until` passes first (never, when `None`).
    pub(super) fn next(&self, until: Option<Instant>) -> Option<i32> {
        loop {
            let timeout = until.map(|at| timespec(at.saturating_duration_since(Instant::now())));
            let timeout_ptr = timeout.as_ref().map_or(std::ptr::null(), |t| t as *const _);
            let mut info = MaybeUninit::<libc::siginfo_t>::uninit();
            // SAFETY: `waited` is an initialised set, `info` is writable storage for one siginfo,
            // and `timeout_ptr` is null or points at a timespec that outlives the call.
            let signal =
                unsafe { libc::sigtimedwait(&self.waited, info.as_mut_ptr(), timeout_ptr) };
            match signal {
                -1 => match io::Error::last_os_error().raw_os_error() {
                    Some(libc::EAGAIN) => return None,
                    // EINTR: a stop and continue; wait for the rest.
                    _ => continue,
                },
                signal => return Some(signal),
            }
        }
    }

    /// The bell that wakes [`Backend::next`] from another thread.
    pub(super) fn bell(&self) -> Bell {
        Bell(std::process::id() as libc::pid_t)
    }
}

impl Bell {
    pub(super) fn ring(self) {
        // SAFETY: kill has no memory-safety preconditions; the pid is this process's own.
        unsafe { libc::kill(self.0, libc::SIGCHLD) };
    }
}

// libc marks musl's `time_t` deprecated because its width changes with musl 1.2; this code holds
// for either width.
#[allow(deprecated)]
fn timespec(duration: Duration) -> libc::timespec {
    libc::timespec {
        tv_sec: libc::time_t::try_from(duration.as_secs()).unwrap_or(libc::time_t::MAX),
        // Below 10^9, so it fits a c_long of any width.
        tv_nsec: duration.subsec_nanos() as libc::c_long,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timespecs_saturate() {
        let t = timespec(Duration::from_millis(1_500));
        assert_eq!((t.tv_sec, t.tv_nsec), (1, 500_000_000));
        assert_eq!(timespec(Duration::MAX).tv_sec, libc::time_t::MAX);
    }
}
