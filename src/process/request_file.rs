//! `RETRY_AFTER_FILE`: a fresh empty file for each attempt, through which the command can ask
//! for a wait or a stop (see `requested`).
//!
//! Each file is made in `$TMPDIR` (or `/tmp`) under a new random name, created exclusively with
//! mode 0600, so that only the user running the tool (and so the attempt) may write it, nothing
//! already at that path (a link, somebody's file) is taken over, and a process an earlier attempt
//! left behind cannot answer for a later one. After the attempt the file's first 4 KiB are read
//! without following a link or blocking on a FIFO, and only if it is still a regular file of the
//! tool's user (in a temporary directory without the sticky bit another user could replace it);
//! then it is removed, after a signal too (the tool re-raises a signal only once its attempt is
//! over). No directory of the run's own: making and removing one costs about 60 µs on ext4, a
//! twentieth of a whole short run.

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::requested::MAX_REQUEST;

/// Where the run's request files are made.
#[derive(Debug)]
pub(crate) struct RequestFiles {
    dir: PathBuf,
}

/// One attempt's request file, removed when taken or dropped.
#[derive(Debug)]
pub(crate) struct RequestFile {
    path: PathBuf,
}

impl RequestFiles {
    /// Request files in `$TMPDIR` (or `/tmp`).
    pub(crate) fn new() -> RequestFiles {
        RequestFiles {
            dir: std::env::temp_dir(),
        }
    }

    /// A fresh empty file for the next attempt, mode 0600; the error names the directory.
    pub(crate) fn create(&self) -> Result<RequestFile, String> {
        let made = tempfile::Builder::new()
            .prefix("retry-after-")
            .permissions(std::fs::Permissions::from_mode(0o600))
            .tempfile_in(&self.dir)
            // The path stays; removing it is this RequestFile's job.
            .and_then(|file| file.keep().map_err(|err| err.error));
        match made {
            Ok((_, path)) => Ok(RequestFile { path }),
            Err(err) => Err(format!(
                "cannot make RETRY_AFTER_FILE in {}: {err}",
                self.dir.display()
            )),
        }
    }
}

impl RequestFile {
    /// Where the command writes its request.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// What the command wrote (its first 4 KiB), removing the file; the error says why it
    /// could not be read.
    pub(crate) fn take(self) -> Result<String, String> {
        let file = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(&self.path)
            .map_err(|err| err.to_string())?;
        let metadata = file.metadata().map_err(|err| err.to_string())?;
        if !metadata.is_file() {
            return Err("it is no longer a regular file".into());
        }
        // SAFETY: geteuid has no preconditions and cannot fail.
        if metadata.uid() != unsafe { libc::geteuid() } {
            return Err("another user replaced it".into());
        }
        read_start(file).map_err(|err| err.to_string())
    }
}

/// The first [`MAX_REQUEST`] bytes of `file`, as text.
fn read_start(file: File) -> io::Result<String> {
    let mut bytes = Vec::with_capacity(MAX_REQUEST);
    file.take(MAX_REQUEST as u64).read_to_end(&mut bytes)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

impl Drop for RequestFile {
    fn drop(&mut self) {
        // Whatever the command left at the path: a file, a link, a FIFO, or a directory (never
        // followed: a link is removed, not what it points to).
        if std::fs::remove_file(&self.path).is_err() {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::symlink_metadata(path)
            .unwrap()
            .permissions()
            .mode()
            & 0o777
    }

    #[test]
    fn each_attempt_gets_a_fresh_private_file_that_goes_once_read() {
        let scratch = tempfile::tempdir().unwrap();
        let files = RequestFiles {
            dir: scratch.path().to_path_buf(),
        };
        let first = files.create().unwrap();
        let path = first.path().to_path_buf();
        assert_eq!(path.parent(), Some(scratch.path()));
        assert_eq!(
            (mode(&path), std::fs::read(&path).unwrap().len()),
            (0o600, 0)
        );
        std::fs::write(&path, "37s\n").unwrap();
        assert_eq!(first.take(), Ok("37s\n".into()));
        assert!(!path.exists());
        let second = files.create().unwrap();
        assert_ne!(second.path(), path);
        std::fs::remove_file(second.path()).unwrap();
        std::fs::create_dir(second.path()).unwrap();
        std::fs::write(second.path().join("inside"), "").unwrap();
        drop(second);
        let left: Vec<_> = std::fs::read_dir(scratch.path()).unwrap().collect();
        assert!(left.is_empty(), "left behind: {left:?}");
    }

    #[test]
    fn reads_only_the_start_and_never_a_link_or_a_fifo() {
        let files = RequestFiles::new();
        let big = files.create().unwrap();
        std::fs::write(big.path(), "9".repeat(3 * MAX_REQUEST)).unwrap();
        assert_eq!(big.take().unwrap().len(), MAX_REQUEST);

        let linked = files.create().unwrap();
        std::fs::remove_file(linked.path()).unwrap();
        std::os::unix::fs::symlink("/etc/hostname", linked.path()).unwrap();
        let path = linked.path().to_path_buf();
        assert!(linked.take().is_err());
        assert!(
            std::fs::symlink_metadata(&path).is_err(),
            "the link is removed"
        );

        let fifo = files.create().unwrap();
        std::fs::remove_file(fifo.path()).unwrap();
        nix::unistd::mkfifo(fifo.path(), nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        assert_eq!(fifo.take(), Err("it is no longer a regular file".into()));
    }
}
