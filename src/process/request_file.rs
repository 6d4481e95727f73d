//! `RETRY_AFTER_FILE`: a fresh empty file for each attempt, through which the command can ask
//! for a wait or a stop (see `requested`).
//!
//! The files live in a directory the run makes in `$TMPDIR`, mode 0700, so that only the user
//! running the tool (and so the attempt) may write them; each attempt gets a new name, so that a
//! process an earlier attempt left behind cannot answer for a later one. After the attempt the
//! file's first 4 KiB are read without following a link or blocking on a FIFO, and the file is
//! removed; the directory goes when the run ends, after a signal too (the tool re-raises a
//! signal only once its run is over).

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::requested::MAX_REQUEST;

/// The run's directory of request files.
#[derive(Debug)]
pub(crate) struct RequestFiles {
    dir: tempfile::TempDir,
}

/// One attempt's request file, removed when taken or dropped.
#[derive(Debug)]
pub(crate) struct RequestFile {
    path: PathBuf,
}

impl RequestFiles {
    /// A new private directory in `$TMPDIR` (or `/tmp`).
    pub(crate) fn new() -> io::Result<RequestFiles> {
        let dir = tempfile::Builder::new()
            .prefix("retry-after-")
            .permissions(std::fs::Permissions::from_mode(0o700))
            .tempdir()?;
        Ok(RequestFiles { dir })
    }

    /// A fresh empty file for attempt number `attempt`, mode 0600.
    pub(crate) fn create(&self, attempt: u64) -> io::Result<RequestFile> {
        let path = self.dir.path().join(format!("attempt-{attempt}"));
        OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)?;
        Ok(RequestFile { path })
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
        let is_file = file.metadata().map_err(|err| err.to_string())?.is_file();
        if !is_file {
            return Err("it is no longer a regular file".into());
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
        // Whatever the command left at the path: a file, a link, a FIFO. A directory in its
        // place goes with the run's directory at the end.
        let _ = std::fs::remove_file(&self.path);
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
        let files = RequestFiles::new().unwrap();
        assert_eq!(mode(files.dir.path()), 0o700);
        let first = files.create(1).unwrap();
        let path = first.path().to_path_buf();
        assert_eq!(
            (mode(&path), std::fs::read(&path).unwrap().len()),
            (0o600, 0)
        );
        std::fs::write(&path, "37s\n").unwrap();
        assert_eq!(first.take(), Ok("37s\n".into()));
        assert!(!path.exists());
        let second = files.create(2).unwrap();
        assert_ne!(second.path(), path);
        let dir = files.dir.path().to_path_buf();
        drop((second, files));
        assert!(!dir.exists(), "nothing is left behind");
    }

    #[test]
    fn reads_only_the_start_and_never_a_link_or_a_fifo() {
        let files = RequestFiles::new().unwrap();
        let big = files.create(1).unwrap();
        std::fs::write(big.path(), "9".repeat(3 * MAX_REQUEST)).unwrap();
        assert_eq!(big.take().unwrap().len(), MAX_REQUEST);

        let linked = files.create(2).unwrap();
        std::fs::remove_file(linked.path()).unwrap();
        std::os::unix::fs::symlink("/etc/hostname", linked.path()).unwrap();
        let path = linked.path().to_path_buf();
        assert!(linked.take().is_err());
        assert!(
            std::fs::symlink_metadata(&path).is_err(),
            "the link is removed"
        );

        let fifo = files.create(3).unwrap();
        std::fs::remove_file(fifo.path()).unwrap();
        nix::unistd::mkfifo(fifo.path(), nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        assert_eq!(fifo.take(), Err("it is no longer a regular file".into()));
    }
}
