//! Taking signals where there is no `sigtimedwait` (macOS, the BSDs), and on Linux with the
//! `portable-signals` feature: signal-hook's handlers and self-pipe. Its handler marks each caught
//! signal and writes a byte to a socket that only this process reads; waiting unblocks the
//! signals, `poll`s the socket until a byte or the moment waited for comes, and blocks them
//! again. The signals stay blocked everywhere else, so that the handler runs only in the waiting
//! thread and no other system call of the tool's is ever interrupted; a signal that arrives
//! between the unblocking and the `poll` leaves its byte in the socket, so none is missed.
//!
//! A child resets every signal this backend handles to its default before it unblocks any
//! (`sys::signals::ChildMask`), so the handler never runs in a child.

use std::io;
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::signal::SigSet;
use signal_hook::iterator::backend::SignalDelivery;
use signal_hook::iterator::exfiltrator::SignalOnly;

/// signal-hook's delivery of the caught signals, and the signals to unblock while waiting.
pub(super) struct Backend {
    delivery: Mutex<SignalDelivery<UnixStream, SignalOnly>>,
    waited: SigSet,
}

impl Backend {
    /// Take the signals of `waited`, which the calling thread has blocked, through signal-hook.
    pub(super) fn install(waited: SigSet) -> io::Result<Backend> {
        let (read, write) = UnixStream::pair()?;
        read.set_nonblocking(true)?;
        write.set_nonblocking(true)?;
        let signals: Vec<i32> = waited.iter().map(|signal| signal as i32).collect();
        let delivery = SignalDelivery::with_pipe(read, write, SignalOnly, signals)?;
        Ok(Backend {
            delivery: Mutex::new(delivery),
            waited,
        })
    }

    /// The signals this backend runs a handler for: every one it takes.
    pub(super) fn handled(&self) -> SigSet {
        self.waited
    }

    /// The next signal, or none when `until` passes first (never, when `None`).
    pub(super) fn next(&self, until: Option<Instant>) -> Option<i32> {
        let mut delivery = self.delivery.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            if let Some(signal) = delivery.pending().next() {
                return Some(signal);
            }
            let timeout = match until {
                None => PollTimeout::NONE,
                Some(at) => match at.checked_duration_since(Instant::now()) {
                    None => return None,
                    // Rounded up, so that the wait never ends early and spins.
                    Some(left) => u64::try_from(left.as_nanos().div_ceil(1_000_000))
                        .ok()
                        .and_then(|ms| PollTimeout::try_from(ms).ok())
                        .unwrap_or(PollTimeout::MAX),
                },
            };
            let mut socket = [PollFd::new(delivery.get_read().as_fd(), PollFlags::POLLIN)];
            // EINTR (the handler ran) is fine: its byte is there.
            let _ = self.waited.thread_unblock();
            let _ = poll(&mut socket, timeout);
            let _ = self.waited.thread_block();
        }
    }
}
