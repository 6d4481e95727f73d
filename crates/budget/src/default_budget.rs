//! The budget on this machine that a run spends from when it names none: one for each target
//! (the host a preset finds in the command, else the command line; `retry_policy::target`), in a
//! directory of its own beside the named budgets', on [`DEFAULT_BUDGET_TERMS`] unless `retry
//! budget set` gave its file others.
//!
//! It costs nothing until a retry needs a token: no directory is made, no file opened, and no
//! first attempt counted (its terms earn nothing). A retry costs one update of its file, as a
//! named budget's does. Its directory stays bounded whatever the command lines: when a run makes
//! a new state, the states no run has written for [`IDLE`] (full again, holding nothing) go. It spaces a run's retries out, never ends a run that its own options
//! keep alive: a retry whose token is ahead waits for it (the wait line says so), however much
//! longer than `--cap` that is, and the run ends only where its own limits end it (`-n`,
//! `--max-time`, an outer run's or a CI job's deadline), saying which limit the wait would have
//! passed. Spacing bounds a machine's retries against a service exactly as refusing did: the
//! same tokens a minute. A state it cannot keep (no home of the user's own, a directory or file
//! it does not trust, a full disk) is said once, and the run retries as if it had no budget.

use std::path::Path;
use std::time::Duration;

use retry_policy::causes::WithCauses;
use retry_policy::run::{Reservation, RetryBudget, TokenRequest};
use retry_policy::target::Target;

use crate::error::Error;
use crate::file::{self, BudgetFile, FileBudget};
use crate::model::Terms;
use crate::model::{DEFAULT_BUDGET_TERMS, LONGEST_HOLD, MAX_DEBT_PERIODS};
use crate::state_dir::StateHome;
use crate::store::{DEFAULT_BUDGETS, Location, OnFailure};
use crate::unread::Refused;
use crate::waiter::Waiter;
use crate::{BudgetName, no_token};

/// How long a default budget's state goes unwritten before it is pruned (when a run makes a new
/// one beside it): long enough that its bucket is full again and any wait it held is over,
/// whatever it held, since its debt is bounded by [`MAX_DEBT_PERIODS`] periods and a held wait
/// by [`LONGEST_HOLD`]. A full bucket with nothing held is what no state says: it is kept for
/// nothing, and a command line with a date in it would leave one file a day for ever.
pub const IDLE: Duration = {
    let debt = DEFAULT_BUDGET_TERMS.rate.period.as_secs() * (MAX_DEBT_PERIODS as u64 + 1);
    let held = LONGEST_HOLD.as_secs();
    Duration::from_secs(if debt > held { debt } else { held })
};

/// How a person turns the default budget off, for a run or for an environment.
pub const TURN_OFF: &str = "--budget off, or RETRY_BUDGET=off, turns it off";

/// Why `retry budget set` may not give `terms` to a budget in `location`, when that is where the
/// default budgets of the state home `home` are kept: a default budget is opened only when a
/// retry needs a token, so it counts no first attempt (a ratio would earn nothing) and no run's
/// end (a breaker would never open). A term that cannot act is refused, never kept.
pub fn refuse_inactive_terms(
    location: &Location,
    home: &StateHome,
    terms: &Terms,
) -> Result<(), Error> {
    let Location::File(dir) = location else {
        return Ok(());
    };
    let default_dir = home.dir(DEFAULT_BUDGETS).ok();
    let same =
        |one: &Path, other: &Path| std::path::absolute(one).ok() == std::path::absolute(other).ok();
    if !default_dir.is_some_and(|default_dir| same(dir, &default_dir)) {
        return Ok(());
    }
    let inactive = match (terms.ratio, terms.breaker) {
        (_, Some(_)) => Some((
            "--breaker",
            "counts no run's end, so a breaker would never open",
        )),
        (Some(_), None) => Some((
            "--ratio",
            "counts no first attempt, so a ratio would earn nothing",
        )),
        (None, None) => None,
    };
    match inactive {
        None => Ok(()),
        Some((option, why)) => Err(Error::InactiveTerm { option, why }),
    }
}

/// The default budget of a run: its target, where it is kept, and its longest wait.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DefaultBudget {
    /// What the run's retries are aimed at.
    pub target: Target,
    /// The state home the default budgets are kept in, checked when a retry first needs one.
    pub home: StateHome,
}

impl DefaultBudget {
    /// The budget in words: "the default retry budget for example.com on this machine (20/5m)".
    pub fn describe(&self) -> String {
        format!(
            "the default retry budget for {} on this machine ({})",
            self.target,
            DEFAULT_BUDGET_TERMS.describe()
        )
    }

    /// The name of its file.
    pub fn name(&self) -> BudgetName {
        self.target
            .file_name()
            .parse()
            .expect("a target's file name is a budget name")
    }

    /// The budget, opened at its first retry, its waits awake to `watch`'s signals.
    pub fn open<W: Waiter>(self, watch: &W) -> DefaultFileBudget<'_, W> {
        DefaultFileBudget {
            budget: self,
            watch,
            file: Lazy::Unopened,
        }
    }
}

/// The default budget of a run, as it goes.
pub struct DefaultFileBudget<'a, W: Waiter> {
    budget: DefaultBudget,
    watch: &'a W,
    file: Lazy<'a, W>,
}

/// The default budget's file, opened at the first retry.
enum Lazy<'a, W: Waiter> {
    Unopened,
    Open(FileBudget<'a, W>),
    /// It cannot be kept; the run was told once.
    Unusable,
}

impl<'a, W: Waiter> DefaultFileBudget<'a, W> {
    /// The file, opened (and its directory made) on first use; none, after one warning, when it
    /// cannot be.
    fn file(&mut self, warn: &mut dyn FnMut(String)) -> Option<&mut FileBudget<'a, W>> {
        if let Lazy::Unopened = self.file {
            let checked = match self.budget.home.dir(DEFAULT_BUDGETS) {
                Ok(dir) => BudgetFile::check(&dir, &self.budget.name()).inspect(|file| {
                    // The directory grows by one: what has gone idle goes.
                    if file.is_new() {
                        file::prune_idle(&dir, &DEFAULT_BUDGET_TERMS, IDLE);
                    }
                }),
                Err(why) => Err(Refused::NoStateHome(why)),
            };
            self.file = match checked {
                Ok(file) => Lazy::Open(
                    FileBudget::new(file, OnFailure::Open, self.watch)
                        .with_unset_terms(DEFAULT_BUDGET_TERMS),
                ),
                Err(why) => {
                    warn(format!(
                        "{} cannot be kept: {}; going on without it",
                        self.budget.describe(),
                        WithCauses(&why)
                    ));
                    Lazy::Unusable
                }
            };
        }
        match &mut self.file {
            Lazy::Open(file) => Some(file),
            _ => None,
        }
    }
}

impl<W: Waiter> RetryBudget for DefaultFileBudget<'_, W> {
    fn reserve(&mut self, request: TokenRequest, warn: &mut dyn FnMut(String)) -> Reservation {
        match self.file(warn) {
            Some(file) => file.reserve(request, warn),
            None => Reservation::Granted(Duration::ZERO),
        }
    }

    fn refusal(&self) -> String {
        format!("{} {}; {TURN_OFF}", self.budget.describe(), no_token())
    }
}
