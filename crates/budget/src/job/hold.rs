//! A run's hold on its job, which makes the runs of a job whose terms say `--overlap skip` or
//! `wait` one at a time, from before the first attempt to after the last.
//!
//! In a file store, an exclusive `flock` on the job's lock file (`.job-locks/JOB`, checked as a
//! budget's file is): the kernel gives it back when the holding process ends, however it ends,
//! so a run killed with SIGKILL frees the job at once. On Redis, a lease in the job's hash
//! `retry:budget:job:{JOB}:lease`, taken in the run's name (its `RETRY_RUN_ID`) in the same
//! step as the terms are read, for [`LEASE`]; a thread renews it every [`RENEW`] while the run
//! lives, and the run gives it back (compare-and-delete, in the script) when it ends, or when
//! the hold is dropped on a way out that did not give it back. A run killed before that
//! leaves a lease that expires within [`LEASE`].

use std::fs::File;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use nix::fcntl::{Flock, FlockArg};

use super::{JobTerms, Overlap, read_file, terms_dir, terms_of_reply};
use crate::BudgetName;
use crate::file::{BudgetFile, Keeps};
use crate::redis::{Failure, RedisStore};
use crate::store::{Location, RedisAddress};
use crate::waiter::{Threads, Waited, Waiter};
use retry_policy::signal::Signal;

/// How long a lease lasts unless it is renewed.
pub const LEASE: Duration = Duration::from_secs(6);

/// How often a run renews its lease.
const RENEW: Duration = Duration::from_secs(2);

/// How often a waiting run asks again whether the lease is free.
const ASK_AGAIN: Duration = Duration::from_millis(250);

/// The directory of a file store that holds its jobs' lock files.
const LOCKS: &str = ".job-locks";

/// A job's lock file, in the words of a refusal.
const LOCK: Keeps = Keeps {
    directory: "job lock",
    state: "a retry job's lock",
    harm: "hold every run of the job back",
    elsewhere: "choose another --job name",
    directory_option: "give --budget-store file:DIR (or XDG_STATE_HOME)",
};

/// What a run found when it went to hold its job.
#[derive(Debug)]
pub enum Holding {
    /// The job's runs may overlap: nothing is held.
    Free,
    /// The run holds the job until the hold is released or dropped.
    Held(Hold),
    /// Another run holds the job: at once (`skip`), or for as long as this run could wait
    /// (`wait`); the holder's identity, where the store knows it.
    Busy(Overlap, Option<String>),
}

/// Why a run could not learn whether it may hold its job.
#[derive(Debug, PartialEq, Eq)]
pub enum Unheld {
    /// The store failed, or its file is not a job's; the message says why.
    Failed(String),
    /// A signal that ends the run arrived while it waited: the run ends by it.
    Interrupted(Signal),
}

impl From<Failure> for Unheld {
    fn from(failure: Failure) -> Self {
        match failure {
            Failure::Failed(why) => Unheld::Failed(why),
            Failure::Interrupted(signal) => Unheld::Interrupted(signal),
        }
    }
}

/// A run's hold on its job.
#[derive(Debug)]
pub struct Hold(Held);

#[derive(Debug)]
enum Held {
    /// The lock file, locked: unlocked when dropped, which closes it.
    Machine(#[expect(dead_code, reason = "held for its drop alone")] Flock<File>),
    /// A lease on a shared store.
    Lease(Box<Lease>),
}

/// A lease on a shared store, and the thread that renews it.
#[derive(Debug)]
struct Lease {
    address: RedisAddress,
    job: BudgetName,
    run: String,
    /// Dropped to stop the renewing thread.
    renewing: Option<mpsc::Sender<()>>,
    /// Set when a renewal found the lease gone or another run's, or could not reach the store.
    lost: Arc<AtomicBool>,
    released: bool,
}

/// Hold the job `job` at `location` for the run `run` (its `RETRY_RUN_ID`), as the job's terms
/// say: nothing for `allow`; for `skip`, the hold if it is free; for `wait`, the hold once it
/// is free, waiting until `until` at the latest, awake to the signals that end a run. The terms
/// read in the same step come with it, for the rest of the run.
pub fn hold<W: Waiter>(
    location: &Location,
    job: &BudgetName,
    run: &str,
    watch: &W,
    until: Option<Instant>,
) -> Result<(Holding, JobTerms), Unheld> {
    match location {
        Location::File(dir) => {
            let terms = read_file(&terms_dir(dir).join(job.as_str())).map_err(Unheld::Failed)?;
            let holding = hold_on_machine(dir, job, terms.overlap, watch, until)?;
            Ok((holding, terms))
        }
        Location::Shared { address, .. } => hold_lease(address, job, run, watch, until),
    }
}

impl Hold {
    /// Give the job back, within `latest`; says so when the lease was lost while the run went on
    /// (the store failed to renew it, or another run took it after it expired), or could not
    /// be given back.
    pub fn release<W: Waiter>(mut self, watch: &W, latest: Option<Duration>) -> Option<String> {
        match &mut self.0 {
            Held::Machine(_) => None,
            Held::Lease(lease) => lease.release(watch, latest),
        }
    }
}

/// The job's lock file on this machine, as its `overlap` says.
fn hold_on_machine<W: Waiter>(
    dir: &std::path::Path,
    job: &BudgetName,
    overlap: Overlap,
    watch: &W,
    until: Option<Instant>,
) -> Result<Holding, Unheld> {
    if overlap == Overlap::Allow {
        return Ok(Holding::Free);
    }
    let file = BudgetFile::check_keeping(&dir.join(LOCKS), job, LOCK)
        .map_err(|refused| Unheld::Failed(refused.0))?;
    let failed = |err: std::io::Error| Unheld::Failed(format!("{}: {err}", file.path().display()));
    let opened = file.open().map_err(failed)?;
    match Flock::lock(opened, FlockArg::LockExclusiveNonblock) {
        Ok(locked) => return Ok(Holding::Held(Hold(Held::Machine(locked)))),
        Err((_, nix::errno::Errno::EWOULDBLOCK)) if overlap == Overlap::Skip => {
            return Ok(Holding::Busy(overlap, None));
        }
        Err((_, nix::errno::Errno::EWOULDBLOCK)) => {}
        Err((_, errno)) => return Err(failed(errno.into())),
    }
    // The thread opens the file anew: if nobody waits for it any more, the lock it gets goes
    // away with the file when the thread ends, or with the process.
    let reopened = file.open().map_err(failed)?;
    let waited = watch.run_job(until, move || {
        Flock::lock(reopened, FlockArg::LockExclusive).map_err(|(_, errno)| errno)
    });
    match waited.map_err(failed)? {
        Waited::Done(Ok(locked)) => Ok(Holding::Held(Hold(Held::Machine(locked)))),
        Waited::Done(Err(errno)) => Err(failed(errno.into())),
        Waited::Stopped(signal) => Err(Unheld::Interrupted(signal)),
        Waited::TimedOut => Ok(Holding::Busy(overlap, None)),
    }
}

/// The job's lease on a shared store, its terms read in the same step.
fn hold_lease<W: Waiter>(
    address: &RedisAddress,
    job: &BudgetName,
    run: &str,
    watch: &W,
    until: Option<Instant>,
) -> Result<(Holding, JobTerms), Unheld> {
    let mut store = RedisStore::for_job(address.clone(), job, watch);
    loop {
        let latest = until.map(|until| until.saturating_duration_since(Instant::now()));
        let reply = store.job("job_hold", run, LEASE, latest)?;
        let state = reply[2].clone();
        let (terms, holder) = terms_of_reply(reply);
        let overlap = terms.overlap;
        let holding = match state.as_str() {
            "held" => Holding::Held(Hold(Held::Lease(Box::new(Lease::start(address, job, run))))),
            "busy" if overlap == Overlap::Wait && has_time_for(until, ASK_AGAIN) => {
                pause(watch, ASK_AGAIN)?;
                continue;
            }
            // A run that gave up waiting ends at its deadline, never a moment before it: the
            // rest of its time is too short for another question, not for the answer.
            "busy" if overlap == Overlap::Wait => {
                let rest = until.map_or(Duration::ZERO, |until| {
                    until.saturating_duration_since(Instant::now())
                });
                pause(watch, rest)?;
                Holding::Busy(overlap, holder)
            }
            "busy" => Holding::Busy(overlap, holder),
            _ => Holding::Free,
        };
        return Ok((holding, terms));
    }
}

/// Whether there is more than `pause` before `until`.
fn has_time_for(until: Option<Instant>, pause: Duration) -> bool {
    until.is_none_or(|until| until.saturating_duration_since(Instant::now()) > pause)
}

/// Wait for `pause`, awake to the signals that end a run.
fn pause<W: Waiter>(watch: &W, pause: Duration) -> Result<(), Unheld> {
    let until = Instant::now() + pause;
    let waited = watch
        .run_job(Some(until), move || std::thread::sleep(pause + pause))
        .map_err(|err| Unheld::Failed(format!("cannot start a thread: {err}")))?;
    match waited {
        Waited::Stopped(signal) => Err(Unheld::Interrupted(signal)),
        Waited::Done(()) | Waited::TimedOut => Ok(()),
    }
}

impl Lease {
    /// The lease just taken, and the thread that renews it.
    fn start(address: &RedisAddress, job: &BudgetName, run: &str) -> Lease {
        let (renewing, stop) = mpsc::channel::<()>();
        let lost = Arc::new(AtomicBool::new(false));
        let (renewer, noted) = (
            RedisStore::for_job(address.clone(), job, &Threads),
            lost.clone(),
        );
        let run_id = run.to_string();
        let started = std::thread::Builder::new()
            .name("retry-lease".into())
            .spawn(move || renew(renewer, &run_id, &stop, &noted));
        if started.is_err() {
            lost.store(true, Ordering::Relaxed);
        }
        Lease {
            address: address.clone(),
            job: job.clone(),
            run: run.to_string(),
            renewing: Some(renewing),
            lost,
            released: false,
        }
    }

    /// Stop renewing, and give the lease back within `latest`.
    fn release<W: Waiter>(&mut self, watch: &W, latest: Option<Duration>) -> Option<String> {
        self.renewing = None;
        self.released = true;
        let mut store = RedisStore::for_job(self.address.clone(), &self.job, watch);
        let given_back = store.job("job_release", &self.run, LEASE, latest);
        let lost = self.lost.load(Ordering::Relaxed);
        match (given_back, lost) {
            (Ok(_), false) => None,
            (Ok(_), true) => Some(format!(
                "job {}: its lease could not be kept for the whole run (the store failed to \
                 renew it), so another run may have started meanwhile",
                self.job.as_str()
            )),
            (Err(Failure::Failed(why)), _) => Some(format!(
                "job {}: cannot give its lease back ({why}); it expires within {}",
                self.job.as_str(),
                retry_policy::duration::format_duration(LEASE)
            )),
            (Err(Failure::Interrupted(_)), _) => None,
        }
    }
}

/// A hold dropped on a way out that did not release it gives its lease back all the same,
/// within the store's call limit.
impl Drop for Lease {
    fn drop(&mut self) {
        if !self.released {
            let _ = self.release(&Threads, Some(self.address.call_limit()));
        }
    }
}

/// Renew the run's lease every [`RENEW`] until `stop` ends; note in `lost` a renewal that
/// found the lease gone or could not reach the store.
fn renew(
    mut store: RedisStore<'static, Threads>,
    run: &str,
    stop: &mpsc::Receiver<()>,
    lost: &AtomicBool,
) {
    while let Err(RecvTimeoutError::Timeout) = stop.recv_timeout(RENEW) {
        match store.job("job_renew", run, LEASE, None) {
            Ok([_, _, state, _]) if state == "held" => {}
            _ => lost.store(true, Ordering::Relaxed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::set_terms;
    use crate::job::tests::overlap;
    use crate::redis::redis_server::RedisServer;

    fn shared(server: &RedisServer) -> (Location, RedisAddress) {
        let address = crate::store::redis_address(&server.patient_url());
        let location = Location::Shared {
            address: address.clone(),
            fallback: Ok(std::env::temp_dir()),
        };
        (location, address)
    }

    fn soon(seconds: u64) -> Option<Instant> {
        Some(Instant::now() + Duration::from_secs(seconds))
    }

    #[test]
    fn a_shared_stores_terms_change_one_at_a_time_and_a_damaged_one_is_the_default() {
        use crate::job::{TermsChange, read};
        let server = RedisServer::on_socket();
        let (location, address) = shared(&server);
        let job: BudgetName = "nightly".parse().unwrap();
        let read = || read(&location, &job, &Threads).unwrap().0;
        assert_eq!(read(), JobTerms::default());
        let alert_after = TermsChange {
            overlap: None,
            alert_after: Some(4),
        };
        set_terms(&location, &job, alert_after, &Threads).unwrap();
        set_terms(&location, &job, overlap(Overlap::Wait), &Threads).unwrap();
        let expected = JobTerms {
            overlap: Overlap::Wait,
            alert_after: 4,
        };
        assert_eq!(read(), expected);
        // What the run's hold reads is the same terms.
        let (_, held_with) = super::hold(&location, &job, "a", &Threads, None).unwrap();
        assert_eq!(held_with, expected);
        let raw = crate::resp::Connection::open(&address, Duration::from_secs(2));
        raw.unwrap()
            .call(&[b"HSET", b"retry:budget:job:{nightly}", b"alert_after", b"0"])
            .unwrap();
        assert_eq!(read().alert_after, 1);
    }

    #[test]
    fn a_lease_is_one_runs_until_it_is_given_back_or_expires() {
        let server = RedisServer::on_socket();
        let (location, address) = shared(&server);
        let job: BudgetName = "nightly".parse().unwrap();
        let hold = |run: &str, until| {
            let (holding, _) = super::hold(&location, &job, run, &Threads, until).unwrap();
            holding
        };
        // Allow, the default: nothing is held.
        assert!(matches!(hold("a", None), Holding::Free));
        set_terms(&location, &job, overlap(Overlap::Skip), &Threads).unwrap();
        let Holding::Held(first) = hold("a", None) else {
            panic!("a free job is held")
        };
        let Holding::Busy(Overlap::Skip, Some(holder)) = hold("b", None) else {
            panic!("a held job is busy")
        };
        assert_eq!(holder, "a");
        assert_eq!(first.release(&Threads, None), None);
        let Holding::Held(second) = hold("b", None) else {
            panic!("a job given back is free")
        };
        drop(second);
        // Waiting: for as long as the run may; a lease nobody renews (its run was killed)
        // expires, and the waiting run takes the job.
        set_terms(&location, &job, overlap(Overlap::Wait), &Threads).unwrap();
        let mut store = RedisStore::for_job(address, &job, &Threads);
        let short = Duration::from_millis(300);
        store.job("job_hold", "killed", short, None).unwrap();
        let started = Instant::now();
        let Holding::Held(after) = hold("c", soon(10)) else {
            panic!("an expired lease frees the job")
        };
        assert!(started.elapsed() >= Duration::from_millis(200));
        let Holding::Busy(Overlap::Wait, _) = hold("d", Some(Instant::now() + short)) else {
            panic!("a run waits no longer than it may")
        };
        assert_eq!(after.release(&Threads, None), None);
    }

    #[test]
    fn a_machine_lock_is_one_runs_until_it_is_closed() {
        let dir = tempfile::tempdir().unwrap();
        let location = Location::File(dir.path().to_path_buf());
        let job: BudgetName = "nightly".parse().unwrap();
        let hold = |until| {
            super::hold(&location, &job, "run", &Threads, until)
                .unwrap()
                .0
        };
        assert!(matches!(hold(None), Holding::Free));
        set_terms(&location, &job, overlap(Overlap::Skip), &Threads).unwrap();
        let Holding::Held(first) = hold(None) else {
            panic!("a free job is held")
        };
        assert!(matches!(hold(None), Holding::Busy(Overlap::Skip, None)));
        drop(first);
        let Holding::Held(second) = hold(None) else {
            panic!("a lock closed frees the job")
        };
        set_terms(&location, &job, overlap(Overlap::Wait), &Threads).unwrap();
        let short = Some(Instant::now() + Duration::from_millis(200));
        assert!(matches!(hold(short), Holding::Busy(Overlap::Wait, None)));
        assert_eq!(second.release(&Threads, None), None);
        assert!(matches!(hold(soon(10)), Holding::Held(_)));
    }
}
