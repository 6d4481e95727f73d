//! One run of a job at a time: before its first attempt, a run named with `--job` takes its hold
//! on the job as the job's terms say (`retry job set NAME --overlap skip|wait`), and gives it
//! back when it ends; a run that finds another in progress makes no attempt, and exits 75 with
//! reason `overlap`. The hold itself (a lock on this machine, a lease on a shared store) is
//! `retry_budget::job`'s; this module decides what it means for the run.
//!
//! A store that cannot say whether another run is in progress does not stop the run: it is
//! said once, and the run goes on, as a run with no terms would. The job's other terms, read in
//! the same step, go on with the run.
//!
//! The hold is the run's and its attempts': `RETRY_JOB_HOLD` hands each attempt the proof of it
//! (`JOB=PROOF` entries, one for each job held around the attempt, the run's own among them),
//! so that a `retry --job` of the same job inside an attempt goes ahead as part of the run,
//! while any other run, whatever its `RETRY_RUN_ID`, is kept out.

use std::ffi::OsStr;
use std::rc::Rc;
use std::time::{Duration, Instant};

use crate::environment;
use crate::held_job::SharedJob;
use crate::lease_keeper;
use crate::lifecycle::{Ending, Observer, Stage};
use crate::options::{self, Config};
use crate::report::text::another_run;
use retry_budget::job::{self, Claim, Holding, Overlap, Unheld};
use retry_policy::causes::WithCauses;
use retry_policy::events::Event;
use retry_policy::run::{JobGate, JobTaken};
use retry_process::signals::SignalWatch;

/// A run's hold on its job: taken, as the loop asks, before the first attempt; given back when
/// the run ends.
pub(crate) struct JobHold<'r> {
    config: &'r Config,
    watch: &'r SignalWatch,
    /// What the run's attempts and observers learn of the job as the hold is taken, and the
    /// hold itself, which the run gives back as it ends ([`GiveBack`]).
    shared: SharedJob,
}

impl<'r> JobHold<'r> {
    /// The hold of the run `config` describes, on its job if it names one.
    pub(crate) fn new(config: &'r Config, watch: &'r SignalWatch) -> JobHold<'r> {
        JobHold {
            config,
            watch,
            shared: SharedJob::default(),
        }
    }

    /// Start the keeper of the lease held in `token` on `job`, so that the job stays held
    /// while the run's attempts go on, should the run be killed; `warn` is told if it cannot.
    fn keep(&self, token: &str, job: &str, warn: &mut dyn FnMut(String)) {
        match lease_keeper::start(token, job, self.config.store_flag.as_deref(), self.watch) {
            Ok(keeper) => self.shared.kept_by(keeper),
            Err(err) => warn(format!(
                "job {job}: cannot start the keeper of its lease ({err}); should this run be \
                 killed, its lease expires within {} even if its command still runs",
                retry_policy::duration::format_duration(job::LEASE)
            )),
        }
    }

    /// What the run learns of its job as the hold is taken.
    pub(crate) fn shared(&self) -> SharedJob {
        Rc::clone(&self.shared)
    }
}

impl JobGate for JobHold<'_> {
    fn take(&mut self, until: Option<Instant>, tell: &mut dyn FnMut(Event)) -> JobTaken {
        let Some(place) = self.config.history.as_ref() else {
            return JobTaken::Go;
        };
        let (run_id, token) = (
            self.config.run_id.to_string(),
            options::new_id().to_string(),
        );
        let job = place.job.as_str();
        // Read only by a run of a job: an outer run's hold passes through to the others.
        let handed = environment::own(environment::JOB_HOLD.name);
        let handed = handed.as_deref().and_then(OsStr::to_str);
        let claim = Claim {
            run_id: &run_id,
            token: &token,
            inside: handed.and_then(|handed| proof(handed, job)),
        };
        let waiting = &mut |holder| {
            tell(Event::JobWait {
                job: self.config.job.clone(),
                holder,
            })
        };
        match job::hold(
            &place.location,
            &place.job,
            claim,
            self.watch,
            until,
            waiting,
        ) {
            Ok((holding, terms)) => {
                self.shared.set_terms(terms);
                match holding {
                    Holding::Free | Holding::Inside => JobTaken::Go,
                    Holding::Held(hold) => {
                        let entries = with_proof(handed.unwrap_or_default(), job, &hold.proof());
                        if let Some(token) = hold.lease_token() {
                            self.keep(token, job, &mut |message| tell(Event::Warning(message)));
                        }
                        self.shared.held(hold, entries.into());
                        JobTaken::Go
                    }
                    Holding::Busy(overlap, holder) => JobTaken::Busy(busy(job, overlap, holder)),
                }
            }
            Err(Unheld::Interrupted(signal)) => JobTaken::Interrupted(signal),
            Err(Unheld::Failed(why)) => {
                let why = WithCauses(&why);
                tell(Event::Warning(format!(
                    "job {job}: cannot tell whether another run is in progress ({why}); the run \
                     goes on as if its runs may overlap"
                )));
                JobTaken::Go
            }
        }
    }
}

/// Giving the job back as the run ends, within the time left before its deadline: an
/// observer of the run.
pub(crate) struct GiveBack(SharedJob);

impl JobHold<'_> {
    /// What gives the job back as the run ends.
    pub(crate) fn give_back(&self) -> GiveBack {
        GiveBack(self.shared())
    }
}

impl Observer for GiveBack {
    fn stage(&self) -> Stage {
        Stage::GiveBack
    }

    /// Give the job back; a lease that was lost on the way is said.
    fn finish(self: Box<Self>, ending: &mut Ending<'_>) {
        let (Some(hold), _keeper) = self.0.take_hold() else {
            return;
        };
        let latest = ending
            .deadline
            .map(|deadline| deadline.saturating_duration_since(Instant::now()));
        // A run at its deadline still gives its lease back, with the grace an end file gets.
        let latest = latest.map(|left| left.max(Duration::from_millis(500)));
        if let Some(why) = hold.release(ending.watch, latest) {
            ending.warn(why);
        }
    }
}

/// The proof `handed` (a `RETRY_JOB_HOLD`) holds for `job`, if any.
fn proof<'h>(handed: &'h str, job: &str) -> Option<&'h str> {
    handed
        .split(' ')
        .find_map(|entry| entry.strip_prefix(job)?.strip_prefix('='))
}

/// `handed` (a `RETRY_JOB_HOLD`) with `proof` as `job`'s, in place of any it had.
fn with_proof(handed: &str, job: &str, proof: &str) -> String {
    let others = handed
        .split(' ')
        .filter(|entry| !entry.is_empty())
        .filter(|entry| entry.split_once('=').is_none_or(|(name, _)| name != job));
    let mine = format!("{job}={proof}");
    others.chain([mine.as_str()]).collect::<Vec<_>>().join(" ")
}

/// Why a run of `job`, which another run holds, makes no attempt.
fn busy(job: &str, overlap: Overlap, holder: Option<String>) -> String {
    let other = another_run(job, holder.as_deref());
    match overlap {
        Overlap::Wait => format!("{other} was still in progress at the deadline"),
        _ => format!("{other} is in progress"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_job_held_around_an_attempt_has_one_proof_and_the_runs_own_replaces_its_jobs() {
        let handed = "deploy=lock:5 nightly=lease:abc";
        assert_eq!(proof(handed, "nightly"), Some("lease:abc"));
        assert_eq!(proof(handed, "deploy"), Some("lock:5"));
        assert_eq!(proof(handed, "night"), None);
        assert_eq!(proof("", "deploy"), None);
        assert_eq!(
            with_proof(handed, "deploy", "lock:7"),
            "nightly=lease:abc deploy=lock:7"
        );
        assert_eq!(with_proof("", "sync", "lease:x"), "sync=lease:x");
    }
}
