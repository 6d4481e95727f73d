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
//! std's runtime also makes descriptors 0, 1 and 2 exist (on /dev/null when closed), so that a
//! tool started with stdout closed never opens a file of its own as descriptor 1.

use std::mem::MaybeUninit;
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
    let ignored = is_ignored(libc::SIGPIPE);
    SIGPIPE_IGNORED.store(ignored, Ordering::Relaxed);
}

/// Prepare the process.
pub(crate) fn prepare() -> Inherited {
    // SAFETY: setting a signal to its default installs no handler.
    unsafe { libc::signal(libc::SIGCHLD, libc::SIG_DFL) };
    Inherited {
        sigpipe_ignored: SIGPIPE_IGNORED.load(Ordering::Relaxed),
    }
}

/// Whether `signal` is set to be ignored (inherited from the tool's parent).
pub(crate) fn is_ignored(signal: i32) -> bool {
    let mut current = MaybeUninit::<libc::sigaction>::uninit();
    // SAFETY: a null new action only queries; `current` is writable storage for the old one.
    let queried = unsafe { libc::sigaction(signal, std::ptr::null(), current.as_mut_ptr()) } == 0;
    // SAFETY: sigaction filled `current` when it returned 0.
    queried && unsafe { current.assume_init() }.sa_sigaction == libc::SIG_IGN
}
