//! Process start-up done by hand, because the binary has no Rust `main` runtime.
//!
//! `main.rs` uses `#![no_main]`: std's runtime start-up spends more instructions than the whole
//! rest of a `retry -- true` run (it reads /proc/self/maps to guard the main thread's stack).
//! Two things it does matter to a process wrapper, and are done here instead:
//! - SIGPIPE is ignored, so that a write to a closed pipe is an error to handle, not a death (std
//!   restores the default in children before `exec`).
//! - File descriptors 0, 1 and 2 are made to exist: a wrapper started with stdout closed would
//!   otherwise open its next file (a report, a temporary file) as descriptor 1, and the command
//!   would write its output into it. A closed one is opened on /dev/null.

/// Prepare the process; call first thing in `main`.
pub fn prepare() {
    // SAFETY: setting a signal to be ignored installs no handler.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
    for fd in 0..=2 {
        // SAFETY: F_GETFD only reads the descriptor's flags.
        let closed = unsafe { libc::fcntl(fd, libc::F_GETFD) } == -1;
        if closed {
            // SAFETY: a constant, NUL-terminated path; `open` returns the lowest free descriptor,
            // which is `fd` since the lower ones exist.
            unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDWR) };
        }
    }
}
