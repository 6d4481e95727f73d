//! A budget shared by a fleet through a store that may fail, and what its failure means.
//!
//! After one failure the store is not tried again in the run, whichever part of the run met it (a
//! job's terms, read before the run, give it to the budget as its first). With the store's
//! `fail=open` (the default) the run warns once and goes on with the file store on this machine, on
//! the terms that file holds (set there with `retry budget set --budget-store file`, else the
//! defaults); with `fail=closed`, a retry that the store cannot pay for is refused (the run gives
//! up with reason `budget`). Either way a first attempt is delayed by one call at most (the one
//! that counts it and asks the breaker), and never failed by the store: a store that cannot be
//! reached has no breaker, and a failure to count only warns.

use std::path::PathBuf;
use std::time::Duration;

use super::breaker::PROBE_LEASE;
use super::file::{BudgetFile, FileBudget};
use super::redis::{Failure, RedisStore};
use super::store::{OnFailure, RedisAddress};
use super::{BudgetName, Reservation, RetryBudget};
use crate::state_dir::NoStateHome;
use crate::unread::StoreFailure;
use crate::waiter::Waiter;
use retry_policy::causes::with_causes;
use retry_policy::outcome::Ended;
use retry_policy::run::{Admission, TokenRequest};
use retry_policy::signal::Signal;

/// The warning that the store at `address` failed (`why`) and is given up for the rest of the
/// run, and what its retries do without it.
pub(crate) fn store_given_up(
    address: &RedisAddress,
    why: &StoreFailure,
    on_failure: OnFailure,
) -> String {
    let then = match on_failure {
        OnFailure::Open => "using the file store on this machine for the rest of the run",
        OnFailure::Closed => on_failure.consequence(),
    };
    format!("retry budget store {address}: {why}; {then}")
}

/// A budget on a shared store, with the way back to this machine's file.
pub(crate) struct SharedBudget<'a, W: Waiter> {
    /// The store, until it first fails.
    store: Option<RedisStore<'a, W>>,
    /// This machine, by a hash of its name, as the breaker counts hosts.
    host: u64,
    /// Whether the budget had a breaker when the run was admitted.
    breaker: bool,
    on_failure: OnFailure,
    fallback: Fallback<'a, W>,
}

/// The file store to go on with, made only when the shared one fails.
enum Fallback<'a, W> {
    /// Not needed yet: where it would be.
    NotYet {
        dir: Result<PathBuf, NoStateHome>,
        name: BudgetName,
        watch: &'a W,
    },
    /// In use.
    File(FileBudget<'a, W>),
    /// Not to be had: the run goes on without a budget.
    Missing,
}

impl<'a, W: Waiter> SharedBudget<'a, W> {
    /// A budget on `store`, falling back as `on_failure` says to the file store in `dir`; at once
    /// without a store, which the run found failing before (and said so).
    pub(crate) fn new(
        store: Option<RedisStore<'a, W>>,
        host: u64,
        on_failure: OnFailure,
        dir: Result<PathBuf, NoStateHome>,
        name: BudgetName,
        watch: &'a W,
    ) -> Self {
        SharedBudget {
            store,
            host,
            breaker: false,
            on_failure,
            fallback: Fallback::NotYet { dir, name, watch },
        }
    }

    /// The store failed: give it up for the rest of the run, and say so once.
    fn give_up_store(&mut self, why: &StoreFailure, warn: &mut dyn FnMut(String)) {
        let Some(store) = self.store.take() else {
            return;
        };
        warn(store_given_up(store.address(), why, self.on_failure));
    }

    /// The file store to go on with, made on first use; none if it cannot be had.
    fn fallback(&mut self, warn: &mut dyn FnMut(String)) -> Option<&mut FileBudget<'a, W>> {
        if let Fallback::NotYet { dir, name, watch } = &self.fallback {
            let checked = match dir {
                Ok(dir) => BudgetFile::check(dir, name).map_err(|err| with_causes(&err)),
                Err(why) => Err(with_causes(why)),
            };
            self.fallback = match checked {
                Ok(file) => Fallback::File(FileBudget::new(file, OnFailure::Open, watch)),
                Err(why) => {
                    warn(format!(
                        "retry budget: cannot use the file store either ({why}); going on \
                         without a budget"
                    ));
                    Fallback::Missing
                }
            };
        }
        match &mut self.fallback {
            Fallback::File(file) => Some(file),
            _ => None,
        }
    }
}

impl<W: Waiter> RetryBudget for SharedBudget<'_, W> {
    fn admit(&mut self, latest: Option<Duration>, warn: &mut dyn FnMut(String)) -> Admission {
        if latest.is_some_and(|latest| latest.is_zero()) {
            // No time left to ask in; nothing failed.
            return Admission::Closed;
        }
        if let Some(store) = &mut self.store {
            let lease = latest.map_or(PROBE_LEASE, |latest| latest.min(PROBE_LEASE));
            match store.admit(latest, lease) {
                Ok((admission, breaker, damaged)) => {
                    if damaged {
                        warn(format!(
                            "retry budget store {}: the state or terms held values no run could \
                             have stored; it started again from them anew",
                            store.address()
                        ));
                    }
                    self.breaker = breaker;
                    return admission;
                }
                Err(Failure::Interrupted(signal)) => return Admission::Interrupted(signal),
                Err(Failure::Failed(why)) => self.give_up_store(&why, warn),
            }
        }
        if self.on_failure == OnFailure::Closed {
            return Admission::Closed;
        }
        match self.fallback(warn) {
            Some(file) => file.admit(latest, warn),
            None => Admission::Closed,
        }
    }

    fn finish(
        &mut self,
        ended: Ended,
        admission: Admission,
        latest: Option<Duration>,
        warn: &mut dyn FnMut(String),
    ) -> Option<Signal> {
        if let Some(store) = &mut self.store {
            if !self.breaker {
                return None;
            }
            let probe = admission == Admission::Probe;
            return match store.record(latest, self.host, ended, probe) {
                Ok(()) => None,
                Err(Failure::Interrupted(signal)) => Some(signal),
                Err(Failure::Failed(why)) => {
                    self.give_up_store(&why, warn);
                    None
                }
            };
        }
        match &mut self.fallback {
            Fallback::File(file) => file.finish(ended, admission, latest, warn),
            _ => None,
        }
    }

    fn reserve(&mut self, request: TokenRequest, warn: &mut dyn FnMut(String)) -> Reservation {
        if let Some(store) = &mut self.store {
            match store.reserve(request) {
                Ok((reservation, damaged)) => {
                    if damaged {
                        warn(format!(
                            "retry budget store {}: the state held values no run could have \
                             stored; it started again from a full bucket",
                            store.address()
                        ));
                    }
                    return reservation;
                }
                Err(Failure::Interrupted(signal)) => return Reservation::Interrupted(signal),
                Err(Failure::Failed(why)) => self.give_up_store(&why, warn),
            }
        }
        match self.on_failure {
            OnFailure::Closed => Reservation::Unavailable,
            OnFailure::Open => match self.fallback(warn) {
                Some(file) => file.reserve(request, warn),
                None => Reservation::Granted(Duration::ZERO),
            },
        }
    }
}
