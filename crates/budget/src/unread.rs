//! Why what a store keeps (a budget's state, a job's terms, a job's history, a job's lease)
//! could not be read or changed, by the command that shows or sets it or by a run: one type for
//! the file store's readings and the shared store's, each way with its words, so that the two
//! stores say the same trouble the same way.

use std::io;
use std::path::{Path, PathBuf};

use retry_policy::signal::Signal;

use crate::file::{FileFailure, Keeps, Refused, Trouble};
use crate::redis::{Failure, StoreFailure};

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

impl From<Failure> for Unread {
    fn from(failure: Failure) -> Self {
        match failure {
            Failure::Failed(failure) => Unread::Store(failure),
            Failure::Interrupted(signal) => Unread::Interrupted(signal),
        }
    }
}

impl From<Trouble> for Unread {
    fn from(trouble: Trouble) -> Self {
        match trouble {
            Trouble::Failed(failure) => Unread::Unusable(failure),
            Trouble::Interrupted(signal) => Unread::Interrupted(signal),
        }
    }
}
