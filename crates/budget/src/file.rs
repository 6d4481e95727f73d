//! The retry budget kept in a file on this machine, shared by every run that names it.
//!
//! One small file per budget, `DIR/NAME`, read and rewritten under an exclusive `flock`, so that
//! concurrent runs lose no update and never spend a token twice. The file holds the budget's
//! terms beside its state: `retry budget set` writes them, every run reads them, and a budget
//! nobody set terms for has the defaults. What the store trusts, it checks
//! before the first attempt, as ssh's StrictModes checks a user's keys:
//! - The directory is created with mode 0700, and must be the user's own (or root's); one that
//!   is a symbolic link, not a directory, or writable by every user is refused (anyone could
//!   replace the state and deny every retry). A directory that a group may write (several
//!   service accounts sharing a budget) is fine, and the files created in it are group-writable.
//! - The file is opened without following a symbolic link and without blocking (a FIFO would
//!   block), and must be a regular file that not every user may write, and the user's own (or,
//!   in a group's directory, the group's).
//!
//! Each update is one write of a fixed-size record at the start of the file, within one page, so
//! a run killed in the middle leaves the old state or the new. A record whose values the
//! arithmetic could not have produced starts over from a full bucket with one warning; so does
//! one that carries the store's signature but does not parse, whose bytes are first copied
//! aside to a new `NAME.damaged`. A file without the signature (`signature`: a Makefile, a disk
//! image, zeros) is not the store's, whatever its name or size, and is never touched.
//!
//! A budget that cannot be used, from the start or mid-run (the disk full, a lock held too long,
//! a file that is not the store's), never stops the command: with the store's `fail=open` (the
//! default) the run goes on without it, and with `fail=closed` it retries no more; either way
//! with one warning.
//! Waiting for the lock is bounded (by [`LOCK_PATIENCE`], and half the time left before
//! `--max-time`, so that the retry still has time to run) and a signal ends it.

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use nix::fcntl::{Flock, FlockArg};

use super::breaker::{BreakerState, PROBE_LEASE};
use super::model::{BucketState, DEFAULT_TERMS, Terms, micros};
use super::store::OnFailure;
use super::{BudgetName, Reservation, RetryBudget};
use crate::error::Error;
use crate::named_files;
use crate::signature::{self, Recognised};
use crate::state_dir::{self, effective_user};
use crate::unread::Unread;
use crate::unread::{FileFailure, Keeps, Refused};
use crate::waiter::{Waited, Waiter};
use retry_policy::outcome::Ended;
use retry_policy::run::{Admission, TokenRequest};
use retry_policy::signal::Signal;

/// The first word of every state file, naming its format: the one format there is.
const FORMAT: &str = "retry-budget-v4";

/// What every state file starts with, whatever its version: a file that does not is not ours.
const SIGNATURE: &str = "retry-budget-";

/// The size of a state record, padded with spaces: well within one page, so that a write of it
/// is all or nothing.
const RECORD: usize = 512;

/// The longest wait for another run's lock before retrying without the budget. A healthy run
/// holds it for microseconds, so a second means something is wrong with the holder.
pub const LOCK_PATIENCE: Duration = Duration::from_secs(1);

/// The budget's file, checked and ready to use.
#[derive(Debug)]
pub struct BudgetFile {
    path: PathBuf,
    /// Device and inode of the file checked, so that a file put in its place mid-run is noticed.
    identity: (u64, u64),
    /// It held nothing when checked: a state no run had written yet.
    empty: bool,
}

/// A budget's state.
pub(crate) const BUDGET: Keeps = Keeps {
    directory: "budget",
    state: "a retry budget state",
    harm: "deny every retry",
    elsewhere: "choose another --budget name or directory (--budget-store file:DIR)",
    directory_option: "give --budget-store file:DIR",
};

impl BudgetFile {
    /// The budget `name` in `dir`, creating the directory if needed; refuses what must not be
    /// trusted (see the module header), so that a bad budget fails before anything runs.
    pub fn check(dir: &Path, name: &BudgetName) -> Result<Self, Refused> {
        BudgetFile::check_keeping(dir, name, &BUDGET)
    }

    /// The file `name` in `dir`, which keeps what `keeps` says, checked as a budget's is.
    pub(crate) fn check_keeping(
        dir: &Path,
        name: &BudgetName,
        keeps: &'static Keeps,
    ) -> Result<Self, Refused> {
        let refused = |what: &Path, why: io::Error| unusable(dir, what, why, keeps);
        state_dir::make(dir).map_err(|err| refused(dir, err))?;
        let directory = check_directory(dir, keeps)?;
        let shared = directory.permissions().mode() & 0o020 != 0;
        let path = dir.join(name.as_str());
        let file = open_state(&path, shared).map_err(|err| refused(&path, err))?;
        let metadata = file.metadata().map_err(|err| refused(&path, err))?;
        if !metadata.file_type().is_file() {
            return Err(Refused::NotRegular { path, keeps });
        }
        let mode = metadata.permissions().mode() & 0o777;
        if mode & 0o002 != 0 {
            return Err(Refused::OpenToAll { path, mode, keeps });
        }
        let group_shares = shared && metadata.gid() == directory.gid();
        if metadata.uid() != effective_user() && !group_shares {
            let owner = metadata.uid();
            return Err(Refused::OfAnother { path, owner, keeps });
        }
        Ok(BudgetFile {
            path,
            identity: (metadata.dev(), metadata.ino()),
            empty: metadata.len() == 0,
        })
    }
}

impl BudgetFile {
    /// Whether no run had written the state yet when it was checked.
    pub fn is_new(&self) -> bool {
        self.empty
    }

    /// The file's device and inode, as it was checked.
    pub(crate) fn identity(&self) -> (u64, u64) {
        self.identity
    }

    /// The file's path.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The file, opened anew, refused if another was put in its place since it was checked.
    pub(crate) fn open(&self) -> io::Result<File> {
        open_checked(&self.path, self.identity)
    }
}

/// The most entries of a directory one pruning looks at, so that it stays cheap whatever the
/// directory holds.
const MOST_PRUNED: usize = 1000;

/// Remove the states in `dir` that no run has written for longer than `idle`, whose terms are
/// `terms` (a state on terms `retry budget set` gave keeps them, and is kept), and that hold
/// nothing a later run needs: `idle` is long enough that any such bucket is full again. Only a
/// regular file of this user's that is the store's own (by its signature) or empty, and that no
/// run holds locked, goes; anything else is left as it is, and a failure only ends the pruning.
pub(crate) fn prune_idle(dir: &Path, terms: &Terms, idle: Duration) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let now = SystemTime::now();
    let idle_since = |metadata: &std::fs::Metadata| {
        metadata
            .modified()
            .ok()
            .and_then(|modified| now.duration_since(modified).ok())
            .is_some_and(|age| age > idle)
    };
    for entry in entries.flatten().take(MOST_PRUNED) {
        // The entry's own type and time: a link is never followed.
        let stale = entry
            .metadata()
            .is_ok_and(|metadata| metadata.is_file() && idle_since(&metadata));
        if stale {
            let _ = remove_if_idle(&entry.path(), terms, &idle_since);
        }
    }
}

/// Remove the state at `path` if, once locked, it is still one `prune_idle` may remove.
fn remove_if_idle(
    path: &Path,
    terms: &Terms,
    idle_since: &dyn Fn(&std::fs::Metadata) -> bool,
) -> io::Result<()> {
    let named_files::Opened { file, metadata } = named_files::open(
        path,
        OpenOptions::new().read(true).write(true),
        libc::O_NOFOLLOW,
    )?;
    if !metadata.is_file() || metadata.uid() != effective_user() {
        return Ok(());
    }
    let locked = Flock::lock(file, FlockArg::LockExclusiveNonblock)
        .map_err(|(_, errno)| io::Error::from(errno))?;
    let ours = match classify(&read_record(&locked)?) {
        Content::Empty => true,
        Content::Own(kept) => kept.terms == *terms,
        Content::Damaged | Content::Foreign => false,
    };
    let still = locked.metadata()?;
    let named = std::fs::symlink_metadata(path)?;
    let same = (named.dev(), named.ino()) == (still.dev(), still.ino());
    if ours && same && idle_since(&still) {
        std::fs::remove_file(path)?;
    }
    Ok(())
}

/// Why the files in `dir` cannot be used: `what` (the directory, or the file in it) gave `err`.
fn unusable(dir: &Path, what: &Path, why: io::Error, keeps: &'static Keeps) -> Refused {
    Refused::Unusable {
        dir: dir.to_path_buf(),
        path: what.to_path_buf(),
        keeps,
        why,
    }
}

/// Refuse a directory that is a link, not a directory, writable by all, or another user's;
/// returns its metadata.
fn check_directory(dir: &Path, keeps: &'static Keeps) -> Result<std::fs::Metadata, Refused> {
    let metadata = std::fs::symlink_metadata(dir).map_err(|why| unusable(dir, dir, why, keeps))?;
    let dir = || dir.to_path_buf();
    if metadata.file_type().is_symlink() {
        return Err(Refused::DirectoryLink { dir: dir(), keeps });
    }
    if !metadata.is_dir() {
        return Err(Refused::NotADirectory { dir: dir(), keeps });
    }
    let mode = metadata.permissions().mode() & 0o7777;
    if mode & 0o002 != 0 {
        return Err(Refused::DirectoryOpenToAll {
            dir: dir(),
            mode,
            keeps,
        });
    }
    let owner = metadata.uid();
    if owner != effective_user() && owner != 0 {
        return Err(Refused::DirectoryOfAnother {
            dir: dir(),
            owner,
            keeps,
        });
    }
    Ok(metadata)
}

/// Open the state file for reading and writing, never through a link and never blocking (a FIFO
/// would); one created here gets mode 0600, or 0660 in a group's directory, whatever the umask.
fn open_state(path: &Path, shared: bool) -> io::Result<File> {
    let mode = if shared { 0o660 } else { 0o600 };
    let open = |create: bool| {
        named_files::open(
            path,
            OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(create)
                .mode(mode),
            libc::O_NOFOLLOW,
        )
        .map(|opened| opened.file)
    };
    match open(true) {
        Ok(file) => {
            file.set_permissions(std::fs::Permissions::from_mode(mode))?;
            Ok(file)
        }
        Err(err) if err.kind() == io::ErrorKind::AlreadyExists => open(false),
        Err(err) => Err(err),
    }
}

/// The start of a file just opened: a record, or what stands in its place.
fn read_record(file: &File) -> io::Result<Vec<u8>> {
    read_start(file, 4 * RECORD)
}

/// At most the first `most` bytes of `file`: bounded whatever stands there.
pub(crate) fn read_start(file: &File, most: usize) -> io::Result<Vec<u8>> {
    let mut start = Vec::with_capacity(most);
    file.take(most as u64).read_to_end(&mut start)?;
    Ok(start)
}

/// The start of the file at `path` (at most `most` bytes), read without the lock, never through
/// a link and never blocking; none when there is no file. `keeps` names what it should be, for
/// the refusal of anything but a regular file.
pub(crate) fn peek_start(
    path: &Path,
    most: usize,
    keeps: &'static Keeps,
) -> Result<Option<Vec<u8>>, Refused> {
    let unreadable = |why| Refused::Unreadable {
        path: path.to_path_buf(),
        why,
    };
    let opened = named_files::open(path, OpenOptions::new().read(true), libc::O_NOFOLLOW);
    let named_files::Opened { file, metadata } = match opened {
        Ok(opened) => opened,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(unreadable(err)),
    };
    if !metadata.is_file() {
        let path = path.to_path_buf();
        return Err(Refused::NotRegularToRead { path, keeps });
    }
    read_start(&file, most).map(Some).map_err(unreadable)
}

/// A budget whose state lives in a file, consulted with the run's signals in view.
pub struct FileBudget<'a, W> {
    file: BudgetFile,
    watch: &'a W,
    /// What a file that cannot be used means: a retry without the budget, or none.
    on_failure: OnFailure,
    /// The terms of a file that holds none.
    unset: Terms,
    /// Whether the budget had a breaker when the run was admitted, so that its end is counted.
    breaker: bool,
    /// Warnings go out once per run; the first one tells the story.
    warned: bool,
}

/// What stopped an update from using the file.
pub(crate) enum Trouble {
    /// The file failed, or is no longer the budget's: go on without it.
    Failed(FileFailure),
    /// A signal that ends the run arrived while waiting for the lock.
    Interrupted(Signal),
}

impl From<Trouble> for Unread {
    fn from(trouble: Trouble) -> Self {
        match trouble {
            Trouble::Failed(failure) => Unread::Unusable(failure),
            Trouble::Interrupted(signal) => Unread::Interrupted(signal),
        }
    }
}

impl From<io::Error> for Trouble {
    fn from(err: io::Error) -> Self {
        Trouble::Failed(FileFailure::Io(err))
    }
}

/// Now, in the model's unit: microseconds since the Unix epoch, on this machine's clock.
pub fn now_micros() -> u64 {
    let since = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default();
    u64::try_from(since.as_micros()).unwrap_or(u64::MAX)
}

impl<'a, W: Waiter> FileBudget<'a, W> {
    /// The budget in `file`, on the terms it holds, which `on_failure` says what to make of a
    /// file that cannot be used; lock waits end early on the signals `watch` takes.
    pub fn new(file: BudgetFile, on_failure: OnFailure, watch: &'a W) -> Self {
        FileBudget {
            file,
            watch,
            on_failure,
            unset: DEFAULT_TERMS,
            breaker: false,
            warned: false,
        }
    }

    /// The budget, with `terms` where its file holds none (rather than [`DEFAULT_TERMS`]).
    pub fn with_unset_terms(self, terms: Terms) -> Self {
        FileBudget {
            unset: terms,
            ..self
        }
    }

    /// Apply `change` to the state under the lock, on the terms the file holds (or `terms`, to
    /// set them), waiting for the lock half of `latest` and [`LOCK_PATIENCE`] at most, and store
    /// what it returns.
    fn update<T>(
        &mut self,
        latest: Option<Duration>,
        terms: Option<Terms>,
        warn: &mut dyn FnMut(String),
        change: impl FnOnce(&Terms, Option<BucketState>, &mut BreakerState, u64) -> (T, BucketState),
    ) -> Result<T, Trouble> {
        let file = self.file.lock(self.watch, latest)?;
        let record = read_record(&file)?;
        let now = now_micros();
        let (state, held, mut breaker) = self.read(&record, now, warn)?;
        let terms = terms.unwrap_or(held);
        let state = state.map(|state| terms.adopt(state));
        let (answer, next) = change(&terms, state, &mut breaker, now);
        file.write_all_at(&record_of(next, &terms, &breaker), 0)?;
        // Whatever stood beyond a record (a damaged state's rest) goes.
        file.set_len(RECORD as u64)?;
        Ok(answer)
    }

    /// The state `record` holds as of `now`, and the terms it holds (the defaults where it
    /// holds none): no state for a new file, none (after a warning) for one that is this
    /// store's but damaged, its bytes copied aside first, and an error for one that is not this
    /// store's.
    fn read(
        &mut self,
        record: &[u8],
        now: u64,
        warn: &mut dyn FnMut(String),
    ) -> Result<(Option<BucketState>, Terms, BreakerState), Trouble> {
        Ok(match classify(record) {
            Content::Empty => (None, self.unset, BreakerState::default()),
            Content::Own(kept) if kept.terms.is_plausible(&kept.state, now) => {
                (Some(kept.state), kept.terms, kept.breaker)
            }
            Content::Own(kept) => (
                self.reset("it holds values no run could have stored", warn),
                kept.terms,
                BreakerState::default(),
            ),
            Content::Damaged => {
                let kept = match self.set_aside(record) {
                    Ok(copy) => format!("a copy is in {}", copy.display()),
                    Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {
                        "no copy was kept: a file of that name is there, and is left as it is"
                            .to_string()
                    }
                    Err(err) => format!("no copy could be kept: {err}"),
                };
                let why = format!(
                    "its content was damaged ({kept}); its terms are the defaults until retry \
                     budget set gives them again"
                );
                (self.reset(&why, warn), self.unset, BreakerState::default())
            }
            Content::Foreign => {
                return Err(Trouble::Failed(FileFailure::Foreign));
            }
        })
    }

    /// Keep the damaged `record` in a new file `NAME.damaged` beside the state, never in place
    /// of a file that is there (an earlier copy, or anybody's); returns its path.
    fn set_aside(&self, record: &[u8]) -> io::Result<PathBuf> {
        let mut copy = self.file.path.clone().into_os_string();
        copy.push(".damaged");
        let copy = PathBuf::from(copy);
        named_files::open(
            &copy,
            OpenOptions::new().write(true).create_new(true).mode(0o600),
            libc::O_NOFOLLOW,
        )
        .map(|opened| opened.file)
        .and_then(|mut file| io::Write::write_all(&mut file, record))?;
        Ok(copy)
    }
}

impl BudgetFile {
    /// The file, open and locked: at once if the lock is free, else after waiting for it on a
    /// thread of its own (through `watch`), for half of `latest` or [`LOCK_PATIENCE`], or until
    /// a signal.
    pub(crate) fn lock<W: Waiter>(
        &self,
        watch: &W,
        latest: Option<Duration>,
    ) -> Result<Flock<File>, Trouble> {
        let path = self.path.clone();
        let identity = self.identity;
        let file = open_checked(&path, identity)?;
        match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
            Ok(locked) => return Ok(locked),
            Err((_, nix::errno::Errno::EWOULDBLOCK)) => {}
            Err((_, errno)) => return Err(io::Error::from(errno).into()),
        }
        let patience = latest.map_or(LOCK_PATIENCE, |latest| (latest / 2).min(LOCK_PATIENCE));
        let until = Instant::now().checked_add(patience);
        // The thread opens the file anew: if nobody waits for it any more, the lock it gets
        // goes away with the file when the thread ends.
        let waited = watch.run_job(until, move || {
            let file = open_checked(&path, identity)?;
            Flock::lock(file, FlockArg::LockExclusive).map_err(|(_, errno)| io::Error::from(errno))
        })?;
        match waited {
            Waited::Done(locked) => Ok(locked?),
            Waited::Stopped(signal) => Err(Trouble::Interrupted(signal)),
            Waited::TimedOut => Err(Trouble::Failed(FileFailure::LockHeld(patience))),
        }
    }
}

impl<W: Waiter> FileBudget<'_, W> {
    /// Say once that the state was unusable and is starting over from a full bucket.
    fn reset(&mut self, why: &str, warn: &mut dyn FnMut(String)) -> Option<BucketState> {
        self.warn(&format!("{why}; starting again from a full bucket"), warn);
        None
    }

    fn warn(&mut self, what: &str, warn: &mut dyn FnMut(String)) {
        if !self.warned {
            self.warned = true;
            warn(format!("retry budget {}: {what}", self.file.path.display()));
        }
    }
}

impl<W: Waiter> RetryBudget for FileBudget<'_, W> {
    fn admit(&mut self, latest: Option<Duration>, warn: &mut dyn FnMut(String)) -> Admission {
        let lease = latest.map_or(PROBE_LEASE, |latest| latest.min(PROBE_LEASE));
        let admitted = self.update(latest, None, warn, |terms, state, breaker, now| {
            let admission = match terms.breaker {
                Some(terms) => {
                    let (admission, next) = terms.admit(std::mem::take(breaker), now, lease);
                    *breaker = next;
                    admission
                }
                None => Admission::Closed,
            };
            // A run the breaker keeps from starting makes no first attempt to count.
            let counted = match admission {
                Admission::Open(_) | Admission::Probing(_) => terms.advance(state, now),
                _ => terms.first_attempt(state, now),
            };
            ((admission, terms.breaker.is_some()), counted)
        });
        match admitted {
            Ok((admission, breaker)) => {
                self.breaker = breaker;
                admission
            }
            Err(Trouble::Interrupted(signal)) => Admission::Interrupted(signal),
            Err(Trouble::Failed(why)) => {
                self.warn(&format!("{why}; {}", self.on_failure.consequence()), warn);
                Admission::Closed
            }
        }
    }

    fn reserve(&mut self, request: TokenRequest, warn: &mut dyn FnMut(String)) -> Reservation {
        let reserved = self.update(request.latest, None, warn, |terms, state, _, now| {
            terms.reserve(state, now, &request)
        });
        match reserved {
            Ok(reservation) => reservation,
            Err(Trouble::Interrupted(signal)) => Reservation::Interrupted(signal),
            Err(Trouble::Failed(why)) => {
                self.warn(&format!("{why}; {}", self.on_failure.consequence()), warn);
                self.on_failure.reservation()
            }
        }
    }

    fn finish(
        &mut self,
        ended: Ended,
        admission: Admission,
        latest: Option<Duration>,
        warn: &mut dyn FnMut(String),
    ) -> Option<retry_policy::signal::Signal> {
        if !self.breaker {
            return None;
        }
        let probe = admission == Admission::Probe;
        let recorded = self.update(latest, None, warn, |terms, state, breaker, now| {
            if let Some(terms) = terms.breaker {
                *breaker = terms.record(std::mem::take(breaker), now, 0, ended, probe, false);
            }
            ((), terms.advance(state, now))
        });
        match recorded {
            Ok(()) => None,
            Err(Trouble::Interrupted(signal)) => Some(signal),
            Err(Trouble::Failed(why)) => {
                self.warn(&format!("{why}; its breaker did not count this run"), warn);
                None
            }
        }
    }
}

/// Keep `terms` as the terms of the budget `name` in `dir` (`retry budget set`), its state
/// carried over to them, waiting for the lock as a run would; a signal `watch` takes ends the
/// wait.
pub fn set_terms<W: Waiter>(
    dir: &Path,
    name: &BudgetName,
    terms: Terms,
    watch: &W,
) -> Result<(), Error> {
    let file = BudgetFile::check(dir, name).map_err(Error::Unusable)?;
    let path = file.path.display().to_string();
    let mut budget = FileBudget::new(file, OnFailure::Closed, watch);
    let mut warnings = Vec::new();
    let set = budget.update(
        None,
        Some(terms),
        &mut |warning| warnings.push(warning),
        |terms, state, _, now| ((), terms.advance(state, now)),
    );
    match set {
        Ok(()) => Ok(()),
        Err(Trouble::Failed(why)) => Err(Error::FileFailed { path, why }),
        Err(Trouble::Interrupted(signal)) => Err(Error::Interrupted {
            place: path,
            signal: signal.number(),
        }),
    }
}

/// The state of the budget `name` in `dir`, its terms and its breaker's state, for `retry
/// budget show`: read without the lock, creating and changing nothing; none when there is no
/// state yet (a full bucket on the default terms).
pub fn peek(dir: &Path, name: &BudgetName) -> Result<Option<Kept>, Refused> {
    let path = dir.join(name.as_str());
    let Some(record) = peek_start(&path, 4 * RECORD, &BUDGET)? else {
        return Ok(None);
    };
    match (classify(&record), parse(&record)) {
        (_, Ok(written)) => Ok(Some(written)),
        (Content::Empty, _) => Ok(None),
        (Content::Damaged, _) => Err(Refused::Damaged { path }),
        _ => Err(Refused::NotAState { path }),
    }
}

/// Open the state file again, and make sure it is still the one checked at the start.
fn open_checked(path: &Path, identity: (u64, u64)) -> io::Result<File> {
    let named_files::Opened { file, metadata } = named_files::open(
        path,
        OpenOptions::new().read(true).write(true),
        libc::O_NOFOLLOW,
    )?;
    match (metadata.dev(), metadata.ino()) == identity {
        true => Ok(file),
        false => Err(io::Error::other(
            "another file was put in its place during the run",
        )),
    }
}

/// A record that is not a state of this store's formats.
#[derive(Debug, PartialEq, Eq)]
struct Foreign;

/// What a state file of this store's keeps.
#[derive(Clone, Debug, PartialEq)]
pub struct Kept {
    /// The bucket.
    pub state: BucketState,
    /// The budget's terms.
    pub terms: Terms,
    /// Its breaker's state (the default when it has no breaker).
    pub breaker: BreakerState,
}

/// What the start of a state file holds.
#[derive(Debug, PartialEq)]
enum Content {
    /// Nothing: a new budget.
    Empty,
    /// A state of this store's, with the budget's terms.
    Own(Box<Kept>),
    /// A state of this store's, its signature whole, that does not parse: garbled.
    Damaged,
    /// Somebody else's file.
    Foreign,
}

/// What `record` (the start of a state file) holds.
fn classify(record: &[u8]) -> Content {
    match signature::recognise(record, SIGNATURE) {
        Recognised::Empty => Content::Empty,
        Recognised::Foreign => Content::Foreign,
        Recognised::Own => match parse(record) {
            Ok(kept) => Content::Own(Box::new(kept)),
            Err(Foreign) => Content::Damaged,
        },
    }
}

/// A state record, padded with spaces: `retry-budget-v4 TOKENS EARNED MICROS FIRST RETRIES
/// REFUSALS NOT_BEFORE CAPACITY PERIOD RATIO WINDOW | BREAKER | BREAKER_STATE` (the budget's terms
/// after the counters, periods in microseconds, `-` for no ratio; the breaker's terms or `-`, and
/// its state, as `breaker` writes them). Anything else is not a record of the store's.
fn parse(record: &[u8]) -> Result<Kept, Foreign> {
    let text = std::str::from_utf8(record).map_err(|_| Foreign)?;
    let mut parts = text.split(" | ");
    let mut words: Vec<&str> = parts
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    words.push(parts.next().map(str::trim).ok_or(Foreign)?);
    let (&format, words) = words.split_first().ok_or(Foreign)?;
    if format != FORMAT {
        return Err(Foreign);
    }
    let (state, terms) = words.split_at_checked(7).ok_or(Foreign)?;
    let terms = Terms::from_stored(terms).ok_or(Foreign)?;
    let breaker = BreakerState::from_stored(parts.next().ok_or(Foreign)?).ok_or(Foreign)?;
    Ok(Kept {
        state: BucketState::from_stored(state).ok_or(Foreign)?,
        terms,
        breaker,
    })
}

/// The fixed-size record of `state` on `terms`, with the breaker's state; numbers in exponent
/// notation, which round-trips and stays short whatever the value. The file store keeps no hosts
/// (its budget is one machine's).
fn record_of(state: BucketState, terms: &Terms, breaker: &BreakerState) -> [u8; RECORD] {
    let ratio = terms
        .ratio
        .map_or("-".to_string(), |ratio| format!("{ratio:e}"));
    let breaker_terms = terms
        .breaker
        .map_or("-".to_string(), |breaker| breaker.stored());
    let breaker = BreakerState {
        hosts: Vec::new(),
        ..breaker.clone()
    };
    let text = format!(
        "{FORMAT} {:e} {:e} {} {} {} {} {} {} {:e} {ratio} {:e} | {breaker_terms} | {}",
        state.tokens,
        state.earned,
        state.at,
        state.first_attempts,
        state.retries,
        state.refusals,
        state.not_before,
        terms.rate.tokens,
        micros(terms.rate.period),
        micros(terms.window),
        breaker.stored(),
    );
    let mut record = [b' '; RECORD];
    record[..text.len()].copy_from_slice(text.as_bytes());
    record[RECORD - 1] = b'\n';
    record
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::waiter::Threads;
    use retry_policy::outcome::WaitCause;
    use std::os::unix::fs::PermissionsExt;

    fn name(text: &str) -> BudgetName {
        text.parse().unwrap()
    }

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    fn refusal(dir: &Path) -> String {
        BudgetFile::check(dir, &name("api"))
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn creates_a_private_directory_and_file() {
        let dir = tempfile::tempdir().unwrap();
        let nested = dir.path().join("state/budgets");
        BudgetFile::check(&nested, &name("api")).unwrap();
        assert_eq!(mode(&nested), 0o700);
        assert_eq!(mode(&nested.join("api")), 0o600);
    }

    #[test]
    fn a_group_directory_gets_group_files_whatever_the_umask() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o2770)).unwrap();
        BudgetFile::check(dir.path(), &name("api")).unwrap();
        assert_eq!(mode(&dir.path().join("api")), 0o660);
    }

    #[test]
    fn refuses_what_any_user_could_change() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o1777)).unwrap();
        let why = refusal(dir.path());
        assert!(
            why.contains("has mode 1777") && why.contains("0700"),
            "{why}"
        );

        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("api");
        std::fs::write(&file, "").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o666)).unwrap();
        let why = refusal(dir.path());
        assert!(
            why.contains("has mode 0666") && why.contains("0600"),
            "{why}"
        );

        let real = tempfile::tempdir().unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(real.path(), &link).unwrap();
        assert!(refusal(&link).contains("is a symbolic link"));
    }

    #[test]
    fn refuses_links_fifos_and_files_that_are_not_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("api");
        std::os::unix::fs::symlink("/etc/passwd", &file).unwrap();
        assert!(BudgetFile::check(dir.path(), &name("api")).is_err());
        std::fs::remove_file(&file).unwrap();

        nix::unistd::mkfifo(&file, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        assert!(refusal(dir.path()).contains("not a regular file"));
        std::fs::remove_file(&file).unwrap();

        // What a file holds is read at each use, and never a reason to refuse it here.
        std::fs::write(&file, "all:\n\tcc -o app app.c\n").unwrap();
        assert!(BudgetFile::check(dir.path(), &name("api")).is_ok());
    }

    #[test]
    fn a_link_to_a_state_is_refused_too() {
        let (dir, elsewhere) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let target = elsewhere.path().join("api");
        std::fs::write(&target, "").unwrap();
        std::os::unix::fs::symlink(&target, dir.path().join("api")).unwrap();
        assert!(BudgetFile::check(dir.path(), &name("api")).is_err());
        assert!(peek(dir.path(), &name("api")).is_err());
    }

    #[test]
    fn now_is_on_the_unix_clock_in_microseconds() {
        let year_2020 = 1_577_836_800_000_000;
        assert!((year_2020..year_2020 * 2).contains(&now_micros()));
    }

    /// A budget of one token an hour in a new directory, with the warnings it gives.
    struct Store {
        dir: tempfile::TempDir,
        watch: Threads,
        warnings: Vec<String>,
    }

    impl Store {
        fn new() -> Self {
            Store {
                dir: tempfile::tempdir().unwrap(),
                watch: Threads,
                warnings: Vec::new(),
            }
        }

        fn path(&self) -> PathBuf {
            self.dir.path().join("api")
        }

        fn terms() -> Terms {
            Terms {
                rate: "1/1h".parse().unwrap(),
                ratio: None,
                window: Duration::from_secs(60),
                breaker: None,
            }
        }

        /// The store's answer to a retry that may wait a second at most, after `change` is made
        /// to the state file between the check and the use of the budget.
        fn reserve_after(&mut self, change: impl FnOnce(&Path)) -> Reservation {
            let file = BudgetFile::check(self.dir.path(), &name("api")).unwrap();
            if std::fs::metadata(self.path()).unwrap().len() == 0 {
                set_terms(self.dir.path(), &name("api"), Self::terms(), &self.watch).unwrap();
            }
            change(&self.path());
            let mut budget = FileBudget::new(file, OnFailure::Open, &self.watch);
            let warnings = &mut self.warnings;
            let request = TokenRequest {
                latest: Some(Duration::from_secs(1)),
                asked: None,
                longest_hold: Duration::from_secs(900),
            };
            budget.reserve(request, &mut |warning| warnings.push(warning))
        }

        fn reserve(&mut self) -> Reservation {
            self.reserve_after(|_| {})
        }

        fn peek(&self) -> Result<Option<(BucketState, Terms)>, Refused> {
            peek(self.dir.path(), &name("api"))
                .map(|kept| kept.map(|kept| (kept.state, kept.terms)))
        }
    }

    #[test]
    fn the_stored_state_is_spent_and_kept_at_one_record() {
        let mut store = Store::new();
        assert!(store.peek().unwrap().is_none(), "no file yet");
        assert_eq!(store.reserve(), Reservation::Granted(Duration::ZERO));
        assert!(
            matches!(
                store.reserve(),
                Reservation::PastDeadline(wait, WaitCause::Budget) if wait > Duration::from_secs(3500)
            ),
            "the one token is spent: the next is an hour away, past the second allowed"
        );
        let (state, terms) = store.peek().unwrap().unwrap();
        assert_eq!((state.retries, state.refusals), (1, 0));
        assert_eq!(terms.rate.to_string(), "1/1h");
        assert_eq!(
            std::fs::metadata(store.path()).unwrap().len(),
            RECORD as u64
        );
        assert_eq!(store.warnings, Vec::<String>::new());
    }

    #[test]
    fn a_damaged_or_implausible_state_starts_over_with_one_warning() {
        let mut store = Store::new();
        std::fs::write(store.path(), "retry-budget-v4 rubbish").unwrap();
        assert!(store.peek().unwrap_err().to_string().contains("damaged"));
        let long_damage = format!("retry-budget-v4 0 0 {}", "x".repeat(2 * RECORD));
        store.reserve_after(|path| std::fs::write(path, &long_damage).unwrap());
        let (state, terms) = store.peek().unwrap().unwrap();
        assert_eq!(
            (state.retries, terms),
            (1, DEFAULT_TERMS),
            "the new state holds"
        );
        assert_eq!(
            std::fs::metadata(store.path()).unwrap().len(),
            RECORD as u64
        );

        let future = BucketState {
            tokens: 0.0,
            earned: 0.0,
            at: u64::MAX / 2,
            first_attempts: 0,
            retries: 0,
            refusals: 0,
            not_before: 0,
        };
        let record = record_of(future, &Store::terms(), &BreakerState::default());
        let granted = store.reserve_after(|path| std::fs::write(path, record).unwrap());
        assert_eq!(granted, Reservation::Granted(Duration::ZERO));
        let [damaged, implausible] = &store.warnings[..] else {
            panic!("{:?}", store.warnings)
        };
        assert!(
            damaged.ends_with(&format!(
                "its content was damaged (a copy is in {}.damaged); its terms are the defaults \
                 until retry budget set gives them again; starting again from a full bucket",
                store.path().display()
            )),
            "{damaged}"
        );
        assert_eq!(
            std::fs::read_to_string(format!("{}.damaged", store.path().display())).unwrap(),
            long_damage,
            "the damaged bytes read are kept"
        );
        assert!(implausible.contains("holds values no run could have stored"));
    }

    #[test]
    fn a_state_replaced_during_the_run_is_left_alone() {
        let replaced = |change: &dyn Fn(&Path)| {
            let mut store = Store::new();
            let reservation = store.reserve_after(change);
            assert_eq!(reservation, Reservation::Granted(Duration::ZERO));
            let [warning] = &store.warnings[..] else {
                panic!("{:?}", store.warnings)
            };
            (warning.clone(), store)
        };
        let makefile = "all:\n\tcc -o app app.c\n";
        let (warning, store) = replaced(&|path| std::fs::write(path, makefile).unwrap());
        assert!(warning.contains("not a retry budget state, so it is left alone"));
        assert_eq!(std::fs::read_to_string(store.path()).unwrap(), makefile);
        assert!(
            store
                .peek()
                .unwrap_err()
                .to_string()
                .contains("not a retry budget state")
        );

        let (warning, _) = replaced(&|path| {
            let other = path.with_extension("new");
            std::fs::write(&other, "").unwrap();
            std::fs::rename(&other, path).unwrap();
        });
        assert!(
            warning.contains("another file was put in its place"),
            "{warning}"
        );

        let (warning, store) = replaced(&|path| {
            std::fs::remove_file(path).unwrap();
            std::os::unix::fs::symlink("/dev/null", path).unwrap();
        });
        let loop_error = io::Error::from_raw_os_error(libc::ELOOP).to_string();
        assert!(warning.contains(&loop_error), "{warning}");
        assert!(store.peek().is_err(), "a link is not followed");
    }

    #[test]
    fn a_file_without_the_signature_is_never_written_whatever_its_size() {
        let image: Vec<u8> = b"QFI\xfb\0\0\0\x03"
            .iter()
            .copied()
            .chain(std::iter::repeat_n(0, 4096))
            .collect();
        let foreign: [&[u8]; 7] = [
            &[0; RECORD],
            &[0; 256],
            &[b' '; RECORD],
            &[b'x'; 256],
            &image,
            b"all:\n\tcc -o app app.c\n",
            b"retry-bud",
        ];
        for content in foreign {
            let mut store = Store::new();
            let reservation = store.reserve_after(|path| std::fs::write(path, content).unwrap());
            assert_eq!(
                reservation,
                Reservation::Granted(Duration::ZERO),
                "fail=open"
            );
            assert_eq!(
                std::fs::read(store.path()).unwrap(),
                content,
                "{} bytes, changed",
                content.len()
            );
            let [warning] = &store.warnings[..] else {
                panic!("{:?}", store.warnings)
            };
            assert!(warning.contains("not a retry budget state"), "{warning}");
            assert!(!store.dir.path().join("api.damaged").exists());
        }
    }

    #[test]
    fn a_damaged_copy_never_replaces_a_file_that_is_there() {
        let mut store = Store::new();
        let beside = store.dir.path().join("api.damaged");
        std::fs::write(&beside, "notes\n").unwrap();
        store.reserve_after(|path| std::fs::write(path, "retry-budget-v4 garbled").unwrap());
        assert_eq!(std::fs::read_to_string(&beside).unwrap(), "notes\n");
        assert!(
            store.warnings[0].contains("no copy was kept"),
            "{:?}",
            store.warnings
        );
    }

    #[test]
    fn records_round_trip_at_a_fixed_size() {
        for tokens in [2.5, -0.1 - 0.2, 4.9e-324, -4e11, 0.0] {
            let state = BucketState {
                tokens,
                earned: 1e12,
                at: u64::MAX,
                first_attempts: u64::MAX,
                retries: u64::MAX,
                refusals: u64::MAX,
                not_before: u64::MAX,
            };
            let terms = Terms {
                rate: crate::Rate {
                    tokens: u32::MAX,
                    period: crate::model::LONGEST_TERM,
                },
                ratio: Some(0.1 + 0.2),
                window: crate::model::LONGEST_TERM,
                breaker: Some(crate::breaker::BreakerTerms {
                    give_ups: u32::MAX,
                    window: crate::model::LONGEST_TERM,
                    share: 0.1 + 0.2,
                    hosts: crate::breaker::MAX_HOSTS as u32,
                    cool_down: crate::model::LONGEST_TERM,
                }),
            };
            let breaker = BreakerState {
                started: u64::MAX,
                runs: u32::MAX,
                give_ups: u32::MAX,
                earlier_runs: u32::MAX,
                earlier_give_ups: u32::MAX,
                open_until: u64::MAX,
                openings: u32::MAX,
                probe_until: u64::MAX,
                hosts: Vec::new(),
            };
            let record = record_of(state, &terms, &breaker);
            assert_eq!(record.len(), RECORD);
            let kept = parse(&record).unwrap();
            assert_eq!(
                (kept.state, kept.terms, kept.breaker),
                (state, terms, breaker),
                "{tokens}"
            );
        }
    }

    #[test]
    fn parses_its_one_format_only() {
        let v4 =
            b"retry-budget-v4 1e0 5e-1 7 1 2 3 9 5 6e7 - 6e7 | 5 6e7 5e-1 1 3e7 | 7 1 1 0 0 0 0 0 -";
        let Kept {
            state,
            terms,
            breaker,
        } = parse(v4).unwrap();
        assert_eq!(
            (
                state.earned,
                state.at,
                state.first_attempts,
                state.not_before
            ),
            (0.5, 7, 1, 9)
        );
        assert_eq!(terms.rate.to_string(), "5/1m");
        assert_eq!(terms.breaker.map(|breaker| breaker.give_ups), Some(5));
        assert_eq!((breaker.started, breaker.give_ups), (7, 1));
        for bad in [
            &b""[..],
            b"v0 1 1",
            b"retry-budget-v1 2.5 1000000000",
            b"retry-budget-v3 1e0 0e0 7 1 2 3 5 6e7 1e-1 6e7",
            b"retry-budget-v4 1e0 0e0 7 1 2 3 9 5 6e7 - 6e7",
            b"retry-budget-v4 1e0 0e0 7 1 2 3 9 5 -6e7 - 6e7 | - | 0 0 0 0 0 0 0 0 -",
            b"retry-budget-v4 NaNx 0e0 7 1 2 3 9 5 6e7 - 6e7 | - | 0 0 0 0 0 0 0 0 -",
            b"retry-budget-v4 1e0 0e0 7 1 2 3 9 5 6e7 - 6e7 | - | 0 0 0",
            b"retry-budget-v4 1e0 0e0 7 1 2 3 9 5 6e7 - 6e7 \xff | - | 0 0 0 0 0 0 0 0 -",
        ] {
            assert_eq!(parse(bad), Err(Foreign), "{bad:?}");
        }
    }
}
