//! A run's hold on its job, which makes the runs of a job whose terms say `--overlap skip` or
//! `wait` one at a time, from before the first attempt to after the last; it belongs to the run
//! that took it and to the runs inside its attempts ([`Hold::proof`], which only the attempts
//! are handed), and to no one else.
//!
//! In a file store, an exclusive `flock` on the job's lock file (`.job-locks/JOB`, checked as a
//! budget's file is), whose descriptor the attempts inherit, as `flock -n LOCK CMD` hands its
//! lock to its command: the kernel gives it back when the last process that has it ends, however
//! each ends, so the job stays held while the work runs, even when its run was killed with
//! SIGKILL. A run inside the attempts is shown the descriptor's number, and goes ahead when that
//! descriptor is the job's lock file.
//!
//! On Redis, a lease in the job's hash `retry:budget:job:{JOB}:lease`, taken in the run's own
//! token (random, never shown; `retry job show` shows the holder's `RETRY_RUN_ID`, which nested
//! runs share and anyone may copy), in the same step as the terms are read, for [`LEASE`]; a
//! thread renews it every [`RENEW`] while the run lives, and the run gives it back
//! (compare-and-delete, in the script) when it ends, or when the hold is dropped on a way out
//! that did not give it back. A run killed before that leaves a lease that expires within
//! [`LEASE`]. A run inside the attempts is shown the token, and goes ahead while the lease is
//! held in it.

use std::fs::File;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use std::os::fd::{AsFd, AsRawFd, RawFd};
use std::os::unix::fs::MetadataExt;

use nix::fcntl::{FcntlArg, FdFlag, Flock, FlockArg};

use super::{JobTerms, Overlap, read_file, terms_of_reply};
use crate::BudgetName;
use crate::file::BudgetFile;
use crate::job_file;
use crate::redis::{Failure, RedisStore};
use crate::store::{Location, RedisAddress};
use crate::unread::{Keeps, Unread};
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
const LOCK: Keeps = job_file::keeps(
    "job lock",
    "a retry job's lock",
    "hold every run of the job back",
);

/// Who asks for a job's hold.
#[derive(Clone, Copy, Debug)]
pub struct Claim<'a> {
    /// The run's identity (`RETRY_RUN_ID`), shown as the holder's.
    pub run_id: &'a str,
    /// A secret of the run's own, in which a lease is held: never shown.
    pub token: &'a str,
    /// The proof a run whose attempt this run is inside handed on for the job
    /// ([`Hold::proof`]), if it did.
    pub inside: Option<&'a str>,
}

/// What a run found when it went to hold its job.
#[derive(Debug)]
pub enum Holding {
    /// The job's runs may overlap: nothing is held.
    Free,
    /// The run is inside the attempts of the run that holds the job: it is part of that run,
    /// and goes ahead holding nothing.
    Inside,
    /// The run holds the job until the hold is released or dropped.
    Held(Hold),
    /// Another run holds the job: at once (`skip`), or for as long as this run could wait
    /// (`wait`); the holder's identity, where the store knows it.
    Busy(Overlap, Option<String>),
}

/// Why a run could not learn whether it may hold its job.
#[derive(Debug)]
pub enum Unheld {
    /// The store failed, or its file is not a job's.
    Failed(Unread),
    /// A signal that ends the run arrived while it waited: the run ends by it.
    Interrupted(Signal),
}

impl From<Failure> for Unheld {
    fn from(failure: Failure) -> Self {
        match failure {
            Failure::Failed(failure) => Unheld::Failed(Unread::Store(failure)),
            Failure::Interrupted(signal) => Unheld::Interrupted(signal),
        }
    }
}

/// A run's hold on its job.
#[derive(Debug)]
pub struct Hold(Held);

#[derive(Debug)]
enum Held {
    /// The lock file, locked, its descriptor inherited by the attempts: this run's share of the
    /// lock goes when it is dropped, which closes it.
    Machine(Flock<File>),
    /// A lease on a shared store.
    Lease(Box<Lease>),
}

/// A lease on a shared store, and the thread that renews it.
#[derive(Debug)]
struct Lease {
    address: RedisAddress,
    job: BudgetName,
    /// The secret it is held in.
    token: String,
    /// Dropped to stop the renewing thread.
    renewing: Option<mpsc::Sender<()>>,
    /// Set when a renewal found the lease gone or another run's, or could not reach the store.
    lost: Arc<AtomicBool>,
    released: bool,
}

/// Hold the job `job` at `location` for the run `claim` names, as the job's terms say: nothing
/// for `allow`; for `skip`, the hold if it is free; for `wait`, the hold once it is free,
/// waiting until `until` at the latest, awake to the signals that end a run; nothing for a run
/// inside the attempts of the run that holds it. The terms read in the same step come with it,
/// for the rest of the run. `waiting` is told once, as a wait begins, of the run that holds the
/// job (when the store can say).
pub fn hold<W: Waiter>(
    location: &Location,
    job: &BudgetName,
    claim: Claim<'_>,
    watch: &W,
    until: Option<Instant>,
    waiting: &mut dyn FnMut(Option<String>),
) -> Result<(Holding, JobTerms), Unheld> {
    match location {
        Location::File(dir) => {
            let terms = read_file(dir, job).map_err(Unheld::Failed)?;
            let (overlap, inside) = (terms.overlap, claim.inside);
            let holding = hold_on_machine(dir, job, overlap, inside, watch, until, waiting)?;
            Ok((holding, terms))
        }
        Location::Shared { address, .. } => hold_lease(address, job, claim, watch, until, waiting),
    }
}

/// The prefix of a proof of a lock on this machine, before its descriptor's number.
const LOCK_PROOF: &str = "lock:";

/// The prefix of a proof of a lease, before its token.
const LEASE_PROOF: &str = "lease:";

impl Hold {
    /// The secret a lease is held in, for the process that keeps it ([`keep_lease`]); none for
    /// a lock on this machine, which the attempts hold by their descriptor.
    pub fn lease_token(&self) -> Option<&str> {
        match &self.0 {
            Held::Machine(_) => None,
            Held::Lease(lease) => Some(&lease.token),
        }
    }

    /// What proves to a run inside this run's attempts that it is part of this run: the lock's
    /// descriptor, which they inherit, or the lease's token. For the attempts alone: whoever has
    /// it walks past the hold.
    pub fn proof(&self) -> String {
        match &self.0 {
            Held::Machine(lock) => format!("{LOCK_PROOF}{}", lock.as_raw_fd()),
            Held::Lease(lease) => format!("{LEASE_PROOF}{}", lease.token),
        }
    }

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

/// The job's lock file on this machine, as its `overlap` says; nothing when `inside` hands on
/// a descriptor of that very file (the run is inside the holder's attempts).
fn hold_on_machine<W: Waiter>(
    dir: &std::path::Path,
    job: &BudgetName,
    overlap: Overlap,
    inside: Option<&str>,
    watch: &W,
    until: Option<Instant>,
    waiting: &mut dyn FnMut(Option<String>),
) -> Result<Holding, Unheld> {
    if overlap == Overlap::Allow {
        return Ok(Holding::Free);
    }
    let file = BudgetFile::check_keeping(&dir.join(LOCKS), job, &LOCK)
        .map_err(|refused| Unheld::Failed(Unread::Refused(refused)))?;
    let failed = |error: std::io::Error| {
        Unheld::Failed(Unread::FileFailed {
            path: file.path().to_path_buf(),
            error,
        })
    };
    let handed_on = inside
        .and_then(|proof| proof.strip_prefix(LOCK_PROOF))
        .and_then(|number| number.parse::<RawFd>().ok());
    if handed_on.is_some_and(|number| is_the_lock(number, &file)) {
        return Ok(Holding::Inside);
    }
    let opened = file.open().map_err(failed)?;
    match Flock::lock(opened, FlockArg::LockExclusiveNonblock) {
        Ok(locked) => return handed_to_attempts(locked).map_err(failed),
        Err((_, nix::errno::Errno::EWOULDBLOCK)) if overlap == Overlap::Skip => {
            return Ok(Holding::Busy(overlap, None));
        }
        Err((_, nix::errno::Errno::EWOULDBLOCK)) => {}
        Err((_, errno)) => return Err(failed(errno.into())),
    }
    // The thread opens the file anew: if nobody waits for it any more, the lock it gets goes
    // away with the file when the thread ends, or with the process.
    let reopened = file.open().map_err(failed)?;
    waiting(None);
    let waited = watch.run_job(until, move || {
        Flock::lock(reopened, FlockArg::LockExclusive).map_err(|(_, errno)| errno)
    });
    match waited.map_err(failed)? {
        Waited::Done(Ok(locked)) => handed_to_attempts(locked).map_err(failed),
        Waited::Done(Err(errno)) => Err(failed(errno.into())),
        Waited::Stopped(signal) => Err(Unheld::Interrupted(signal)),
        Waited::TimedOut => Ok(Holding::Busy(overlap, None)),
    }
}

/// The lock `locked`, its descriptor left open across `exec`, so that every attempt holds it
/// too.
fn handed_to_attempts(locked: Flock<File>) -> std::io::Result<Holding> {
    nix::fcntl::fcntl(&*locked, FcntlArg::F_SETFD(FdFlag::empty()))?;
    Ok(Holding::Held(Hold(Held::Machine(locked))))
}

/// Whether the descriptor numbered `number` is open on the lock file `file`.
fn is_the_lock(number: RawFd, file: &BudgetFile) -> bool {
    let Ok(handed_on) = retry_sys::descriptors::duplicate_numbered(number) else {
        return false;
    };
    File::from(handed_on)
        .metadata()
        .is_ok_and(|metadata| (metadata.dev(), metadata.ino()) == file.identity())
}

/// The job's lease on a shared store, its terms read in the same step; held in the token of
/// the run `claim` names, or in the token a run whose attempt it is inside handed on.
fn hold_lease<W: Waiter>(
    address: &RedisAddress,
    job: &BudgetName,
    claim: Claim<'_>,
    watch: &W,
    until: Option<Instant>,
    waiting: &mut dyn FnMut(Option<String>),
) -> Result<(Holding, JobTerms), Unheld> {
    let mut store = RedisStore::for_job(address.clone(), job, watch);
    let handed_on = claim
        .inside
        .and_then(|proof| proof.strip_prefix(LEASE_PROOF));
    let token = handed_on.unwrap_or(claim.token);
    let asking = format!("{token} {}", claim.run_id);
    let mut told = false;
    loop {
        let latest = until.map(|until| until.saturating_duration_since(Instant::now()));
        let reply = store.job("job_hold", &asking, LEASE, latest)?;
        let state = reply[2].clone();
        let (terms, holder) = terms_of_reply(reply);
        let overlap = terms.overlap;
        if state == "busy" && overlap == Overlap::Wait && !std::mem::replace(&mut told, true) {
            waiting(holder.clone());
        }
        let holding = match state.as_str() {
            "held" => {
                let lease = Lease::start(address, job, token);
                Holding::Held(Hold(Held::Lease(Box::new(lease))))
            }
            "inside" => Holding::Inside,
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
        .map_err(|err| Unheld::Failed(Unread::NoThread(err)))?;
    match waited {
        Waited::Stopped(signal) => Err(Unheld::Interrupted(signal)),
        Waited::Done(()) | Waited::TimedOut => Ok(()),
    }
}

impl Lease {
    /// The lease just taken, and the thread that renews it.
    fn start(address: &RedisAddress, job: &BudgetName, token: &str) -> Lease {
        let (renewing, stop) = mpsc::channel::<()>();
        let lost = Arc::new(AtomicBool::new(false));
        let (renewer, noted) = (
            RedisStore::for_job(address.clone(), job, &Threads),
            lost.clone(),
        );
        let renewed = token.to_string();
        let started = std::thread::Builder::new()
            .name("retry-lease".into())
            .spawn(move || renew(renewer, &renewed, &stop, &noted));
        if started.is_err() {
            lost.store(true, Ordering::Relaxed);
        }
        Lease {
            address: address.clone(),
            job: job.clone(),
            token: token.to_string(),
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
        let given_back = store.job("job_release", &self.token, LEASE, latest);
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

/// Keep the lease held in `token` on the job `job` at `address` for as long as `alive` is open
/// for writing anywhere: renew it every two seconds, and once every process that could write to
/// `alive` has ended (the run, and its attempts, which inherit it), give it back. Whatever is
/// written to `alive` is read and ignored. Returns when the lease has been given back, or was
/// lost (another run holds it, or the store failed to renew it in time). For a process of its
/// own, which outlives a run killed with SIGKILL while its attempts go on: the lease then lasts
/// as long as they do.
pub fn keep_lease(address: &RedisAddress, job: &BudgetName, token: &str, alive: &impl AsFd) {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    let mut store = RedisStore::for_job(address.clone(), job, &Threads);
    let renew_every = PollTimeout::try_from(RENEW).unwrap_or(PollTimeout::MAX);
    let mut ignored = [0u8; 64];
    loop {
        let mut ready = [PollFd::new(alive.as_fd(), PollFlags::POLLIN)];
        match poll(&mut ready, renew_every) {
            Ok(0) => match store.job("job_renew", token, LEASE, None) {
                Ok([_, _, state, ..]) if state == "held" => {}
                _ => return,
            },
            Ok(_) => match nix::unistd::read(alive.as_fd(), &mut ignored) {
                Ok(0) | Err(_) => {
                    let _ = store.job("job_release", token, LEASE, Some(address.call_limit()));
                    return;
                }
                Ok(_) => {}
            },
            Err(nix::errno::Errno::EINTR) => {}
            Err(_) => return,
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

/// Renew the lease held in `token` every [`RENEW`] until `stop` ends; note in `lost` a renewal
/// that found the lease gone or could not reach the store.
fn renew(
    mut store: RedisStore<'static, Threads>,
    token: &str,
    stop: &mpsc::Receiver<()>,
    lost: &AtomicBool,
) {
    while let Err(RecvTimeoutError::Timeout) = stop.recv_timeout(RENEW) {
        match store.job("job_renew", token, LEASE, None) {
            Ok([_, _, state, ..]) if state == "held" => {}
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

    /// The claim of a run whose identity and token are both `run`, inside no other.
    fn claim(run: &str) -> Claim<'_> {
        Claim {
            run_id: run,
            token: run,
            inside: None,
        }
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
            schedule: None,
        };
        set_terms(&location, &job, alert_after, &Threads).unwrap();
        set_terms(&location, &job, overlap(Overlap::Wait), &Threads).unwrap();
        let expected = JobTerms {
            overlap: Overlap::Wait,
            alert_after: 4,
            schedule: None,
        };
        assert_eq!(read(), expected);
        // What the run's hold reads is the same terms.
        let (_, held_with) =
            super::hold(&location, &job, claim("a"), &Threads, None, &mut |_| {}).unwrap();
        assert_eq!(held_with, expected);
        let raw = retry_redis::Connection::open(&address, Duration::from_secs(2));
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
            let (holding, _) =
                super::hold(&location, &job, claim(run), &Threads, until, &mut |_| {}).unwrap();
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
        let mut told = Vec::new();
        let until = Some(Instant::now() + short);
        let waited = super::hold(
            &location,
            &job,
            claim("d"),
            &Threads,
            until,
            &mut |holder| told.push(holder),
        );
        let Ok((Holding::Busy(Overlap::Wait, _), _)) = waited else {
            panic!("a run waits no longer than it may")
        };
        assert_eq!(told, [Some("c".to_string())], "told once, of the holder");
        assert_eq!(after.release(&Threads, None), None);
    }

    #[test]
    fn a_machine_lock_is_one_runs_until_it_is_closed() {
        let dir = tempfile::tempdir().unwrap();
        let location = Location::File(dir.path().to_path_buf());
        let job: BudgetName = "nightly".parse().unwrap();
        let hold = |until| {
            super::hold(&location, &job, claim("run"), &Threads, until, &mut |_| {})
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
        let mut told = Vec::new();
        let waited = super::hold(
            &location,
            &job,
            claim("run"),
            &Threads,
            short,
            &mut |holder| told.push(holder),
        );
        assert!(matches!(
            waited,
            Ok((Holding::Busy(Overlap::Wait, None), _))
        ));
        assert_eq!(told, [None], "told once, with no holder to name");
        assert_eq!(second.release(&Threads, None), None);
        assert!(matches!(hold(soon(10)), Holding::Held(_)));
    }

    #[test]
    fn a_lease_is_its_runs_token_and_its_attempts_not_whoever_shares_its_identity() {
        let server = RedisServer::on_socket();
        let (location, _) = shared(&server);
        let job: BudgetName = "deploy".parse().unwrap();
        set_terms(&location, &job, overlap(Overlap::Skip), &Threads).unwrap();
        let hold = |claim| {
            super::hold(&location, &job, claim, &Threads, None, &mut |_| {})
                .unwrap()
                .0
        };
        let outer = Claim {
            run_id: "shared-id",
            token: "t1",
            inside: None,
        };
        let Holding::Held(first) = hold(outer) else {
            panic!("a free job is held")
        };
        let proof = first.proof();
        assert_eq!(proof, "lease:t1");
        // Another run with the same identity (a sibling inside one outer run, or a copy of what
        // `retry job show` prints) is kept out, and shown the holder's identity.
        let sibling = Claim {
            token: "t2",
            ..outer
        };
        let Holding::Busy(_, Some(shown)) = hold(sibling) else {
            panic!("a run that shares an identity is kept out")
        };
        assert_eq!(shown, "shared-id");
        // A run inside the holder's attempts, handed its proof, goes ahead holding nothing.
        let inside = Claim {
            run_id: "inner",
            token: "t3",
            inside: Some(&proof),
        };
        assert!(matches!(hold(inside), Holding::Inside));
        assert!(matches!(hold(sibling), Holding::Busy(..)), "still held");
        assert_eq!(first.release(&Threads, None), None);
        assert!(matches!(hold(sibling), Holding::Held(_)));
    }

    #[test]
    fn a_machine_lock_is_handed_to_the_attempts_and_known_by_them() {
        let dir = tempfile::tempdir().unwrap();
        let location = Location::File(dir.path().to_path_buf());
        let job: BudgetName = "deploy".parse().unwrap();
        set_terms(&location, &job, overlap(Overlap::Skip), &Threads).unwrap();
        let hold = |claim| {
            super::hold(&location, &job, claim, &Threads, None, &mut |_| {})
                .unwrap()
                .0
        };
        let Holding::Held(first) = hold(claim("outer")) else {
            panic!("a free job is held")
        };
        let proof = first.proof();
        let number: RawFd = proof.strip_prefix("lock:").unwrap().parse().unwrap();
        let Hold(Held::Machine(lock)) = &first else {
            panic!("a lock on this machine")
        };
        // Its descriptor stays open across exec, for the attempts.
        let flags = nix::fcntl::fcntl(&**lock, FcntlArg::F_GETFD).unwrap();
        assert_eq!(flags & libc::FD_CLOEXEC, 0);
        assert_eq!(lock.as_raw_fd(), number);
        let inside = Claim {
            inside: Some(&proof),
            ..claim("inner")
        };
        assert!(matches!(hold(inside), Holding::Inside));
        // A descriptor of another file proves nothing.
        let other = std::fs::File::open("/dev/null").unwrap();
        let forged = format!("lock:{}", other.as_raw_fd());
        let forged = Claim {
            inside: Some(&forged),
            ..claim("other")
        };
        assert!(matches!(hold(forged), Holding::Busy(..)));
        drop(first);
        assert!(matches!(hold(claim("next")), Holding::Held(_)));
    }
}
