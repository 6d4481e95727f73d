//! `--report FILE`: a JSON summary of the run, written when it ends, for a CI job to archive.
//!
//! The path is checked before the first attempt, so that a report that cannot be written fails
//! the run at once (exit 125) rather than after the work is done. It is treated as a redirection
//! by a shell on a hardened system (`fs.protected_symlinks`, `fs.protected_fifos` and
//! `fs.protected_regular` on, as Debian, Ubuntu and Fedora have them), whatever this system's
//! settings say:
//! - a symbolic link leads to its target, but not one in a sticky directory that every user may
//!   write (`/tmp`) that belongs to neither this user nor the directory's owner: another user's
//!   link there may point anywhere;
//! - a name of one of the tool's own descriptors (`/dev/stdout`, `/dev/stderr`, `/dev/fd/N`,
//!   `/proc/self/fd/N`) is that descriptor, written in place where it stands, as shells do;
//! - a FIFO, a device or anything else that is not a regular file is opened at once and written
//!   in place, never replaced;
//! - a regular file (or a new one) is written beside its target under a temporary name and
//!   renamed into place at the end, so a reader never sees half a report; it gets the mode the
//!   umask gives any new file;
//! - an existing file or FIFO in such a sticky directory that belongs to neither this user nor
//!   the directory's owner is refused, for root too.
//!
//! A write that fails at the end changes the exit status to 125. The schema is the `Report` and
//! `AttemptRecord` types, and the table in the README.
//!
//! However long the run, the report stays bounded: it keeps the first and the last attempts in
//! full (`KEPT_AT_EACH_END` of each), and counts the rest by status.

use std::collections::{BTreeMap, VecDeque};
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::fd::RawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};
use std::time::{Duration, Instant};

use nix::unistd::{AccessFlags, access};
use serde::Serialize;
use serde_json::Value;

use crate::duration::to_millis;
use crate::exit::Exit;
use crate::outcome::{AttemptOutcome, Next, Reason, RunEnd, WaitCause};
use crate::report::events::{Event, EventSink};
use crate::report::outlet::GRACE;
use crate::signals::{Signal, SignalWatch, Waited};

/// The report's format version, raised when a key changes meaning or goes away.
const VERSION: u32 = 1;

/// How many attempts the report keeps in full at each end of the run; those between are counted.
const KEPT_AT_EACH_END: usize = 50;

/// The most symbolic links followed from `--report` to its target, as the kernel allows.
const MAX_LINKS: usize = 40;

/// Where the report goes, checked before the run.
#[derive(Debug)]
pub(crate) enum ReportTarget {
    /// A regular file, or none yet: written beside it and renamed into place.
    Replace {
        /// The file itself, links resolved.
        file: PathBuf,
    },
    /// Anything else, opened already: written in place.
    InPlace(File),
}

impl ReportTarget {
    /// Check that `path` can take the report, as the user gave it; the error is the message.
    pub(crate) fn check(path: &Path) -> Result<Self, String> {
        let cannot = |why: String| format!("cannot write --report {}: {why}", path.display());
        if path.as_os_str().as_bytes().ends_with(b"/") {
            return Err(cannot(
                "it names a directory (it ends in '/'); give a file name".into(),
            ));
        }
        let file = match resolve_links(path).map_err(cannot)? {
            Resolved::Descriptor(fd) => {
                return duplicate(fd).map(ReportTarget::InPlace).map_err(|err| {
                    cannot(format!(
                        "it names descriptor {fd}, which is not open: {err}"
                    ))
                });
            }
            Resolved::Path(file) => file,
        };
        let metadata = match std::fs::symlink_metadata(&file) {
            Ok(metadata) => Some(metadata),
            Err(err) if err.kind() == io::ErrorKind::NotFound => None,
            Err(err) => return Err(cannot(err.to_string())),
        };
        match metadata {
            Some(metadata) if metadata.is_dir() => Err(cannot(format!(
                "it is a directory; give a file name, e.g. {}",
                path.join("retry-report.json").display()
            ))),
            Some(metadata) if !metadata.is_file() => {
                refuse_planted(parent(&file), &metadata).map_err(cannot)?;
                open_in_place(&file)
                    .map(ReportTarget::InPlace)
                    .map_err(|err| cannot(format!("cannot open it: {err}")))
            }
            existing => {
                check_replaceable(parent(&file), existing.as_ref()).map_err(cannot)?;
                Ok(ReportTarget::Replace { file })
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
fn resolve_links(path: &Path) -> Result<Resolved, String> {
    let mut current = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        if let Some(fd) = own_descriptor(&current) {
            return Ok(Resolved::Descriptor(fd));
        }
        match std::fs::symlink_metadata(&current) {
            Ok(metadata) if metadata.file_type().is_symlink() => {
                refuse_planted(parent(&current), &metadata)
                    .map_err(|why| format!("{}: {why}", current.display()))?;
                let target = std::fs::read_link(&current).map_err(|err| err.to_string())?;
                current = parent(&current).join(target);
            }
            _ => return Ok(Resolved::Path(current)),
        }
    }
    Err(format!("more than {MAX_LINKS} symbolic links in a row"))
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
    // SAFETY: `fd` is only borrowed for the duplication; F_DUPFD_CLOEXEC fails with EBADF if it
    // is not open.
    let borrowed = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
    borrowed.try_clone_to_owned().map(File::from)
}

/// Refuse a file, FIFO or link (`metadata`) in `directory` that a hardened system protects: in
/// a sticky directory that every user may write, one that belongs to neither this user nor the
/// directory's owner (`fs.protected_symlinks`, `fs.protected_fifos`, `fs.protected_regular`).
fn refuse_planted(directory: &Path, metadata: &std::fs::Metadata) -> Result<(), String> {
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
        return Err(format!(
            "it is {what} of another user (uid {}) in {}, a sticky directory every user may \
             write; a hardened system does not let a redirection use it, and neither does \
             retry; give another path",
            metadata.uid(),
            directory.display()
        ));
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
fn check_replaceable(directory: &Path, existing: Option<&std::fs::Metadata>) -> Result<(), String> {
    let metadata = std::fs::metadata(directory).map_err(|err| match err.kind() {
        io::ErrorKind::NotFound => format!("its directory {} does not exist", directory.display()),
        _ => format!("its directory {}: {err}", directory.display()),
    })?;
    if !metadata.is_dir() {
        return Err(format!("{} is not a directory", directory.display()));
    }
    access(directory, AccessFlags::W_OK | AccessFlags::X_OK).map_err(|errno| {
        format!(
            "cannot create a file in {}: {}",
            directory.display(),
            io::Error::from(errno)
        )
    })?;
    let Some(existing) = existing else {
        return Ok(());
    };
    refuse_planted(directory, existing)?;
    let me = nix::unistd::geteuid().as_raw();
    let sticky = metadata.permissions().mode() & 0o1000 != 0;
    if sticky && me != 0 && existing.uid() != me && metadata.uid() != me {
        return Err(format!(
            "it belongs to another user, in a directory ({}) where only a file's owner may \
             replace it",
            directory.display()
        ));
    }
    if me != 0 && existing.permissions().mode() & 0o222 == 0 {
        return Err("it is read-only; make it writable or remove it".into());
    }
    Ok(())
}

/// Open a FIFO, a device or the like for writing, as a shell redirection does: at once if a
/// reader is there, else waiting for one (signals still end the tool at this point).
fn open_in_place(path: &Path) -> io::Result<File> {
    let open = |flags| {
        OpenOptions::new()
            .write(true)
            .custom_flags(flags)
            .open(path)
    };
    let file = match open(libc::O_NONBLOCK) {
        Err(err) if err.raw_os_error() == Some(libc::ENXIO) => open(0)?,
        other => other?,
    };
    nix::fcntl::fcntl(
        &file,
        nix::fcntl::FcntlArg::F_SETFL(nix::fcntl::OFlag::empty()),
    )?;
    Ok(file)
}

/// The report: one object, written when the run ends.
#[derive(Debug, Serialize)]
struct Report<'a> {
    version: u32,
    /// The options in force.
    options: &'a Value,
    /// The `--splay` wait before the first attempt, if there was one.
    splay_ms: Option<f64>,
    /// The first and the last attempts, in full.
    attempts: Vec<&'a AttemptRecord>,
    /// Every attempt the run made.
    attempts_total: u64,
    /// The attempts left out of `attempts`, between its first and its last ones.
    attempts_omitted: u64,
    /// How many attempts ended with each status, over every attempt.
    statuses: &'a BTreeMap<u8, u64>,
    exit_code: u8,
    /// Why the run ended, as in the `done` event.
    reason: &'static str,
    /// The signal that stopped the run, if one did.
    signal: Option<Signal>,
    /// What went wrong, for a command that could not start or output that was lost.
    error: Option<&'a str>,
    elapsed_ms: f64,
    /// The run's depth among nested retries: 1 for the outermost.
    depth: u32,
}

/// One attempt in the report: every key is always there, `null` when it does not apply.
#[derive(Clone, Debug, Default, Serialize)]
struct AttemptRecord {
    attempt: u64,
    attempt_since_reset: u64,
    start_offset_ms: f64,
    duration_ms: Option<f64>,
    /// 128+N for signal N, 124 for a time limit, 126 or 127 if it could not start.
    status: Option<u8>,
    signal: Option<Signal>,
    timed_out: bool,
    verdict: Option<&'static str>,
    matched: Option<&'static str>,
    pattern: Option<String>,
    reset: bool,
    /// The wait the command asked for, capped at `--max-requested-wait`.
    requested_wait_ms: Option<f64>,
    requested_stop: bool,
    wait_after_ms: Option<f64>,
    wait_cause: Option<WaitCause>,
    /// Why the command could not start, if it could not.
    error: Option<String>,
}

/// Collects a run's attempts and writes the report when the run ends.
pub(crate) struct ReportWriter {
    target: ReportTarget,
    shown: PathBuf,
    options: Value,
    /// The run's depth among nested retries.
    depth: u32,
    /// The `--splay` wait before the first attempt, once it is drawn.
    splay: Option<Duration>,
    attempts: KeptAttempts,
}

/// The attempts a report keeps: the first and the last ones, and counts of all.
#[derive(Debug, Default)]
struct KeptAttempts {
    /// The first `KEPT_AT_EACH_END` attempts.
    first: Vec<AttemptRecord>,
    /// The latest `KEPT_AT_EACH_END` attempts after those.
    last: VecDeque<AttemptRecord>,
    /// Every attempt started.
    total: u64,
    /// The attempts dropped from between `first` and `last`.
    omitted: u64,
    /// How many attempts ended with each status.
    statuses: BTreeMap<u8, u64>,
}

impl KeptAttempts {
    fn start(&mut self, record: AttemptRecord) {
        self.total += 1;
        if self.first.len() < KEPT_AT_EACH_END {
            self.first.push(record);
            return;
        }
        if self.last.len() == KEPT_AT_EACH_END {
            self.last.pop_front();
            self.omitted += 1;
        }
        self.last.push_back(record);
    }

    /// The attempt under way, or the last one.
    fn current(&mut self) -> Option<&mut AttemptRecord> {
        match self.last.back_mut() {
            Some(record) => Some(record),
            None => self.first.last_mut(),
        }
    }

    /// Count the status the attempt under way ended with.
    fn count(&mut self, status: u8) {
        *self.statuses.entry(status).or_default() += 1;
    }

    fn kept(&self) -> Vec<&AttemptRecord> {
        self.first.iter().chain(&self.last).collect()
    }
}

/// Why the report was not written.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum ReportError {
    /// The write failed; the message says where and why.
    Failed(String),
    /// A signal that ends the run arrived while a slow reader held the report up.
    Interrupted(Signal),
}

impl ReportWriter {
    /// Prepare to write the report to `target` (`shown` as the user named it), recording
    /// `options` as the options in force.
    pub(crate) fn new(
        target: ReportTarget,
        shown: &Path,
        options: &impl Serialize,
        depth: u32,
    ) -> Self {
        ReportWriter {
            target,
            shown: shown.to_path_buf(),
            options: serde_json::to_value(options).expect("the options serialise"),
            depth,
            splay: None,
            attempts: KeptAttempts::default(),
        }
    }

    /// Write the report of the run that ended as `end`, its reader's pace allowing until
    /// `deadline` (the run's), and awake to the signals that end a run.
    pub(crate) fn write(
        mut self,
        end: &RunEnd,
        watch: &SignalWatch,
        deadline: Option<Instant>,
    ) -> Result<(), ReportError> {
        if let (Reason::SpawnFailed(failure, error), Some(record)) =
            (&end.reason, self.attempts.current())
        {
            let status = Exit::from(*failure).status();
            record.status = Some(status);
            record.duration_ms = Some(0.0);
            record.verdict = Some("stop");
            record.error = Some(error.clone());
            self.attempts.count(status);
        }
        let report = Report {
            version: VERSION,
            options: &self.options,
            splay_ms: self.splay.map(to_millis),
            attempts: self.attempts.kept(),
            attempts_total: self.attempts.total,
            attempts_omitted: self.attempts.omitted,
            statuses: &self.attempts.statuses,
            exit_code: Exit::of(end).status(),
            reason: end.reason.name(),
            signal: match end.reason {
                Reason::Interrupted(signal, _) => Some(signal),
                _ => None,
            },
            error: end.reason.error(),
            elapsed_ms: to_millis(end.elapsed),
            depth: self.depth,
        };
        let mut text = serde_json::to_vec_pretty(&report).expect("a report serialises");
        text.push(b'\n');
        let failed = |err: io::Error| {
            ReportError::Failed(format!(
                "cannot write --report {}: {err}",
                self.shown.display()
            ))
        };
        match self.target {
            ReportTarget::Replace { file } => replace(&file, &text).map_err(failed),
            ReportTarget::InPlace(mut file) => {
                let until = deadline.map(|deadline| deadline.max(Instant::now()) + GRACE);
                match watch.run_job(until, move || file.write_all(&text)) {
                    Ok(Waited::Done(written)) => written.map_err(failed),
                    Ok(Waited::Stopped(signal)) => Err(ReportError::Interrupted(signal)),
                    Ok(Waited::TimedOut) => Err(failed(io::Error::other(
                        "its reader did not take it before the --max-time deadline",
                    ))),
                    Err(err) => Err(failed(err)),
                }
            }
        }
    }
}

/// Write `text` beside `file` under a temporary name, then rename it into place; the temporary
/// file is removed if anything fails. Where the system can (Linux), the text is written to a
/// file with no name, which gets its temporary name only once whole, so that a tool killed
/// while writing leaves nothing behind.
fn replace(file: &Path, text: &[u8]) -> io::Result<()> {
    let name = match write_unnamed(file, text) {
        Some(named) => named?,
        None => {
            let (mut temporary, name) = create_beside(file, |name| {
                OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .mode(0o666)
                    .open(name)
            })?;
            if let Err(err) = temporary.write_all(text) {
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
fn write_unnamed(file: &Path, text: &[u8]) -> Option<io::Result<PathBuf>> {
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
        let linked = unnamed.write_all(text).and_then(|()| {
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
        let _ = (file, text);
        None
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

impl EventSink for ReportWriter {
    fn emit(&mut self, event: &Event) {
        match event {
            Event::AttemptStart { numbering, at } => self.attempts.start(AttemptRecord {
                attempt: numbering.attempt,
                attempt_since_reset: numbering.since_reset,
                start_offset_ms: to_millis(*at),
                ..AttemptRecord::default()
            }),
            Event::AttemptEnd(outcome) => {
                if let Some(record) = self.attempts.current() {
                    record.record(outcome);
                    self.attempts.count(outcome.termination.status());
                }
            }
            Event::Splay(wait) => self.splay = Some(*wait),
            Event::Done(_) | Event::Warning(_) | Event::HookEnd(_) | Event::Failed(_) => {}
        }
    }
}

impl AttemptRecord {
    fn record(&mut self, outcome: &AttemptOutcome) {
        self.duration_ms = Some(to_millis(outcome.duration));
        self.status = Some(outcome.termination.status());
        self.signal = outcome.termination.signal();
        self.timed_out = outcome.termination.time_limit().is_some();
        self.verdict = Some(outcome.next.verdict());
        self.matched = outcome.matched().map(|(condition, _)| condition);
        self.pattern = outcome.matched().map(|(_, pattern)| pattern.to_string());
        self.reset = outcome.reset;
        self.requested_wait_ms = outcome.requested_wait().map(to_millis);
        self.requested_stop = outcome.requested_stop();
        if let Next::Retry { wait, cause } = outcome.next {
            self.wait_after_ms = Some(to_millis(wait));
            self.wait_cause = Some(cause);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference::{object_keys, row_keys, table_labels};

    #[test]
    fn a_long_run_keeps_its_first_and_last_attempts_and_counts_all() {
        let mut kept = KeptAttempts::default();
        for attempt in 1..=130 {
            kept.start(AttemptRecord {
                attempt,
                ..AttemptRecord::default()
            });
            kept.count(if attempt % 2 == 0 { 1 } else { 124 });
        }
        let numbers: Vec<u64> = kept.kept().iter().map(|record| record.attempt).collect();
        let expected: Vec<u64> = (1..=50).chain(81..=130).collect();
        assert_eq!(numbers, expected);
        assert_eq!((kept.total, kept.omitted), (130, 30));
        assert_eq!(kept.statuses, BTreeMap::from([(1, 65), (124, 65)]));
        assert_eq!(kept.current().map(|record| record.attempt), Some(130));
    }

    #[test]
    fn a_short_run_keeps_every_attempt() {
        let mut kept = KeptAttempts::default();
        for attempt in 1..=3 {
            kept.start(AttemptRecord {
                attempt,
                ..AttemptRecord::default()
            });
        }
        assert_eq!(kept.kept().len(), 3);
        assert_eq!((kept.total, kept.omitted), (3, 0));
        assert_eq!(kept.current().map(|record| record.attempt), Some(3));
    }

    #[test]
    fn the_reference_lists_every_key_of_the_report() {
        let end = RunEnd {
            attempts: 0,
            last: None,
            last_unready: false,
            reason: Reason::Exhausted,
            elapsed: Duration::ZERO,
            report_error: None,
        };
        let options = serde_json::json!({});
        let attempt = AttemptRecord::default();
        let report = Report {
            version: VERSION,
            options: &options,
            splay_ms: None,
            attempts: vec![&attempt],
            attempts_total: 1,
            attempts_omitted: 0,
            statuses: &BTreeMap::new(),
            exit_code: Exit::of(&end).status(),
            reason: end.reason.name(),
            signal: None,
            error: None,
            elapsed_ms: 0.0,
            depth: 1,
        };
        let report = serde_json::to_value(&report).unwrap();
        assert_eq!(
            object_keys(&report, &[]),
            table_labels("### The run report")
        );
        assert_eq!(
            object_keys(&serde_json::to_value(&attempt).unwrap(), &[]),
            row_keys("attempts")
        );
    }
}
