//! What the tool must not take on trust from its parent, set right as it starts.
//!
//! - SIGCHLD is reset to its default, as coreutils `timeout` does: a parent that ignores it (some
//!   daemons and CI agents do) would otherwise make the kernel reap the command behind the tool's
//!   back, and the tool would never see it end.
//! - Whether the parent left SIGPIPE ignored is remembered, so that the command gets it as the
//!   parent left it: std's runtime ignores SIGPIPE in the tool (a write to a closed pipe is then
//!   an error to handle, not a death). It is read by a constructor, which the loader runs before
//!   std's runtime changes it (`sys::signals`).
//!
//! std's runtime also makes descriptors 0, 1 and 2 exist (on /dev/null when closed), so that a
//! tool started with stdout closed never opens a file of its own as descriptor 1; which were
//! closed is read before it (`sys::descriptors`), so that the command gets them closed still.

use nix::sys::signal::Signal;

use retry_sys as sys;

/// What the tool's parent left it with that the command must get back.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Inherited {
    /// SIGPIPE was set to be ignored.
    pub sigpipe_ignored: bool,
}

/// Prepare the process.
pub fn prepare() -> Inherited {
    let _ = sys::signals::set_disposition(Signal::SIGCHLD, false);
    Inherited {
        sigpipe_ignored: sys::signals::sigpipe_ignored_at_start(),
    }
}
