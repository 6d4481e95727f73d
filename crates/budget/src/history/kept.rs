//! Where a job's history lives, and how a run adds to it: in the store the budget uses, so that
//! every machine that runs the job adds to the same one. On Redis, a hash of its own that the
//! budget's script updates in one atomic step; in a file store, one small file per job in the
//! store directory's `.history` (a name no budget can have), checked, locked and written as a
//! budget's file is. A history that cannot be kept changes nothing about the run: the caller
//! says so once.
//!
//! The runs' durations are kept where a version of the tool from before durations never looks,
//! so that versions can share a store: on Redis, a field of the hash of its own; in a file, a
//! record after the first two record sizes, which is all such a version reads (the second is
//! padding it trims). Such a version, writing, cuts the durations off; the counts stay.

use std::path::Path;
use std::time::Duration;

use super::{History, RECENT_RUNS, RunKind};
use crate::BudgetName;
use crate::job_file::{JobFile, keeps, padded};
use crate::redis::{Failure, RedisStore, history_key};
use crate::store::{Location, RedisAddress};
use crate::unread::{StoreFailure, Unread};
use crate::waiter::Waiter;
use retry_policy::seed::words_hash;
use retry_policy::signal::Signal;

/// The first word of a history file, naming its format.
const FORMAT: &str = "retry-history-v1";

/// The size of a history file's record, padded with spaces. The whole file (the record, its
/// padding and the durations' record) is well within one page, so that a write of it is all or
/// nothing.
const RECORD: usize = 256;

/// The first word of a history file's durations record, naming its format.
const DURATIONS_FORMAT: &str = "retry-durations-v1";

/// Where the durations' record starts: after what a version before durations reads.
const DURATIONS_AT: usize = 2 * RECORD;

/// The size of the durations' record, padded with spaces.
const DURATIONS_RECORD: usize = 1536;

/// A job's history file, in `.history` (a name no budget can have).
const HISTORY: JobFile = JobFile {
    directory: ".history",
    signature: "retry-history-",
    size: DURATIONS_AT + DURATIONS_RECORD,
    keeps: &keeps(
        "history",
        "a retry job history",
        "rewrite the job's history",
    ),
};

/// Why a run's history was not kept.
#[derive(Debug)]
pub enum Unkept {
    /// The store failed, or its file is not a history's.
    Failed(Unread),
    /// A signal that ends the run arrived while the store was waited for: the run ends by it.
    Interrupted(Signal),
}

impl From<Unread> for Unkept {
    fn from(unread: Unread) -> Self {
        match unread {
            Unread::Interrupted(signal) => Unkept::Interrupted(signal),
            failed => Unkept::Failed(failed),
        }
    }
}

impl From<Failure> for Unkept {
    fn from(failure: Failure) -> Self {
        Unread::from(failure).into()
    }
}

/// What a run's history came to: the history with the run counted, and what was wrong with the
/// one before, if it had to start over.
#[derive(Debug)]
pub struct Recorded {
    /// The history, this run counted.
    pub history: History,
    /// Why the history before was not used, if it was not.
    pub started_over: Option<String>,
}

/// Count a run of the job `job` that ended as `kind`, in the store at `location`, within
/// `latest`, waiting with `watch`'s signals in view.
pub fn record<W: Waiter>(
    location: &Location,
    job: &BudgetName,
    (kind, took): (RunKind, Duration),
    watch: &W,
    latest: Option<Duration>,
) -> Result<Recorded, Unkept> {
    match location {
        Location::File(dir) => record_in_file(dir, job, (kind, took), watch, latest),
        Location::Shared { address, .. } => {
            let run = Some((kind, took));
            let (history, damaged) = shared_history(address, job, run, watch, latest)?;
            let history = history.ok_or_else(|| {
                let kept_none = StoreFailure::Unreadable("the store kept no history".into());
                Unkept::Failed(Unread::Store(kept_none))
            })?;
            Ok(Recorded {
                history,
                started_over: damaged
                    .then(|| "the stored history was damaged, and started over".to_string()),
            })
        }
    }
}

/// The history of the job `job` in the store at `location`, changing nothing; none when there
/// is none yet.
pub fn read<W: Waiter>(
    location: &Location,
    job: &BudgetName,
    watch: &W,
) -> Result<Option<History>, Unread> {
    match location {
        Location::File(dir) => read_file(dir, job),
        Location::Shared { address, .. } => {
            match shared_history(address, job, None, watch, None)? {
                (history, false) => Ok(history),
                (_, true) => Err(Unread::Damaged {
                    at: None,
                    mend: DAMAGED,
                }),
            }
        }
    }
}

/// The history of the job `job` on the Redis server at `address`, after counting a run that
/// ended as `kind` after `took` (none: only reading it), and whether the stored one was damaged
/// and started over; none when there is none yet.
fn shared_history<W: Waiter>(
    address: &RedisAddress,
    job: &BudgetName,
    run: Option<(RunKind, Duration)>,
    watch: &W,
    latest: Option<Duration>,
) -> Result<(Option<History>, bool), Failure> {
    let mut store = RedisStore::for_history(address.clone(), job, watch);
    let run = run.map(|(kind, took)| (kind.letter(), super::millis(took)));
    let (text, damaged, durations) = store.history(run, RECENT_RUNS, latest)?;
    if text.is_empty() {
        return Ok((None, damaged));
    }
    let history = History::from_stored(&text).ok_or_else(|| {
        Failure::Failed(StoreFailure::Unreadable(format!(
            "the history it keeps ({:?}) is not one the budget's script writes",
            text.chars().take(80).collect::<String>()
        )))
    })?;
    Ok((Some(history.with_stored_durations(&durations)), damaged))
}

/// The name a job's history goes by: its `--job` name where that is a name a store can use
/// (letters, digits, `.`, `_`, `-`), else those of its characters with a hash of the whole, so
/// that any job name keeps a history of its own.
pub fn history_name(job: &str) -> BudgetName {
    if let Ok(name) = job.parse() {
        return name;
    }
    let kept: String = job
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        .take(40)
        .collect();
    let hash = words_hash(std::iter::once(job.as_bytes()));
    format!("job-{}-{hash:016x}", kept.trim_start_matches('.'))
        .parse()
        .expect("letters, digits and a hash make a name")
}

/// Where the history `job` lives at `location`, to show: its file, or its Redis key.
pub fn place(location: &Location, job: &BudgetName) -> String {
    match location {
        Location::File(dir) => HISTORY.path(dir, job).display().to_string(),
        Location::Shared { .. } => history_key(job),
    }
}

/// The jobs with a history in the file store at `location` (the first `most`, by name); none
/// for a shared store, whose keys are not listed.
pub(crate) fn jobs_with_history(location: &Location, most: usize) -> Vec<String> {
    let Location::File(dir) = location else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(HISTORY.directory_in(dir)) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .flatten()
        .filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_file()))
        .filter_map(|entry| entry.file_name().into_string().ok())
        .filter(|name| !name.starts_with('.'))
        .take(1000)
        .collect();
    names.sort();
    names.truncate(most);
    names
}

/// What a shown history that cannot be used says.
const DAMAGED: &str = "the stored history is damaged; the next run starts it over";

/// Count a run in the history file of `job` in the file store in `store`, under its lock.
fn record_in_file<W: Waiter>(
    store: &Path,
    job: &BudgetName,
    (kind, took): (RunKind, Duration),
    watch: &W,
    latest: Option<Duration>,
) -> Result<Recorded, Unkept> {
    let recorded = HISTORY.rewrite(store, job, (watch, latest), |kept| {
        let (mut history, started_over) = match kept.map(|start| parse(&start)) {
            None => (History::default(), None),
            Some(Some(history)) => (history, None),
            Some(None) => (
                History::default(),
                Some("its history was damaged, and started over".to_string()),
            ),
        };
        history.record(kind, took);
        let records = records_of(&history);
        (
            records,
            Recorded {
                history,
                started_over,
            },
        )
    })?;
    Ok(recorded)
}

/// The history file of `job` in the file store in `store`, read without the lock and changing
/// nothing.
fn read_file(store: &Path, job: &BudgetName) -> Result<Option<History>, Unread> {
    let Some(start) = HISTORY.read(store, job)? else {
        return Ok(None);
    };
    parse(&start).map(Some).ok_or_else(|| Unread::Damaged {
        at: Some(HISTORY.path(store, job)),
        mend: DAMAGED,
    })
}

/// The history the start of a history file of ours holds; none when it is damaged.
fn parse(start: &[u8]) -> Option<History> {
    let (record, durations) = start.split_at(start.len().min(DURATIONS_AT));
    let text = String::from_utf8_lossy(record);
    let stored = text
        .trim_end_matches([' ', '\n'])
        .strip_prefix(FORMAT)
        .and_then(|rest| rest.strip_prefix(' '));
    let durations = String::from_utf8_lossy(durations);
    let durations = durations
        .trim_end_matches([' ', '\n'])
        .strip_prefix(DURATIONS_FORMAT)
        .unwrap_or("-");
    stored
        .and_then(History::from_stored)
        .map(|history| history.with_stored_durations(durations))
}

/// `history`'s records: the counts' record (the format, the stored text, spaces to the record's
/// size, a newline), a record of padding, and the durations' record.
fn records_of(history: &History) -> Vec<u8> {
    let mut records = padded(&format!("{FORMAT} {}", history.stored()), RECORD);
    records.extend(padded("", RECORD));
    let durations = format!("{DURATIONS_FORMAT} {}", history.stored_durations());
    records.extend(padded(&durations, DURATIONS_RECORD));
    records
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::waiter::Threads;

    fn job(name: &str) -> BudgetName {
        name.parse().unwrap()
    }

    /// Count a run of the job `name` that ended as `kind` after a second and a half.
    fn record_run(
        location: &Location,
        name: &str,
        kind: RunKind,
        watch: &impl Waiter,
    ) -> Result<Recorded, Unkept> {
        record(
            location,
            &job(name),
            (kind, Duration::from_millis(1500)),
            watch,
            None,
        )
    }

    #[test]
    fn any_job_name_names_a_history() {
        assert_eq!(history_name("nightly-backup").as_str(), "nightly-backup");
        let spaced = history_name("nightly backup");
        assert!(
            spaced.as_str().starts_with("job-nightlybackup-"),
            "{}",
            spaced.as_str()
        );
        assert_ne!(spaced, history_name("nightly  backup"));
        assert!(
            history_name(".hidden/../x")
                .as_str()
                .starts_with("job-hidden..x-")
        );
    }

    #[test]
    fn a_history_file_counts_each_run_and_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let location = Location::File(dir.path().to_path_buf());
        for kind in [
            RunKind::Clean,
            RunKind::Flaky,
            RunKind::Failed,
            RunKind::Clean,
        ] {
            record_run(&location, "nightly", kind, &Threads).unwrap();
        }
        let history = read(&location, &job("nightly"), &Threads).unwrap().unwrap();
        assert_eq!(history.stored(), "2 1 1 cfxc");
        assert_eq!(history.stored_durations(), "1500 1500 1500 1500");
        let path = dir.path().join(".history/nightly");
        let size = (DURATIONS_AT + DURATIONS_RECORD) as u64;
        assert_eq!(std::fs::metadata(&path).unwrap().len(), size);
        assert_eq!(read(&location, &job("other"), &Threads).unwrap(), None);
    }

    #[test]
    fn a_version_before_durations_reads_the_counts_and_its_file_is_read_too() {
        let dir = tempfile::tempdir().unwrap();
        let location = Location::File(dir.path().to_path_buf());
        let run = (RunKind::Flaky, Duration::from_millis(20));
        record(&location, &job("nightly"), run, &Threads, None).unwrap();
        let path = dir.path().join(".history/nightly");
        let written = std::fs::read(&path).unwrap();
        // All such a version reads: the counts' record, then padding it trims.
        let before = String::from_utf8_lossy(&written[..2 * RECORD]);
        let stored = before.trim_end_matches([' ', '\n']);
        assert_eq!(stored, format!("{FORMAT} 0 1 0 f"));
        // What such a version writes (the counts' record alone) reads back without durations.
        std::fs::write(&path, &written[..RECORD]).unwrap();
        let history = read(&location, &job("nightly"), &Threads).unwrap().unwrap();
        assert_eq!(
            (history.stored(), history.durations().count()),
            ("0 1 0 f".into(), 0)
        );
        record(&location, &job("nightly"), run, &Threads, None).unwrap();
        let history = read(&location, &job("nightly"), &Threads).unwrap().unwrap();
        assert_eq!(history.stored_durations(), "20");
    }

    /// A waiter whose every wait a SIGTERM ends.
    struct Stopping;

    impl Waiter for Stopping {
        type Job<T: Send + 'static> = ();

        fn start_job<T: Send + 'static>(
            &self,
            _job: impl FnOnce() -> T + Send + 'static,
        ) -> std::io::Result<()> {
            Ok(())
        }

        fn await_job<T: Send + 'static>(
            &self,
            _job: (),
            _until: Option<std::time::Instant>,
        ) -> crate::waiter::Waited<T> {
            crate::waiter::Waited::Stopped(Signal::TERM)
        }
    }

    #[test]
    fn a_signal_while_the_lock_is_waited_for_is_the_runs_not_a_warning() {
        let dir = tempfile::tempdir().unwrap();
        let location = Location::File(dir.path().to_path_buf());
        record_run(&location, "a", RunKind::Clean, &Threads).unwrap();
        let held = std::fs::File::open(dir.path().join(".history/a")).unwrap();
        let _lock = nix::fcntl::Flock::lock(held, nix::fcntl::FlockArg::LockExclusive).unwrap();
        let stopped = record_run(&location, "a", RunKind::Clean, &Stopping);
        assert!(matches!(stopped, Err(Unkept::Interrupted(Signal::TERM))));
    }

    #[test]
    fn a_damaged_history_starts_over_and_a_foreign_file_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let location = Location::File(dir.path().to_path_buf());
        record_run(&location, "a", RunKind::Clean, &Threads).unwrap();
        let path = dir.path().join(".history/a");
        std::fs::write(&path, "retry-history-v1 9 9 9 zzz").unwrap();
        let recorded = record_run(&location, "a", RunKind::Failed, &Threads).unwrap();
        assert!(recorded.started_over.is_some());
        assert_eq!(recorded.history.stored(), "0 0 1 x");
        std::fs::write(&path, "all: build\n").unwrap();
        let refused = record_run(&location, "a", RunKind::Clean, &Threads).unwrap_err();
        let Unkept::Failed(why) = refused else {
            panic!("no signal came")
        };
        assert!(matches!(why, Unread::Foreign { .. }), "{why}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "all: build\n");
        for foreign in [&[0u8; RECORD][..], &[b' '; RECORD], b"\n"] {
            std::fs::write(&path, foreign).unwrap();
            let refused = record_run(&location, "a", RunKind::Clean, &Threads);
            assert!(matches!(refused, Err(Unkept::Failed(_))), "{foreign:?}");
            assert_eq!(std::fs::read(&path).unwrap(), foreign, "left as it was");
        }
    }
}
