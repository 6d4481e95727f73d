//! Taking signals on Linux: they stay blocked, and `sigtimedwait` takes them one at a time, with
//! no handler at all (better than any handler-based way: nothing runs in a signal's context, and
//! a child has no handler of the tool's to inherit).

use std::io;
use std::time::Instant;

use nix::sys::signal::SigSet;

use retry_sys::signals::{Taken, take_one};

/// The blocked signals to take.
pub(super) struct Backend {
    waited: SigSet,
}

impl Backend {
    /// Take the signals of `waited`, which the calling thread has blocked.
    pub(super) fn install(waited: SigSet) -> io::Result<Backend> {
        Ok(Backend { waited })
    }

    /// The signals this backend runs a handler for: none.
    pub(super) fn handled(&self) -> SigSet {
        SigSet::empty()
    }

    /// The next signal, or none when `until` passes first (never, when `None`).
    pub(super) fn next(&self, until: Option<Instant>) -> Option<i32> {
        loop {
            let timeout = until.map(|at| at.saturating_duration_since(Instant::now()));
            match take_one(&self.waited, timeout) {
                Taken::Signal(signal) => return Some(signal),
                Taken::TimedOut => return None,
                Taken::Interrupted => continue,
            }
        }
    }
}
