//! Handing the controlling terminal to an attempt's process group, and taking it back.
//!
//! When the tool runs in the foreground of a controlling terminal, each attempt's process group is
//! made the terminal's foreground group while it runs, as shells do for their jobs: a command can
//! then read a password or answer a prompt, and Ctrl-C typed there reaches the command. The child
//! takes the terminal itself, between the split and exec (`sys::spawn::Handover`), so that it never
//! runs a moment in the background; the tool takes it back when the attempt ends (with SIGTTOU
//! blocked, see `signals`).
//!
//! Every hand-over checks first that the giver holds the terminal: a tool sent to the background
//! (Ctrl-Z, then `bg`) must not take the terminal from the shell, for itself or for an attempt.

use std::fs::File;
use std::os::fd::AsFd;
use std::os::unix::fs::OpenOptionsExt;

use nix::sys::signal::killpg;
use nix::unistd::{Pid, getpgrp, tcgetpgrp, tcsetpgrp};

use crate::signals::signal::Platform;
use retry_sys::spawn::Handover;

/// The controlling terminal of a tool that is in its foreground.
#[derive(Debug)]
pub struct Terminal {
    tty: File,
    own_group: Pid,
}

impl Terminal {
    /// The controlling terminal, if there is one and this process's group is its foreground.
    pub fn if_in_foreground() -> Option<Terminal> {
        // Never blocking, and never made the tool's controlling terminal by this open.
        let tty = File::options()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
            .open("/dev/tty")
            .ok()?;
        let own_group = getpgrp();
        (tcgetpgrp(&tty).ok()? == own_group).then_some(Terminal { tty, own_group })
    }

    /// What a child of the tool needs to take the terminal, if the tool holds it then.
    pub fn handover(&self) -> Handover<'_> {
        Handover::new(self.tty.as_fd(), self.own_group)
    }

    /// Whether `group` is the terminal's foreground group.
    pub fn is_held_by(&self, group: Pid) -> bool {
        tcgetpgrp(&self.tty).ok() == Some(group)
    }

    /// Whether the tool's own group is the terminal's foreground.
    pub fn is_in_foreground(&self) -> bool {
        self.is_held_by(self.own_group)
    }

    /// Make the tool's own group the foreground again, if `group` holds the terminal; errors are
    /// ignored, as the terminal may be gone.
    pub fn take_back_from(&self, group: Pid) {
        if self.is_held_by(group) {
            let _ = tcsetpgrp(&self.tty, self.own_group);
        }
    }

    /// Make `group` the terminal's foreground, if the tool's own group holds it.
    pub fn give_to(&self, group: Pid) {
        if self.is_in_foreground() {
            let _ = tcsetpgrp(&self.tty, group);
        }
    }

    /// Send `signal` to the tool's own process group: its job, as the shell sees it.
    pub fn signal_own_job(&self, signal: crate::signals::Signal) {
        if let Some(signal) = signal.known() {
            let _ = killpg(self.own_group, signal);
        }
    }
}
