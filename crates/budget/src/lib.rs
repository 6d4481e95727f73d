//! The retry budget: tokens shared by every run that names the budget, as the Amazon Builders'
//! Library article "Timeouts, retries and backoff with jitter" describes, and as Finagle's and
//! gRPC's retry budgets earn them from traffic.
//!
//! The arithmetic is in `model`, pure; where the budget lives is a store's business: `file`, a
//! file on this machine, or `redis`, one hash on a Redis (or Valkey) server that a fleet shares,
//! with `shared` deciding what happens when that server cannot be reached. A budget's terms are
//! the store's too: `retry budget set` keeps them there, and every run that shares the budget
//! uses them, so that no two runs can disagree. `store` is the address of a budget, shown
//! without its password; `show` is `retry budget show`. This file holds what they share: the
//! budget a run consults, setting its terms, and the words of a reservation.

#![forbid(unsafe_code)]

pub mod breaker;
pub mod default_budget;
mod error;
pub mod file;
#[cfg(test)]
mod fleets;
pub mod history;
pub mod job;
mod job_file;
mod microseconds;
pub mod model;
pub mod named_files;
mod per_duration;
mod redis;
mod script;
mod shared;
pub mod show;
mod signature;
pub mod state_dir;
pub mod store;
pub mod terms_change;
pub mod unread;
pub mod waiter;

/// What the fuzz target of the store's replies (`fuzz/`) drives; built only by `cargo fuzz`
/// (`--cfg fuzzing`).
#[cfg(fuzzing)]
#[doc(hidden)]
pub mod fuzzing {
    use std::io::BufRead;

    /// Read the replies a server could send in `data`, one after another, as a call reads each
    /// (in bounded memory, whatever the bytes), and make of each everything the store makes of
    /// an answer; never a panic, and never more read for one reply than its bound allows.
    pub fn replies(data: &[u8]) {
        let mut input = data;
        while !input.is_empty() {
            let before = input.len();
            let Ok(reply) = retry_redis::read_reply(&mut input) else {
                return;
            };
            assert!(before - input.len() <= retry_redis::MAX_REPLY + 4096);
            crate::redis::read_every_way(&reply);
            if let Some((text, _, durations)) = crate::redis::history_reply(&reply) {
                let history = crate::history::History::from_stored(&text);
                let _ = history.map(|history| history.with_stored_durations(&durations));
            }
            if input.fill_buf().map_or(true, |rest| rest.is_empty()) {
                return;
            }
        }
    }
}

/// The reference's tables, which the binary's tests read too; this crate's read only rows.
#[cfg(test)]
#[path = "../../../src/reference.rs"]
#[allow(dead_code)]
mod reference;

use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

pub use error::{Error, PasswordFileProblem};
pub use model::Rate;

use default_budget::{DefaultBudget, DefaultFileBudget};
use file::{BudgetFile, FileBudget};
use model::Terms;
use redis::RedisStore;
use retry_policy::causes::WithCauses;
use retry_policy::choice::Choice;
use retry_policy::outcome::{Ended, WaitCause};
use retry_policy::run::{Admission, Reservation, RetryBudget, TokenRequest};
use retry_policy::signal::Signal;
use shared::SharedBudget;
use state_dir::NoStateHome;
use store::{Location, OnFailure, RedisAddress, StoreSettings};
use unread::{Refused, StoreFailure};
use waiter::Waiter;

/// A shared retry budget, as a run's options give it.
#[derive(Clone, Debug)]
pub struct BudgetSettings {
    /// `--budget`: the budget's name.
    pub name: BudgetName,
    /// `--budget-store`: where it is kept, and what a retry does when the store fails.
    pub store: StoreSettings,
    /// This machine, by a hash of its name (`RETRY_HOST`, else the host name), as a shared
    /// store's breaker counts the hosts whose runs gave up.
    pub host: u64,
    /// How the shared store failed when the run called it before its budget did (for its job's
    /// terms), if it gave no answer: the budget takes that as its own first failure, after
    /// which a store is not called again in the run, rather than wait for it once more.
    pub unanswered: Option<StoreFailure>,
}

impl BudgetSettings {
    /// The budget as the plan's header names it: its name, and its store.
    pub fn describe(&self) -> String {
        let mut text = format!(
            "{}, on the terms its store keeps (retry budget show {0})",
            self.name.as_str()
        );
        if let Location::Shared { address, .. } = &self.store.location {
            let on_failure = self.store.on_failure.name();
            text += &format!(", in {address} (fail={on_failure})");
        }
        text
    }

    /// The budget, its file checked when the file store keeps it: one that cannot be used says
    /// why, for the run to warn of it and go on as the store's `fail` says.
    pub fn prepare(&self) -> Prepared {
        let on_failure = self.store.on_failure;
        let name = self.name.clone();
        Prepared(match &self.store.location {
            Location::File(dir) => match BudgetFile::check(dir, &self.name) {
                Ok(file) => Checked::File {
                    file,
                    on_failure,
                    name,
                },
                Err(why) => Checked::Unusable { why, on_failure },
            },
            Location::Shared { address, fallback } => Checked::Shared {
                address: address.clone(),
                host: self.host,
                on_failure,
                dir: fallback.clone(),
                name,
                unanswered: self.unanswered.clone(),
            },
        })
    }
}

/// The budget a run spends from.
#[derive(Clone, Debug)]
pub enum RunBudget {
    /// The one `--budget` (or `RETRY_BUDGET`) names (boxed: its store's address is the largest
    /// of the three by far).
    Named(Box<BudgetSettings>),
    /// None named: this machine's default budget for the command's target.
    Default(DefaultBudget),
    /// None at all: `--budget off`, or `RETRY_BUDGET=off`, as the words say.
    Off(&'static str),
}

impl RunBudget {
    /// The run found its named budget's shared store failing (`why`) before the budget called
    /// it: the budget starts without the store (see [`BudgetSettings::unanswered`]).
    pub fn store_unanswered(&mut self, why: StoreFailure) {
        if let RunBudget::Named(settings) = self
            && let Location::Shared { .. } = settings.store.location
        {
            settings.unanswered = Some(why);
        }
    }

    /// The budget as the plan names it, and what it may do to the waits.
    pub fn describe(&self) -> String {
        match self {
            RunBudget::Named(settings) => format!(
                "{}; a retry waits for its token for at most --cap, and is refused past it",
                settings.describe()
            ),
            RunBudget::Default(budget) => format!(
                "this machine's default one for {}: {}; a retry waits for its token, spacing \
                 retries out to that rate ({})",
                budget.target,
                model::DEFAULT_BUDGET_TERMS.describe(),
                default_budget::TURN_OFF
            ),
            RunBudget::Off(how) => format!("none ({how})"),
        }
    }

    /// The budget, checked where it must be before the run (a named one's file); none when it
    /// is off.
    pub fn prepare(&self) -> Option<Prepared> {
        match self {
            RunBudget::Named(settings) => Some(settings.prepare()),
            RunBudget::Default(budget) => Some(Prepared(Checked::Default(budget.clone()))),
            RunBudget::Off(_) => None,
        }
    }
}

/// Keep `terms` as the terms of the budget `name` in `store`, for every run that shares it
/// (`retry budget set`); a shared store's calls wait with `watch`'s signals in view.
pub fn set_terms<W: Waiter>(
    name: &BudgetName,
    store: &StoreSettings,
    terms: Terms,
    watch: &W,
) -> Result<(), Error> {
    terms.check()?;
    match &store.location {
        Location::File(dir) => file::set_terms(dir, name, terms, watch),
        Location::Shared { address, .. } => {
            let mut store = RedisStore::new(address.clone(), name, watch);
            store
                .set_terms(&terms)
                .map_err(|failure| Error::StoreFailed {
                    what: format!("retry budget {}", name.as_str()),
                    store: address.to_string(),
                    why: failure.into(),
                })
        }
    }
}

/// A budget checked before the run, to be opened once the run's signals are watched.
pub struct Prepared(Checked);

/// Where a checked budget is kept.
enum Checked {
    /// On this machine, in this file.
    File {
        file: BudgetFile,
        on_failure: OnFailure,
        name: BudgetName,
    },
    /// This machine's default budget, checked when a retry first needs it.
    Default(DefaultBudget),
    /// One that cannot be used, and why: the run goes on as `on_failure` says.
    Unusable { why: Refused, on_failure: OnFailure },
    /// On a shared store, falling back as `on_failure` says to the file store in `dir`; at once
    /// when the run found the store `unanswered` before.
    Shared {
        address: RedisAddress,
        host: u64,
        on_failure: OnFailure,
        dir: Result<PathBuf, NoStateHome>,
        name: BudgetName,
        unanswered: Option<StoreFailure>,
    },
}

/// The budget of a run.
pub struct Budget<'a, W: Waiter> {
    opened: Opened<'a, W>,
    /// A named budget's bound on a retry's wait for its token (`--cap`): a token further ahead
    /// is refused. None for the machine's default budget, which waits for it.
    within: Option<Duration>,
    /// The bound that refused the last retry refused, if it was that.
    refused_within: Option<Duration>,
}

/// A budget, open where it is kept. An enum, matched in each method, rather than a boxed
/// `dyn RetryBudget`: the box and its stores' vtables, which a PIE relocates as it starts, cost
/// every run about 700 instructions (callgrind, the release archive's `retry -- true`).
enum Opened<'a, W: Waiter> {
    /// On this machine, named.
    File(FileBudget<'a, W>, BudgetName),
    /// This machine's default budget.
    Default(DefaultFileBudget<'a, W>),
    /// On a store a fleet shares.
    Shared(Box<SharedBudget<'a, W>>, BudgetName),
    /// None to be had, which the run was warned of: each retry is as the store's `fail` says.
    Unusable(OnFailure),
}

impl Prepared {
    /// The warning that the budget cannot be used, and what each retry does without it; `None`
    /// when it can.
    pub fn unusable_warning(&self) -> Option<String> {
        if let Checked::Shared {
            address,
            on_failure,
            unanswered: Some(why),
            ..
        } = &self.0
        {
            return Some(shared::store_given_up(address, why, *on_failure));
        }
        self.unusable().map(|(why, on_failure)| {
            let why = WithCauses(why);
            format!("retry budget: {why}; {}", on_failure.consequence())
        })
    }

    /// Why the budget cannot be used, and what each retry does without it; `None` when it can.
    fn unusable(&self) -> Option<(&Refused, OnFailure)> {
        match &self.0 {
            Checked::Unusable { why, on_failure } => Some((why, *on_failure)),
            _ => None,
        }
    }

    /// The budget, its waits awake to `watch`'s signals; a named one refuses a retry whose
    /// token is further ahead than `within` (the run's `--cap`), as every budget of this kind
    /// does (Finagle's, gRPC's retry throttling, the AWS SDKs' retry quota), while the
    /// machine's default budget waits for it.
    pub fn open<W: Waiter>(self, watch: &W, within: Duration) -> Budget<'_, W> {
        let within = match &self.0 {
            Checked::Default(_) => None,
            _ => Some(within),
        };
        let opened = match self.0 {
            Checked::File {
                file,
                on_failure,
                name,
            } => Opened::File(FileBudget::new(file, on_failure, watch), name),
            Checked::Default(budget) => Opened::Default(budget.open(watch)),
            Checked::Unusable { on_failure, .. } => Opened::Unusable(on_failure),
            Checked::Shared {
                address,
                host,
                on_failure,
                dir,
                name,
                unanswered,
            } => {
                let store = unanswered
                    .is_none()
                    .then(|| RedisStore::new(address, &name, watch));
                let budget = SharedBudget::new(store, host, on_failure, dir, name.clone(), watch);
                Opened::Shared(Box::new(budget), name)
            }
        };
        Budget {
            opened,
            within,
            refused_within: None,
        }
    }
}

impl<W: Waiter> RetryBudget for Budget<'_, W> {
    fn admit(&mut self, latest: Option<Duration>, warn: &mut dyn FnMut(String)) -> Admission {
        match &mut self.opened {
            Opened::File(budget, _) => budget.admit(latest, warn),
            Opened::Default(budget) => budget.admit(latest, warn),
            Opened::Shared(budget, _) => budget.admit(latest, warn),
            Opened::Unusable(_) => Admission::Closed,
        }
    }

    fn finish(
        &mut self,
        ended: Ended,
        admission: Admission,
        latest: Option<Duration>,
        warn: &mut dyn FnMut(String),
    ) -> Option<Signal> {
        match &mut self.opened {
            Opened::File(budget, _) => budget.finish(ended, admission, latest, warn),
            Opened::Default(budget) => budget.finish(ended, admission, latest, warn),
            Opened::Shared(budget, _) => budget.finish(ended, admission, latest, warn),
            Opened::Unusable(_) => None,
        }
    }

    fn breaker(&self) -> String {
        match &self.opened {
            Opened::File(_, name) | Opened::Shared(_, name) => {
                format!("the breaker of the retry budget {}", name.as_str())
            }
            _ => "the retry budget's breaker".into(),
        }
    }

    fn reserve(&mut self, request: TokenRequest, warn: &mut dyn FnMut(String)) -> Reservation {
        let (within, opened) = (self.within, &mut self.opened);
        let mut reserve = |request| match opened {
            Opened::File(budget, _) => budget.reserve(request, warn),
            Opened::Default(budget) => budget.reserve(request, warn),
            Opened::Shared(budget, _) => budget.reserve(request, warn),
            Opened::Unusable(on_failure) => on_failure.reservation(),
        };
        let (reservation, refused_within) = reserve_within(within, request, &mut reserve);
        self.refused_within = refused_within;
        reservation
    }

    fn refusal(&self) -> String {
        match (&self.opened, self.refused_within) {
            (Opened::Default(budget), _) => budget.refusal(),
            (Opened::File(_, name) | Opened::Shared(_, name), Some(within)) => format!(
                "the retry budget {} has no token for another within --cap ({}); a named budget \
                 refuses a retry it cannot give within --cap",
                name.as_str(),
                retry_policy::duration::format_duration(within)
            ),
            (Opened::File(_, name) | Opened::Shared(_, name), None) => named_refusal(name),
            (Opened::Unusable(_), _) => "the retry budget cannot be used".into(),
        }
    }
}

/// The answer of a budget that `reserve`s tokens to `request`, when it may make a retry wait no
/// longer than `within` for its token: a token further ahead is refused, unless the run's
/// deadline comes sooner, which then ends the run as the precedence of its ends says. A wait
/// for a run that shares the budget and was asked to wait is never bounded by `within`.
/// Returns the answer, and the bound when it was the bound that refused.
fn reserve_within(
    within: Option<Duration>,
    request: TokenRequest,
    reserve: &mut impl FnMut(TokenRequest) -> Reservation,
) -> (Reservation, Option<Duration>) {
    let Some(within) = within.filter(|within| request.latest.is_none_or(|left| *within < left))
    else {
        return (reserve(request), None);
    };
    let bounded = TokenRequest {
        latest: Some(within),
        ..request
    };
    match reserve(bounded) {
        Reservation::PastDeadline(_, WaitCause::Budget) => (Reservation::Refused, Some(within)),
        Reservation::PastDeadline(_, WaitCause::Shared) => (reserve(request), None),
        answer => (answer, None),
    }
}

/// Why a budget refuses a retry, the one reason it has, in words that follow its name.
pub(crate) fn no_token() -> String {
    format!(
        "has no token for another: retries already wait for every token it may promise, {} \
         of its periods ahead",
        model::MAX_DEBT_PERIODS
    )
}

/// A named budget's refusal, in words.
fn named_refusal(name: &BudgetName) -> String {
    format!("the retry budget {} {}", name.as_str(), no_token())
}

/// `retry budget set --ratio R`: tokens earned per first attempt, more than 0 and at most 1.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ratio(pub f64);

impl FromStr for Ratio {
    type Err = Error;

    fn from_str(text: &str) -> Result<Self, Error> {
        match text.trim().parse::<f64>() {
            Ok(ratio) if ratio > 0.0 && ratio <= 1.0 => Ok(Ratio(ratio)),
            _ => Err(Error::RatioNotANumber),
        }
    }
}

/// A budget's name: 1 to 64 of letters, digits, `.`, `_` and `-`, not starting with a dot, so
/// that it names a file inside the budget directory and nothing else.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BudgetName(String);

impl BudgetName {
    /// The name, as given.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl FromStr for BudgetName {
    type Err = Error;

    fn from_str(text: &str) -> Result<Self, Error> {
        let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
        if text.is_empty() || text.len() > 64 || !text.chars().all(allowed) || text.starts_with('.')
        {
            return Err(Error::NotAName);
        }
        Ok(BudgetName(text.to_string()))
    }
}

/// `--budget` (or `RETRY_BUDGET`): a budget's name, or `off` for none at all.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BudgetChoice {
    /// No budget, not even the default one.
    Off,
    /// The budget of this name.
    Named(BudgetName),
}

impl FromStr for BudgetChoice {
    type Err = Error;

    fn from_str(text: &str) -> Result<Self, Error> {
        match text {
            "off" => Ok(BudgetChoice::Off),
            name => name
                .parse()
                .map(BudgetChoice::Named)
                .map_err(|err| Error::NotABudget(Box::new(err))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_named_budget_refuses_past_its_bound_unless_the_deadline_comes_first() {
        let request = |latest: Option<u64>| TokenRequest {
            latest: latest.map(Duration::from_secs),
            asked: None,
            longest_hold: Duration::from_secs(900),
        };
        // A store whose next token is 60s ahead, and whose shared hold (when `held`) is 30s.
        let store = |held: bool| {
            move |request: TokenRequest| {
                let (needed, cause) = match held {
                    true => (Duration::from_secs(30), WaitCause::Shared),
                    false => (Duration::from_secs(60), WaitCause::Budget),
                };
                match request.latest {
                    Some(latest) if needed >= latest => Reservation::PastDeadline(needed, cause),
                    _ => Reservation::Granted(needed),
                }
            }
        };
        let second = Some(Duration::from_secs(1));
        let refused = (Reservation::Refused, second);
        assert_eq!(
            reserve_within(second, request(None), &mut store(false)),
            refused
        );
        assert_eq!(
            reserve_within(second, request(Some(600)), &mut store(false)),
            refused
        );
        let past = Reservation::PastDeadline(Duration::from_secs(60), WaitCause::Budget);
        assert_eq!(
            reserve_within(
                Some(Duration::from_secs(10)),
                request(Some(5)),
                &mut store(false)
            ),
            (past, None)
        );
        // The default budget has no bound; a shared hold is never bounded by it.
        let granted = Reservation::Granted(Duration::from_secs(60));
        assert_eq!(
            reserve_within(None, request(None), &mut store(false)),
            (granted, None)
        );
        let held = Reservation::Granted(Duration::from_secs(30));
        assert_eq!(
            reserve_within(second, request(None), &mut store(true)),
            (held, None)
        );
    }

    #[test]
    fn ratios_are_more_than_0_and_at_most_1() {
        for good in ["1", "0.1", " 0.5 "] {
            assert!(good.parse::<Ratio>().is_ok(), "{good}");
        }
        for bad in ["0", "-0.1", "1.01", "NaN", "inf", "a tenth", ""] {
            let err = bad.parse::<Ratio>().unwrap_err().to_string();
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
