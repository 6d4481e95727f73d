//! What the tool must not take on trust from its parent, set right as it starts.
//!
//! - SIGCHLD is reset to its default, as coreutils `timeout` does: a parent that ignores it (some
//!   daemons and CI agents do) would otherwise make the kernel reap the command behind the tool's
//!   back, and the tool would never see it end.
//! - Whether the parent left SIGPIPE ignored is remembered, so that the command gets it as the
//!   parent left it: std's runtime ignores SIGPIPE in the tool (a write to a closed pipe is then
//!   an error to handle, not a death) and resets it to its default in children. It is read by a
//!   constructor, which the loader runs before std's runtime changes it.
//!
//! - A panic (a bug) is the tool's own failure: one line and exit 125, never a backtrace, and
//!   never 134, which would read as "the last attempt died of SIGABRT".
//!
//! std's runtime also makes descriptors 0, 1 and 2 exist (on /dev/null when closed), so that a
//! tool started with stdout closed never opens a file of its own as descriptor 1.

use std::sync::atomic::{AtomicBool, Ordering};

/// What the tool's parent left it with that the command must get back.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Inherited {
    /// SIGPIPE was set to be ignored.
    pub(crate) sigpipe_ignored: bool,
}

/// Whether SIGPIPE was ignored when the process started.
static SIGPIPE_IGNORED: AtomicBool = AtomicBool::new(false);

/// Run by the loader before `main`, and so before std's runtime sets SIGPIPE to be ignored.
#[used]
#[cfg_attr(
    any(target_os = "linux", target_os = "freebsd", target_os = "android"),
    unsafe(link_section = ".init_array")
)]
#[cfg_attr(
    target_vendor = "apple",
    unsafe(link_section = "__DATA,__mod_init_func")
)]
static REMEMBER_SIGPIPE: extern "C" fn() = remember_sigpipe;

extern "C" fn remember_sigpipe() {
    let ignored = crate::process::signals::is_ignored(libc::SIGPIPE);
    SIGPIPE_IGNORED.store(ignored, Ordering::Relaxed);
}

/// Prepare the process; call first thing in `main`.
pub fn prepare() -> Inherited {
    // SAFETY: setting a signal to its default installs no handler.
    unsafe { libc::signal(libc::SIGCHLD, libc::SIG_DFL) };
    std::panic::set_hook(Box::new(|panic| {
        let message = format!("internal error: {panic}; this is a bug, please report it");
        let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
        crate::report::reporter::say_error(&message, &args);
        std::process::exit(125);
    }));
    Inherited {
        sigpipe_ignored: SIGPIPE_IGNORED.load(Ordering::Relaxed),
    }
}
