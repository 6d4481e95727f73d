//! The files a run writes when it ends (each `--report FILE`, and a CI runner's `$GITHUB_OUTPUT` and `$GITHUB_STEP_SUMMARY`), each checked and opened (or found
//! ready to open) before the first attempt, so that one that cannot be written fails the run at
//! once (exit 125) rather than after the work is done: a [`ReportTarget`] is the only way to
//! write such a file, and it is made only by those checks. Nothing here blocks: every path is
//! opened as `named_files` opens it. A CI runner's file is appended to, and must be the regular
//! file the runner made, never a link. The others are treated as a redirection by a shell on a
//! hardened system (`fs.protected_symlinks`, `fs.protected_fifos` and `fs.protected_regular` on,
//! as Debian, Ubuntu and Fedora have them), whatever this system's settings say:
//! - a symbolic link leads to its target, but not one in a sticky directory that every user may
//!   write (`/tmp`) that belongs to neither this user nor the directory's owner: another user's
//!   link there may point anywhere;
//! - a name of one of the tool's own descriptors (`/dev/stdout`, `/dev/stderr`, `/dev/fd/N`,
//!   `/proc/self/fd/N`) is that descriptor, written in place where it stands, as shells do;
//! - a FIFO, a device or anything else that is not a regular file is written in place, never
//!   replaced; a FIFO that has no reader yet is opened when the run ends, on a thread the run
//!   waits for only until its deadline, as a redirection would wait for its reader; a socket is
//!   refused;
//! - a regular file (or a new one) is written beside its target under a temporary name and
//!   renamed into place at the end, so a reader never sees half of it; it gets the mode the
//!   umask gives any new file, or one the file's purpose needs (Prometheus gauges: 0644, for the
//!   collector's user);
//! - an existing file or FIFO in such a sticky directory that belongs to neither this user nor
//!   the directory's owner is refused, for root too.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::fd::RawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};
use std::time::Instant;

use nix::unistd::{AccessFlags, access};

use crate::report::outlet::GRACE;
use retry_budget::named_files;
use retry_process::signals::{Signal, SignalWatch, Waited, Waiter};

/// The most symbolic links followed from a path to its target, as the kernel allows.
const MAX_LINKS: usize = 40;

/// A file the run would write at its end that cannot take it, found before the run: the file as
/// the user named it (`--report out.json`, `$GITHUB_OUTPUT (/path)`), and why.
#[derive(Debug, thiserror::Error)]
#[error("cannot write {shown}: {why}")]
pub(crate) struct Refused {
    shown: String,
    why: Unwritable,
}

/// Why a file cannot take what the run writes at its end, each way with the words that say it
/// and what to do instead where there is something.
#[derive(Debug, thiserror::Error)]
enum Unwritable {
    #[error("it names a directory (it ends in '/'); give a file name")]
    EndsInSlash,
    #[error("it is a directory; give a file name, e.g. {}", .example.display())]
    Directory { example: PathBuf },
    #[error("it names descriptor {fd}, which is not open: {error}")]
    ClosedDescriptor { fd: RawFd, error: io::Error },
    #[error("more than {MAX_LINKS} symbolic links in a row")]
    TooManyLinks,
    /// A link (the path) to follow that is one of `Planted`.
    #[error("{}: {planted}", .link.display())]
    PlantedLink {
        link: PathBuf,
        planted: Box<Unwritable>,
    },
    #[error(
        "it is {what} of another user (uid {owner}) in {}, a sticky directory every user may \
         write; a hardened system does not let a redirection use it, and neither does retry; \
         give another path",
        .directory.display()
    )]
    Planted {
        what: &'static str,
        owner: u32,
        directory: PathBuf,
    },
    #[error("its directory {} does not exist", .0.display())]
    NoDirectory(PathBuf),
    #[error("its directory {}: {error}", .directory.display())]
    DirectoryUnreadable {
        directory: PathBuf,
        error: io::Error,
    },
    #[error("{} is not a directory", .0.display())]
    NotADirectory(PathBuf),
    #[error("cannot create a file in {}: {error}", .directory.display())]
    CannotCreateIn {
        directory: PathBuf,
        error: io::Error,
    },
    #[error(
        "it belongs to another user, in a directory ({}) where only a file's owner may replace \
         it",
        .0.display()
    )]
    OthersInSticky(PathBuf),
    #[error("it is read-only; make it writable or remove it")]
    ReadOnly,
    /// What it is, when it is nothing a redirection writes to (a socket).
    #[error("it is {0}")]
    NoFile(&'static str),
    #[error("cannot open it: {0}")]
    CannotOpen(io::Error),
    #[error("it is a symbolic link, not the runner's own file")]
    RunnersFileLinked,
    #[error("it is {0}, not the regular file a runner makes")]
    NotRunnersFile(&'static str),
    /// What the system said of it.
    #[error("{0}")]
    Unreadable(io::Error),
}

/// A file the run writes when it ends, checked before the run, with the option and path that
/// named it (`--report out.json`) for messages.
#[derive(Debug)]
pub(crate) struct ReportTarget {
    place: Place,
    shown: String,
    /// The mode a replaced file gets, whatever the umask says; none: the umask's.
    mode: Option<u32>,
}

/// Where a [`ReportTarget`] writes.
#[derive(Debug)]
enum Place {
    /// A regular file, or none yet: written beside it and renamed into place.
    Replace {
        /// The file itself, links resolved.
        file: PathBuf,
    },
    /// Anything else, opened already: written in place.
    Opened(File),
    /// A FIFO with no reader yet: opened when the run ends, if it is still this one (its device
    /// and inode), and written in place.
    AwaitingReader { fifo: PathBuf, identity: (u64, u64) },
    /// A CI runner's file, opened already: appended to.
    Append(File),
}

impl ReportTarget {
    /// Check that `path`, as the user gave it to `flag`, can take what the run writes at its
    /// end; for a directory, the error suggests `example_file` in it.
    pub(crate) fn check(path: &Path, flag: &str, example_file: &str) -> Result<Self, Refused> {
        let shown = format!("{flag} {}", path.display());
        match Place::check(path, example_file) {
            Ok(place) => Ok(ReportTarget {
                place,
                shown,
                mode: None,
            }),
            Err(why) => Err(Refused { shown, why }),
        }
    }

    /// Check that the CI runner's file at `path`, which the variable `variable` names, is the
    /// regular file a runner makes, and open it to append to when the run ends.
    pub(crate) fn append(path: &Path, variable: &str) -> Result<Self, Refused> {
        let shown = format!("${variable} ({})", path.display());
        let opened = named_files::open(path, OpenOptions::new().append(true), libc::O_NOFOLLOW)
            .map_err(|err| match err.raw_os_error() {
                Some(libc::ELOOP) => Unwritable::RunnersFileLinked,
                _ => Unwritable::Unreadable(err),
            })
            .and_then(|opened| match opened.metadata.is_file() {
                true => Ok(opened),
                false => Err(Unwritable::NotRunnersFile(named_files::kind(
                    &opened.metadata,
                ))),
            });
        match opened {
            Ok(opened) => Ok(ReportTarget {
                place: Place::Append(opened.file),
                shown,
                mode: None,
            }),
            Err(why) => Err(Refused { shown, why }),
        }
    }

    /// The target, a replaced file of which gets `mode` whatever the umask says (a file another
    /// user's program must read).
    pub(crate) fn with_mode(self, mode: u32) -> Self {
        ReportTarget {
            mode: Some(mode),
            ..self
        }
    }

    /// Write `text` to the target: renamed into place whole, or written in place, its reader's
    /// pace allowing until `deadline` (the run's), and awake to the signals that end a run.
    pub(crate) fn write(
        self,
        text: Vec<u8>,
        watch: &SignalWatch,
        deadline: Option<Instant>,
    ) -> Result<(), ReportError> {
        let failed =
            |err: io::Error| ReportError::Failed(format!("cannot write {}: {err}", self.shown));
        let until = deadline.map(|deadline| deadline.max(Instant::now()) + GRACE);
        let in_place =
            |write: Box<dyn FnOnce() -> io::Result<()> + Send>| match watch.run_job(until, write) {
                Ok(Waited::Done(written)) => written.map_err(failed),
                Ok(Waited::Stopped(signal)) => Err(ReportError::Interrupted(signal)),
                Ok(Waited::TimedOut) => Err(failed(io::Error::other(
                    "its reader did not take it before the --max-time deadline",
                ))),
                Err(err) => Err(failed(err)),
            };
        match self.place {
            Place::Replace { file } => replace(&file, &text, self.mode).map_err(failed),
            Place::Append(mut file) => file.write_all(&text).map_err(failed),
            Place::Opened(mut file) => in_place(Box::new(move || file.write_all(&text))),
            Place::AwaitingReader { fifo, identity } => in_place(Box::new(move || {
                open_awaited(&fifo, identity)?.write_all(&text)
            })),
        }
    }

    /// The file a regular target replaces, links resolved; none for one written in place.
    pub(crate) fn replaced_file(&self) -> Option<&Path> {
        match &self.place {
            Place::Replace { file } => Some(file),
            Place::Opened(_) | Place::AwaitingReader { .. } | Place::Append(_) => None,
        }
    }
}

/// Why a file was not written at the run's end.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum ReportError {
    /// The write failed; the message says where and why.
    Failed(String),
    /// A signal that ends the run arrived while a slow reader held the file up.
    Interrupted(Signal),
}

impl Place {
    fn check(path: &Path, example_file: &str) -> Result<Self, Unwritable> {
        if path.as_os_str().as_bytes().ends_with(b"/") {
            return Err(Unwritable::EndsInSlash);
        }
        let file = match resolve_links(path)? {
            Resolved::Descriptor(fd) => {
                return duplicate(fd)
                    .map(Place::Opened)
                    .map_err(|error| Unwritable::ClosedDescriptor { fd, error });
            }
            Resolved::Path(file) => file,
        };
        let metadata = match std::fs::symlink_metadata(&file) {
            Ok(metadata) => Some(metadata),
            Err(err) if err.kind() == io::ErrorKind::NotFound => None,
            Err(err) => return Err(Unwritable::Unreadable(err)),
        };
        match metadata {
            Some(metadata) if metadata.is_dir() => Err(Unwritable::Directory {
                example: path.join(example_file),
            }),
            Some(metadata) if !metadata.is_file() => {
                refuse_planted(parent(&file), &metadata)?;
                open_in_place(&file)
            }
            existing => {
                check_replaceable(parent(&file), existing.as_ref())?;
                Ok(Place::Replace { file })
            }
        }
    }
}

/// Where a report path leads.
enum Resolved {
    /// To a file by this path, links followed.
    Path(PathBuf),
    /// To one of the tool's own open descriptors.
    Descriptor(RawFd),
}

/// Where `path` leads, every symbolic link along the last component followed to its target as
/// `open` would follow them on a hardened system, and a name of the tool's own descriptor
/// recognised as one; a dangling link gives the path it points to.
fn resolve_links(path: &Path) -> Result<Resolved, Unwritable> {
    let mut current = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        if let Some(fd) = own_descriptor(&current) {
            return Ok(Resolved::Descriptor(fd));
        }
        match std::fs::symlink_metadata(&current) {
            Ok(metadata) if metadata.file_type().is_symlink() => {
                refuse_planted(parent(&current), &metadata).map_err(|planted| {
                    Unwritable::PlantedLink {
                        link: current.clone(),
                        planted: Box::new(planted),
                    }
                })?;
                let target = std::fs::read_link(&current).map_err(Unwritable::Unreadable)?;
                current = parent(&current).join(target);
            }
            _ => return Ok(Resolved::Path(current)),
        }
    }
    Err(Unwritable::TooManyLinks)
}

/// The descriptor `path` names, if it names one of the tool's own: `/dev/fd/N`,
/// `/proc/self/fd/N`, `/proc/thread-self/fd/N` or `/proc/PID/fd/N` with the tool's PID (where
/// `/dev/stdout` and `/dev/stderr` lead).
fn own_descriptor(path: &Path) -> Option<RawFd> {
    let text = path.to_str()?;
    let own = format!("/proc/{}/fd/", std::process::id());
    [
        "/dev/fd/",
        "/proc/self/fd/",
        "/proc/thread-self/fd/",
        own.as_str(),
    ]
    .iter()
    .find_map(|prefix| text.strip_prefix(prefix))
    .filter(|number| !number.is_empty() && number.bytes().all(|byte| byte.is_ascii_digit()))
    .and_then(|number| number.parse().ok())
}

/// A descriptor of its own on the open file `fd` names, written where it stands.
fn duplicate(fd: RawFd) -> io::Result<File> {
    retry_sys::descriptors::duplicate_numbered(fd).map(File::from)
}

/// Refuse a file, FIFO or link (`metadata`) in `directory` that a hardened system protects: in
/// a sticky directory that every user may write, one that belongs to neither this user nor the
/// directory's owner (`fs.protected_symlinks`, `fs.protected_fifos`, `fs.protected_regular`).
fn refuse_planted(directory: &Path, metadata: &std::fs::Metadata) -> Result<(), Unwritable> {
    let Ok(dir) = std::fs::metadata(directory) else {
        return Ok(());
    };
    let me = nix::unistd::geteuid().as_raw();
    let public = dir.permissions().mode() & 0o1002 == 0o1002;
    if public && metadata.uid() != me && metadata.uid() != dir.uid() {
        let what = match metadata.file_type().is_symlink() {
            true => "a symbolic link",
            false => "a file",
        };
        return Err(Unwritable::Planted {
            what,
            owner: metadata.uid(),
            directory: directory.to_path_buf(),
        });
    }
    Ok(())
}

/// The directory `path` is in ("." for a bare name).
fn parent(path: &Path) -> &Path {
    match path.parent() {
        Some(parent) if parent.components().next().is_some() => parent,
        _ => Path::new(Component::CurDir.as_os_str()),
    }
}

/// Whether the report can be renamed into place in `directory`, over `existing` if there is a
/// file: the directory must exist and be writable, and a file there writable by this user (as a
/// shell redirection needs) and, in a sticky directory such as /tmp, this user's own.
fn check_replaceable(
    directory: &Path,
    existing: Option<&std::fs::Metadata>,
) -> Result<(), Unwritable> {
    let metadata = std::fs::metadata(directory).map_err(|error| match error.kind() {
        io::ErrorKind::NotFound => Unwritable::NoDirectory(directory.to_path_buf()),
        _ => Unwritable::DirectoryUnreadable {
            directory: directory.to_path_buf(),
            error,
        },
    })?;
    if !metadata.is_dir() {
        return Err(Unwritable::NotADirectory(directory.to_path_buf()));
    }
    access(directory, AccessFlags::W_OK | AccessFlags::X_OK).map_err(|errno| {
        Unwritable::CannotCreateIn {
            directory: directory.to_path_buf(),
            error: errno.into(),
        }
    })?;
    let Some(existing) = existing else {
        return Ok(());
    };
    refuse_planted(directory, existing)?;
    let me = nix::unistd::geteuid().as_raw();
    let sticky = metadata.permissions().mode() & 0o1000 != 0;
    if sticky && me != 0 && existing.uid() != me && metadata.uid() != me {
        return Err(Unwritable::OthersInSticky(directory.to_path_buf()));
    }
    if me != 0 && existing.permissions().mode() & 0o222 == 0 {
        return Err(Unwritable::ReadOnly);
    }
    Ok(())
}

/// Open a FIFO, a device or the like for writing, as a shell redirection does, but without
/// blocking: a FIFO with no reader yet is left to open when the run ends ([`open_awaited`]).
fn open_in_place(path: &Path) -> Result<Place, Unwritable> {
    let opened = match named_files::open(path, OpenOptions::new().write(true), 0) {
        Ok(opened) => opened,
        Err(err) if err.raw_os_error() == Some(libc::ENXIO) => {
            let metadata = std::fs::metadata(path).map_err(Unwritable::Unreadable)?;
            if !metadata.file_type().is_fifo() {
                return Err(Unwritable::NoFile(named_files::kind(&metadata)));
            }
            let identity = (metadata.dev(), metadata.ino());
            return Ok(Place::AwaitingReader {
                fifo: path.to_path_buf(),
                identity,
            });
        }
        Err(err) => return Err(Unwritable::CannotOpen(err)),
    };
    opened
        .blocking()
        .map(Place::Opened)
        .map_err(Unwritable::CannotOpen)
}

/// Open the FIFO `fifo` for writing once its reader comes (on a thread of its own: this blocks
/// until then), if it is still the one checked before the run (`identity`).
fn open_awaited(fifo: &Path, identity: (u64, u64)) -> io::Result<File> {
    let file = OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NOCTTY)
        .open(fifo)?;
    let metadata = file.metadata()?;
    match (metadata.dev(), metadata.ino()) == identity {
        true => Ok(file),
        false => Err(io::Error::other(
            "another file was put in its place during the run",
        )),
    }
}

/// Write `text` beside `file` under a temporary name, then rename it into place; the temporary
/// file is removed if anything fails. Where the system can (Linux), the text is written to a
/// file with no name, which gets its temporary name only once whole, so that a tool killed
/// while writing leaves nothing behind.
fn replace(file: &Path, text: &[u8], mode: Option<u32>) -> io::Result<()> {
    let name = match write_unnamed(file, text, mode) {
        Some(named) => named?,
        None => {
            let (mut temporary, name) = create_beside(file, |name| {
                OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .mode(0o666)
                    .open(name)
            })?;
            if let Err(err) = write_with_mode(&mut temporary, text, mode) {
                let _ = std::fs::remove_file(&name);
                return Err(err);
            }
            name
        }
    };
    let renamed = std::fs::rename(&name, file);
    if renamed.is_err() {
        let _ = std::fs::remove_file(&name);
    }
    renamed
}

/// `text` in an unnamed file in `file`'s directory, then linked there under a temporary name,
/// which is returned; none where unnamed files cannot be made (not Linux, or a file system
/// without `O_TMPFILE`).
fn write_unnamed(file: &Path, text: &[u8], mode: Option<u32>) -> Option<io::Result<PathBuf>> {
    #[cfg(target_os = "linux")]
    {
        let mut unnamed = OpenOptions::new()
            .write(true)
            .mode(0o666)
            .custom_flags(libc::O_TMPFILE)
            .open(parent(file))
            .ok()?;
        let descriptor = format!(
            "/proc/self/fd/{}",
            std::os::fd::AsRawFd::as_raw_fd(&unnamed)
        );
        let linked = write_with_mode(&mut unnamed, text, mode).and_then(|()| {
            let (_, name) = create_beside(file, |name| {
                nix::unistd::linkat(
                    nix::fcntl::AT_FDCWD,
                    descriptor.as_str(),
                    nix::fcntl::AT_FDCWD,
                    name,
                    nix::fcntl::AtFlags::AT_SYMLINK_FOLLOW,
                )
                .map_err(io::Error::from)
            })?;
            Ok(name)
        });
        Some(linked)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (file, text, mode);
        None
    }
}

/// Write `text` to the new `file`, and give it `mode` if one is set (else it keeps the mode the
/// umask gave it).
fn write_with_mode(file: &mut File, text: &[u8], mode: Option<u32>) -> io::Result<()> {
    file.write_all(text)?;
    match mode {
        Some(mode) => file.set_permissions(std::fs::Permissions::from_mode(mode)),
        None => Ok(()),
    }
}

/// A name in `file`'s directory that no other file has, made with `make` (which fails with
/// `AlreadyExists` when the name is taken), and what `make` made.
fn create_beside<T>(
    file: &Path,
    make: impl Fn(&Path) -> io::Result<T>,
) -> io::Result<(T, PathBuf)> {
    let stem = file.file_name().unwrap_or_default().to_string_lossy();
    let mut attempt = 0;
    loop {
        let name = parent(file).join(format!(".{stem}.retry-{}-{attempt}", std::process::id()));
        match make(&name) {
            Ok(made) => return Ok((made, name)),
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists && attempt < 100 => attempt += 1,
            Err(err) => return Err(err),
        }
    }
}
