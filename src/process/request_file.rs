//! `RETRY_AFTER_FILE`: a fresh empty file for each attempt, through which the command can ask
//! for a wait or a stop (see `requested`).
//!
//! On Linux the file has no name at all: it is made unnamed in `$TMPDIR` (or `/tmp`), mode 0600,
//! held open by the tool, and the command reaches it through the tool's descriptor,
//! `/proc/PID/fd/N`, which only processes of the tool's user may open. So a tool killed at any
//! moment (SIGKILL, the OOM killer) leaves no file behind, and no directory entry is made or
//! removed for an attempt. Each attempt's descriptor gets a number no earlier attempt's had (the
//! numbers rise, wrapping only at the descriptor limit), so that a process an earlier attempt
//! left behind cannot answer for a later one: its path leads nowhere once its attempt is over.
//!
//! Elsewhere (and where `/proc` does not show this process) each file is made in the same
//! directory under a new random name, created exclusively with mode 0600, so that nothing
//! already at that path (a link, somebody's file) is taken over; after the attempt it is read
//! without following a link or blocking on a FIFO, only if it is still a regular file of the
//! tool's user, and removed.
//!
//! Either way only the file's first [`MAX_REQUEST`] bytes are read, and the next attempt's file
//! is made while an attempt runs, so that making it adds nothing between attempts.

use std::cell::Cell;
use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::fs::{FileExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use retry_budget::named_files;
use retry_policy::requested::MAX_REQUEST;

/// The lowest descriptor number a request file gets, above what the tool itself keeps open.
const FIRST_DESCRIPTOR: RawFd = 16;

/// Where the run's request files are made.
#[derive(Debug)]
pub(crate) struct RequestFiles {
    dir: PathBuf,
    /// With unnamed files: `/proc/PID/fd/`, and the lowest number the next one may get.
    unnamed: Option<(String, Cell<RawFd>)>,
    /// The next attempt's file, made ahead while an attempt runs.
    spare: Option<RequestFile>,
}

/// One attempt's request file, removed (or closed) when taken or dropped.
#[derive(Debug)]
pub(crate) struct RequestFile {
    path: PathBuf,
    /// The file itself, when it has no name.
    unnamed: Option<File>,
}

/// Why an attempt's request file could not be made, or read once the attempt ended.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RequestTrouble {
    /// The directory it goes in, and the system's error.
    #[error("cannot make RETRY_AFTER_FILE in {}: {error}", .dir.display())]
    NotMade { dir: PathBuf, error: io::Error },
    #[error("it is no longer a regular file")]
    NotRegular,
    #[error("another user replaced it")]
    Replaced,
    #[error(transparent)]
    Unreadable(#[from] io::Error),
}

impl RequestFiles {
    /// Request files in `$TMPDIR` (or `/tmp`): unnamed where `/proc` shows this process.
    pub(crate) fn new() -> RequestFiles {
        RequestFiles::in_dir(std::env::temp_dir(), own_descriptors())
    }

    /// Request files in `dir`, unnamed and reached through `descriptors` (`/proc/PID/fd/`) if
    /// given.
    fn in_dir(dir: PathBuf, descriptors: Option<String>) -> RequestFiles {
        RequestFiles {
            dir,
            unnamed: descriptors.map(|prefix| (prefix, Cell::new(FIRST_DESCRIPTOR))),
            spare: None,
        }
    }

    /// A fresh empty file for the next attempt, mode 0600 (the one made ahead, if there is
    /// one); the error names the directory.
    pub(crate) fn create(&mut self) -> Result<RequestFile, RequestTrouble> {
        if let Some(spare) = self.spare.take() {
            return Ok(spare);
        }
        self.make()
    }

    /// Make the next attempt's file now, while an attempt runs, so that making it adds nothing
    /// between attempts; if it cannot be made now, `create` tries again and says why.
    pub(crate) fn make_ahead(&mut self) {
        if self.spare.is_none() {
            self.spare = self.make().ok();
        }
    }

    fn make(&self) -> Result<RequestFile, RequestTrouble> {
        let made = match &self.unnamed {
            Some((prefix, next)) => self.create_unnamed(prefix, next),
            None => self.create_named(),
        };
        made.map_err(|error| RequestTrouble::NotMade {
            dir: self.dir.clone(),
            error,
        })
    }

    fn create_named(&self) -> io::Result<RequestFile> {
        let (_, path) = tempfile::Builder::new()
            .prefix("retry-after-")
            .permissions(std::fs::Permissions::from_mode(0o600))
            .tempfile_in(&self.dir)
            // The path stays; removing it is this RequestFile's job.
            .and_then(|file| file.keep().map_err(|err| err.error))?;
        Ok(RequestFile {
            path,
            unnamed: None,
        })
    }

    fn create_unnamed(&self, prefix: &str, next: &Cell<RawFd>) -> io::Result<RequestFile> {
        let file = tempfile::tempfile_in(&self.dir)?;
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
        let renumbered = match renumber(&file, next.get()) {
            Ok(fd) => fd,
            // The numbers ran up to the descriptor limit: start again from the lowest.
            Err(_) => renumber(&file, FIRST_DESCRIPTOR)?,
        };
        next.set(renumbered.as_raw_fd() + 1);
        Ok(RequestFile {
            path: PathBuf::from(format!("{prefix}{}", renumbered.as_raw_fd())),
            unnamed: Some(File::from(renumbered)),
        })
    }
}

/// A duplicate of `file`'s descriptor with the lowest free number from `lowest` up.
fn renumber(file: &File, lowest: RawFd) -> io::Result<OwnedFd> {
    retry_sys::descriptors::duplicate_from(file, lowest)
}

/// `/proc/PID/fd/`, where the tool's own descriptors are seen by other processes, if `/proc`
/// is there and shows this process under its own PID.
fn own_descriptors() -> Option<String> {
    if !cfg!(target_os = "linux") {
        return None;
    }
    let pid = std::process::id().to_string();
    let seen = std::fs::read_link("/proc/self").ok()?;
    (seen == Path::new(&pid)).then(|| format!("/proc/{pid}/fd/"))
}

impl RequestFile {
    /// Where the command writes its request.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// What the command wrote (its first 4 KiB), removing the file; the error says why it
    /// could not be read.
    pub(crate) fn take(self) -> Result<String, RequestTrouble> {
        if let Some(file) = &self.unnamed {
            // Most commands write nothing: then there is nothing to read, or to clear room for.
            let written = file.metadata()?.len();
            let wanted = usize::try_from(written).map_or(MAX_REQUEST, |len| len.min(MAX_REQUEST));
            if wanted == 0 {
                return Ok(String::new());
            }
            let mut bytes = vec![0; wanted];
            let count = file.read_at(&mut bytes, 0)?;
            bytes.truncate(count);
            return Ok(String::from_utf8_lossy(&bytes).into_owned());
        }
        let named_files::Opened { file, metadata } =
            named_files::open(&self.path, OpenOptions::new().read(true), libc::O_NOFOLLOW)?;
        if !metadata.is_file() {
            return Err(RequestTrouble::NotRegular);
        }
        if metadata.uid() != nix::unistd::geteuid().as_raw() {
            return Err(RequestTrouble::Replaced);
        }
        Ok(read_start(file)?)
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
        if self.unnamed.is_some() {
            return;
        }
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
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn each_attempt_gets_a_fresh_private_file_that_goes_once_read() {
        let scratch = tempfile::tempdir().unwrap();
        let mut files = RequestFiles::in_dir(scratch.path().to_path_buf(), None);
        let first = files.create().unwrap();
        let path = first.path().to_path_buf();
        assert_eq!(path.parent(), Some(scratch.path()));
        assert_eq!(
            (mode(&path), std::fs::read(&path).unwrap().len()),
            (0o600, 0)
        );
        std::fs::write(&path, "37s\n").unwrap();
        assert_eq!(first.take().unwrap(), "37s\n");
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
    fn unnamed_files_leave_nothing_and_never_share_a_path() {
        let descriptors = own_descriptors();
        if !cfg!(target_os = "linux") {
            return;
        }
        let descriptors = descriptors.expect("/proc shows this process's descriptors");
        let scratch = tempfile::tempdir().unwrap();
        let mut files = RequestFiles::in_dir(scratch.path().to_path_buf(), Some(descriptors));
        let mut paths = Vec::new();
        for attempt in 0..5 {
            let file = files.create().unwrap();
            // As a run does: the next one is made while this attempt runs.
            files.make_ahead();
            assert_eq!(std::fs::read(file.path()).unwrap(), b"", "fresh");
            assert_eq!(mode(file.path()), 0o600);
            std::fs::write(file.path(), format!("{attempt}s\n")).unwrap();
            assert!(!paths.contains(&file.path().to_path_buf()), "a path again");
            paths.push(file.path().to_path_buf());
            assert_eq!(file.take().unwrap(), format!("{attempt}s\n"));
        }
        assert!(
            std::fs::read(&paths[0]).is_err(),
            "an attempt's path leads nowhere after it"
        );
        let left: Vec<_> = std::fs::read_dir(scratch.path()).unwrap().collect();
        assert!(left.is_empty(), "left behind: {left:?}");
    }

    #[test]
    fn reads_only_the_start_and_never_a_link_or_a_fifo() {
        let scratch = tempfile::tempdir().unwrap();
        let mut files = RequestFiles::in_dir(scratch.path().to_path_buf(), None);
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
        assert!(matches!(fifo.take(), Err(RequestTrouble::NotRegular)));
    }
}
