//! Why what a store keeps (a budget's state, a job's terms, a job's history, a job's lease)
//! could not be read or changed, by the command that shows or sets it or by a run: one type for
//! the file store's readings and the shared store's, each way with its words, so that the two
//! stores say the same trouble the same way; and the types it is made of: the file store's
//! refusal of its place ([`Refused`], in the words of what a file keeps, [`Keeps`]), its failure
//! to use a file ([`FileFailure`]), and the shared store's failure of a call ([`StoreFailure`]).
//! They live here, below both stores and the crate's `error`, which import them, so that no
//! error type imports a store.

use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use retry_policy::signal::Signal;

use crate::state_dir::NoStateHome;

/// Why a store's keeping could not be read or changed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
#[allow(
    missing_docs,
    reason = "a field is the value its variant's message names"
)]
pub enum Unread {
    /// The file store's place or file cannot be used: its refusal names the path and the fix.
    #[error(transparent)]
    Refused(#[from] Refused),
    /// A file another program wrote, which retry leaves alone: its path, and what retry keeps
    /// in such a file ("a retry job history").
    #[error("{}: it is not {keeps}, so it is left alone", .path.display())]
    Foreign { path: PathBuf, keeps: &'static str },
    /// What retry keeps that no version of it wrote: where (a file store's path; none for a
    /// shared store's key), and what mends it.
    #[error("{}{mend}", .at.as_ref().map_or(String::new(), |path| format!("{}: ", path.display())))]
    Damaged {
        at: Option<PathBuf>,
        mend: &'static str,
    },
    /// The shared store failed the call.
    #[error(transparent)]
    Store(#[from] StoreFailure),
    /// The file could not be read or written.
    #[error(transparent)]
    Io(#[from] io::Error),
    /// The file store could not use the file: why.
    #[error(transparent)]
    Unusable(#[from] FileFailure),
    /// The file at the path could not be read or written.
    #[error("{}: {error}", .path.display())]
    FileFailed { path: PathBuf, error: io::Error },
    /// The thread that waits for the store could not be started.
    #[error("cannot start a thread: {0}")]
    NoThread(io::Error),
    /// A signal that ends the run arrived while the store was waited for.
    #[error("interrupted by signal {}", .0.number())]
    Interrupted(Signal),
}

impl Unread {
    /// The file at `path`, another program's where retry keeps what `keeps` says.
    pub(crate) fn foreign(path: &Path, keeps: &Keeps) -> Unread {
        Unread::Foreign {
            path: path.to_path_buf(),
            keeps: keeps.state,
        }
    }
}

/// What a checked file keeps, in the words its refusals use: a file of the same rules holds a
/// budget's state or a job's history.
#[derive(Clone, Copy, Debug)]
pub struct Keeps {
    /// "budget": the directory is "the budget directory".
    pub(crate) directory: &'static str,
    /// What a file of the store is: "a retry budget state".
    pub(crate) state: &'static str,
    /// What a stranger who could change it could do.
    pub(crate) harm: &'static str,
    /// How to choose another file.
    pub(crate) elsewhere: &'static str,
    /// How to choose another directory.
    pub(crate) directory_option: &'static str,
}

/// Why the file store could not use a file of its own while a run went on (a run says it once,
/// as a warning, and goes on without it).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FileFailure {
    /// Opening, reading, writing or locking it failed, or another file was put in its place:
    /// the system's words, or those.
    #[error(transparent)]
    Io(#[from] io::Error),
    /// Another process held its lock for longer than the run could wait: this long.
    #[error("another process held its lock for {}", retry_policy::duration::format_duration(*.0))]
    LockHeld(Duration),
    /// It is not a retry budget state, so it is left alone.
    #[error("it is not a retry budget state, so it is left alone")]
    Foreign,
}

/// How a shared store failed a call, each way with the words that say it (the password
/// hidden) and what would mend it where the tool knows.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StoreFailure {
    /// It could not be reached, or the connection broke: the system's words.
    #[error("{0}")]
    Unreachable(String),
    /// It did not answer within the call's time.
    #[error("no answer within {}", retry_policy::duration::format_duration(*.0))]
    TimedOut(Duration),
    /// It answered with an error of its own: the server's words.
    #[error("{0}")]
    Refused(String),
    /// Its answer cannot be read, or is not one the budget's script gives.
    #[error("{0}")]
    Unreadable(String),
}

/// Why the file store's directory or one of its files cannot be used (`file` checks them): each
/// message names the path, what the file keeps (a budget's state, a job's history) and the fix,
/// in the words of what it keeps.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
#[allow(
    missing_docs,
    reason = "a field is the value its variant's message names"
)]
pub enum Refused {
    /// The directory could not be made or looked at, or the file in it (`path`) opened.
    #[error(
        "cannot use the {} directory {} ({} a directory this user can create and write): {}",
        .keeps.directory, .dir.display(), .keeps.directory_option, .path.display()
    )]
    Unusable {
        dir: PathBuf,
        path: PathBuf,
        keeps: &'static Keeps,
        #[source]
        why: io::Error,
    },
    /// A directory that is a symbolic link.
    #[error(
        "the {} directory {} is a symbolic link: whoever can change the link could redirect \
         it; give the directory it points to",
        .keeps.directory, .dir.display()
    )]
    DirectoryLink { dir: PathBuf, keeps: &'static Keeps },
    /// A directory that is not one.
    #[error("the {} directory {} is not a directory", .keeps.directory, .dir.display())]
    NotADirectory { dir: PathBuf, keeps: &'static Keeps },
    /// A directory any user may write in: its mode.
    #[error(
        "the {} directory {} has mode {mode:04o}: any user could replace its files and {}; make \
         it 0700, or 0770 for a group (chmod o-w)",
        .keeps.directory, .dir.display(), .keeps.harm
    )]
    DirectoryOpenToAll {
        dir: PathBuf,
        mode: u32,
        keeps: &'static Keeps,
    },
    /// A directory of another user's (not root's): its owner.
    #[error(
        "the {} directory {} belongs to another user (uid {owner}), who could {} or stall this \
         user's runs; give a directory of this user's own (or root's)",
        .keeps.directory, .dir.display(), .keeps.harm
    )]
    DirectoryOfAnother {
        dir: PathBuf,
        owner: u32,
        keeps: &'static Keeps,
    },
    /// A file that is not a regular one.
    #[error(
        "{} is not a regular file, so not {}; {}",
        .path.display(), .keeps.state, .keeps.elsewhere
    )]
    NotRegular {
        path: PathBuf,
        keeps: &'static Keeps,
    },
    /// A file any user may write: its mode.
    #[error(
        "{} has mode {mode:04o}: any user could change it and {}; make it 0600, or 0660 for a \
         group (chmod o-w)",
        .path.display(), .keeps.harm
    )]
    OpenToAll {
        path: PathBuf,
        mode: u32,
        keeps: &'static Keeps,
    },
    /// A file of another user's, outside a group's directory: its owner.
    #[error(
        "{} belongs to another user (uid {owner}), who could {} or stall this user's runs; \
         remove it, or {}",
        .path.display(), .keeps.harm, .keeps.elsewhere
    )]
    OfAnother {
        path: PathBuf,
        owner: u32,
        keeps: &'static Keeps,
    },
    /// A file that could not be read, without its lock, for a command that shows it.
    #[error("{}", .path.display())]
    Unreadable {
        path: PathBuf,
        #[source]
        why: io::Error,
    },
    /// A file read for a command that shows it that is not a regular one.
    #[error("{}: not a regular file, so not {}", .path.display(), .keeps.state)]
    NotRegularToRead {
        path: PathBuf,
        keeps: &'static Keeps,
    },
    /// A budget's file that no version of retry wrote.
    #[error("{}: not a retry budget state", .path.display())]
    NotAState { path: PathBuf },
    /// A budget's file whose content is damaged.
    #[error(
        "{}: its content is damaged; the next run that uses it starts again from a full bucket",
        .path.display()
    )]
    Damaged { path: PathBuf },
    /// No state home of this user's to make the directory in.
    #[error("no directory of this user's to keep it in")]
    NoStateHome(#[source] NoStateHome),
}
