//! The retry budget: tokens shared by every run that names the budget, as the Amazon Builders'
//! Library article "Timeouts, retries and backoff with jitter" describes, and as Finagle's and
//! gRPC's retry budgets earn them from traffic.
//!
//! The arithmetic is in `model`, pure; where the budget lives is a store's business: `file`, a
//! file on this machine, or `redis`, one hash on a Redis (or Valkey) server that a fleet shares,
//! with `shared` deciding what happens when that server cannot be reached. `store` is the
//! address of a budget, shown without its password; `show` is `retry budget show`. This file
//! holds what they share: the budget a run consults, and the words of a reservation.

pub(crate) mod file;
pub(crate) mod model;
pub(crate) mod redis;
mod resp;
mod script;
pub(crate) mod shared;
pub(crate) mod show;
pub(crate) mod store;

use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

pub(crate) use model::Rate;

use crate::duration::format_duration;
use crate::names::Named;
use crate::signals::{Signal, SignalWatch};
use file::{BudgetFile, FileBudget};
use model::Terms;
use redis::RedisStore;
use shared::SharedBudget;
use store::{Location, OnFailure, RedisAddress};

/// A shared retry budget, as a run's options give it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct BudgetSettings {
    pub(crate) name: BudgetName,
    pub(crate) terms: Terms,
    pub(crate) location: Location,
    pub(crate) on_failure: OnFailure,
}

impl BudgetSettings {
    /// The budget as the plan's header names it: its name, its terms, and a shared store.
    pub(crate) fn describe(&self) -> String {
        let terms = &self.terms;
        let mut text = format!("{} at {}", self.name.as_str(), terms.rate);
        if let Some(ratio) = terms.ratio {
            text += &format!(
                " plus {ratio} per first attempt over {}",
                format_duration(terms.window)
            );
        }
        if let Location::Shared { address, .. } = &self.location {
            text += &format!(" in {address} ({} when it fails)", Named(self.on_failure));
        }
        text
    }

    /// The budget, its file checked when the file store keeps it: one that cannot be used says
    /// why, for the run to warn of it and go on as `--budget-store-fail` says.
    pub(crate) fn prepare(&self) -> Prepared {
        let (terms, on_failure) = (self.terms, self.on_failure);
        match &self.location {
            Location::File(dir) => match BudgetFile::check(dir, &self.name) {
                Ok(file) => Prepared::File {
                    file,
                    terms,
                    on_failure,
                },
                Err(file::Refused(why)) => Prepared::Unusable { why, on_failure },
            },
            Location::Shared { address, fallback } => Prepared::Shared {
                address: address.clone(),
                on_failure,
                dir: fallback.clone(),
                name: self.name.clone(),
                terms,
            },
        }
    }
}

/// A budget checked before the run, to be opened once the run's signals are watched.
pub(crate) enum Prepared {
    /// On this machine, in this file.
    File {
        file: BudgetFile,
        terms: Terms,
        on_failure: OnFailure,
    },
    /// One that cannot be used, and why: the run goes on as `on_failure` says.
    Unusable { why: String, on_failure: OnFailure },
    /// On a shared store, falling back as `on_failure` says to the file store in `dir`.
    Shared {
        address: RedisAddress,
        on_failure: OnFailure,
        dir: Option<PathBuf>,
        name: BudgetName,
        terms: Terms,
    },
}

/// The budget of a run.
pub(crate) enum Budget<'a> {
    File(FileBudget<'a>),
    Shared(Box<SharedBudget<'a>>),
    /// None to be had, which the run was warned of: each retry is as `--budget-store-fail` says.
    Unusable(OnFailure),
}

impl Prepared {
    /// The budget, its waits awake to `watch`'s signals.
    pub(crate) fn open(self, watch: &SignalWatch) -> Budget<'_> {
        match self {
            Prepared::File {
                file,
                terms,
                on_failure,
            } => Budget::File(FileBudget::new(file, terms, on_failure, watch)),
            Prepared::Unusable { on_failure, .. } => Budget::Unusable(on_failure),
            Prepared::Shared {
                address,
                on_failure,
                dir,
                name,
                terms,
            } => {
                let store = RedisStore::new(address, &name, Some(watch));
                let budget = SharedBudget::new(store, on_failure, dir, name, terms, watch);
                Budget::Shared(Box::new(budget))
            }
        }
    }
}

impl RetryBudget for Budget<'_> {
    fn start_first_attempt(&mut self, latest: Option<Duration>) {
        if let Budget::Shared(budget) = self {
            budget.start_first_attempt(latest);
        }
    }

    fn first_attempt(&mut self, latest: Option<Duration>, warn: &mut dyn FnMut(String)) -> Counted {
        match self {
            Budget::File(budget) => budget.first_attempt(latest, warn),
            Budget::Shared(budget) => budget.first_attempt(latest, warn),
            Budget::Unusable(_) => Counted::Done,
        }
    }

    fn reserve(&mut self, latest: Option<Duration>, warn: &mut dyn FnMut(String)) -> Reservation {
        match self {
            Budget::File(budget) => budget.reserve(latest, warn),
            Budget::Shared(budget) => budget.reserve(latest, warn),
            Budget::Unusable(on_failure) => on_failure.reservation(),
        }
    }
}

/// The answer to a request for a token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reservation {
    /// The retry may go after this delay (zero when a token is there).
    Granted(Duration),
    /// No token would be there within the time allowed.
    Refused,
    /// The budget cannot be used (its store fails, its file cannot be trusted), and
    /// `--budget-store-fail closed` makes that no token.
    Unavailable,
    /// A signal that ends the run arrived while the budget was being consulted.
    Interrupted(Signal),
}

/// Whether a first attempt was counted: a signal that ends the run may arrive meanwhile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Counted {
    /// Counted, or not for a reason the budget has already warned about.
    Done,
    /// A signal that ends the run arrived while the budget was being consulted.
    Interrupted(Signal),
}

/// Where retry tokens come from. `latest` bounds every call: the time left before `--max-time`
/// (no limit when `None`); what the user should know about the budget goes to `warn`.
pub(crate) trait RetryBudget {
    /// The run's first attempt is about to start: a budget whose count takes a round trip may
    /// start it now, to go on while the attempt runs.
    fn start_first_attempt(&mut self, _latest: Option<Duration>) {}
    /// Count the run's first attempt, which earns tokens with `--budget-ratio` (or take the
    /// answer to the count `start_first_attempt` started).
    fn first_attempt(&mut self, latest: Option<Duration>, warn: &mut dyn FnMut(String)) -> Counted;
    /// Take a token for a retry that must start within `latest`.
    fn reserve(&mut self, latest: Option<Duration>, warn: &mut dyn FnMut(String)) -> Reservation;
}

/// No budget: every retry may go at once.
impl<B: RetryBudget> RetryBudget for Option<B> {
    fn start_first_attempt(&mut self, latest: Option<Duration>) {
        if let Some(budget) = self {
            budget.start_first_attempt(latest);
        }
    }

    fn first_attempt(&mut self, latest: Option<Duration>, warn: &mut dyn FnMut(String)) -> Counted {
        match self {
            Some(budget) => budget.first_attempt(latest, warn),
            None => Counted::Done,
        }
    }

    fn reserve(&mut self, latest: Option<Duration>, warn: &mut dyn FnMut(String)) -> Reservation {
        match self {
            Some(budget) => budget.reserve(latest, warn),
            None => Reservation::Granted(Duration::ZERO),
        }
    }
}

/// `--budget-ratio R`: tokens earned per first attempt, more than 0 and at most 1.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Ratio(pub(crate) f64);

impl FromStr for Ratio {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        match text.trim().parse::<f64>() {
            Ok(ratio) if ratio > 0.0 && ratio <= 1.0 => Ok(Ratio(ratio)),
            _ => Err("expected a number more than 0 and at most 1, e.g. 0.1".into()),
        }
    }
}

/// A budget's name: 1 to 64 of letters, digits, `.`, `_` and `-`, not starting with a dot, so
/// that it names a file inside the budget directory and nothing else.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct BudgetName(String);

impl BudgetName {
    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }
}

impl FromStr for BudgetName {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        const EXPECTED: &str = "expected 1 to 64 letters, digits, '.', '_' or '-', not starting with '.', e.g. api.example.com";
        let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
        if text.is_empty() || text.len() > 64 || !text.chars().all(allowed) || text.starts_with('.')
        {
            return Err(EXPECTED.into());
        }
        Ok(BudgetName(text.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_are_more_than_0_and_at_most_1() {
        for good in ["1", "0.1", " 0.5 "] {
            assert!(good.parse::<Ratio>().is_ok(), "{good}");
        }
        for bad in ["0", "-0.1", "1.01", "NaN", "inf", "a tenth", ""] {
            let err = bad.parse::<Ratio>().unwrap_err();
            assert!(err.contains("e.g. 0.1"), "{bad}: {err}");
        }
    }

    #[test]
    fn names_stay_inside_the_directory() {
        for good in ["api", "api.example.com", "A_b-9", &"x".repeat(64)] {
            assert!(good.parse::<BudgetName>().is_ok(), "{good}");
        }
        for bad in [
            "",
            "..",
            ".",
            ".hidden",
            "a/b",
            "../x",
            "a b",
            "ü",
            &"x".repeat(65),
        ] {
            assert!(bad.parse::<BudgetName>().is_err(), "{bad}");
        }
    }
}
