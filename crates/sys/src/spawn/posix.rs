//! The split elsewhere (macOS, the BSDs): nix's `posix_spawnp`, which takes the child's steps in
//! the header's order (its descriptors, its group, the signals' defaults, then the mask) and
//! reports a failed split or step as a failed exec. These systems have no parent-death signal;
//! the terminal is handed over by the tool as soon as the child exists.

use nix::spawn::{PosixSpawnAttr, PosixSpawnFileActions, PosixSpawnFlags, posix_spawnp};
use nix::unistd::Pid;
use std::io;
use std::os::fd::AsRawFd;

use super::{ChildEnd, Launcher, Pipes, Setup, StartError, Started, Step};

impl Launcher {
    /// Start a child, as the module header says.
    pub fn start(&mut self, setup: &Setup<'_>) -> Result<Started, StartError> {
        let pipes = Pipes::new(setup.stdio).map_err(StartError::at(Step::Prepare))?;
        let (actions, attributes) =
            prepare(&pipes, setup).map_err(StartError::at(Step::Prepare))?;
        let environ: Vec<&std::ffi::CStr> = setup.environ.entries().collect();
        let pid = posix_spawnp(&self.words[0], &actions, &attributes, &self.words, &environ)
            .map_err(|errno| StartError::at(Step::Execute)(errno.into()))?;
        if let Some(handover) = setup.handover.filter(|_| setup.own_group) {
            handover.give_to(pid);
        }
        Ok(pipes.started(pid))
    }
}

/// The file actions (stdin, stdout and stderr) and the attributes (group, signals) of a start.
fn prepare(
    pipes: &Pipes,
    setup: &Setup<'_>,
) -> io::Result<(PosixSpawnFileActions, PosixSpawnAttr)> {
    let mut actions = PosixSpawnFileActions::init()?;
    for (target, end) in (0..).zip(pipes.child_ends(setup.stdio)) {
        match end {
            ChildEnd::Keep => {}
            ChildEnd::Take(end) => actions.add_dup2(end.as_raw_fd(), target)?,
            ChildEnd::Close => actions.add_close(target)?,
        }
    }
    let mut attributes = PosixSpawnAttr::init()?;
    let mut flags =
        PosixSpawnFlags::POSIX_SPAWN_SETSIGDEF | PosixSpawnFlags::POSIX_SPAWN_SETSIGMASK;
    if setup.own_group {
        flags |= PosixSpawnFlags::POSIX_SPAWN_SETPGROUP;
        attributes.set_pgroup(Pid::from_raw(0))?;
    }
    attributes.set_flags(flags)?;
    attributes.set_sigdefault(&setup.mask.defaults())?;
    attributes.set_sigmask(&setup.mask.mask())?;
    Ok((actions, attributes))
}
