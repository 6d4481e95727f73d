//! Taking signals where there is no `sigtimedwait` (macOS), and on Linux with the
//! `portable-signals` feature: the self-pipe. A handler writes each caught signal's number, one
//! byte, to a pipe that only this process reads; waiting unblocks the signals, `poll`s the pipe
//! until a byte or the moment waited for comes, and blocks them again. The signals stay blocked
//! everywhere else, so that the handler runs only in the waiting thread and no other system call
//! of the tool's is ever interrupted; a signal that arrives between the unblocking and the `poll`
//! leaves its byte in the pipe, so none is missed. The doorbell writes a SIGCHLD byte itself.
//!
//! Between `fork` and `exec` a child still has the handler, and the signals blocked until it
//! restores its mask; a signal it takes then is its own, so the handler writes only in the
//! process that installed it.

use std::io;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Instant;

/// The write end of the pipe, for the handler.
static PIPE: AtomicI32 = AtomicI32::new(-1);
/// The process the handler writes for: children before `exec` do not.
static OWNER: AtomicI32 = AtomicI32::new(0);

/// The pipe, and the signals to unblock while waiting.
pub(super) struct Backend {
    waited: libc::sigset_t,
    read: libc::c_int,
}

/// Rings by writing a SIGCHLD byte to the pipe.
#[derive(Clone, Copy, Debug)]
pub(super) struct Bell(libc::c_int);

impl Backend {
    /// Take the signals of `waited`, which the calling thread has blocked, through a pipe.
    pub(super) fn install(waited: libc::sigset_t) -> io::Result<Backend> {
        let (read, write) = pipe()?;
        PIPE.store(write, Ordering::SeqCst);
        OWNER.store(std::process::id() as i32, Ordering::SeqCst);
        for signal in 1..32 {
            // SAFETY: `waited` is an initialised set; the signal number is in range.
            if unsafe { libc::sigismember(&waited, signal) } == 1 {
                handle(signal)?;
            }
        }
        Ok(Backend { waited, read })
    }

    /// The next signal, or none when `until` passes first (never, when `None`).
    pub(super) fn next(&self, until: Option<Instant>) -> Option<i32> {
        loop {
            if let Some(signal) = self.take() {
                return Some(signal);
            }
            let timeout = match until {
                None => -1,
                Some(at) => match at.checked_duration_since(Instant::now()) {
                    None => return None,
                    // Rounded up, so that the wait never ends early and spins.
                    Some(left) => {
                        i32::try_from(left.as_nanos().div_ceil(1_000_000)).unwrap_or(i32::MAX)
                    }
                },
            };
            self.unblocked(|| {
                let mut poll = libc::pollfd {
                    fd: self.read,
                    events: libc::POLLIN,
                    revents: 0,
                };
                // SAFETY: one valid pollfd; EINTR (the handler ran) is fine: the byte is there.
                unsafe { libc::poll(&mut poll, 1, timeout) };
            });
        }
    }

    /// The bell that wakes [`Backend::next`] from another thread.
    pub(super) fn bell(&self) -> Bell {
        Bell(PIPE.load(Ordering::SeqCst))
    }

    /// One signal's byte from the pipe, if there is one.
    fn take(&self) -> Option<i32> {
        let mut byte = 0u8;
        // SAFETY: reads at most one byte into `byte`; the read end is non-blocking.
        let read = unsafe { libc::read(self.read, (&mut byte as *mut u8).cast(), 1) };
        (read == 1).then_some(i32::from(byte))
    }

    /// Run `wait` with the caught signals unblocked in this thread.
    fn unblocked(&self, wait: impl FnOnce()) {
        // SAFETY: `waited` is an initialised set; the old mask is not wanted.
        unsafe { libc::pthread_sigmask(libc::SIG_UNBLOCK, &self.waited, std::ptr::null_mut()) };
        wait();
        // SAFETY: as above.
        unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &self.waited, std::ptr::null_mut()) };
    }
}

impl Bell {
    pub(super) fn ring(self) {
        write_byte(self.0, libc::SIGCHLD);
    }
}

/// Write `signal`'s byte to `pipe`; a full pipe already holds bytes enough to wake the reader.
/// Async-signal-safe.
fn write_byte(pipe: libc::c_int, signal: libc::c_int) {
    let byte = signal as u8;
    // SAFETY: writes one byte from a local; the write end is non-blocking.
    unsafe { libc::write(pipe, (&byte as *const u8).cast(), 1) };
}

/// The handler: the signal's byte to the pipe, in the process that installed it only, leaving
/// `errno` as it found it.
extern "C" fn on_signal(signal: libc::c_int) {
    let saved = nix::errno::Errno::last_raw();
    // SAFETY: getpid has no preconditions and is async-signal-safe.
    if unsafe { libc::getpid() } == OWNER.load(Ordering::SeqCst) {
        write_byte(PIPE.load(Ordering::SeqCst), signal);
    }
    nix::errno::Errno::set_raw(saved);
}

/// Install the handler for `signal`, restarting what it interrupts.
fn handle(signal: libc::c_int) -> io::Result<()> {
    // SAFETY: an all-zero sigaction is a valid value to fill in.
    let mut action: libc::sigaction = unsafe { std::mem::zeroed() };
    action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
    action.sa_flags = libc::SA_RESTART;
    // SAFETY: `sa_mask` is part of `action`, which outlives the call.
    unsafe { libc::sigemptyset(&mut action.sa_mask) };
    // SAFETY: the handler only calls async-signal-safe functions; no old action is wanted.
    match unsafe { libc::sigaction(signal, &action, std::ptr::null_mut()) } {
        0 => Ok(()),
        _ => Err(io::Error::last_os_error()),
    }
}

/// A pipe whose ends are non-blocking and closed on `exec`.
fn pipe() -> io::Result<(libc::c_int, libc::c_int)> {
    let mut ends = [0; 2];
    // SAFETY: `ends` has room for the two descriptors pipe writes.
    if unsafe { libc::pipe(ends.as_mut_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // A blocking write end would hang the handler once the pipe is full: fail instead.
    for end in ends {
        // SAFETY: fcntl on descriptors just made; the flags only add non-blocking and close-on-exec.
        let set = unsafe {
            libc::fcntl(end, libc::F_SETFL, libc::O_NONBLOCK) == 0
                && libc::fcntl(end, libc::F_SETFD, libc::FD_CLOEXEC) == 0
        };
        if !set {
            return Err(io::Error::last_os_error());
        }
    }
    Ok((ends[0], ends[1]))
}
