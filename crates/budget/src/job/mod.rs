//! A job's terms, which `retry job set NAME --overlap skip|wait|allow --alert-after N
//! --schedule CRON` keeps
//! where the job's history lives (the store its runs' budget uses), so that every run of the
//! job, on any machine, obeys the same ones; and `retry job show`. A run named with `--job` reads
//! its overlap before its first attempt, in the same step as it takes its hold on the job
//! (`hold`), and the failed runs in a row that alert its monitor when it ends failed.
//!
//! On Redis, a hash no budget's name can make (`retry:budget:job:{JOB}`), which nothing
//! expires. In a file store, one small file per job in the store directory's `.jobs`, checked
//! and written as a budget's file is: `retry-job-v1 overlap=skip alert_after=3`, padded to a
//! record's size (a file without `alert_after`, from before it, alerts from the first failure),
//! then the schedule's record, `retry-job-schedule-v1 */15 * * * *`, where a version from before
//! schedules never reads (it reads one record; writing, it cuts the schedule off). On Redis the
//! schedule is a field of the hash of its own, which such a version's script never touches.

mod hold;
mod schedule;

use std::io;
use std::path::Path;
use std::time::{Duration, SystemTime};

use crate::BudgetName;
use crate::error::Error;
use crate::history::history_name;
use crate::job_file::{JobFile, keeps, padded};
use crate::redis::{Failure, RedisStore};
use crate::show::{Format, ShowError, write_as};
use crate::store::Location;
use crate::unread::Unread;
use crate::waiter::Waiter;
use retry_policy::choice::Choice;
use retry_policy::printable::printable;

pub use hold::{Claim, Hold, Holding, LEASE, Unheld, hold, keep_lease};
pub use schedule::{MOST_SCHEDULE, NotASchedule, Schedule, Slot};

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

/// What a job's runs obey: whether they overlap, from which failed run in a row its monitor
/// is told of a failure, and the schedule whose next slot ends a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobTerms {
    /// Whether a run may start while another is in progress.
    pub overlap: Overlap,
    /// The failed runs in a row from which each alerts: 1 (the default) alerts every one.
    pub alert_after: u32,
    /// The job's schedule as given (`*/15 * * * *`); none for a job with none.
    pub schedule: Option<String>,
}

impl Default for JobTerms {
    fn default() -> Self {
        JobTerms {
            overlap: Overlap::Allow,
            alert_after: 1,
            schedule: None,
        }
    }
}

/// The most failed runs in a row a job's terms may wait for before alerting: its history keeps
/// the order of its last 100 runs, and no more.
pub const MOST_ALERT_AFTER: u32 = 99;

/// What `retry job set` changes of a job's terms; each term it leaves out stays as it is.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TermsChange {
    /// The overlap to keep, if any.
    pub overlap: Option<Overlap>,
    /// The failed runs in a row that alert, if any.
    pub alert_after: Option<u32>,
    /// The schedule to keep (a checked one), or `Some(None)` to keep none.
    pub schedule: Option<Option<String>>,
}

/// What a schedule of none is given and stored as.
pub const NO_SCHEDULE: &str = "none";

impl TermsChange {
    /// `terms` with this change made.
    fn applied(&self, terms: JobTerms) -> JobTerms {
        JobTerms {
            overlap: self.overlap.unwrap_or(terms.overlap),
            alert_after: self.alert_after.unwrap_or(terms.alert_after),
            schedule: self.schedule.clone().unwrap_or(terms.schedule),
        }
    }

    /// The change as the Redis script takes it: `OVERLAP ALERT_AFTER SCHEDULE`, `-` for a term
    /// left as it is and `none` for no schedule (the schedule last: it holds spaces).
    fn argument(&self) -> String {
        let overlap = self.overlap.map_or("-", Overlap::name);
        let alert_after = self
            .alert_after
            .map_or_else(|| "-".to_string(), |count| count.to_string());
        let schedule = match &self.schedule {
            None => "-",
            Some(None) => NO_SCHEDULE,
            Some(Some(schedule)) => schedule,
        };
        format!("{overlap} {alert_after} {schedule}")
    }
}

/// The first word of a job's terms file, naming its format.
const FORMAT: &str = "retry-job-v1";

/// The size of a job's terms record, padded with spaces.
const RECORD: usize = 128;

/// The first word of a job's schedule record, naming its format.
const SCHEDULE_FORMAT: &str = "retry-job-schedule-v1";

/// The size of a job's schedule record, after the terms' record, padded with spaces.
const SCHEDULE_RECORD: usize = 256;

/// A job's terms file, in `.jobs` (a name no budget can have).
const TERMS: JobFile = JobFile {
    directory: ".jobs",
    signature: "retry-job-",
    size: RECORD + SCHEDULE_RECORD,
    keeps: &keeps(
        "job",
        "a retry job's terms",
        "let runs of the job overlap, or stop them all",
    ),
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
    /// The failed runs in a row from which each alerts the job's monitor.
    alert_after: u32,
    /// The schedule whose next slot ends a run, as given.
    schedule: Option<String>,
    /// The schedule's next slot (RFC 9557, in its zone), or why there is none.
    next_slot: Option<String>,
    /// The identity (`RETRY_RUN_ID`) of the run that holds the job's lease, on a shared store.
    #[serde(skip_serializing_if = "Option::is_none")]
    running: Option<String>,
}

/// Make `change` to the terms of the job `job` at `location`, for every run of it.
pub fn set_terms<W: Waiter>(
    location: &Location,
    job: &BudgetName,
    change: TermsChange,
    watch: &W,
) -> Result<(), Error> {
    let failed = |why: Unread| Error::StoreFailed {
        what: format!("job {}", job.as_str()),
        store: place(location, job),
        why,
    };
    match location {
        Location::File(dir) => set_in_file(dir, job, change, watch).map_err(failed),
        Location::Shared { address, .. } => {
            let mut store = RedisStore::for_job(address.clone(), job, watch);
            match store.job("job_set", &change.argument(), Duration::ZERO, None) {
                Ok(_) => Ok(()),
                Err(Failure::Failed(why)) => Err(failed(Unread::Store(why))),
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
    let (terms, running) = read(location, &name, watch).map_err(|why| ShowError::Unreadable {
        what: format!("the terms of job {job}{}", location.named_if_shared()),
        why,
    })?;
    let next_slot = terms.schedule.as_deref().map(|schedule| {
        // Shown outside a run, the slot is in the schedule's CRON_TZ, else the system's zone.
        let no_run = |_: &str| None;
        match Schedule::parse(schedule, &no_run).map(|parsed| parsed.next_slot(SystemTime::now())) {
            Ok(Some(slot)) => slot.at,
            Ok(None) => "none within the next years".to_string(),
            Err(why) => format!("none: {why}"),
        }
    });
    let shown = Shown {
        job: job.to_string(),
        store: location.to_string(),
        location: place(location, &name),
        overlap: terms.overlap,
        alert_after: terms.alert_after,
        schedule: terms.schedule,
        next_slot,
        running,
    };
    write_as(format, out, &shown, write_text)
}

/// The schedule of the job `job` at `location`, if it has one: for a run of the job, whose
/// next slot is one more deadline.
pub fn schedule_of<W: Waiter>(
    location: &Location,
    job: &BudgetName,
    watch: &W,
) -> Result<Option<String>, Unread> {
    read(location, job, watch).map(|(terms, _)| terms.schedule)
}

/// The terms of the job `job` at `location`, and the run that holds its lease.
fn read<W: Waiter>(
    location: &Location,
    job: &BudgetName,
    watch: &W,
) -> Result<(JobTerms, Option<String>), Unread> {
    match location {
        Location::File(dir) => Ok((read_file(dir, job)?, None)),
        Location::Shared { address, .. } => {
            let mut store = RedisStore::for_job(address.clone(), job, watch);
            let fields = store.job("job_show", "", Duration::ZERO, None)?;
            Ok(terms_of_reply(fields))
        }
    }
}

/// The terms, and the lease's holder, in the script's reply to a job operation.
pub(crate) fn terms_of_reply(
    [overlap, holder, _, alert_after, schedule]: [String; 5],
) -> (JobTerms, Option<String>) {
    let terms = JobTerms {
        overlap: Overlap::named(&overlap).unwrap_or(Overlap::Allow),
        alert_after: alert_after
            .parse()
            .ok()
            .filter(|count| (1..=MOST_ALERT_AFTER).contains(count))
            .unwrap_or(1),
        schedule: stored_schedule(&schedule),
    };
    (terms, Some(holder).filter(|holder| !holder.is_empty()))
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
    match shown.alert_after {
        1 => writeln!(out, "  alert    from the first failed run")?,
        count => writeln!(out, "  alert    from {count} failed runs in a row")?,
    }
    if let (Some(schedule), Some(next)) = (&shown.schedule, &shown.next_slot) {
        writeln!(out, "  schedule {} (next slot {next})", printable(schedule))?;
    }
    if let Some(running) = &shown.running {
        writeln!(out, "  running  {running}, which holds the job's lease")?;
    }
    Ok(())
}

/// A schedule as a store keeps it: none for none, or for text no `retry job set` could have
/// kept (too long, a control character).
fn stored_schedule(text: &str) -> Option<String> {
    let text = text.trim();
    let plausible = !text.is_empty()
        && text != NO_SCHEDULE
        && text.len() <= MOST_SCHEDULE
        && !text.chars().any(char::is_control);
    plausible.then(|| text.to_string())
}

/// Where the terms of `job` live at `location`: its file, or its Redis key.
fn place(location: &Location, job: &BudgetName) -> String {
    match location {
        Location::File(dir) => TERMS.path(dir, job).display().to_string(),
        Location::Shared { address, .. } => {
            format!("{address}, key retry:budget:job:{{{}}}", job.as_str())
        }
    }
}

/// Make `change` to the terms file of `job` in the file store in `store`, under its lock.
fn set_in_file<W: Waiter>(
    store: &Path,
    job: &BudgetName,
    change: TermsChange,
    watch: &W,
) -> Result<(), Unread> {
    TERMS.rewrite(store, job, (watch, None), |kept| {
        // Damaged terms are written whole again: the change, and the defaults beside it.
        let kept = kept.and_then(|start| parse_record(&start));
        let terms = change.applied(kept.unwrap_or_default());
        let (overlap, alert_after) = (terms.overlap.name(), terms.alert_after);
        let mut records = padded(
            &format!("{FORMAT} overlap={overlap} alert_after={alert_after}"),
            RECORD,
        );
        if let Some(schedule) = &terms.schedule {
            records.extend(padded(
                &format!("{SCHEDULE_FORMAT} {schedule}"),
                SCHEDULE_RECORD,
            ));
        }
        (records, ())
    })
}

/// The terms the file of `job` in the file store in `store` keeps, read without the lock; the
/// defaults when there is none.
fn read_file(store: &Path, job: &BudgetName) -> Result<JobTerms, Unread> {
    let Some(start) = TERMS.read(store, job)? else {
        return Ok(JobTerms::default());
    };
    parse_record(&start).ok_or_else(|| Unread::Damaged {
        at: Some(TERMS.path(store, job)),
        mend: "its terms are damaged; set them again with retry job set",
    })
}

/// The terms a file's start holds: `retry-job-v1 overlap=MODE`, then `alert_after=N` where it
/// was set, and the schedule's record after it where there is one; none when any part of the
/// terms' record is not what `set_in_file` writes (a schedule's record that is not is no
/// schedule).
fn parse_record(start: &[u8]) -> Option<JobTerms> {
    let (record, rest) = start.split_at(start.len().min(RECORD));
    let schedule = std::str::from_utf8(rest)
        .ok()
        .and_then(|rest| rest.strip_prefix(SCHEDULE_FORMAT))
        .and_then(stored_schedule);
    let text = std::str::from_utf8(record).ok()?;
    let mut words = text.trim_end_matches([' ', '\n']).split(' ');
    if words.next() != Some(FORMAT) {
        return None;
    }
    let overlap = Overlap::named(words.next()?.strip_prefix("overlap=")?)?;
    let alert_after = match words.next() {
        None => 1,
        Some(word) => word
            .strip_prefix("alert_after=")?
            .parse()
            .ok()
            .filter(|count| (1..=MOST_ALERT_AFTER).contains(count))?,
    };
    match words.next() {
        Some(_) => None,
        None => Some(JobTerms {
            overlap,
            alert_after,
            schedule,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference::{object_keys, row_keys};
    use crate::waiter::Threads;
    use retry_policy::causes::with_causes;

    #[test]
    fn the_reference_lists_every_key() {
        let shown = Shown {
            job: "nightly".into(),
            store: "file".into(),
            location: "/s/.jobs/nightly".into(),
            overlap: Overlap::Skip,
            alert_after: 3,
            schedule: Some("*/15 * * * *".into()),
            next_slot: Some("2026-11-29T00:15:00+00:00[UTC]".into()),
            running: Some("6ba7b810-9dad-41d1-80b4-00c04fd430c8".into()),
        };
        let value = serde_json::to_value(shown).unwrap();
        assert_eq!(object_keys(&value, &[]), row_keys("job show"));
    }

    fn job(name: &str) -> BudgetName {
        name.parse().unwrap()
    }

    pub(super) fn overlap(overlap: Overlap) -> TermsChange {
        TermsChange {
            overlap: Some(overlap),
            alert_after: None,
            schedule: None,
        }
    }

    #[test]
    fn a_file_stores_terms_are_kept_read_and_shown_and_a_foreign_file_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let location = Location::File(dir.path().to_path_buf());
        let read = |name: &str| read(&location, &job(name), &Threads);
        assert_eq!(read("nightly").unwrap(), (JobTerms::default(), None));
        for mode in [Overlap::Skip, Overlap::Wait, Overlap::Allow, Overlap::Skip] {
            set_terms(&location, &job("nightly"), overlap(mode), &Threads).unwrap();
            assert_eq!(read("nightly").unwrap().0.overlap, mode);
        }
        let path = dir.path().join(".jobs/nightly");
        assert_eq!(std::fs::metadata(&path).unwrap().len(), RECORD as u64);
        std::fs::write(dir.path().join(".jobs/other"), "somebody's notes\n").unwrap();
        let err = set_terms(&location, &job("other"), overlap(Overlap::Skip), &Threads);
        assert!(with_causes(&err.unwrap_err()).contains("left alone"));
        let kept = std::fs::read_to_string(dir.path().join(".jobs/other")).unwrap();
        assert_eq!(kept, "somebody's notes\n");
        std::fs::write(&path, "retry-job-v1 overlap=sometimes").unwrap();
        let err = read("nightly").unwrap_err();
        assert!(
            matches!(err, Unread::Damaged { at: Some(ref at), .. } if *at == path),
            "{err}"
        );
        let mut text = Vec::new();
        std::fs::remove_file(&path).unwrap();
        set_terms(&location, &job("nightly"), overlap(Overlap::Wait), &Threads).unwrap();
        print("nightly", &location, Format::Text, &Threads, &mut text).unwrap();
        let text = String::from_utf8(text).unwrap();
        assert_eq!(
            text,
            format!(
                "job nightly in {}:\n  overlap  wait (a run that finds another in progress \
                 waits for it to end, within --max-time)\n  alert    from the first failed \
                 run\n",
                path.display()
            )
        );
    }

    #[test]
    fn each_term_is_changed_alone_and_a_record_from_before_alert_after_alerts_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let location = Location::File(dir.path().to_path_buf());
        let path = dir.path().join(".jobs/nightly");
        std::fs::create_dir(dir.path().join(".jobs")).unwrap();
        let mut old = b"retry-job-v1 overlap=skip".to_vec();
        old.resize(RECORD - 1, b' ');
        old.push(b'\n');
        std::fs::write(&path, &old).unwrap();
        let terms = || read(&location, &job("nightly"), &Threads).unwrap().0;
        assert_eq!(
            terms(),
            JobTerms {
                overlap: Overlap::Skip,
                alert_after: 1,
                schedule: None,
            }
        );
        let alert_after = |count| TermsChange {
            overlap: None,
            alert_after: Some(count),
            schedule: None,
        };
        set_terms(&location, &job("nightly"), alert_after(3), &Threads).unwrap();
        assert_eq!(
            terms(),
            JobTerms {
                overlap: Overlap::Skip,
                alert_after: 3,
                schedule: None,
            }
        );
        set_terms(
            &location,
            &job("nightly"),
            overlap(Overlap::Allow),
            &Threads,
        )
        .unwrap();
        assert_eq!(
            terms(),
            JobTerms {
                overlap: Overlap::Allow,
                alert_after: 3,
                schedule: None,
            }
        );
        for damaged in [
            "overlap=skip alert_after=0",
            "overlap=skip alert_after=x",
            "overlap=skip alert_after=3 more",
        ] {
            let record = format!("retry-job-v1 {damaged}");
            assert_eq!(parse_record(record.as_bytes()), None, "{record}");
        }
    }

    #[test]
    fn a_schedule_is_kept_beside_the_terms_where_a_version_before_it_never_reads() {
        let dir = tempfile::tempdir().unwrap();
        let location = Location::File(dir.path().to_path_buf());
        let schedule = |schedule: Option<&str>| TermsChange {
            schedule: Some(schedule.map(str::to_string)),
            ..TermsChange::default()
        };
        let terms = || read(&location, &job("nightly"), &Threads).unwrap().0;
        set_terms(
            &location,
            &job("nightly"),
            schedule(Some("*/15 * * * *")),
            &Threads,
        )
        .unwrap();
        set_terms(&location, &job("nightly"), overlap(Overlap::Skip), &Threads).unwrap();
        assert_eq!(terms().schedule.as_deref(), Some("*/15 * * * *"));
        assert_eq!(terms().overlap, Overlap::Skip);
        let path = dir.path().join(".jobs/nightly");
        let written = std::fs::read(&path).unwrap();
        assert_eq!(written.len(), RECORD + SCHEDULE_RECORD);
        // All a version before schedules reads, and all it writes back.
        let first = std::str::from_utf8(&written[..RECORD]).unwrap();
        assert_eq!(first.trim_end(), "retry-job-v1 overlap=skip alert_after=1");
        std::fs::write(&path, &written[..RECORD]).unwrap();
        assert_eq!(terms().schedule, None);
        set_terms(
            &location,
            &job("nightly"),
            schedule(Some("@daily")),
            &Threads,
        )
        .unwrap();
        set_terms(&location, &job("nightly"), schedule(None), &Threads).unwrap();
        assert_eq!((terms().schedule, terms().overlap), (None, Overlap::Skip));
        assert_eq!(std::fs::metadata(&path).unwrap().len(), RECORD as u64);
    }

    #[test]
    fn a_shared_stores_schedule_is_kept_and_shown_with_its_next_slot() {
        let server = crate::redis::redis_server::RedisServer::on_socket();
        let location = Location::Shared {
            address: crate::store::redis_address(server.url()),
            fallback: Ok(std::env::temp_dir()),
        };
        let change = TermsChange {
            schedule: Some(Some("CRON_TZ=UTC 0 3 * * *".into())),
            ..TermsChange::default()
        };
        set_terms(&location, &job("nightly"), change, &Threads).unwrap();
        set_terms(&location, &job("nightly"), overlap(Overlap::Wait), &Threads).unwrap();
        let schedule = schedule_of(&location, &job("nightly"), &Threads).unwrap();
        assert_eq!(schedule.as_deref(), Some("CRON_TZ=UTC 0 3 * * *"));
        let mut text = Vec::new();
        print("nightly", &location, Format::Text, &Threads, &mut text).unwrap();
        let text = String::from_utf8(text).unwrap();
        assert!(
            text.contains("  schedule CRON_TZ=UTC 0 3 * * * (next slot ")
                && text.contains("T03:00:00+00:00[UTC])"),
            "{text}"
        );
        let none = TermsChange {
            schedule: Some(None),
            ..TermsChange::default()
        };
        set_terms(&location, &job("nightly"), none, &Threads).unwrap();
        assert_eq!(
            schedule_of(&location, &job("nightly"), &Threads).unwrap(),
            None
        );
    }
}
