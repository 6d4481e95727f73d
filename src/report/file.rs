//! `--report FILE`: a JSON summary of the run, written when it ends, for a CI job to archive.
//!
//! The path is checked before the first attempt, so that a report that cannot be written fails
//! the run at once (exit 125) rather than after the work is done. It is treated as a shell
//! redirection would treat it: a symbolic link leads to its target, and a FIFO, a device or
//! anything else that is not a regular file is opened at once and written in place, never
//! replaced. A regular file (or a new one) is written beside its target under a temporary name
//! and renamed into place at the end, so a reader never sees half a report; it gets the mode the
//! umask gives any new file. A write that fails at the end changes the exit status to 125. The
//! schema is the [`Report`] and [`AttemptRecord`] types, and the table in the README.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use nix::unistd::{access, AccessFlags};
use serde::Serialize;
use serde_json::Value;

use crate::duration::to_millis;
use crate::process::signals::{self, SignalWatch, Waited};
use crate::report::events::{AttemptEnd, Done, Event, EventSink, Reason, WaitCause};

/// The report's format version, raised when a key changes meaning or goes away.
const VERSION: u32 = 1;

/// The most symbolic links followed from `--report` to its target, as the kernel allows.
const MAX_LINKS: usize = 40;

/// Where the report goes, checked before the run.
#[derive(Debug)]
pub enum ReportTarget {
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
    pub fn check(path: &Path) -> Result<Self, String> {
        let cannot = |why: String| format!("cannot write --report {}: {why}", path.display());
        if path.as_os_str().as_bytes().ends_with(b"/") {
            return Err(cannot(
                "it names a directory (it ends in '/'); give a file name".into(),
            ));
        }
        let file = resolve_links(path).map_err(|err| cannot(err.to_string()))?;
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
            Some(metadata) if !metadata.is_file() => open_in_place(&file)
                .map(ReportTarget::InPlace)
                .map_err(|err| cannot(format!("cannot open it: {err}"))),
            existing => {
                check_replaceable(parent(&file), existing.as_ref()).map_err(cannot)?;
                Ok(ReportTarget::Replace { file })
            }
        }
    }
}

/// `path` with every symbolic link along the last component followed to its target, as
/// `open` would follow them; a dangling link gives the path it points to.
fn resolve_links(path: &Path) -> io::Result<PathBuf> {
    let mut current = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match std::fs::symlink_metadata(&current) {
            Ok(metadata) if metadata.file_type().is_symlink() => {
                let target = std::fs::read_link(&current)?;
                current = parent(&current).join(target);
            }
            _ => return Ok(current),
        }
    }
    Err(io::Error::other(format!(
        "more than {MAX_LINKS} symbolic links in a row"
    )))
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
pub struct Report<'a> {
    /// The format version.
    pub version: u32,
    /// The options in force.
    pub options: &'a Value,
    /// The `--splay` wait before the first attempt, if there was one.
    pub splay_ms: Option<f64>,
    /// One record per attempt.
    pub attempts: &'a [AttemptRecord],
    /// The tool's exit status.
    pub exit_code: u8,
    /// Why the run ended, as in the `done` event.
    pub reason: &'static str,
    /// The signal that stopped the run, if one did.
    pub signal: Option<String>,
    /// What went wrong, for a command that could not start or output that was lost.
    pub error: Option<String>,
    /// The whole run, in milliseconds.
    pub elapsed_ms: f64,
}

/// One attempt in the report: every key is always there, `null` when it does not apply.
#[derive(Clone, Debug, Default, Serialize)]
pub struct AttemptRecord {
    /// Its number, from 1.
    pub attempt: u64,
    /// Its number since `--reset-after` last started the count over.
    pub attempt_since_reset: u64,
    /// When it started, from the start of the run.
    pub start_offset_ms: f64,
    /// How long it ran.
    pub duration_ms: Option<f64>,
    /// Its status (128+N for signal N, 124 for a time limit, 126 or 127 if it could not start).
    pub status: Option<u8>,
    /// The signal it died of, if it did.
    pub signal: Option<String>,
    /// Whether `--timeout` or `--max-time` ended it.
    pub timed_out: bool,
    /// `success`, `retry` or `stop`.
    pub verdict: Option<&'static str>,
    /// The output condition that matched, if one did.
    pub matched: Option<&'static str>,
    /// Its pattern.
    pub pattern: Option<String>,
    /// Whether it started the backoff over.
    pub reset: bool,
    /// The wait after it, if another attempt followed.
    pub wait_after_ms: Option<f64>,
    /// What set that wait.
    pub wait_cause: Option<&'static str>,
    /// Why the command could not start, if it could not.
    pub error: Option<String>,
}

/// Collects a run's attempts and writes the report when the run ends.
pub struct ReportWriter {
    target: ReportTarget,
    shown: PathBuf,
    options: Value,
    /// The `--splay` wait before the first attempt, once it is drawn.
    splay: Option<Duration>,
    attempts: Vec<AttemptRecord>,
}

/// Why the report was not written.
#[derive(Debug, PartialEq, Eq)]
pub enum ReportError {
    /// The write failed; the message says where and why.
    Failed(String),
    /// A signal that ends the run arrived while a slow reader held the report up.
    Interrupted(i32),
}

impl ReportWriter {
    /// Prepare to write the report to `target` (`shown` as the user named it); `options` is what
    /// [`options`] returned.
    pub fn new(target: ReportTarget, shown: &Path, options: Value) -> Self {
        ReportWriter {
            target,
            shown: shown.to_path_buf(),
            options,
            splay: None,
            attempts: Vec::new(),
        }
    }

    /// Write the report of the run that ended with `done`, its reader's pace allowing, and
    /// awake to the signals that end a run.
    pub fn write(mut self, done: &Done, watch: &SignalWatch) -> Result<(), ReportError> {
        if let (Reason::SpawnFailed(error), Some(record)) = (&done.reason, self.last_attempt()) {
            record.status = done.last;
            record.duration_ms = Some(0.0);
            record.verdict = Some("stop");
            record.error = Some(error.clone());
        }
        let report = Report {
            version: VERSION,
            options: &self.options,
            splay_ms: self.splay.map(to_millis),
            attempts: &self.attempts,
            exit_code: done.status,
            reason: done.reason.name(),
            signal: match done.reason {
                Reason::Interrupted(signal, _) => Some(signals::name(signal)),
                _ => None,
            },
            error: done.reason.error().map(String::from),
            elapsed_ms: to_millis(done.elapsed),
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
                match watch.run_job(None, move || file.write_all(&text)) {
                    Ok(Waited::Done(written)) => written.map_err(failed),
                    Ok(Waited::Stopped(signal)) => Err(ReportError::Interrupted(signal)),
                    Ok(Waited::TimedOut) => Ok(()),
                    Err(err) => Err(failed(err)),
                }
            }
        }
    }

    fn last_attempt(&mut self) -> Option<&mut AttemptRecord> {
        self.attempts.last_mut()
    }
}

/// Write `text` beside `file` under a temporary name, then rename it into place; the temporary
/// file is removed if anything fails.
fn replace(file: &Path, text: &[u8]) -> io::Result<()> {
    let (mut temporary, name) = create_beside(file)?;
    let written = temporary
        .write_all(text)
        .and_then(|()| std::fs::rename(&name, file));
    if written.is_err() {
        let _ = std::fs::remove_file(&name);
    }
    written
}

/// A new file in `file`'s directory, with a name no other file has, and the mode the umask
/// gives a new file.
fn create_beside(file: &Path) -> io::Result<(File, PathBuf)> {
    let stem = file.file_name().unwrap_or_default().to_string_lossy();
    let mut attempt = 0;
    loop {
        let name = parent(file).join(format!(".{stem}.retry-{}-{attempt}", std::process::id()));
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o666)
            .open(&name)
        {
            Ok(created) => return Ok((created, name)),
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists && attempt < 100 => attempt += 1,
            Err(err) => return Err(err),
        }
    }
}

impl EventSink for ReportWriter {
    fn emit(&mut self, event: Event) {
        match event {
            Event::AttemptStart { numbering, at } => self.attempts.push(AttemptRecord {
                attempt: numbering.attempt,
                attempt_since_reset: numbering.since_reset,
                start_offset_ms: to_millis(at),
                ..AttemptRecord::default()
            }),
            Event::AttemptEnd(end) => {
                if let Some(record) = self.last_attempt() {
                    record.record_end(&end);
                }
            }
            Event::Wait {
                wait,
                cause: WaitCause::Splay,
                ..
            } => self.splay = Some(wait),
            Event::Wait { wait, cause, .. } => {
                if let Some(record) = self.last_attempt() {
                    record.wait_after_ms = Some(to_millis(wait));
                    record.wait_cause = Some(cause.name());
                }
            }
            Event::Done(_) | Event::Warning(_) => {}
        }
    }
}

impl AttemptRecord {
    fn record_end(&mut self, end: &AttemptEnd) {
        self.duration_ms = Some(to_millis(end.duration));
        self.status = Some(end.termination.status());
        self.signal = end.termination.signal().map(signals::name);
        self.timed_out = end.termination.time_limit().is_some();
        self.verdict = Some(end.verdict.name());
        self.matched = end.matched().map(|(condition, _)| condition);
        self.pattern = end.matched().map(|(_, pattern)| pattern.to_string());
        self.reset = end.reset;
    }
}

/// The options in force, as the report records them; `seed` is the seed actually used.
pub fn options(cli: &crate::cli::Cli, seed: u64) -> Value {
    let millis = |duration: Option<Duration>| duration.map(to_millis);
    serde_json::json!({
        "command": cli.command.iter().map(|word| word.to_string_lossy()).collect::<Vec<_>>(),
        "shell": cli.shell,
        "max_attempts": crate::report::events::limit_json(cli.max_attempts),
        "base_ms": to_millis(cli.base),
        "cap_ms": to_millis(cli.cap),
        "multiplier": cli.multiplier,
        "jitter": cli.jitter.name(),
        "seed": seed,
        "splay_ms": millis(cli.splay),
        "budget": cli.budget.as_ref().map(|name| name.as_str()),
        "budget_rate": cli.budget.as_ref().map(|_| cli.budget_rate.to_string()),
        "success_on": cli.success_on.to_string(),
        "retry_on": cli.retry_on.map(|set| set.to_string()),
        "stop_on": cli.stop_on.map(|set| set.to_string()),
        "retry_on_output": cli.retry_on_output,
        "stop_on_output": cli.stop_on_output,
        "hold_output": cli.hold_output,
        "timeout_ms": millis(cli.timeout),
        "max_time_ms": millis(cli.max_time),
        "kill_after_ms": to_millis(cli.kill_after),
        "reset_after_ms": millis(cli.reset_after),
        "foreground": cli.foreground,
        "replay_stdin": cli.replay_stdin,
    })
}
