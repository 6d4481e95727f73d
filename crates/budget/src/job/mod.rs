//! A job's terms, which `retry job set NAME --overlap skip|wait|allow` keeps where the job's
//! history lives (the store its runs' budget uses), so that every run of the job, on any
//! machine, obeys the same ones; and `retry job show`. A run named with `--job` reads them
//! before its first attempt, in the same step as it takes its hold on the job (`hold`).
//!
//! On Redis, a hash no budget's name can make (`retry:budget:job:{JOB}`), which nothing
//! expires. In a file store, one small file per job in the store directory's `.jobs`, checked
//! and written as a budget's file is: `retry-job-v1 overlap=skip`, padded to a record's size.

mod hold;

use std::io::{self, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::BudgetName;
use crate::error::Error;
use crate::file::{self, BudgetFile, Keeps, Trouble};
use crate::history::history_name;
use crate::redis::{Failure, RedisStore};
use crate::show::{Format, ShowError, write_as};
use crate::signature::{self, Recognised};
use crate::store::Location;
use crate::waiter::Waiter;
use retry_policy::choice::Choice;
use retry_policy::printable::printable;

pub use hold::{Hold, Holding, LEASE, Unheld, hold};

/// Whether a run of a job may start while another is in progress.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Overlap {
    /// Yes: runs overlap as they come (the default).
    Allow,
    /// No: a run that finds another in progress makes no attempt, and exits 75.
    Skip,
    /// No: a run that finds another in progress waits for it to end, within its deadline.
    Wait,
}

impl Choice for Overlap {
    const ALL: &'static [Overlap] = &[Overlap::Allow, Overlap::Skip, Overlap::Wait];

    fn name(self) -> &'static str {
        match self {
            Overlap::Allow => "allow",
            Overlap::Skip => "skip",
            Overlap::Wait => "wait",
        }
    }

    fn about(self) -> &'static str {
        match self {
            Overlap::Allow => "Runs of the job overlap as they come",
            Overlap::Skip => "A run that finds another in progress makes no attempt, and exits 75",
            Overlap::Wait => {
                "A run that finds another in progress waits for it to end, within --max-time"
            }
        }
    }
}

/// The first word of a job's terms file, naming its format.
const FORMAT: &str = "retry-job-v1";

/// What every job terms file starts with: a file that does not is not ours.
const SIGNATURE: &str = "retry-job-";

/// The size of a job's terms record, padded with spaces.
const RECORD: usize = 128;

/// The directory of a file store that holds its jobs' terms.
const DIRECTORY: &str = ".jobs";

/// A job's terms file, in the words of a refusal.
const TERMS: Keeps = Keeps {
    directory: "job",
    state: "a retry job's terms",
    harm: "let runs of the job overlap, or stop them all",
    elsewhere: "choose another --job name",
    directory_option: "give --budget-store file:DIR (or XDG_STATE_HOME)",
};

/// What `retry job show` prints: the `job show` object of the reference.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
struct Shown {
    job: String,
    /// `file`, or the shared store's address with its password hidden.
    store: String,
    /// The terms' file, or their Redis key.
    location: String,
    /// Whether the job's runs may overlap.
    overlap: Overlap,
    /// The identity (`RETRY_RUN_ID`) of the run that holds the job's lease, on a shared store.
    #[serde(skip_serializing_if = "Option::is_none")]
    running: Option<String>,
}

/// Keep `overlap` as the terms of the job `job` at `location`, for every run of it.
pub fn set_terms<W: Waiter>(
    location: &Location,
    job: &BudgetName,
    overlap: Overlap,
    watch: &W,
) -> Result<(), Error> {
    let failed = |why: String| Error::StoreFailed {
        budget: format!("job {}", job.as_str()),
        store: place(location, job),
        why,
    };
    match location {
        Location::File(dir) => set_in_file(&terms_dir(dir), job, overlap, watch).map_err(failed),
        Location::Shared { address, .. } => {
            let mut store = RedisStore::for_job(address.clone(), job, watch);
            match store.job("job_set", overlap.name(), Duration::ZERO, None) {
                Ok(_) => Ok(()),
                Err(Failure::Failed(why)) => Err(failed(why)),
                Err(Failure::Interrupted(signal)) => Err(Error::Interrupted {
                    place: place(location, job),
                    signal: signal.number(),
                }),
            }
        }
    }
}

/// Print the terms of the job `job` (as runs give it to `--job`) in the store at `location`
/// to `out`, in `format`, changing nothing.
pub fn print(
    job: &str,
    location: &Location,
    format: Format,
    watch: &impl Waiter,
    out: &mut impl io::Write,
) -> Result<(), ShowError> {
    let name = history_name(job);
    let (overlap, running) = read(location, &name, watch).map_err(|why| {
        ShowError::Unreadable(format!("cannot read the terms of job {job}: {why}"))
    })?;
    let shown = Shown {
        job: job.to_string(),
        store: location.to_string(),
        location: place(location, &name),
        overlap,
        running,
    };
    write_as(format, out, &shown, write_text)
}

/// The overlap of the job `job` at `location`, and the run that holds its lease.
fn read<W: Waiter>(
    location: &Location,
    job: &BudgetName,
    watch: &W,
) -> Result<(Overlap, Option<String>), String> {
    match location {
        Location::File(dir) => Ok((read_file(&terms_dir(dir).join(job.as_str()))?, None)),
        Location::Shared { address, .. } => {
            let mut store = RedisStore::for_job(address.clone(), job, watch);
            match store.job("job_show", "", Duration::ZERO, None) {
                Ok([overlap, holder, _]) => Ok((
                    Overlap::named(&overlap).unwrap_or(Overlap::Allow),
                    Some(holder).filter(|holder| !holder.is_empty()),
                )),
                Err(Failure::Failed(why)) => Err(why),
                Err(Failure::Interrupted(_)) => Err("interrupted".into()),
            }
        }
    }
}

fn write_text(out: &mut impl io::Write, shown: &Shown) -> io::Result<()> {
    let place = match shown.store.as_str() {
        "file" => printable(&shown.location),
        _ => shown.location.clone(),
    };
    writeln!(out, "job {} in {place}:", printable(&shown.job))?;
    let overlap = shown.overlap;
    writeln!(
        out,
        "  overlap  {} ({})",
        overlap.name(),
        overlap.about().to_lowercase()
    )?;
    if let Some(running) = &shown.running {
        writeln!(out, "  running  {running}, which holds the job's lease")?;
    }
    Ok(())
}

/// Where the terms of `job` live at `location`: its file, or its Redis key.
fn place(location: &Location, job: &BudgetName) -> String {
    match location {
        Location::File(dir) => terms_dir(dir).join(job.as_str()).display().to_string(),
        Location::Shared { address, .. } => {
            format!("{address}, key retry:budget:job:{{{}}}", job.as_str())
        }
    }
}

/// Where a file store in `dir` keeps its jobs' terms.
fn terms_dir(dir: &Path) -> PathBuf {
    dir.join(DIRECTORY)
}

/// Write `overlap` into the terms file of `job` in `dir`, under its lock.
fn set_in_file<W: Waiter>(
    dir: &Path,
    job: &BudgetName,
    overlap: Overlap,
    watch: &W,
) -> Result<(), String> {
    let file = BudgetFile::check_keeping(dir, job, TERMS).map_err(|refused| refused.0)?;
    let locked = file.lock(watch, None).map_err(|trouble| match trouble {
        Trouble::Failed(why) => why,
        Trouble::Interrupted(signal) => format!("interrupted by signal {}", signal.number()),
    })?;
    let record = file::read_start(&locked, RECORD).map_err(|err| err.to_string())?;
    if signature::recognise(&record, SIGNATURE) == Recognised::Foreign {
        return Err(format!("{}: {}", dir.join(job.as_str()).display(), FOREIGN));
    }
    let mut written = Vec::with_capacity(RECORD);
    let _ = write!(written, "{FORMAT} overlap={}", overlap.name());
    written.resize(RECORD - 1, b' ');
    written.push(b'\n');
    locked
        .write_all_at(&written, 0)
        .and_then(|()| locked.set_len(RECORD as u64))
        .map_err(|err| err.to_string())
}

/// What a terms file that is not one says.
const FOREIGN: &str = "it is not a retry job's terms, so it is left alone";

/// The overlap the terms file at `path` keeps, read without the lock; `allow` when there is
/// none, or when it holds nothing a run could use (`retry job set` writes it again).
fn read_file(path: &Path) -> Result<Overlap, String> {
    let record = file::peek_start(path, RECORD, TERMS).map_err(|refused| refused.0)?;
    let Some(record) = record else {
        return Ok(Overlap::Allow);
    };
    match signature::recognise(&record, SIGNATURE) {
        Recognised::Empty => return Ok(Overlap::Allow),
        Recognised::Foreign => return Err(format!("{}: {FOREIGN}", path.display())),
        Recognised::Own => {}
    }
    let text = String::from_utf8_lossy(&record);
    let overlap = text
        .trim_end_matches([' ', '\n'])
        .strip_prefix(FORMAT)
        .and_then(|rest| rest.strip_prefix(" overlap="))
        .and_then(Overlap::named);
    overlap.ok_or_else(|| {
        format!(
            "{}: its terms are damaged; set them again with retry job set",
            path.display()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference::{object_keys, row_keys};
    use crate::waiter::Threads;

    #[test]
    fn the_reference_lists_every_key() {
        let shown = Shown {
            job: "nightly".into(),
            store: "file".into(),
            location: "/s/.jobs/nightly".into(),
            overlap: Overlap::Skip,
            running: Some("6ba7b810-9dad-41d1-80b4-00c04fd430c8".into()),
        };
        let value = serde_json::to_value(shown).unwrap();
        assert_eq!(object_keys(&value, &[]), row_keys("job show"));
    }

    fn job(name: &str) -> BudgetName {
        name.parse().unwrap()
    }

    #[test]
    fn a_file_stores_terms_are_kept_read_and_shown_and_a_foreign_file_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let location = Location::File(dir.path().to_path_buf());
        let read = |name: &str| read(&location, &job(name), &Threads);
        assert_eq!(read("nightly"), Ok((Overlap::Allow, None)));
        for overlap in [Overlap::Skip, Overlap::Wait, Overlap::Allow, Overlap::Skip] {
            set_terms(&location, &job("nightly"), overlap, &Threads).unwrap();
            assert_eq!(read("nightly"), Ok((overlap, None)));
        }
        let path = dir.path().join(".jobs/nightly");
        assert_eq!(std::fs::metadata(&path).unwrap().len(), RECORD as u64);
        std::fs::write(dir.path().join(".jobs/other"), "somebody's notes\n").unwrap();
        let err = set_terms(&location, &job("other"), Overlap::Skip, &Threads).unwrap_err();
        assert!(err.to_string().contains("left alone"), "{err}");
        let kept = std::fs::read_to_string(dir.path().join(".jobs/other")).unwrap();
        assert_eq!(kept, "somebody's notes\n");
        std::fs::write(&path, "retry-job-v1 overlap=sometimes").unwrap();
        let err = read("nightly").unwrap_err();
        assert!(err.contains("damaged"), "{err}");
        let mut text = Vec::new();
        std::fs::remove_file(&path).unwrap();
        set_terms(&location, &job("nightly"), Overlap::Wait, &Threads).unwrap();
        print("nightly", &location, Format::Text, &Threads, &mut text).unwrap();
        let text = String::from_utf8(text).unwrap();
        assert_eq!(
            text,
            format!(
                "job nightly in {}:\n  overlap  wait (a run that finds another in progress \
                 waits for it to end, within --max-time)\n",
                path.display()
            )
        );
    }
}
