//! Opening a path from outside the tool (a password file, a report, `$GITHUB_OUTPUT`, a budget's
//! state): never blocking, whatever it turns out to be, and its type taken from what was opened;
//! and reading the secret on a file's first line (a store's password, a monitor's URL).
//!
//! `open(2)` itself can block: on a FIFO with no reader (for writing) or no writer (for reading),
//! and on some devices; a tool blocked there is past its `--max-time` and deaf to its purpose
//! before the first attempt. So every such path is opened here, with `O_NONBLOCK` (and
//! `O_NOCTTY`, so that a terminal never becomes the tool's controlling one), and the caller gets
//! the type from the open descriptor (`fstat`, never a second look at the path, which could have
//! changed meanwhile) to decide what it may do with it: read only a regular file, append only to
//! a regular file, write a FIFO or a device in place.

use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

use crate::error::PasswordFileProblem;
pub use crate::error::Unbounded;

/// A file opened without blocking, with what it is.
pub struct Opened {
    /// The open file.
    pub file: File,
    /// What it was when opened: its type, owner and mode.
    pub metadata: Metadata,
}

/// Open `path` as `options` say, with the flags `flags` (`O_NOFOLLOW`, say) and without
/// blocking; the descriptor stays non-blocking until [`Opened::blocking`].
pub fn open(path: &Path, options: &mut OpenOptions, flags: i32) -> io::Result<Opened> {
    let file = options
        .custom_flags(flags | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    let metadata = file.metadata()?;
    Ok(Opened { file, metadata })
}

impl Opened {
    /// The file, its reads and writes blocking again: for a FIFO or a device written in place on
    /// a thread the run does not wait for past its limits.
    pub fn blocking(self) -> io::Result<File> {
        nix::fcntl::fcntl(
            &self.file,
            nix::fcntl::FcntlArg::F_SETFL(nix::fcntl::OFlag::empty()),
        )?;
        Ok(self.file)
    }
}

/// At most `limit` bytes from the regular file at `path`, links followed (a secret mounted by
/// Kubernetes is a link); anything else is refused with what it is, before a byte is read.
pub fn read_regular(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    let opened = open_regular(path)?;
    let mut bytes = Vec::new();
    opened.file.take(limit).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// The regular file at `path`, opened for reading without blocking, links followed; anything
/// else is refused with what it is.
fn open_regular(path: &Path) -> io::Result<Opened> {
    let opened = open(path, OpenOptions::new().read(true), 0)?;
    match opened.metadata.is_file() {
        true => Ok(opened),
        false => Err(io::Error::other(format!(
            "it is {}, not a regular file",
            kind(&opened.metadata)
        ))),
    }
}

/// The whole of the regular file at `path`, links followed, when it holds at most `max` bytes;
/// when `private`, a file that only its owner may read or write (a private key's, as ssh asks
/// of one).
pub fn read_bounded(path: &Path, max: u64, private: bool) -> Result<Vec<u8>, Unbounded> {
    use std::os::unix::fs::PermissionsExt;
    let opened = open_regular(path)?;
    let mode = opened.metadata.permissions().mode() & 0o777;
    if private && mode & 0o077 != 0 {
        return Err(Unbounded::NotPrivate(mode));
    }
    let mut bytes = Vec::new();
    opened.file.take(max + 1).read_to_end(&mut bytes)?;
    match bytes.len() as u64 > max {
        true => Err(Unbounded::TooLarge(max)),
        false => Ok(bytes),
    }
}

/// What a file that `metadata` describes is, in words: "a FIFO", "a directory", ...
pub fn kind(metadata: &Metadata) -> &'static str {
    let file_type = metadata.file_type();
    match () {
        _ if file_type.is_file() => "a regular file",
        _ if file_type.is_dir() => "a directory",
        _ if file_type.is_symlink() => "a symbolic link",
        _ if file_type.is_fifo() => "a FIFO",
        _ if file_type.is_socket() => "a socket",
        _ if file_type.is_char_device() => "a character device",
        _ if file_type.is_block_device() => "a block device",
        _ => "not a regular file",
    }
}

/// The first line of the file at `path`, which holds a secret (a password, a monitor's URL): a
/// regular file, the line at most `max` bytes of UTF-8 without control characters; the error
/// says what is wrong with it, never what it holds.
pub fn secret_line(path: &Path, max: usize) -> Result<String, PasswordFileProblem> {
    let bytes = read_regular(path, max as u64 + 2).map_err(PasswordFileProblem::Unreadable)?;
    let line = bytes
        .split(|&byte| byte == b'\n')
        .next()
        .unwrap_or_default();
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    match std::str::from_utf8(line) {
        Ok("") => Err(PasswordFileProblem::Empty),
        Ok(_) if line.len() > max => Err(PasswordFileProblem::TooLong(max)),
        Ok(secret) if secret.chars().any(char::is_control) => {
            Err(PasswordFileProblem::ControlCharacter)
        }
        Ok(secret) => Ok(secret.to_string()),
        Err(_) => Err(PasswordFileProblem::NotUtf8),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fifo_with_no_writer_is_refused_at_once_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        let err = read_regular(&fifo, 10).unwrap_err();
        assert_eq!(err.to_string(), "it is a FIFO, not a regular file");
        let err = read_regular(dir.path(), 10).unwrap_err();
        assert_eq!(err.to_string(), "it is a directory, not a regular file");
        let file = dir.path().join("file");
        std::fs::write(&file, "secret\nrest").unwrap();
        assert_eq!(read_regular(&file, 6).unwrap(), b"secret");
    }

    #[test]
    fn a_fifo_with_no_reader_does_not_block_its_open_for_writing() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        let err = open(&fifo, OpenOptions::new().write(true), 0)
            .err()
            .unwrap();
        assert_eq!(err.raw_os_error(), Some(libc::ENXIO));
    }
}
