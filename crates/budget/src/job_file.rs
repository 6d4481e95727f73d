//! The small files a file store keeps per job (its terms in `.jobs`, its history in `.history`):
//! one reader, which never takes the lock and changes nothing; one writer, which rewrites a file
//! whole under its lock; and the padding of their records. A [`JobFile`] says which kind of file
//! it is: its directory, its signature, how much of it is read, and what it keeps in the words
//! of a refusal. A file that does not start with the signature is another program's, and is
//! never written; a file that does is handed over whole, for its owner to parse.

use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::BudgetName;
use crate::file::{self, BudgetFile};
use crate::signature::{self, Recognised};
use crate::unread::{Keeps, Unread};
use crate::waiter::Waiter;

/// A kind of file the file store keeps per job.
pub(crate) struct JobFile {
    /// The store directory's directory that holds these files (a name no budget can have).
    pub(crate) directory: &'static str,
    /// What every such file starts with, whatever its version: a file that does not is not ours.
    pub(crate) signature: &'static str,
    /// How many bytes of a file are read: all its records, which a write replaces at once.
    pub(crate) size: usize,
    /// What such a file keeps, in the words of a refusal.
    pub(crate) keeps: &'static Keeps,
}

impl JobFile {
    /// The directory of the file store in `store` that holds these files.
    pub(crate) fn directory_in(&self, store: &Path) -> PathBuf {
        store.join(self.directory)
    }

    /// The file of `job` in the file store in `store`.
    pub(crate) fn path(&self, store: &Path, job: &BudgetName) -> PathBuf {
        self.directory_in(store).join(job.as_str())
    }

    /// The records in the file of `job`, read without the lock, never through a link and never
    /// blocking; none when there is no file yet, or an empty one.
    pub(crate) fn read(&self, store: &Path, job: &BudgetName) -> Result<Option<Vec<u8>>, Unread> {
        let path = self.path(store, job);
        match file::peek_start(&path, self.size, self.keeps)? {
            Some(start) => self.own(&path, start),
            None => Ok(None),
        }
    }

    /// Rewrite the file of `job` under its lock, waited for within `latest` with `watch`'s
    /// signals in view: `change` is given the records it holds (none for a new file) and gives
    /// the records to write in their place, and what to hand back.
    pub(crate) fn rewrite<T>(
        &self,
        store: &Path,
        job: &BudgetName,
        (watch, latest): (&impl Waiter, Option<Duration>),
        change: impl FnOnce(Option<Vec<u8>>) -> (Vec<u8>, T),
    ) -> Result<T, Unread> {
        let file = BudgetFile::check_keeping(&self.directory_in(store), job, self.keeps)?;
        let locked = file.lock(watch, latest)?;
        let start = file::read_start(&locked, self.size)?;
        let (records, handed_back) = change(self.own(file.path(), start)?);
        locked
            .write_all_at(&records, 0)
            .and_then(|()| locked.set_len(records.len() as u64))?;
        Ok(handed_back)
    }

    /// `start`, the file at `path`'s, when it is one of these files' and not empty.
    fn own(&self, path: &Path, start: Vec<u8>) -> Result<Option<Vec<u8>>, Unread> {
        match signature::recognise(&start, self.signature) {
            Recognised::Empty => Ok(None),
            Recognised::Own => Ok(Some(start)),
            Recognised::Foreign => Err(Unread::foreign(path, self.keeps)),
        }
    }
}

/// What a job's file keeps, in the words of a refusal: the directory's name ("job" makes "the
/// job directory"), what a file is, and what a stranger who could change it could do.
pub(crate) const fn keeps(
    directory: &'static str,
    state: &'static str,
    harm: &'static str,
) -> Keeps {
    Keeps {
        directory,
        state,
        harm,
        elsewhere: "choose another --job name",
        directory_option: "give --budget-store file:DIR (or XDG_STATE_HOME)",
    }
}

/// `text`, then spaces to `size` bytes, the last a newline: a record of a job's file.
pub(crate) fn padded(text: &str, size: usize) -> Vec<u8> {
    let mut record = text.as_bytes().to_vec();
    record.resize(size - 1, b' ');
    record.push(b'\n');
    record
}
