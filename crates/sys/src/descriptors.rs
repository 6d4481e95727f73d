//! Descriptors the tool knows only by their numbers: duplicating one, or to a number of its
//! choosing (`fcntl(F_DUPFD_CLOEXEC)`, whose result nix gives as a bare number); and which of
//! stdin, stdout and stderr the tool's parent left closed, read before std's runtime opens them
//! on `/dev/null`, so that the command gets them closed too, as without the tool.

use std::io;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicU8, Ordering};

/// Which of descriptors 0, 1 and 2 were closed when the process started, a bit each.
static CLOSED_AT_START: AtomicU8 = AtomicU8::new(0);

/// Read which of 0, 1 and 2 are closed, before std's runtime opens them (`before_main`).
pub(crate) fn remember_closed() {
    let closed = (0..3).fold(0, |closed, fd| {
        // SAFETY: fcntl reads no memory; on a number that is not open it fails with EBADF.
        let open = unsafe { libc::fcntl(fd, libc::F_GETFD) } != -1;
        closed | (u8::from(!open) << fd)
    });
    CLOSED_AT_START.store(closed, Ordering::Relaxed);
}

/// Whether `fd` (0, 1 or 2) was closed when the process started.
pub fn closed_at_start(fd: RawFd) -> bool {
    (0..3).contains(&fd) && CLOSED_AT_START.load(Ordering::Relaxed) & (1 << fd) != 0
}

/// A duplicate of `fd`, close-on-exec, with the lowest free number from `lowest` up.
pub fn duplicate_from(fd: impl AsFd, lowest: RawFd) -> io::Result<OwnedFd> {
    duplicate_raw(fd.as_fd().as_raw_fd(), lowest)
}

/// A duplicate, close-on-exec, of the descriptor numbered `fd`, if it is open: the way to
/// reach a descriptor a path such as `/dev/fd/3` names, with the file offset it has.
pub fn duplicate_numbered(fd: RawFd) -> io::Result<OwnedFd> {
    duplicate_raw(fd, 0)
}

fn duplicate_raw(fd: RawFd, lowest: RawFd) -> io::Result<OwnedFd> {
    // SAFETY: fcntl reads no memory; on a number that is not open it fails with EBADF.
    match unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, lowest) } {
        -1 => Err(io::Error::last_os_error()),
        // SAFETY: F_DUPFD_CLOEXEC returned a new descriptor that nothing else owns.
        new => Ok(unsafe { OwnedFd::from_raw_fd(new) }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_duplicate_is_a_new_descriptor_from_the_lowest_number_asked() {
        let file = std::fs::File::open("/dev/null").unwrap();
        let copy = duplicate_from(&file, 100).unwrap();
        assert!(copy.as_raw_fd() >= 100);
        let again = duplicate_numbered(copy.as_raw_fd()).unwrap();
        assert_ne!(again.as_raw_fd(), copy.as_raw_fd());
        // A number nothing can have open.
        assert_eq!(
            duplicate_numbered(RawFd::MAX).unwrap_err().raw_os_error(),
            Some(libc::EBADF)
        );
    }
}
