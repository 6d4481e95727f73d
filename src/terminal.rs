//! Handing the controlling terminal to an attempt's process group, and taking it back.
//!
//! When the tool runs in the foreground of a controlling terminal, each attempt's process group
//! is made the terminal's foreground group while it runs, as shells do for their jobs: a command
//! can then read a password or answer a prompt, and Ctrl-C typed there reaches the command. The
//! child takes the terminal itself, between fork and exec, so that it never runs a moment in the
//! background; the tool takes it back when the attempt ends (with SIGTTOU blocked, see `signals`).

use std::fs::File;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};

use nix::unistd::{getpgrp, getpid, tcgetpgrp, tcsetpgrp, Pid};

/// The controlling terminal of a tool that is in its foreground.
#[derive(Debug)]
pub struct Terminal {
    tty: File,
    own_group: Pid,
}

impl Terminal {
    /// The controlling terminal, if there is one and this process's group is its foreground.
    pub fn if_in_foreground() -> Option<Terminal> {
        let tty = File::options()
            .read(true)
            .write(true)
            .open("/dev/tty")
            .ok()?;
        let own_group = getpgrp();
        (tcgetpgrp(&tty).ok()? == own_group).then_some(Terminal { tty, own_group })
    }

    /// The terminal's file descriptor, for [`give_to_own_group`] in a child.
    pub fn raw_fd(&self) -> RawFd {
        self.tty.as_raw_fd()
    }

    /// Make the tool's own process group the foreground again; errors are ignored, as the
    /// terminal may be gone.
    pub fn take_back(&self) {
        self.give_to(self.own_group);
    }

    /// Make `group` the terminal's foreground group; errors are ignored, as above.
    pub fn give_to(&self, group: Pid) {
        let _ = tcsetpgrp(&self.tty, group);
    }
}

/// In a freshly forked child that leads its own process group: make that group the terminal's
/// foreground. Async-signal-safe (`getpid` and `tcsetpgrp` only); SIGTTOU must be blocked.
pub fn give_to_own_group(tty: RawFd) {
    // SAFETY: `tty` stays open in the child until exec: the tool holds it for the whole run.
    let tty = unsafe { BorrowedFd::borrow_raw(tty) };
    let _ = tcsetpgrp(tty.as_fd(), getpid());
}
