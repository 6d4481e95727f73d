//! What a run learns of its job as it takes its hold, shared by the parts of the run that use
//! it: the job's terms (its pings obey them), the proof of the hold its attempts are handed
//! (`RETRY_JOB_HOLD`), and the hold itself until the run gives it back. The hold is taken and
//! given back by `overlap`; this module only keeps what it learned, so that the attempts and
//! the pings need not know how.

use std::cell::{Ref, RefCell};
use std::ffi::OsString;
use std::os::fd::OwnedFd;
use std::rc::Rc;

use retry_budget::job::{Hold, JobTerms};

/// What the hold learns of the job, shared with the parts of the run that use it.
pub(crate) type SharedJob = Rc<HeldJob>;

/// What a run learns of its job as it takes its hold.
#[derive(Debug, Default)]
pub(crate) struct HeldJob {
    /// The job's terms, read as the hold was taken (the defaults until then, for a run with no
    /// job, or a store that could not say).
    terms: RefCell<JobTerms>,
    /// `RETRY_JOB_HOLD` for the attempts, once the run holds its job: what the run was handed,
    /// with its own hold's proof (until then the attempts inherit the run's own, if any).
    handed_on: RefCell<Option<OsString>>,
    /// What the run holds, once it took it, until it gives it back.
    hold: RefCell<Option<Hold>>,
    /// The run's end of the pipe that keeps its lease's keeper going, if it started one.
    keeper: RefCell<Option<OwnedFd>>,
}

impl HeldJob {
    /// The job's terms, as the run's hold read them.
    pub(crate) fn terms(&self) -> JobTerms {
        self.terms.borrow().clone()
    }

    /// The job's terms were read as `terms`.
    pub(crate) fn set_terms(&self, terms: JobTerms) {
        *self.terms.borrow_mut() = terms;
    }

    /// The run holds the job by `hold`, whose proof the attempts are handed in `handed_on`.
    pub(crate) fn held(&self, hold: Hold, handed_on: OsString) {
        *self.handed_on.borrow_mut() = Some(handed_on);
        *self.hold.borrow_mut() = Some(hold);
    }

    /// The value of `RETRY_JOB_HOLD` for the attempts, in place of the run's own, once the run
    /// holds its job.
    pub(crate) fn handed_on(&self) -> Ref<'_, Option<OsString>> {
        self.handed_on.borrow()
    }

    /// The lease's keeper goes on while `keeper` (and every copy of it) is open.
    pub(crate) fn kept_by(&self, keeper: OwnedFd) {
        *self.keeper.borrow_mut() = Some(keeper);
    }

    /// The hold, to give back, if the run took one and has not given it back; and the run's
    /// end of its keeper's pipe, to close once it is given back.
    pub(crate) fn take_hold(&self) -> (Option<Hold>, Option<OwnedFd>) {
        (
            self.hold.borrow_mut().take(),
            self.keeper.borrow_mut().take(),
        )
    }
}
