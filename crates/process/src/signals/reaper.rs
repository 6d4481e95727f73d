//! Reaping ended children: each attempt's main process, and the orphans the tool adopts.
//!
//! On Linux the tool is a child subreaper: processes that an attempt started and left behind
//! are re-parented to the tool rather than to init, so it can wait until they are really gone
//! (init in a container may never reap them) and no zombie outlives the tool's watch.

use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::Pid;

/// Adopt orphaned descendants (Linux); elsewhere they go to init as usual.
pub fn adopt_orphans() {
    #[cfg(target_os = "linux")]
    let _ = nix::sys::prctl::set_child_subreaper(true);
}

/// Reap every child that has ended, without blocking; returns the status of `leader` if it was
/// among them, or (with `stops`) if it was stopped.
pub fn reap_ended(leader: Option<Pid>, stops: bool) -> Option<WaitStatus> {
    let mut flags = WaitPidFlag::WNOHANG;
    if stops {
        flags |= WaitPidFlag::WUNTRACED;
    }
    let mut found = None;
    loop {
        match waitpid(None, Some(flags)) {
            Ok(WaitStatus::StillAlive) | Err(_) => return found,
            Ok(status) if status.pid().is_some() && status.pid() == leader => found = Some(status),
            Ok(_) => {}
        }
    }
}
