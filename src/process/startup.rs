//! Process start-up done by hand, because the binary has no Rust `main` runtime.
//!
//! `main.rs` uses `#![no_main]`: std's runtime start-up spends more instructions than the whole
//! rest of a `retry -- true` run (it reads /proc/self/maps to guard the main thread's stack).
//! What it does that matters to a process wrapper is done here instead, plus what a wrapper must
//! not take on trust from its parent:
//! - SIGPIPE is ignored, so that a write to a closed pipe is an error to handle, not a death.
//!   Whether the parent had it ignored is remembered, so that the command gets it as the parent
//!   left it (std resets it to its default in children).
//! - SIGCHLD is reset to its default, as coreutils `timeout` does: a parent that ignores it (some
//!   daemons and CI agents do) would otherwise make the kernel reap the command behind the tool's
//!   back, and the tool would never see it end.
//! - File descriptors 0, 1 and 2 are made to exist: a wrapper started with stdout closed would
//!   otherwise open its next file (a report, a temporary file) as descriptor 1, and the command
//!   would write its output into it. A closed one is opened on /dev/null.

/// What the tool's parent left it with that the command must get back.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Inherited {
    /// SIGPIPE was set to be ignored.
    pub(crate) sigpipe_ignored: bool,
}

/// Prepare the process; call first thing in `main`.
pub fn prepare() -> Inherited {
    // SAFETY: setting a signal to be ignored or to its default installs no handler; the previous
    // disposition `signal` returns is only compared.
    let sigpipe_ignored = unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) } == libc::SIG_IGN;
    // SAFETY: as above.
    unsafe { libc::signal(libc::SIGCHLD, libc::SIG_DFL) };
    for fd in 0..=2 {
        // SAFETY: F_GETFD only reads the descriptor's flags.
        let closed = unsafe { libc::fcntl(fd, libc::F_GETFD) } == -1;
        if closed {
            // SAFETY: a constant, NUL-terminated path; `open` returns the lowest free descriptor,
            // which is `fd` since the lower ones exist.
            unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDWR) };
        }
    }
    Inherited { sigpipe_ignored }
}
